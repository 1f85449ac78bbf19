"""The one-vs-rest TER systems assembled from the class statistics: M_k and r_k.

The system of class ``k`` (algorithms page, "Total error rate (TER)"; the NR-RLS paper's
Appendix B), with "rest" the union of the other classes, is

    M_k = w_k A^k + w_rest A^rest + b I,      w_k = 1/n^k, w_rest = 1/n^rest
    r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest

(``reweight=False``: both weights 1, plain ridge least squares; an empty side has weight 0, the
0/0 of the paper taken as 0). Every M_k is a linear combination of the class scatters of
`ClassStatistics` (``_stats.py``), so all of them come from one matrix product with its stacked
scatters, and learning costs O(d^2) whatever the number of classes. The constant column is the
model's intercept when ``intercept=True``; otherwise the systems use the columns after it
(``first = 1``) and the intercept is 0.

This module owns the class weights, the mixing coefficients that express M_k and r_k in the
class statistics, and the assembly of the matrices and right-hand sides (upper triangles
authoritative, Fortran order), with the workspace the narrow assembly keeps between calls.
Which solver consumes the systems is not its business (``_solver.py``).

"""

from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np
from scipy.linalg import blas

if typing.TYPE_CHECKING:
    from ._stats import ClassStatistics

__all__ = [
    "ClassWeights",
    "Mixing",
    "PairSystem",
    "assemble",
    "class_weights",
    "combined_matrix",
    "each_class_system",
    "fill_pair_mix",
    "mixing",
    "one_vs_rest_matrices",
    "pair_class_weights",
    "rest_counts",
    "right_hand_sides",
    "right_hand_sides_of",
    "system",
    "systems_share_matrix",
]

# Up to this width `system` combines M and the right-hand sides in one product into a kept
# workspace; wider, the wasted entries of that product would cost a pass.
_NARROW_MAX_DIM = 64


class PairSystem(typing.NamedTuple):
    """A caller's two-class system for `SystemSolver.solve`: M (upper triangle, column-major,
    any column stride: the leading block of a wider one) and the right-hand sides (columns: r_0,
    then r_1 unless tau = 0), as the solver would assemble them from the statistics."""

    matrix: np.ndarray
    rhs: np.ndarray


class ClassWeights(typing.NamedTuple):
    """w_k and w_rest of every class's one-vs-rest system (one entry per class)."""

    own: np.ndarray
    rest: np.ndarray


class Mixing(typing.NamedTuple):
    """M_k and r_k as combinations of the class statistics: ``matrix[k, j]`` is w_k if j == k
    else w_rest (M_k = sum_j matrix[k, j] A^j + b I), ``rhs[k, j]`` the same with the targets
    tau + eta / tau - eta folded in (r_k = sum_j rhs[k, j] s^j)."""

    matrix: np.ndarray
    rhs: np.ndarray


# --------------------------------------------------------------------- coefficients


def systems_share_matrix(n_classes: int, reweight: bool) -> bool:
    """True when every one-vs-rest system has the same M (two classes, or no reweighting)."""
    return n_classes <= 2 or not reweight


def rest_counts(counts: np.ndarray) -> np.ndarray:
    """n^rest of every class's system: the other classes' masses ``counts``, summed directly."""
    if len(counts) == 2:
        return counts[::-1].copy()
    # n^rest_k = (n^0 + ... + n^(k-1)) + (n^(k+1) + ...): two sums of positive masses, no
    # cancellation (N - n^k could lose all the digits of a tiny rest), O(C) not O(C^2).
    before = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=before[1:])  # n^0 + ... + n^(k-1)
    after = np.zeros_like(counts)
    np.cumsum(counts[:0:-1], out=after[-2::-1])  # n^(k+1) + ... + n^(C-1)
    return before + after


def class_weights(stats: ClassStatistics, reweight: bool) -> ClassWeights:
    """(w_k, w_rest) of every class's one-vs-rest system."""
    counts = stats.counts
    rest = rest_counts(counts)
    if reweight:
        pos = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)
        other = np.divide(1.0, rest, out=np.zeros_like(rest), where=rest > 0)
        return ClassWeights(pos, other)  # 1/n^k, 1/n^rest (0 for an empty side)
    return ClassWeights((counts > 0).astype(float), (rest > 0).astype(float))


def pair_class_weights(stats: ClassStatistics, reweight: bool) -> tuple[float, float]:
    """(w_0, w_1) of the two-class system M = w_0 A^0 + w_1 A^1 + b I (w_k of one class is
    w_rest of the other), as Python floats: 1/n^k with reweighting, else 1; 0 for an empty
    side."""
    n_0, n_1 = stats.counts.tolist()
    if reweight:
        return (1.0 / n_0 if n_0 > 0 else 0.0, 1.0 / n_1 if n_1 > 0 else 0.0)  # 1/n^0, 1/n^1
    return float(n_0 > 0), float(n_1 > 0)


def mixing(stats: ClassStatistics, reweight: bool, tau: float, eta: float) -> Mixing:
    """Coefficients of every M_k and r_k as combinations of the class statistics (`Mixing`)."""
    target_pos, target_rest = tau + eta, tau - eta
    pos, rest = class_weights(stats, reweight)
    same = np.eye(stats.n_classes, dtype=bool)
    matrix_mix = np.where(same, pos[:, None], rest[:, None])
    rhs_mix = np.where(same, target_pos * pos[:, None], target_rest * rest[:, None])
    return Mixing(matrix_mix, rhs_mix)


def fill_pair_mix(mix: np.ndarray, w_0: float, w_1: float, tau: float, eta: float) -> np.ndarray:
    """The two-class coefficients written into ``mix`` (3 x 2) in place (item assignments cost
    a third of a new array): row 0 M = w_0 A^0 + w_1 A^1 + b I, row 1 r_0, row 2 r_1; only
    rows 0 and 1 (a view) when tau = 0, where r_1 = -r_0."""
    target_pos, target_rest = tau + eta, tau - eta
    mix[0, 0] = w_0
    mix[0, 1] = w_1
    mix[1, 0] = target_pos * w_0
    mix[1, 1] = target_rest * w_1
    if tau == 0.0:
        return mix[:2]  # r_1 = -r_0: one right-hand side, r_0 = eta (w_0 s^0 - w_1 s^1)
    mix[2, 0] = target_rest * w_0
    mix[2, 1] = target_pos * w_1
    return mix


# ------------------------------------------------------------------------- matrices


def assemble(stats: ClassStatistics, k: int, reweight: bool, l2: float, first: int) -> np.ndarray:
    """M_k = w_k A^k + w_rest A^rest + b I over the columns ``first:`` (upper triangle)."""
    matrix_mix, _ = mixing(stats, reweight, 0.0, 1.0)
    return combined_matrix(stats, matrix_mix[k], l2, first)


def combined_matrix(stats: ClassStatistics, mix: np.ndarray, l2: float, first: int) -> np.ndarray:
    """sum_j mix_j A^j + b I over the columns ``first:``, a new Fortran array (upper
    triangle authoritative), from ONE matrix-vector product over the stacked scatters."""
    return _square(stats, stats.stacked() @ mix, l2, first)  # sum_j mix_j A^j, column-major


def one_vs_rest_matrices(
    stats: ClassStatistics, matrix_mix: np.ndarray, l2: float, first: int
) -> typing.Iterator[np.ndarray]:
    """M_k = sum_j mix_kj A^j + b I of every class k in turn (a generator), for the
    one-vs-rest mixing of `mixing` (mix_kj = w_k for j = k, w_rest for the others), each a
    new Fortran array over the columns ``first:`` (upper triangle authoritative).

    A class no heavier than its rest (w_k >= w_rest) gets M_k = w_rest T + (w_k - w_rest) A^k
    with the total scatter T = sum_j A^j computed once: two coefficients >= 0, so nothing
    cancels, and the C matrices read O(C d^2) numbers rather than O(C^2 d^2). A class
    heavier than its rest (at most one) is combined from every scatter, as `combined_matrix`
    does: its T - A^k would cancel the digits of a small rest.

    """
    flat = stats.stacked()
    total = None
    for k, mix in enumerate(matrix_mix):
        own, rest = mix[k], mix[k - 1]  # w_k, and w_rest (the coefficient of any other class)
        if own < rest:
            yield combined_matrix(stats, mix, l2, first)
            continue
        if total is None:
            total = flat @ np.ones(flat.shape[1])  # T = sum_j A^j
        combined = total * rest  # w_rest T
        combined = blas.daxpy(flat[:, k], combined, a=own - rest)  # + (w_k - w_rest) A^k
        yield _square(stats, combined, l2, first)


def _square(stats: ClassStatistics, combined: np.ndarray, l2: float, first: int) -> np.ndarray:
    """The column-major ``capacity^2`` vector ``combined`` as its square block over the
    columns ``first:dim`` plus b I, a Fortran array (``combined`` itself when it can)."""
    dim = stats.dim
    capacity = stats.buffer.shape[0]
    if first == 0 and capacity == dim:
        combined[:: dim + 1] += l2  # + b I (l2 is the paper's b)
        return combined.reshape(dim, dim, order="F")
    matrix = combined.reshape(capacity, capacity, order="F")[first:dim, first:dim]
    matrix = np.asfortranarray(matrix)
    matrix.ravel(order="F")[:: dim - first + 1] += l2  # + b I (l2 is the paper's b)
    return matrix


def each_class_system(
    stats: ClassStatistics, l2: float, tau: float, eta: float, first: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every class's own M_k (reweighted multiclass) as one ``(C, d, d)`` symmetric array and
    its r_k as the rows of a ``(C, d)`` one, from the total scatter in one pass."""
    dim = stats.dim
    pos, rest = class_weights(stats, True)
    scatters = np.moveaxis(stats.data[first:, first:, :], 2, 0)  # (C, d, d), upper valid
    upper = np.triu(scatters)
    scatters = upper + np.swapaxes(np.triu(upper, 1), 1, 2)  # symmetric
    total = scatters.sum(axis=0)  # T = sum_j A^j
    # M_k = w_k A^k + w_rest (T - A^k) + b I = (w_k - w_rest) A^k + w_rest T + b I
    matrices = scatters * (pos - rest)[:, None, None]
    matrices += rest[:, None, None] * total
    # r_k = (tau + eta) w_k s^k + (tau - eta) w_rest (S - s^k), S = sum_j s^j: O(C d)
    sums = stats.sums(first).T  # row k: s^k
    target_pos, target_rest = tau + eta, tau - eta
    rhs = sums * (target_pos * pos - target_rest * rest)[:, None]
    rhs += (target_rest * rest)[:, None] * sums.sum(axis=0)
    # A class heavier than its rest (w_k < w_rest; at most one) would get its small rest
    # as T - A^k, whose digits cancel: its A^rest and s^rest are summed directly instead.
    for k in np.flatnonzero(pos < rest).tolist():
        others = np.arange(len(pos)) != k
        matrices[k] = pos[k] * scatters[k] + rest[k] * scatters[others].sum(axis=0)
        rhs[k] = target_pos * pos[k] * sums[k] + target_rest * rest[k] * sums[others].sum(0)
    diagonal = np.arange(dim - first)
    matrices[:, diagonal, diagonal] += l2
    return matrices, rhs


# ------------------------------------------------------------------ right-hand sides


def right_hand_sides_of(stats: ClassStatistics, mix: np.ndarray, first: int) -> np.ndarray:
    """R[:, q] = sum_j mix[1 + q, j] s^j over the columns ``first:`` (as `system` gives)."""
    return stats.sums(first) @ mix[1:].T


def right_hand_sides(
    stats: ClassStatistics, reweight: bool, tau: float, eta: float, first: int
) -> np.ndarray:
    """r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest, one row per class."""
    _, rhs_mix = mixing(stats, reweight, tau, eta)
    return rhs_mix @ stats.sums(first).T


# --------------------------------------------------------------------------- systems


def system(
    stats: ClassStatistics, mix: np.ndarray, l2: float, first: int
) -> tuple[np.ndarray, np.ndarray]:
    """M = sum_j mix[0, j] A^j + b I and the right-hand sides R[:, q] = sum_j mix[1 + q, j]
    s^j (over the columns ``first:``), both from ONE product with the stacked scatters.

    The augmented scatter's row 0 is [n^c, s^c], so the combination of the scatters with
    the coefficients ``mix[1 + q]`` holds r_q in its row 0: one matrix product gives M and
    every r (the wasted entries cost less than a second call at the small d where it
    matters). M is a new Fortran array (upper triangle authoritative); R may be a view.
    Narrow, both are views of the statistics' `workspace`, valid until the next call.

    """
    flat = stats.stacked()
    if stats.dim <= _NARROW_MAX_DIM:
        return _narrow_system(stats, flat, mix, l2, first)
    # wide: the d^2 wasted entries of the narrow way would cost a pass; use s^j
    return combined_matrix(stats, mix[0], l2, first), right_hand_sides_of(stats, mix, first)


@dataclasses.dataclass(slots=True)
class _Workspace:
    """Output arrays of `_narrow_system`, kept between calls (as the statistics' `workspace`):
    BLAS writes M and the right-hand sides into ``combined`` in place, read through the views
    ``matrix`` and ``rhs``; M's diagonal lies in ``flat_matrix`` from ``diagonal_start`` every
    ``diagonal_stride`` entries (where ``daxpy`` adds b I, with the vector ``ones``)."""

    flat: np.ndarray  # the stacked scatters it was made for
    key: tuple  # (dim, first, mix.shape) it was made for
    combined: np.ndarray  # (capacity^2, rows), F-contiguous: the product's output
    matrix: np.ndarray  # M over the columns first:dim (a view)
    rhs: np.ndarray  # R, one column per right-hand side (a view)
    flat_matrix: np.ndarray  # M, column-major, as the output's first column (a view)
    ones: np.ndarray
    diagonal_start: int
    diagonal_stride: int

    @classmethod
    def build(cls, flat: np.ndarray, dim: int, first: int, rows: int, key: tuple) -> _Workspace:
        capacity = int(round(math.sqrt(flat.shape[0])))
        combined = np.empty((rows, capacity * capacity))
        square = combined[0].reshape(capacity, capacity, order="F")
        matrix = square[first:dim, first:dim]  # F-contiguous when first == 0, capacity == dim
        rhs = combined[1:, first * capacity : dim * capacity : capacity].T  # row 0 of each
        # combined.T is F-contiguous: BLAS's product writes into it in place
        return cls(
            flat,
            key,
            combined.T,
            matrix,
            rhs,
            combined[0],
            np.ones(dim - first),
            first * (capacity + 1),
            capacity + 1,
        )


def _narrow_system(
    stats: ClassStatistics, flat: np.ndarray, mix: np.ndarray, l2: float, first: int
) -> tuple[np.ndarray, np.ndarray]:
    """`system` for narrow widths, into the statistics' workspace: one product, one in-place
    addition, no new views (their cost is comparable to the arithmetic at small d)."""
    dim = stats.dim
    key = (dim, first, mix.shape)
    space = stats.workspace
    if space is None or space.flat is not flat or space.key != key:
        space = stats.workspace = _Workspace.build(flat, dim, first, len(mix), key)
    # column 0: M column-major; column 1 + q: sum_j mix[1+q, j] A^j, whose row 0 is r_q.
    # (alpha, a, b, beta, c, trans_a, trans_b, overwrite_c) by position: f2py parses keyword
    # arguments for about as long as the product takes at these sizes. ``mix`` is C-ordered,
    # so mix.T is F-contiguous.
    blas.dgemm(1.0, flat, mix.T, 0.0, space.combined, 0, 0, 1)
    ones = space.ones
    # + b I (l2 is the paper's b): (x, y, n, a, offx, incx, offy, incy), in place on M's
    # diagonal
    blas.daxpy(
        ones,
        space.flat_matrix,
        len(ones),
        l2,
        0,
        1,
        space.diagonal_start,
        space.diagonal_stride,
    )
    return space.matrix, space.rhs
