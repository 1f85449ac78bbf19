"""The range invariant of the statistics: every diagonal entry stays within `STATISTICS_LIMIT`.

A model's statistics are sums of weighted squares: a class mass n^c = sum_i m_i and, per
column j, sum_i m_i x_ij^2 on the diagonal of a scatter. Every off-diagonal entry is bounded by
its diagonal ones (|A_ij| <= sqrt(A_ii A_jj), |s_j| <= sqrt(n A_jj)), so a bounded diagonal
keeps the whole scatter, and every solve from it, finite. This module owns that invariant: a
sample, a mini-batch or a merge that would take a diagonal entry beyond `STATISTICS_LIMIT`, a
single value beyond `VALUE_LIMIT`, or a sample weight below `SMALLEST_WEIGHT` (whose class mass
would have no finite inverse) is refused with a ``ValueError`` naming the column (and row)
responsible, before anything is committed.

The shared checks take plain arrays: a diagonal (what the statistics hold, already decayed by
the forgetting the new samples bring), the new samples' contributions, and a `ColumnNamer` that
names a column in the estimator's terms, so that any estimator keeping a scatter can use them.
`check_sample`, `check_batch` and `check_merge` apply them to `ClassStatistics` (through its
``diagonal_bound``, ``class_diagonal``, ``labels`` and ``forgetting``); the statistics keep an
upper bound of their diagonal up to date as they learn, which makes the usual sample's check one
dot product.

"""

from __future__ import annotations

import typing

import numpy as np
from scipy.linalg import blas

from ._checks import SMALLEST_WEIGHT, STATISTICS_LIMIT, VALUE_LIMIT, row_name
from ._stats import batch_masses

if typing.TYPE_CHECKING:
    from ._stats import ClassStatistics

__all__ = [
    "ColumnNamer",
    "check_batch",
    "check_merge",
    "check_sample",
    "check_totals",
    "class_column_namer",
    "refuse_large_values",
    "refuse_out_of_range",
    "refuse_tiny_weight",
    "refuse_tiny_weights",
]

#: How a range error names a dense column >= 1: ``"feature 'a'"`` (the index knows the names).
ColumnNamer = typing.Callable[[int], str]


def refuse_out_of_range(
    totals: np.ndarray, name_of: ColumnNamer, where: str = ""
) -> typing.NoReturn:
    """Raise a ``ValueError`` for the first column of ``totals`` (the diagonal some statistics
    would have) beyond `STATISTICS_LIMIT`, named by ``name_of(column)``."""
    with np.errstate(invalid="ignore"):
        column = int(np.argmax(~(totals <= STATISTICS_LIMIT)))
    name = name_of(column)
    raise ValueError(
        f"{name}{where} is too large: the sum of its squared values (times the sample weights) "
        f"would exceed {STATISTICS_LIMIT:.0e} and the statistics could no longer be kept "
        f"finite; rescale the data (a single value beyond {VALUE_LIMIT:.0e} is always refused)"
    )


def check_totals(
    totals: np.ndarray, diagonal: np.ndarray | None, name_of: ColumnNamer, where: str = ""
) -> None:
    """Refuse (``ValueError``) statistics whose diagonal would be ``diagonal`` (None: nothing
    yet) plus ``totals`` (the new contributions, in place; as wide as ``diagonal`` or wider,
    its extra columns new ones): the sum is written into ``totals``."""
    if diagonal is not None:
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN: refused below
            totals[: len(diagonal)] += diagonal
    if not totals.max() <= STATISTICS_LIMIT:
        refuse_out_of_range(totals, name_of, where)


def refuse_tiny_weight(weight: float, where: str = "") -> typing.NoReturn:
    """Raise the ``ValueError`` of a sample weight ``weight`` below `SMALLEST_WEIGHT`."""
    raise ValueError(
        f"w = {weight!r}{where} is below the smallest normal float ({SMALLEST_WEIGHT:.1e}): a "
        "class mass that small has no finite inverse 1/n, and every weight of the model would "
        "become NaN; give the sample w = 0 to leave it out, or rescale the weights"
    )


def refuse_tiny_weights(weights: np.ndarray | None, rows: typing.Any) -> None:
    """Refuse the first positive weight of a mini-batch below `SMALLEST_WEIGHT` (rows labelled
    by the index ``rows``); None (every weight 1) passes."""
    if weights is None:
        return
    tiny = (weights > 0.0) & (weights < SMALLEST_WEIGHT)
    if tiny.any():
        row = int(np.argmax(tiny))
        refuse_tiny_weight(float(weights[row]), f" (row {row_name(rows, row)!r})")


def refuse_large_values(matrix: np.ndarray, name_of: ColumnNamer, rows: typing.Any) -> None:
    """Refuse the first value of a mini-batch beyond `VALUE_LIMIT` in magnitude, naming its
    column and its row (labelled by the index ``rows``)."""
    magnitudes = np.abs(matrix)
    if magnitudes.max() > VALUE_LIMIT:
        row, column = np.unravel_index(int(np.argmax(magnitudes > VALUE_LIMIT)), matrix.shape)
        refuse_out_of_range(
            np.where(np.arange(matrix.shape[1]) == column, np.inf, 0.0),
            name_of,
            f" (row {row_name(rows, int(row))!r})",
        )


def class_column_namer(name_of: ColumnNamer) -> ColumnNamer:
    """``name_of`` for the columns of an augmented class scatter, whose column 0 is the class
    mass."""
    return lambda column: (
        "the class mass (the sum of the sample weights)" if column == 0 else name_of(column)
    )


# ---------------------------------------------------------------- class statistics


def check_sample(
    stats: ClassStatistics,
    label: typing.Hashable,
    vector: np.ndarray,
    weight: float,
    name_of: ColumnNamer,
) -> float:
    """Refuse (``ValueError``) a sample of class ``label`` and mass ``weight`` that would take
    the class's n^c or a feature's sum of squares beyond `STATISTICS_LIMIT`, or whose mass
    is below the smallest normal float; nothing changes either way. Returns the sample's
    load w |x|^2, for `ClassStatistics.update_one`.

    The statistics keep an upper bound of every diagonal entry; with the sample's load added it
    usually stays in range (one dot product a sample), and the class's exact diagonal is read
    only when it nears the limit. ``vector`` may be wider than the statistics (features not
    committed yet).

    """
    if weight < SMALLEST_WEIGHT:
        refuse_tiny_weight(weight)
    # |x|^2 by BLAS ddot: an overflow gives inf (refused below) without numpy's warning
    load = blas.ddot(vector, vector) * weight
    if stats.diagonal_bound() + load <= STATISTICS_LIMIT:
        return load
    with np.errstate(over="ignore"):
        totals = np.square(vector) * weight  # inf where it overflows: refused below
    diagonal = stats.class_diagonal(label, stats.forgetting)
    check_totals(totals, diagonal, class_column_namer(name_of))
    return load


def check_batch(
    stats: ClassStatistics,
    matrix: np.ndarray,
    codes: np.ndarray,
    labels: list,
    weights: np.ndarray | None,
    name_of: ColumnNamer,
    rows: typing.Any,
) -> None:
    """`check_sample` for a mini-batch (rows of ``matrix`` in stream order, ``codes`` into
    ``labels``, masses ``weights`` or 1, row labels ``rows``): every class's statistics
    after the batch, with the forgetting's decay."""
    if matrix.size == 0:
        return
    refuse_tiny_weights(weights, rows)
    namer = class_column_namer(name_of)
    refuse_large_values(matrix, namer, rows)
    squares = matrix * matrix  # <= STATISTICS_LIMIT each: no overflow
    forgetting = stats.forgetting
    for code, label in enumerate(labels):
        in_class = codes == code
        n_rows = int(in_class.sum())
        if n_rows == 0:
            continue
        # sample j of the class's m rows has mass w_j lambda^(m-1-j)
        masses = batch_masses(forgetting, n_rows, None if weights is None else weights[in_class])
        with np.errstate(over="ignore", invalid="ignore"):
            totals = masses @ squares[in_class]
        check_totals(totals, stats.class_diagonal(label, forgetting**n_rows), namer)


def check_merge(
    stats: ClassStatistics,
    other: ClassStatistics,
    columns: np.ndarray,
    name_of: ColumnNamer,
) -> None:
    """Refuse (``ValueError``) a `ClassStatistics.merge` of ``other`` into ``stats`` (other's
    column j going to ``columns[j]``, possibly beyond ``stats.dim``) whose summed statistics
    would go beyond the limit."""
    width = max(stats.dim, int(columns.max()) + 1)
    namer = class_column_namer(name_of)
    for label in other.labels:
        totals = np.zeros(width)
        totals[columns] = other.class_diagonal(label)
        check_totals(
            totals, stats.class_diagonal(label), namer, f" (class {label!r} of the merged model)"
        )
