"""Direct solves of the TER systems: Cholesky, with fallbacks down to least squares.

A symmetric positive definite M w = r is solved by one Cholesky factorisation and solve (LAPACK
``dposv``), in place when the caller's M may be overwritten; with two classes, or many classes
with reweighting, the whole assembly and solve is one compiled call where the kernels are built
(``_kernels.pyx``'s ``pair_weights`` and ``each_weights``), and many classes are otherwise
solved in one batched LAPACK call. When rounding defeats Cholesky (badly scaled columns, a
numerically singular M at b = 0) `solve_spd`'s fallbacks equilibrate the system and, last, take
its minimum-norm least-squares solution. This module owns those solves and their fallbacks; it
does not assemble the systems (``_systems.py``) nor choose among the strategies
(``_solver.py``).

"""

from __future__ import annotations

import typing

import numpy as np
import scipy
from scipy.linalg import lapack

from . import _native
from ._stats import symmetrize_upper

if typing.TYPE_CHECKING:
    from ._stats import ClassStatistics

__all__ = [
    "TINY_RIDGE",
    "each_kernel_weights",
    "pair_kernel_weights",
    "solve_batched",
    "solve_in_place",
    "solve_spd",
]

# Below this ridge b a successful factorisation may still give an overflowing solution (the
# smallest eigenvalue of M = ... + b I is at least b): the solution is checked.
TINY_RIDGE = 1e-200


def _trusted(info: int, weights: np.ndarray, ridge: float) -> bool:
    """Whether a LAPACK solve that returned ``info`` gave usable ``weights``: it succeeded, and
    either ``ridge`` (a lower bound of M's smallest eigenvalue) rules an overflow out or the
    weights are finite."""
    return info == 0 and (ridge > TINY_RIDGE or bool(np.isfinite(weights).all()))


def solve_spd(matrix: np.ndarray, rhs: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """Solve ``matrix @ w = rhs`` for a symmetric positive (semi-)definite ``matrix``.

    Only the upper triangle of ``matrix`` is read. Cholesky (LAPACK ``posv``: factorisation and
    solve in one call) is the normal path. If it fails from rounding (badly scaled columns, such
    as the high powers of a polynomial model), the system is equilibrated,
    ``D M D (D^-1 w) = D r`` with ``D = diag(M)^(-1/2)``, which leaves the solution unchanged and
    often restores a usable condition number, and factorised again. Only if that fails too (a
    numerically singular matrix, e.g. ``b = 0``) is the minimum-norm least-squares solution of
    the equilibrated system returned. ``ridge`` is a lower bound of the smallest eigenvalue
    (the b of ``M = ... + b I``): when it is positive a successful factorisation cannot give an
    overflowing solution, and that check is skipped.

    """
    if rhs.ndim == 1:
        return solve_spd(matrix, rhs[:, None], ridge)[:, 0]
    _, solution, info = lapack.dposv(matrix, rhs, lower=0)  # reads and keeps the upper triangle
    if _trusted(info, solution, ridge):
        return solution
    return _solve_spd_fallback(symmetrize_upper(matrix), rhs)


def _solve_spd_fallback(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    diagonal = np.diag(matrix).copy()
    if np.all(diagonal > 0) and np.isfinite(diagonal).all():
        scale = 1.0 / np.sqrt(diagonal)  # D = diag(M)^(-1/2)
        scaled_rhs = rhs * (scale[:, None] if rhs.ndim == 2 else scale)
        scaled = matrix * np.outer(scale, scale)  # D M D: unit diagonal
        factor, info = lapack.dpotrf(scaled, lower=0, clean=0)
        if info == 0:
            solution, info = lapack.dpotrs(factor, scaled_rhs, lower=0)
            if info == 0 and np.isfinite(solution).all():
                return solution * (scale[:, None] if rhs.ndim == 2 else scale)  # w = D z
        # Numerically singular: least squares on the equilibrated system. Its singular values
        # are cut relative to the largest one, so on the raw M (columns whose scales differ
        # by 1e100, say) the cut would drop whole well-determined columns, not only the
        # dependent directions.
        solution = _least_squares(scaled, scaled_rhs)
        if np.isfinite(solution).all():
            return solution * (scale[:, None] if rhs.ndim == 2 else scale)  # w = D z
    return _least_squares(matrix, rhs)


def _least_squares(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Minimum-norm least-squares solution, singular values below eps * d * the largest cut.

    numpy's SVD driver (LAPACK ``gelsd``) iterates and can stop without converging on a
    finite, numerically singular matrix ("SVD did not converge"); the complete orthogonal
    factorisation of ``gelsy`` (QR with column pivoting, no iteration) then gives the same
    minimum-norm solution with the same cut.

    """
    cut = np.finfo(float).eps * max(matrix.shape)
    try:
        return np.linalg.lstsq(matrix, rhs, rcond=cut)[0]
    except np.linalg.LinAlgError:
        return scipy.linalg.lstsq(matrix, rhs, cond=cut, lapack_driver="gelsy")[0]


def solve_in_place(matrix: np.ndarray, rhs: np.ndarray, ridge: float) -> np.ndarray | None:
    """`solve_spd`'s normal path on a ``matrix`` the caller lets it overwrite (its own, freshly
    assembled: Cholesky factorises it in place); None when that path fails (then `solve_spd` on
    the system assembled again gives the fallbacks)."""
    _, weights, info = lapack.dposv(matrix, rhs, 0, 1)  # upper, overwrite_a
    return weights if _trusted(info, weights, ridge) else None


def solve_batched(matrices: np.ndarray, rhs: np.ndarray, ridge: float) -> np.ndarray:
    """The systems ``matrices[k] @ w_k = rhs[k]`` (symmetric, ``(C, d, d)`` and ``(C, d)``) in
    one batched LAPACK call, weights as rows; singular or overflowing: one at a time, with
    `solve_spd`'s fallbacks."""
    if ridge > 0.0:
        try:
            weights = np.linalg.solve(matrices, rhs[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            pass
        else:
            if np.isfinite(weights).all():
                return weights
    return np.array([solve_spd(matrix, r, ridge) for matrix, r in zip(matrices, rhs)])


def pair_kernel_weights(
    stats: ClassStatistics, first: int, reweight: bool, tau: float, eta: float, l2: float
) -> np.ndarray | None:
    """Two classes, in one compiled call (``pair_weights``): the class weights, M = w_0 A^0 +
    w_1 A^1 + b I, r_0 and r_1 (the targets tau +- eta) and one dposv; the weights as rows of
    ``stats.dim`` columns, or None when the kernel is not built, or M is not positive
    definite or they overflow."""
    dim = stats.dim
    weights = np.empty((2, dim), order="F")
    info = _native.pair_weights(stats.buffer, dim, first, reweight, tau, eta, l2, weights)
    return weights if info is not None and _trusted(info, weights, l2) else None


def each_kernel_weights(
    stats: ClassStatistics, first: int, tau: float, eta: float, l2: float
) -> np.ndarray | None:
    """Reweighted multiclass in one compiled call (``each_weights``): every class's M_k and r_k
    and one dposv each; the weights as rows of ``stats.dim`` columns, or None when the kernel
    is not built, or an M_k is not positive definite or the weights overflow."""
    dim = stats.dim
    weights = np.empty((len(stats.labels), dim), order="F")
    info = _native.each_weights(stats.buffer, dim, first, tau, eta, l2, weights)
    return weights if info is not None and _trusted(info, weights, l2) else None
