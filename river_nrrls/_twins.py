"""The Python twins of the compiled kernels that have one: the same arguments, the same results.

Where ``_kernels.pyx`` is not built (or the tests switch it off), `river_nrrls._native` binds
these functions under the kernels' names, so that a caller calls the operation without asking
which one runs. Each twin computes what its kernel computes: by the same BLAS call where it can
(the rank-1 update of a buffer without spare capacity, the outputs), else by numpy to rounding
(the rank-1 update of a block that BLAS cannot address) or by LAPACK's routine where the kernel
writes its own loop (``rls_add_row``'s QR update: dtpqrt, the same reflections, to rounding), and
gives the same answer where the kernel decides (``refill``: the same vector, or None for the
validation). The kernels without a twin (the fused paths of NR-RLS, the compiled solves) are
`river_nrrls._native`'s ``declined``: their callers' general paths are their twins.

"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import blas, lapack

from ._encoding_cache import same_keys
from ._validation import finite_reals

__all__ = ["outputs", "rank_one", "refill", "rls_add_row", "rls_learn", "rls_predict"]


def rank_one(buffer: np.ndarray, c: int, dim: int, vector: np.ndarray, weight: float) -> None:
    """``rank_one``: [n^c, s^c; s^c, A^c] += w [1, x][1, x]^T on the upper triangle of class
    ``c``'s leading ``dim x dim`` block of ``buffer`` (a ``(capacity, capacity, C)`` Fortran
    array), in place."""
    scatter = buffer[:, :, c]
    if scatter.shape[0] == dim:
        # n^c += w, s^c += w x, A^c += w x x^T. (alpha, x, lower=0: upper, incx, offx, n, a,
        # overwrite_a) by position: f2py parses keyword arguments for about as long as the
        # update itself takes at small d
        blas.dsyr(weight, vector, 0, 1, 0, dim, scatter, 1)
    else:  # spare capacity: the block in use is not contiguous for BLAS
        scatter[:dim, :dim] += np.multiply.outer(weight * vector, vector)


def outputs(weights: np.ndarray, vector: np.ndarray) -> list[float] | None:
    """``outputs``: w_k . x of every row of ``weights`` (Fortran order) as floats, or None when
    one is not finite."""
    products = blas.dgemv(1.0, weights, vector).tolist()  # cheaper than ``@`` here
    return products if all(map(math.isfinite, products)) else None


def refill(
    x: dict, keys: tuple, vector: np.ndarray, columns: np.ndarray, offset: int, fill: float
) -> np.ndarray | None:
    """``refill``: the dense vector of ``x`` when it has the keys ``keys`` (in that order) of the
    sample that was encoded last as ``vector`` at ``columns`` (one a key): ``vector`` itself
    when every value equals its entry, else a new read-only vector like it (``fill`` in the
    first ``offset`` entries, zeros elsewhere) with x's values. None when the keys differ
    (`same_keys`) or a value is not a finite plain int or float (`finite_reals`): the caller's
    validation then takes ``x``."""
    if not same_keys(tuple(x), keys):
        return None
    values = tuple(x.values())
    if not finite_reals(values):
        return None
    if values == tuple(vector[columns].tolist()):
        return vector
    refilled = np.zeros(len(vector))
    refilled[:offset] = fill
    refilled[columns] = values
    refilled.flags.writeable = False
    return refilled


#: The keys whose hash and comparison run no Python code (what the kernels compare by value)
_PLAIN_KEYS = frozenset((str, int))


def _plain_refill(
    x: dict, keys: tuple, vector: np.ndarray, columns: np.ndarray, offset: int, fill: float
) -> np.ndarray | None:
    """`refill` of a plain dict whose keys are all exact str or int, None otherwise: the
    arrays of a fused step are read before the refill, so no key's ``__hash__`` or ``__eq__``
    (which may call the model) may run in it (the general path encodes before it reads)."""
    if x.__class__ is not dict or not _PLAIN_KEYS.issuperset(map(type, x)):
        return None
    return refill(x, keys, vector, columns, offset, fill)


def rls_learn(
    x: dict,
    keys: tuple,
    vector: np.ndarray,
    columns: np.ndarray,
    offset: int,
    fill: float,
    scatter: np.ndarray,
    upper: np.ndarray,
    solution: np.ndarray,
    first: int,
    weight: float,
    mass: float,
    target: float,
    bound: float,
    limit: float,
) -> tuple[np.ndarray, float | None, bool] | None:
    """``rls_learn``: RLSRegressor's learn_one of a remembered sample (`refill`), the range
    bound's fast check, the scatter's rank-1 update, R's QR update with the row sqrt(m)
    [1, x, y][first:] (LAPACK dtpqrt, as `river_nrrls._sqrt_factor.SquareRootFactor.add_row`
    without delayed rows) and the weights w = R11^{-1} z into ``solution``, in place. None,
    ``(sample, None, False)`` or ``(sample, grown, solved)`` as the kernel (None also for keys
    other than exact str and int, which the kernel compares by identity: `_plain_refill`)."""
    sample = _plain_refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    size = len(sample)
    n = size - first
    if scatter.shape != (size + 1, size + 1) or upper.shape != (n + 1, n + 1) or n < 0:
        raise ValueError("rls_learn: inconsistent shapes")
    if solution.shape != (n,):
        raise ValueError(f"rls_learn: solution must be a writable contiguous vector of {n}")
    grown = (blas.ddot(sample, sample) + target * target) * weight + bound
    if not grown <= limit:
        return sample, None, False
    augmented = np.empty(size + 1)
    augmented[:size] = sample
    augmented[size] = target
    blas.dsyr(mass, augmented, 0, 1, 0, size + 1, scatter, 1)  # scatter += m a a^T (upper)
    row = augmented[first:]
    if mass != 1.0:
        row *= math.sqrt(mass)
    return sample, grown, rls_add_row(upper, row, solution)


def rls_add_row(upper: np.ndarray, row: np.ndarray, solution: np.ndarray) -> bool:
    """``rls_add_row``: R^T R += row row^T (LAPACK dtpqrt, the QR of [R; row], in place; ``row``
    overwritten), then w = R11^{-1} z into ``solution`` (dtrtrs): whether it is the weights
    (False: a zero pivot of R11, or w not finite)."""
    n = len(row) - 1
    if upper.shape != (n + 1, n + 1) or solution.shape != (n,):
        raise ValueError("rls_add_row: inconsistent shapes")
    # QR of [R; row] in place, a row both C- and F-contiguous: (l, nb, a, b, overwrite_a,
    # overwrite_b) by position; a block of 8 columns (rather than 1) makes fewer, larger calls
    lapack.dtpqrt(0, min(8, n + 1), upper, row[None, :], 1, 1)
    if n == 0:
        return True
    # (a, b, lower, trans, unitdiag, lda) by position: f2py parses keyword arguments for about
    # as long as the solve itself takes at small d
    weights, info = lapack.dtrtrs(upper[:, :n], upper[:n, n], 0, 0, 0, n + 1)
    if info != 0 or not math.isfinite(blas.ddot(weights, weights)):
        return False
    solution[:] = weights
    return True


def rls_predict(
    x: dict,
    keys: tuple,
    vector: np.ndarray,
    columns: np.ndarray,
    offset: int,
    fill: float,
    solution: np.ndarray,
    first: int,
) -> tuple[np.ndarray, float] | None:
    """``rls_predict``: the prediction ``solution . [1, x][first:]`` of a remembered sample
    (`_plain_refill`), None when it is not one."""
    sample = _plain_refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    if len(sample) - first != len(solution) or first < 0:
        raise ValueError("rls_predict: inconsistent shapes")
    if not len(solution):
        return sample, 0.0
    return sample, blas.ddot(solution, sample if first == 0 else sample[first:])
