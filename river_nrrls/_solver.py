"""How NR-RLS turns its statistics into weights: direct Cholesky, or a stale factor + CG.

`ClassStatistics` (``_stats.py``) gives, for every one-vs-rest system k,

    M_k = w_k A^k + w_rest A^rest + b I,     r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest

(w_k = 1/n^k, w_rest = 1/n^rest with TER reweighting). `SystemSolver` gives w_k = M_k^-1 r_k
for the current statistics by one of three exact ways, chosen at every solve:

- **direct**: one Cholesky factorisation and solve (LAPACK ``dposv``) per distinct matrix (two
  classes share M, and with tau = 0 their right-hand sides are opposite: one solve); with two
  classes the whole solve is one compiled call (``_kernels.pyx``'s ``pair_weights``);
- **batched direct** (many classes with reweighting, small d): the C systems assembled from
  the total scatter in one pass and solved in one batched LAPACK call (in one compiled call,
  ``each_weights``, one dposv a class, where the kernels are built);
- **stale factor** (wide models): conjugate gradients on M(t) w = r, preconditioned by the
  explicit inverse P^-1 of an older M(t0) plus the samples learnt since t0 (each added by
  Sherman-Morrison, `inverse_step`), scaled by the class weights' common shrinkage, warm
  started from the last weights, refreshed when the class weights drift or CG slows down, and
  replaced by a direct solve whenever it does not converge: every answer is as exact as the
  direct one. Reweighted multiclass keeps one such factor per class's system.

The method, its error estimate, its stopping tests and the refresh rules are written up on the
algorithms page, "The stale-factor solver"; the constants below name each rule. The choice is
automatic: stale factor from ``STALE_MIN_DIM`` columns (``CLASS_STALE_MIN_DIM``, or
``COMPILED_CLASS_STALE_MIN_DIM`` with the compiled kernels, for the per-class factors), direct
below. `Solver` is the interface the estimator holds, shared with
the paper's recursion (``_woodbury.py``).

"""

from __future__ import annotations

import math
import typing

import numpy as np
import scipy
from scipy.linalg import blas, lapack

from . import _native
from ._stats import ClassStatistics, symmetrize_upper
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

__all__ = [
    "InverseStep",
    "PairSystem",
    "Solver",
    "SystemSolver",
    "inverse_step",
    "pair_class_weights",
    "solve_spd",
]

STALE_MIN_DIM = 112  # below it the direct path is as fast or faster (benchmarks/speed.py)
CLASS_STALE_MIN_DIM = 64  # the same for the per-class factors of reweighted multiclass, whose
# direct path solves C systems (benchmarks/overhead.py) ...
COMPILED_CLASS_STALE_MIN_DIM = 120  # ... and where the compiled kernels solve them (one call for
# all C systems; the factors' CG compiled too): the factors pay from 112-128 columns with 3 to
# 10 classes (benchmarks/speed.py's five-class section runs either side)
QUEUE_CAPACITY = 48  # samples learnt without a prediction that the factor takes in (at least;
# d / 8 when wider): beyond them it is let go (no queue grows with a stream that never predicts)
UPDATE_LIMIT = 5  # queue capacities of rank-1 updates of P^-1 before a new factorisation
# (against the rounding they accumulate)
MAX_DRIFT = 0.05  # spread of the class-weight ratios rho_c since t0 before refactoring
MIN_SCALE = 0.75  # ... or their common scale s beyond [0.75, 1 / 0.75] (the ridge b I does
# not follow s)
MAX_ITERATIONS = 8  # CG iterations before giving up on the stale factor
MIN_CONTRACTION = 0.3  # an iteration whose residual ratio exceeds this triggers a refactor
TOLERANCE = 1e-9  # ||P^-1 (r - M w)|| <= this ||w||: the relative error estimate
SINGLE_TOLERANCE = 1e-3  # ||P32^-1 M x - x|| / ||x|| (x random) at the factorisation below
# which P^-1 is kept in single precision ...
SINGLE_MIN_DIM = 192  # ... from this width on (narrower, the conversions cost more than the
# halved bytes save: benchmarks/overhead.py)
BACKWARD_TOLERANCE = 1e-15  # ... or ||D^-1 (r - M w)|| <= this ||D w||, D = sqrt(diag M) (a
# direct solve's residual, in the system scaled to a unit diagonal)


_dot = blas.ddot  # x . y of two vectors: a quarter of the cost of numpy's ``@`` for them
# P^-1's BLAS kernels (symmetric product, symmetric rank-1 update, dot product) by its dtype
_KERNELS = {"d": (blas.dsymv, blas.dsyr, blas.ddot), "f": (blas.ssymv, blas.ssyr, blas.sdot)}
_SAFE_NORMS = (1e-20, 1e20)  # vectors of these norms keep every digit that matters in single
# The per-step BLAS calls pass their arguments by position: f2py parses a keyword argument for
# ~0.3-0.5 us, as much as a whole small call (``dsymv``'s default is the upper triangle).


class PairSystem(typing.NamedTuple):
    """A caller's two-class system for `SystemSolver.solve`: M (upper triangle, column-major,
    any column stride: the leading block of a wider one) and the right-hand sides (columns: r_0,
    then r_1 unless tau = 0), as the solver would assemble them from the statistics."""

    matrix: np.ndarray
    rhs: np.ndarray


class InverseStep(typing.NamedTuple):
    """What `inverse_step` gives: the new ``P``, the old ``P x`` and ``1/gamma + x^T P x``."""

    inverse: np.ndarray
    product: np.ndarray
    denominator: float


def inverse_step(inverse: np.ndarray, x: np.ndarray, inverse_weight: float) -> InverseStep:
    """Add the sample ``x`` of weight ``gamma = 1 / inverse_weight`` to the matrix whose inverse
    is ``P`` (Sherman-Morrison: the inverse of a matrix plus one rank-1 term), O(d^2):

        z = P x,    c = 1/gamma + x^T z,    (P^-1 + gamma x x^T)^-1 = P - z z^T / c

    ``inverse`` is ``P`` (Fortran order, upper triangle authoritative, double or single
    precision: its dtype picks the BLAS kernels), updated in place whenever BLAS can; ``x`` has
    its dtype. The RLS gain is ``gamma P_new x = z / c``. A ``denominator`` that is not > 0
    means ``P`` lost its positive definiteness (rounding): the returned ``P`` is then
    meaningless and the caller refactors.

    """
    symmetric_product, rank_one_update, dot = _KERNELS[inverse.dtype.char]
    product = symmetric_product(1.0, inverse, x)  # z = P x
    denominator = inverse_weight + float(dot(x, product))  # c = 1/gamma + x^T P x
    if not denominator > 0.0:
        return InverseStep(inverse, product, denominator)
    # P <- P - z z^T / c  (alpha, x, lower, incx, offx, n, a, overwrite_a): see `_dot`
    inverse = rank_one_update(-1.0 / denominator, product, 0, 1, 0, len(product), inverse, 1)
    return InverseStep(inverse, product, denominator)


def pair_class_weights(stats: ClassStatistics, reweight: bool) -> tuple[float, float]:
    """(w_0, w_1) of the two-class system M = w_0 A^0 + w_1 A^1 + b I (w_k of one class is
    w_rest of the other), as Python floats: 1/n^k with reweighting, else 1; 0 for an empty
    side."""
    n_0, n_1 = stats.counts.tolist()
    if reweight:
        return (1.0 / n_0 if n_0 > 0 else 0.0, 1.0 / n_1 if n_1 > 0 else 0.0)  # 1/n^0, 1/n^1
    return float(n_0 > 0), float(n_1 > 0)


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
    if info == 0 and (ridge > 1e-200 or np.isfinite(solution).all()):
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


class _StaleFactor:
    """P^-1, the inverse of M(t0) plus the samples learnt since t0, kept explicitly.

    It starts as M(t0)^-1 (from the Cholesky factor of M(t0)) and every sample x of frozen
    weight f that enters P (``append``) updates it by Sherman-Morrison:

        z = P^-1 x,    c = 1/f + x^T z,    (P + f x x^T)^-1 = P^-1 - z z^T / c

    one symmetric product and one rank-1 update (``symv``, ``syr``): O(d^2). Applying P^-1
    is then one symmetric product. The rounding of the updates only makes the preconditioner a
    little less good, never the answer; after ``UPDATE_LIMIT`` queue capacities of them the
    factor is refreshed. P^-1 is double or single precision (its dtype picks the BLAS
    kernels); vectors come in and go out in double precision.

    """

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "updates" not in state:
            # Pickled by the earlier block form (M(t0)^-1 and a separate block): its inverse
            # lacks the block's samples. The answers would still be exact (CG), but refactor.
            self.updates, self.refactor = 0, True

    def __init__(self, inverse: np.ndarray, coefficients: np.ndarray):
        width = len(inverse)
        self.capacity = _queue_capacity(width)  # samples queued before letting go
        self.inverse = inverse  # P^-1 (upper triangle)
        self.coefficients = coefficients.copy()  # w_c(t0)
        self.decay = np.ones(len(coefficients))  # lambda_c: decay of class c's t0 part
        self.updates = 0  # samples added to P since the factorisation
        self.scale = 1.0  # s: M(t) ~ s P (the class weights' common shrinkage since t0)
        self.refactor = False  # set when CG struggled: refactor at the next solve
        self.last_iterations = 0

    def append(self, vector: np.ndarray, frozen: float) -> bool:
        """Add f x x^T to P; False when P^-1 lost positive definiteness (rounding)."""
        inverse = self.inverse
        kernel = _native.stale_append
        if kernel is not None and inverse.flags.f_contiguous and inverse.flags.writeable:
            # The same update, in place, in one compiled call (``_kernels.pyx``)
            if not kernel(inverse, vector, frozen, *_SAFE_NORMS):
                return False
            self.updates += 1
            return True
        # x = sigma u: u meets P^-1's precision, sigma stays in double. sigma = 1 for an x of
        # a safe norm (see `apply`), ||x|| otherwise (||u|| = 1).
        norm = math.sqrt(_dot(vector, vector))
        sigma = 1.0 if _safe_norm(norm) else norm
        mass = frozen * sigma * sigma  # f sigma^2 (inf or NaN for a non-finite x)
        if not mass < math.inf:
            return False
        if not mass > 0.0:  # nothing to add (x = 0, or less than the least double)
            self.updates += 1
            return True
        # P^-1 <- P^-1 - z z^T / c = P^-1 - (P^-1 u)(P^-1 u)^T / (c / sigma^2), with
        # c / sigma^2 = 1 / (f sigma^2) + u^T P^-1 u: the step of the unit u of mass f sigma^2
        step = inverse_step(inverse, _scaled(vector, sigma, inverse.dtype), 1.0 / mass)
        if not step.denominator > 0.0:
            return False
        self.inverse = step.inverse
        self.updates += 1
        return True

    def apply(self, vector: np.ndarray, factor: float = 1.0, norm: float | None = None):
        """c P^-1 v, c = ``factor``, in double precision (``norm``: ||v||, when known)."""
        inverse = self.inverse
        if inverse.dtype.char == "d":
            return blas.dsymv(factor, inverse, vector)
        # Single precision: v and P^-1 v must keep their digits there (residuals of weights of
        # 1e-40 underflow). Within a safe window of norms v goes as it is; otherwise it enters
        # at unit norm and the product is scaled back in double, so that only P^-1's range
        # (checked by the probe) meets single precision's.
        if norm is None:
            norm = math.sqrt(_dot(vector, vector))
        if not norm < math.inf:
            return np.full(len(vector), math.nan)  # a non-finite v: CG gives up, and refactors
        if _safe_norm(norm):
            product = blas.ssymv(factor, inverse, _scaled(vector, 1.0, np.float32)).astype(float)
            if _safe_norm(math.sqrt(_dot(product, product))):
                return product
        scale = norm if norm > 0.0 else 1.0
        unit = _scaled(vector, scale, np.float32)  # v / ||v||
        return np.multiply(blas.ssymv(1.0, inverse, unit), factor * scale, dtype=float)


def _queue_capacity(width: int) -> int:
    """Samples learnt without a prediction that a factor of this width takes in."""
    return max(QUEUE_CAPACITY, width // 8)


def _safe_norm(norm: float) -> bool:
    """Whether a vector of this norm keeps every digit that matters in single precision."""
    return _SAFE_NORMS[0] <= norm <= _SAFE_NORMS[1]


def _scaled(vector: np.ndarray, scale: float, dtype) -> np.ndarray:
    """``vector / scale`` in ``dtype``, divided in double before the cast (no under- or
    overflow on the way); ``scale = 1`` is a plain cast (no copy when already ``dtype``)."""
    if scale == 1.0:
        return vector.astype(dtype, copy=False)
    scaled = np.empty(len(vector), dtype=dtype)
    np.multiply(vector, 1.0 / scale, out=scaled, casting="unsafe")
    return scaled


class Solver(typing.Protocol):
    """How an estimator's weights come out of its `ClassStatistics`: the one interface of
    `SystemSolver` (direct and stale-factor solves) and of the paper's recursion
    (`river_nrrls._woodbury.RecursiveInverse`).

    The estimator tells the solver of every change of the statistics, in this order: a new class
    (`add_class`, after the statistics registered it), new feature columns (`grow`, after the
    statistics grew), a sample (`observe`, BEFORE the statistics learn it), any other change
    (`invalidate`, after it: a mini-batch, a merge, a reset, new parameters). `solve` then gives
    the weights of every class, one row each, ``stats.dim`` columns.

    """

    #: Whether a mini-batch must be learnt sample by sample (the solver follows every update).
    sequential: bool

    def add_class(self, stats: ClassStatistics) -> None: ...

    def grow(self, dim: int) -> None: ...

    def observe(self, stats: ClassStatistics, slot: int, vector: np.ndarray, weight: float): ...

    def invalidate(self, stats: ClassStatistics) -> None: ...

    def solve(self, stats: ClassStatistics) -> np.ndarray: ...


class SystemSolver:
    """Weights of every one-vs-rest system from the statistics, by the cheapest exact path.

    Parameters
    ----------
    l2, tau, eta, reweight, first, forgetting
        As in `NRRLS` (``first`` is 1 when there is no intercept: the constant column is left
        out of the systems).

    ``observe`` must be told every sample that ``learn_one`` adds to the statistics, and
    ``invalidate`` every other change (learn_many, merge, reset), so that the stale factor's
    P^-1 stays the inverse of M(t0) plus what was learnt since t0. ``stale_min_dim`` and
    ``class_stale_min_dim`` are the widths from which the stale-factor paths are used, shared
    and per class (the benchmarks set them out of reach to time the direct paths).

    The factor is built at the second wide solve after a change the updates cannot follow (or
    after the first ever), not at the first: building M(t0)^-1 costs about three direct solves,
    and pays only when predictions keep following ``learn_one``'s. A copy that predicts once (a
    block-prequential scorer of `PolynomialOrderSelector`) or ``learn_many`` batches between
    predictions then pay one direct solve each, as they would without the stale factor.

    """

    sequential = False  # a mini-batch invalidates: the next solve is direct
    primed = False  # class defaults: models pickled before these attributes existed
    pair_mix = None
    class_factors = None
    class_previous = None
    class_stale_min_dim: int | None = None  # None: `class_threshold`'s automatic choice

    def __init__(
        self, l2: float, tau: float, eta: float, reweight: bool, first: int, forgetting: float
    ):
        self.forgetting = forgetting
        self.l2 = l2
        self.tau = tau
        self.eta = eta
        self.reweight = reweight
        self.first = first
        self.stale_min_dim = STALE_MIN_DIM
        self.class_stale_min_dim = None
        self.stale: _StaleFactor | None = None
        self.pending: list[tuple[int, np.ndarray, float]] = []
        self.previous: np.ndarray | None = None  # last weights of the shared system (columns)
        # Reweighted multiclass: one stale factor per class's system (None where a class has
        # none), and the last weights of every class (rows)
        self.class_factors: list[_StaleFactor | None] | None = None
        self.class_previous: np.ndarray | None = None
        self.primed = False  # a wide direct solve ran since the last invalidation
        self.counters = {"direct": 0, "refactor": 0, "iterations": 0, "stale": 0}
        self.pair_mix = np.zeros((3, 2))  # the two-class `mix`, filled in place (see _solve)

    # ------------------------------------------------------------- notifications

    def add_class(self, stats: ClassStatistics) -> None:
        """Nothing to do: a new class changes the systems' coefficients, which the next solve
        sees (the stale factors refactor)."""

    def grow(self, dim: int) -> None:
        """Nothing to do: the next solve sees the new width (the stale factors refactor)."""

    def observe(self, stats: ClassStatistics, slot: int, vector: np.ndarray, weight: float):
        """A sample of class ``slot`` and mass ``weight`` is being added to the statistics."""
        if self.stale is None and self.class_factors is None:
            return
        capacity = _queue_capacity(len(vector) - self.first)
        if len(self.pending) >= capacity:
            # More samples than a queue holds: the next solve would refactor anyway. Let go of
            # the factor now, so that a stream that learns without predicting keeps no list
            # growing with the samples seen.
            self.invalidate()
            return
        self.pending.append((slot, vector, weight))

    def invalidate(self, stats: ClassStatistics | None = None) -> None:
        """The statistics changed in a way the updates cannot follow: solve directly next time."""
        self.stale = None
        self.class_factors = self.class_previous = None
        self.primed = False
        self.pending = []

    # ------------------------------------------------------------------- solving

    def solve(self, stats: ClassStatistics, given: PairSystem | None = None) -> np.ndarray:
        """Weights of every class, one row each, ``stats.dim`` columns (0 before ``first``).

        From ``ONE_THREAD_MIN_DIM`` columns on, BLAS runs on one thread meanwhile (see
        `river_nrrls._threads`). ``given``: with two classes, the system of these statistics
        when the caller has it (`PairSystem`), which the stale-factor path then reads instead
        of assembling its own (`PolynomialOrderSelector`'s orders share the highest one's).

        """
        if stats.dim < ONE_THREAD_MIN_DIM:
            return self._solve(stats, given)
        with one_blas_thread(stats.dim):
            return self._solve(stats, given)

    def _solve(self, stats: ClassStatistics, given: PairSystem | None = None) -> np.ndarray:
        n_classes, first, dim = len(stats.labels), self.first, stats.dim
        if n_classes == 0 or dim == first:
            self.invalidate()
            return np.zeros((n_classes, dim))
        if n_classes > 2 and not stats.systems_share_matrix(self.reweight):
            wide = dim - first >= self.class_threshold()
            if wide and self.primed:
                return self._full_width(self._solve_per_class(stats), dim)
            self.invalidate()
            self.primed = wide  # the next wide solve builds the factors
            if _native.each_weights is not None:
                # Every class's M_k and r_k and one dposv each, in one compiled call
                weights = np.empty((n_classes, dim), order="F")
                info = _native.each_weights(
                    stats.buffer, dim, first, self.tau, self.eta, self.l2, weights
                )
                if info == 0 and (self.l2 > 1e-200 or np.isfinite(weights).all()):
                    self.counters["direct"] += 1
                    return weights
            # not built, or not positive definite or overflowing: the batched solve's fallbacks
            return self._full_width(self._solve_each(stats), dim)
        opposite = False  # r_1 = -r_0: one right-hand side for two classes
        wide = self._wide(dim)
        stale_path = wide and self.primed  # decided before any bookkeeping moves `primed`
        kernel_failed = False
        if n_classes == 2 and _native.pair_weights is not None and not stale_path:
            self._direct_bookkeeping(wide)
            weights = np.empty((2, dim), order="F")
            # The class weights, M = w_0 A^0 + w_1 A^1 + b I, r_0 and r_1 (the targets
            # tau +- eta) and one dposv, in one compiled call
            info = _native.pair_weights(
                stats.buffer, dim, first, self.reweight, self.tau, self.eta, self.l2, weights
            )
            if info == 0 and (self.l2 > 1e-200 or np.isfinite(weights).all()):
                return weights
            kernel_failed = True  # not positive definite, or overflowing: solve_spd below
        if n_classes == 2:
            # Python scalars: the two-class hot path avoids most numpy calls.
            w_0, w_1 = pair_class_weights(stats, self.reweight)
            target_pos, target_rest = self.tau + self.eta, self.tau - self.eta
            opposite = self.tau == 0.0
            # Filled in place: item assignments cost a third of a new array. (Nothing keeps
            # it: the stale factor copies its coefficients.)
            mix = self.pair_mix
            if mix is None:
                mix = self.pair_mix = np.zeros((3, 2))
            # row 0: M = w_0 A^0 + w_1 A^1 + b I; row 1: r_0; row 2: r_1
            mix[0, 0] = w_0
            mix[0, 1] = w_1
            mix[1, 0] = target_pos * w_0
            mix[1, 1] = target_rest * w_1
            if opposite:
                mix = mix[:2]  # r_1 = -r_0: one right-hand side, r_0 = eta (w_0 s^0 - w_1 s^1)
            else:
                mix[2, 0] = target_rest * w_0
                mix[2, 1] = target_pos * w_1
        else:
            matrix_mix, rhs_mix = stats.mixing(self.reweight, self.tau, self.eta)
            mix = np.vstack((matrix_mix[:1], rhs_mix))  # M's coefficients, then r_k's
        if stale_path and n_classes == 2 and given is not None:
            matrix, rhs = given  # the caller's M and r
        elif stale_path and n_classes == 2 and _native.pair_matrix is not None:
            # Only M's upper triangle, all that the stale path reads (symv, potrf, its
            # diagonal): half the bytes of the product with the stacked scatters
            matrix = np.empty((dim - first, dim - first), order="F")
            _native.pair_matrix(stats.buffer, dim, first, w_0, w_1, self.l2, matrix)
            rhs = stats.right_hand_sides_of(mix, first)
        else:
            matrix, rhs = stats.system(mix, self.l2, first)
        if stale_path:
            weights = self._solve_stale(matrix, dim, mix[0], rhs)
        elif kernel_failed:  # its bookkeeping is done; solve_spd's fallbacks
            weights = solve_spd(matrix, rhs, self.l2)
        else:
            self._direct_bookkeeping(wide)
            # M is ours (freshly assembled): factorise it in place.
            _, weights, info = lapack.dposv(matrix, rhs, 0, 1)  # upper, overwrite_a
            if info != 0 or (self.l2 <= 1e-200 and not np.isfinite(weights).all()):
                weights = solve_spd(*stats.system(mix, self.l2, first), self.l2)  # fallbacks
        if opposite:  # tau = 0, two classes: rows w_0 and w_1 = -w_0 (exact)
            rows = np.empty((2, len(weights)), order="F")
            rows[0] = weights[:, 0]
            np.negative(weights[:, 0], out=rows[1])
            return self._full_width(rows, dim)
        return self._full_width(weights.T, dim)

    def stale_pair_columns(
        self, dim: int, class_weights: tuple[float, float], matrix, rhs: np.ndarray
    ) -> np.ndarray | None:
        """`solve`'s two-class stale-factor step for a caller that holds the system: M^-1 r
        as columns (w_0, then w_1 unless tau = 0: w_1 = -w_0), as `solve` would compute them
        on statistics of ``dim`` columns whose class weights are ``class_weights`` (w_0, w_1)
        and whose M and r are ``matrix`` and ``rhs`` (as `PairSystem`); None when `solve`
        would not take its stale factor (not primed yet, or narrower than ``stale_min_dim``):
        then call `solve`. Without `solve`'s dispatch, for the orders of
        `PolynomialOrderSelector`, which call it inside `one_blas_thread`."""
        if not (self.primed and self._wide(dim)):
            return None
        return self._solve_stale(matrix, dim, np.array(class_weights), rhs)

    def class_threshold(self) -> int:
        """The width from which reweighted multiclass keeps a stale factor per class:
        ``class_stale_min_dim`` when set, else ``COMPILED_CLASS_STALE_MIN_DIM`` where the
        compiled ``each_weights`` solves the C systems and ``CLASS_STALE_MIN_DIM`` where
        numpy's batched solve does."""
        if self.class_stale_min_dim is not None:
            return self.class_stale_min_dim
        if _native.each_weights is not None:
            return COMPILED_CLASS_STALE_MIN_DIM
        return CLASS_STALE_MIN_DIM

    def takes_pair_kernel(self, stats: ClassStatistics) -> bool:
        """Whether `solve` would take the compiled two-class direct solve (``pair_weights``)."""
        dim = stats.dim
        return (
            len(stats.labels) == 2
            and dim > self.first
            and not (self.primed and self._wide(dim))
            and _native.pair_weights is not None
        )

    def pair_kernel_solved(self, stats: ClassStatistics) -> None:
        """A caller solved as `solve` would when `takes_pair_kernel` (the compiled
        ``pair_outputs``, `NRRLS._outputs`): the same bookkeeping."""
        self._direct_bookkeeping(self._wide(stats.dim))

    def _wide(self, dim: int) -> bool:
        """Whether the shared system of statistics ``dim`` columns wide is wide enough for
        the stale factor (taken once `primed`)."""
        return dim - self.first >= self.stale_min_dim

    def _direct_bookkeeping(self, wide: bool) -> None:
        """A direct solve of the shared system: any stale factor is let go, and a wide one
        primes the next solve to build it."""
        if self.stale is not None or self.class_factors is not None:
            self.invalidate()
        self.primed = wide  # the next wide solve builds the stale factor
        self.counters["direct"] += 1

    def _full_width(self, weights: np.ndarray, dim: int) -> np.ndarray:
        """Rows of ``dim`` weights: the columns before ``first`` (the constant) get weight 0."""
        if self.first == 0:
            return weights
        solution = np.zeros((len(weights), dim))
        solution[:, self.first :] = weights
        return solution

    def _solve_each(self, stats: ClassStatistics) -> np.ndarray:
        """Every class's own M_k (reweighted multiclass), all in one batched LAPACK call."""
        first, dim = self.first, stats.dim
        pos, rest = stats.class_weights(True)
        scatters = np.moveaxis(stats.data[first:, first:, :], 2, 0)  # (C, d, d), upper valid
        upper = np.triu(scatters)
        scatters = upper + np.swapaxes(np.triu(upper, 1), 1, 2)  # symmetric
        total = scatters.sum(axis=0)  # T = sum_j A^j
        # M_k = w_k A^k + w_rest (T - A^k) + b I = (w_k - w_rest) A^k + w_rest T + b I
        matrices = scatters * (pos - rest)[:, None, None]
        matrices += rest[:, None, None] * total
        # r_k = (tau + eta) w_k s^k + (tau - eta) w_rest (S - s^k), S = sum_j s^j: O(C d)
        sums = stats.sums(first).T  # row k: s^k
        target_pos, target_rest = self.tau + self.eta, self.tau - self.eta
        rhs = sums * (target_pos * pos - target_rest * rest)[:, None]
        rhs += (target_rest * rest)[:, None] * sums.sum(axis=0)
        # A class heavier than its rest (w_k < w_rest; at most one) would get its small rest
        # as T - A^k, whose digits cancel: its A^rest and s^rest are summed directly instead.
        for k in np.flatnonzero(pos < rest).tolist():
            others = np.arange(len(pos)) != k
            matrices[k] = pos[k] * scatters[k] + rest[k] * scatters[others].sum(axis=0)
            rhs[k] = target_pos * pos[k] * sums[k] + target_rest * rest[k] * sums[others].sum(0)
        diagonal = np.arange(dim - first)
        matrices[:, diagonal, diagonal] += self.l2
        self.counters["direct"] += 1
        if self.l2 > 0.0:
            try:
                weights = np.linalg.solve(matrices, rhs[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                pass
            else:
                if np.isfinite(weights).all():
                    return weights
        # Singular or overflowing: one system at a time, with solve_spd's fallbacks.
        return np.array([solve_spd(matrix, r, self.l2) for matrix, r in zip(matrices, rhs)])

    # ----------------------------------------------------------------- stale factor

    def _refactor(self, matrix, coefficients: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """Direct solve of the shared M, whose factor becomes the new M(t0)."""
        self.stale, self.pending = None, []
        weights, self.stale = self._factorise(matrix, coefficients, rhs)
        self.previous = None if self.stale is None else weights
        return weights

    def _factorise(self, matrix, coefficients: np.ndarray, rhs: np.ndarray):
        """Direct solve of M w = r (columns of ``rhs``) and, from the same Cholesky factor, a
        stale factor with M as its M(t0): ``(weights, factor)``, the factor None when M is not
        positive definite in floating point or a class is empty (then the direct fallbacks)."""
        self.counters["refactor"] += 1
        factor, info = lapack.dpotrf(matrix, lower=0, clean=1)
        weights = inverse = None
        if info == 0 and (coefficients > 0).all():
            weights, info = lapack.dpotrs(factor, rhs, lower=0)
            if info == 0:
                inverse, info = lapack.dpotri(factor, lower=0, overwrite_c=1)  # M(t0)^-1
        if inverse is None or info != 0 or not np.isfinite(weights).all():
            return solve_spd(matrix, rhs, self.l2), None
        if len(inverse) >= SINGLE_MIN_DIM:
            inverse = _single_if_accurate(inverse, matrix)
        return weights, _StaleFactor(inverse, coefficients)

    def _usable(self, stale: _StaleFactor, dim: int, coefficients: np.ndarray, pending) -> bool:
        """Bring P^-1 up to date with the ``pending`` samples; False when the factor must be
        refreshed."""
        if (
            stale.refactor
            or len(stale.inverse) != dim - self.first
            or len(stale.coefficients) != len(coefficients)
        ):
            return False
        first = self.first
        if stale.updates + len(pending) > UPDATE_LIMIT * stale.capacity:
            return False
        if self.forgetting != 1.0:
            for slot, _, _ in pending:
                stale.decay[slot] *= self.forgetting  # the t0 part of class slot decays
        # rho_c = w_c(t) lambda_c / w_c(t0): how much class c's part of M moved since t0
        # (Python floats: a few classes, and this runs at every solve of every order)
        now = coefficients.tolist()
        ratios = [
            weight * decay / then
            for weight, decay, then in zip(now, stale.decay.tolist(), stale.coefficients.tolist())
        ]
        low, high = min(ratios), max(ratios)
        # s = sqrt(min rho * max rho): the common scale, M(t) ~ s P
        scale = math.sqrt(low * high)
        if high > low * (1.0 + MAX_DRIFT) or not MIN_SCALE <= scale <= 1.0 / MIN_SCALE:
            return False
        stale.scale = scale
        for slot, vector, weight in pending:
            if len(vector) != dim:
                return False
            # frozen weight f = (sample mass) w_c(t) / s: the sample's share of M(t) / s
            frozen = weight * now[slot] / scale
            if not stale.append(np.ascontiguousarray(vector[first:] if first else vector), frozen):
                return False
        return True

    def _iterate(self, matrix, rhs: np.ndarray, previous: np.ndarray, stale: _StaleFactor):
        """CG on M w = r for every column of ``rhs``, from ``previous``; None if one fails."""
        weights = np.empty_like(rhs)
        for j in range(rhs.shape[1]):
            solution = _conjugate_gradients(matrix, rhs[:, j], previous[:, j].copy(), stale)
            if solution is None:
                return None
            weights[:, j] = solution
        self.counters["stale"] += 1
        self.counters["iterations"] += stale.last_iterations
        return weights

    def _solve_stale(self, matrix, dim: int, coefficients: np.ndarray, rhs: np.ndarray):
        stale = self.stale
        previous = self.previous
        pending, self.pending = self.pending, []
        if (
            stale is None
            or previous is None
            or previous.shape != rhs.shape
            or not self._usable(stale, dim, coefficients, pending)
        ):
            return self._refactor(matrix, coefficients, rhs)
        weights = self._iterate(matrix, rhs, previous, stale)
        if weights is None:
            return self._refactor(matrix, coefficients, rhs)
        self.previous = weights
        return weights

    def _solve_per_class(self, stats: ClassStatistics) -> np.ndarray:
        """Reweighted multiclass at a wide d: every class's own M_k with its own stale factor.

        An arrival moves every M_k = sum_j mix_kj A^j + b I (mix_kj = w_k for j = k, w_rest for
        the others) by a rescaling of its parts (1/n^k or 1/n^rest changes) and a rank-1 term:
        in terms of the class scatters, the structure of the shared system, with the mixing row
        k as the coefficients w_c. So each system is the shared case on its own: its M(t0)^-1,
        the samples since t0 frozen with its own weights, CG from its last weights, and its own
        refactorisations. Weights of every class as rows.

        """
        first, dim = self.first, stats.dim
        matrix_mix, rhs_mix = stats.mixing(self.reweight, self.tau, self.eta)
        rhs = rhs_mix @ stats.sums(first).T  # r_k, one row per class
        n_classes = len(rhs)
        factors, previous = self.class_factors, self.class_previous
        pending, self.pending = self.pending, []
        if factors is None or previous is None or previous.shape != rhs.shape:
            # First per-class solve, a new class, or new features: every class refactors.
            self.stale = self.previous = None
            factors, previous = [None] * n_classes, None
        weights = np.empty_like(rhs)
        matrices = stats.one_vs_rest_matrices(matrix_mix, self.l2, first)  # M_k, one at a time
        for k, matrix in enumerate(matrices):
            stale, solution = factors[k], None
            if stale is not None and self._usable(stale, dim, matrix_mix[k], pending):
                solution = self._iterate(matrix, rhs[k][:, None], previous[k][:, None], stale)
            if solution is None:
                solution, factors[k] = self._factorise(matrix, matrix_mix[k], rhs[k][:, None])
            weights[k] = solution[:, 0]
        self.class_factors, self.class_previous = factors, weights
        return weights


def _single_if_accurate(inverse: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """M^-1 in single precision if, applied to M x for a random x, it gives x back to
    ``SINGLE_TOLERANCE`` (relative); else ``inverse`` as it is (double).

    Rounding M^-1 to single precision perturbs it by about 6e-8 of its largest entries, that is
    of 1 / (smallest eigenvalue of M); times M that is an error of about 6e-8 cond(M) in M's
    large directions. A random x has a share of every direction, so ||P32^-1 M x - x|| / ||x||
    measures how far the single copy is from an exact preconditioner (``matrix`` and
    ``inverse``: upper triangles authoritative).

    """
    probe = np.random.default_rng(0).standard_normal(len(inverse))  # the same x every time
    with np.errstate(over="ignore", invalid="ignore"):  # beyond single range: inf, refused
        image = blas.dsymv(1.0, matrix, probe).astype(np.float32)  # M x
        single = inverse.astype(np.float32, order="F")
        error = blas.ssymv(1.0, single, image) - probe  # P32^-1 M x - x
    if not math.sqrt(float(error @ error)) <= SINGLE_TOLERANCE * math.sqrt(_dot(probe, probe)):
        return inverse
    return single


def _at_rounding_level(residual: np.ndarray, weights: np.ndarray, root: np.ndarray) -> bool:
    """Whether r - M w is as small as a backward-stable direct solve leaves it.

    Cholesky's accuracy does not depend on how the columns are scaled, so neither may this
    test: it is taken in the system scaled to a unit diagonal, (D^-1 M D^-1)(D w) = D^-1 r with
    D = sqrt(diag M) (``root``), as ||D^-1 (r - M w)|| <= ``BACKWARD_TOLERANCE`` ||D w||. (The
    unscaled test ||r - M w|| <= ``BACKWARD_TOLERANCE`` max(diag M) ||w|| follows from it, which
    makes that one a cheap first filter; alone, on columns of very different scales, it would
    stop CG far from the answer.)

    """
    scaled_residual = residual / root  # D^-1 (r - M w)
    scaled_weights = weights * root  # D w
    return math.sqrt(_dot(scaled_residual, scaled_residual)) <= BACKWARD_TOLERANCE * math.sqrt(
        _dot(scaled_weights, scaled_weights)
    )


def _conjugate_gradients(
    matrix, rhs, weights, stale: _StaleFactor, root: np.ndarray | None = None
) -> np.ndarray | None:
    """Preconditioned CG on M w = r from ``weights``; None if it does not converge in time.

    The preconditioned residual z = (s P)^-1 (r - M w) is the error estimate: with M ~ s P,
    (s P)^-1 M = I + E with ||E|| about the drift, so ||w - w*|| ~ ||z||. CG stops when
    ||z|| <= ``TOLERANCE`` ||w|| (adding z then, a free Richardson step, leaves an error of
    about drift ||z||), or when the residual is as small as a backward-stable direct solve
    leaves it (`_at_rounding_level`, ``root`` = sqrt(diag M), computed when not given); ||w||
    is taken at the start (the step changes it by far less than the tolerances' margins). Sets
    ``stale.refactor`` when the preconditioner has become poor (slow contraction) and
    ``stale.last_iterations``. Where the compiled kernels are built the whole iteration is one
    call (``conjugate_gradients``, step for step this one, on any M whose columns are
    contiguous); here, vectors are updated in place by BLAS (``daxpy``): the iteration is a
    dozen calls, which is most of its cost at d ~ 200.

    """
    kernel = _native.conjugate_gradients
    if (
        kernel is not None
        and matrix.strides[0] == 8  # column-major, columns contiguous (a leading block too)
        and matrix.strides[1] >= 8 * len(matrix)
        and stale.inverse.flags.f_contiguous
    ):
        # The same iteration, whole, in one compiled call (``_kernels.pyx``)
        converged, stale.last_iterations, refactor = kernel(
            matrix,
            rhs,
            weights,
            stale.inverse,
            1.0 / stale.scale,
            root,
            TOLERANCE,
            BACKWARD_TOLERANCE,
            MIN_CONTRACTION,
            MAX_ITERATIONS,
            *_SAFE_NORMS,
        )
        if refactor:
            stale.refactor = True
        return weights if converged else None
    if root is None:
        root = np.sqrt(np.diagonal(matrix))  # D = sqrt(diag M)
    residual = rhs - blas.dsymv(1.0, matrix, weights)  # res = r - M w
    norm = math.sqrt(_dot(residual, residual))
    stale.last_iterations = 0
    size = math.sqrt(_dot(weights, weights))
    floor = BACKWARD_TOLERANCE * float(root.max()) ** 2  # the test with the largest diag M
    if norm <= floor * size and _at_rounding_level(residual, weights, root):
        return weights
    inverse_scale = 1.0 / stale.scale  # M ~ s P
    bound = TOLERANCE * size
    preconditioned = stale.apply(residual, inverse_scale, norm)  # z = (s P)^-1 res
    if math.sqrt(_dot(preconditioned, preconditioned)) <= bound:
        return blas.daxpy(preconditioned, weights)  # w + z: the error drops to ~ drift ||z||
    direction = preconditioned  # p = z
    product = _dot(residual, preconditioned)  # res . z
    for iteration in range(1, MAX_ITERATIONS + 1):
        image = blas.dsymv(1.0, matrix, direction)  # q = M p
        step = product / _dot(direction, image)  # alpha
        weights = blas.daxpy(direction, weights, a=step)  # w += alpha p
        residual = blas.daxpy(image, residual, a=-step)  # res -= alpha q
        new_norm = math.sqrt(_dot(residual, residual))
        if new_norm > MIN_CONTRACTION * norm:
            stale.refactor = True
        norm = new_norm
        stale.last_iterations = iteration
        if iteration == 1:  # ||w|| once more, in case the warm start was (near) zero
            size = math.sqrt(_dot(weights, weights))
            bound = TOLERANCE * size
        if norm <= floor * size and _at_rounding_level(residual, weights, root):
            return weights
        preconditioned = stale.apply(residual, inverse_scale, norm)
        if math.sqrt(_dot(preconditioned, preconditioned)) <= bound:
            return blas.daxpy(preconditioned, weights)  # the Richardson step
        new_product = _dot(residual, preconditioned)
        # p = z + beta p, written over z (not needed any more)
        direction = blas.daxpy(direction, preconditioned, a=new_product / product)
        product = new_product
    return None
