"""The stale-factor strategy of `SystemSolver`: CG on M(t) w = r, preconditioned by an old M(t0).

Wide models solve their one-vs-rest systems by conjugate gradients on M(t) w = r, preconditioned
by the explicit inverse P^-1 of an older M(t0) plus the samples learnt since t0 (each added by
Sherman-Morrison, `inverse_step`), scaled by the class weights' common shrinkage, warm started
from the last weights, refreshed when the class weights drift or CG slows down, and replaced by
a direct solve whenever it does not converge: every answer is as exact as the direct one.
Reweighted multiclass keeps one such factor per class's system.

This module owns the factor (`StaleFactor`), its iteration (`_conjugate_gradients`), the rules
that decide when it is usable or refreshed, and the constants that name them (the method, its
error estimate and its stopping tests are written up on the algorithms page, "The stale-factor
solver"); `StaleFactorSolving` is the part of `SystemSolver` that runs it. The direct solves it
falls back to are ``_direct.py``'s.

"""

from __future__ import annotations

import math
import typing

import numpy as np
from scipy.linalg import blas, lapack

from . import _native
from ._direct import solve_spd
from ._systems import mixing, one_vs_rest_matrices

if typing.TYPE_CHECKING:
    from ._stats import ClassStatistics

__all__ = [
    "CLASS_STALE_MIN_DIM",
    "COMPILED_CLASS_STALE_MIN_DIM",
    "STALE_MIN_DIM",
    "InverseStep",
    "StaleFactor",
    "StaleFactorSolving",
    "inverse_step",
    "queue_capacity",
]

STALE_MIN_DIM = 112  # below it the direct path is as fast or faster (benchmarks/speed.py)
CLASS_STALE_MIN_DIM = 64  # the same for the per-class factors of reweighted multiclass, whose
# direct path solves C systems (docs/guide/speed.md, "Where the thresholds come from") ...
COMPILED_CLASS_STALE_MIN_DIM = 120  # ... and where the compiled kernels solve them (one call for
# all C systems; the factors' CG compiled too: benchmarks/speed.py's five-class section)
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
# halved bytes save: docs/guide/speed.md, "Where the thresholds come from")
BACKWARD_TOLERANCE = 1e-15  # ... or ||D^-1 (r - M w)|| <= this ||D w||, D = sqrt(diag M) (a
# direct solve's residual, in the system scaled to a unit diagonal)


_dot = blas.ddot  # x . y of two vectors: cheaper than numpy's ``@`` for them
# P^-1's BLAS kernels (symmetric product, symmetric rank-1 update, dot product) by its dtype
_KERNELS = {"d": (blas.dsymv, blas.dsyr, blas.ddot), "f": (blas.ssymv, blas.ssyr, blas.sdot)}
_SAFE_NORMS = (1e-20, 1e20)  # vectors of these norms keep every digit that matters in single
# The per-step BLAS calls pass their arguments by position: f2py parses a keyword argument for
# about as long as a whole small call takes (``dsymv``'s default is the upper triangle).


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


class StaleFactor:
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
        self.capacity = queue_capacity(width)  # samples queued before letting go
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
        if inverse.flags.f_contiguous and inverse.flags.writeable:
            # The same update, in place, in one compiled call (``_kernels.pyx``); None: not built
            appended = _native.stale_append(inverse, vector, frozen, *_SAFE_NORMS)
            if appended is not None:
                if not appended:
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


def queue_capacity(width: int) -> int:
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


class StaleFactorSolving:
    """The stale-factor paths of `SystemSolver` (a base class of it): they own the solver's
    ``stale`` (the shared system's factor), ``pending`` (the samples learnt since the last
    solve, as (slot, vector, mass)), ``previous`` (the shared system's last weights, columns),
    ``class_factors`` and ``class_previous`` (reweighted multiclass: one factor and the last
    weights per class's system), and count their work in ``counters``; they read the solver's
    parameters (``l2``, ``tau``, ``eta``, ``reweight``, ``first``, ``forgetting``)."""

    l2: float
    tau: float
    eta: float
    reweight: bool
    first: int
    forgetting: float
    stale: StaleFactor | None
    pending: list[tuple[int, np.ndarray, float]]
    previous: np.ndarray | None
    class_factors: list[StaleFactor | None] | None
    class_previous: np.ndarray | None
    counters: dict[str, int]

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
        if weights is None or inverse is None or info != 0 or not np.isfinite(weights).all():
            return solve_spd(matrix, rhs, self.l2), None
        if len(inverse) >= SINGLE_MIN_DIM:
            inverse = _single_if_accurate(inverse, matrix)
        return weights, StaleFactor(inverse, coefficients)

    def _usable(self, stale: StaleFactor, dim: int, coefficients: np.ndarray, pending) -> bool:
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

    def _iterate(self, matrix, rhs: np.ndarray, previous: np.ndarray, stale: StaleFactor):
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
        matrix_mix, rhs_mix = mixing(stats, self.reweight, self.tau, self.eta)
        rhs = rhs_mix @ stats.sums(first).T  # r_k, one row per class
        n_classes = len(rhs)
        factors, previous = self.class_factors, self.class_previous
        pending, self.pending = self.pending, []
        if factors is None or previous is None or previous.shape != rhs.shape:
            # First per-class solve, a new class, or new features: every class refactors.
            self.stale = self.previous = None
            factors, previous = [None] * n_classes, None
        weights = np.empty_like(rhs)
        matrices = one_vs_rest_matrices(stats, matrix_mix, self.l2, first)  # M_k, one at a time
        for k, matrix in enumerate(matrices):
            stale, solution = factors[k], None
            if (
                stale is not None
                and previous is not None
                and self._usable(stale, dim, matrix_mix[k], pending)
            ):
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
    matrix, rhs, weights, stale: StaleFactor, root: np.ndarray | None = None
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
    dozen calls, which is most of its cost at moderate d.

    """
    if (
        matrix.strides[0] == 8  # column-major, columns contiguous (a leading block too)
        and matrix.strides[1] >= 8 * len(matrix)
        and stale.inverse.flags.f_contiguous
    ):
        # The same iteration, whole, in one compiled call (``_kernels.pyx``); None: not built
        compiled = _native.conjugate_gradients(
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
        if compiled is not None:
            converged, stale.last_iterations, refactor = compiled
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
