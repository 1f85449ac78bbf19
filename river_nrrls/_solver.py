"""How NR-RLS turns its statistics into weights: the `Solver` interface and `SystemSolver`.

`SystemSolver` gives w_k = M_k^-1 r_k for the one-vs-rest systems of the current statistics
(assembled by ``_systems.py``) by one of three exact ways, chosen at every solve:

- **direct** (``_direct.py``): one Cholesky factorisation and solve (LAPACK ``dposv``) per
  distinct matrix (two classes share M, and with tau = 0 their right-hand sides are opposite:
  one solve); with two classes the whole solve is one compiled call (``pair_weights``);
- **batched direct** (many classes with reweighting, small d): the C systems assembled from
  the total scatter in one pass and solved in one batched LAPACK call (in one compiled call,
  ``each_weights``, one dposv a class, where the kernels are built);
- **stale factor** (wide models, ``_stale.py``): conjugate gradients preconditioned by the
  inverse of an older M, kept up to date with the samples learnt since, and replaced by a
  direct solve whenever it does not converge. Reweighted multiclass keeps one factor per
  class's system.

The choice is automatic: stale factor from ``STALE_MIN_DIM`` columns (``CLASS_STALE_MIN_DIM``,
or ``COMPILED_CLASS_STALE_MIN_DIM`` with the compiled kernels, for the per-class factors), and
only from the second wide solve after a change the factor cannot follow; direct below. This
module owns that dispatch and the bookkeeping around it. `Solver` is the interface the estimator
holds, shared with the paper's recursion (``_woodbury.py``).

"""

from __future__ import annotations

import typing

import numpy as np

from . import _native
from ._direct import (
    each_kernel_weights,
    pair_kernel_weights,
    solve_batched,
    solve_in_place,
    solve_spd,
)
from ._stale import (
    CLASS_STALE_MIN_DIM,
    COMPILED_CLASS_STALE_MIN_DIM,
    STALE_MIN_DIM,
    StaleFactor,
    StaleFactorSolving,
    queue_capacity,
)
from ._systems import (
    each_class_system,
    fill_pair_mix,
    mixing,
    pair_class_weights,
    right_hand_sides_of,
    system,
    systems_share_matrix,
)
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

if typing.TYPE_CHECKING:
    from ._stats import ClassStatistics

__all__ = ["PairParameters", "Solver", "SystemSolver"]

# The name under which models pickled before ``_stale.py`` existed refer to the stale factor's
# class: unpickling them looks it up here.
_StaleFactor = StaleFactor


class PairParameters(typing.Protocol):
    """The parameters of a two-class direct solve in one call (`SystemSolver.pair_kernel`):
    the arguments the kernels ``pair_weights`` and ``pair_outputs`` take after the statistics
    (a `SystemSolver` has them: no record is made per call)."""

    first: int  # the first column the systems use (1 without an intercept)
    reweight: bool  # class weights 1/n^c (TER), else 1
    tau: float  # the targets are tau +- eta
    eta: float
    l2: float  # the ridge b


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


class SystemSolver(StaleFactorSolving):
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
        # The stale-factor state (typed and described on `StaleFactorSolving`)
        self.stale = None
        self.pending = []
        self.previous = None  # last weights of the shared system (columns)
        # Reweighted multiclass: one stale factor per class's system (None where a class has
        # none), and the last weights of every class (rows)
        self.class_factors = None
        self.class_previous = None
        self.primed = False  # a wide direct solve ran since the last invalidation
        self.counters = {"direct": 0, "refactor": 0, "iterations": 0, "stale": 0}
        self.pair_mix = np.zeros((3, 2))  # the two-class `mix`, filled in place (`_pair_mix`)

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
        capacity = queue_capacity(len(vector) - self.first)
        if len(self.pending) >= capacity:
            # More samples than a queue holds: the next solve would refactor anyway. Let go of
            # the factor now, so that a stream that learns without predicting keeps no list
            # growing with the samples seen.
            self.invalidate()
            return
        self.pending.append((slot, vector, weight))

    @property
    def keeps_samples(self) -> bool:
        """Whether `observe` keeps the samples it is told of (a stale factor is held): a caller
        that must build the sample's vector for it may skip that otherwise."""
        return self.stale is not None or self.class_factors is not None

    def invalidate(self, stats: ClassStatistics | None = None) -> None:
        """The statistics changed in a way the updates cannot follow: solve directly next time."""
        self.stale = None
        self.class_factors = self.class_previous = None
        self.primed = False
        self.pending = []

    # ------------------------------------------------------------------- solving

    def solve(self, stats: ClassStatistics) -> np.ndarray:
        """Weights of every class, one row each, ``stats.dim`` columns (0 before ``first``).

        From ``ONE_THREAD_MIN_DIM`` columns on, BLAS runs on one thread meanwhile (see
        `river_nrrls._threads`).

        """
        if stats.dim < ONE_THREAD_MIN_DIM:
            return self._solve(stats)
        with one_blas_thread(stats.dim):
            return self._solve(stats)

    def _solve(self, stats: ClassStatistics) -> np.ndarray:
        n_classes, dim = len(stats.labels), stats.dim
        if n_classes == 0 or dim == self.first:
            self.invalidate()
            return np.zeros((n_classes, dim))
        if not systems_share_matrix(n_classes, self.reweight):
            return self._solve_classes(stats)
        return self._solve_shared(stats)

    def _solve_classes(self, stats: ClassStatistics) -> np.ndarray:
        """Reweighted multiclass: every class's own M_k, by its stale factor once primed at a
        wide d, else directly (compiled, or batched)."""
        dim = stats.dim
        wide = dim - self.first >= self.class_threshold()
        if wide and self.primed:
            return self._full_width(self._solve_per_class(stats), dim)
        self.invalidate()
        self.primed = wide  # the next wide solve builds the factors
        weights = each_kernel_weights(stats, self.first, self.tau, self.eta, self.l2)
        if weights is not None:
            self.counters["direct"] += 1
            return weights
        # not built, or not positive definite or overflowing: the batched solve's fallbacks
        return self._full_width(self._solve_each(stats), dim)

    def _solve_each(self, stats: ClassStatistics) -> np.ndarray:
        """Every class's own M_k (reweighted multiclass), all in one batched LAPACK call."""
        matrices, rhs = each_class_system(stats, self.l2, self.tau, self.eta, self.first)
        self.counters["direct"] += 1
        return solve_batched(matrices, rhs, self.l2)

    def _solve_shared(self, stats: ClassStatistics) -> np.ndarray:
        """One M for every class (two classes, or no reweighting): the compiled two-class
        solve, the stale factor once primed at a wide d, or a direct solve."""
        dim = stats.dim
        pair = len(stats.labels) == 2
        wide = self._wide(dim)
        stale_path = wide and self.primed  # decided before any bookkeeping moves `primed`
        if not stale_path:
            self._direct_bookkeeping(wide)
            if pair:  # None: not built, or not positive definite, or overflowing
                weights = pair_kernel_weights(
                    stats, self.first, self.reweight, self.tau, self.eta, self.l2
                )
                if weights is not None:
                    return weights
        mix = self._pair_mix(stats) if pair else self._shared_mix(stats)
        matrix, rhs = self._shared_system(stats, mix, stale_path)
        if stale_path:
            weights = self._solve_stale(matrix, dim, mix[0], rhs)
        else:
            # M is ours (freshly assembled): factorise it in place.
            weights = solve_in_place(matrix, rhs, self.l2)
            if weights is None:  # solve_spd's fallbacks, on the system assembled again
                weights = solve_spd(*system(stats, mix, self.l2, self.first), self.l2)
        return self._shared_rows(weights, dim, pair and self.tau == 0.0)

    def _pair_mix(self, stats: ClassStatistics) -> np.ndarray:
        """The two-class coefficients of M and r (`fill_pair_mix`), in the solver's own array
        (nothing keeps it: the stale factor copies its coefficients)."""
        # Python scalars: the two-class hot path avoids most numpy calls.
        w_0, w_1 = pair_class_weights(stats, self.reweight)
        mix = self.pair_mix
        if mix is None:
            mix = self.pair_mix = np.zeros((3, 2))
        return fill_pair_mix(mix, w_0, w_1, self.tau, self.eta)

    def _shared_mix(self, stats: ClassStatistics) -> np.ndarray:
        """The coefficients of the shared M, then of every r_k (`_systems.mixing`)."""
        matrix_mix, rhs_mix = mixing(stats, self.reweight, self.tau, self.eta)
        return np.vstack((matrix_mix[:1], rhs_mix))

    def _shared_system(
        self, stats: ClassStatistics, mix: np.ndarray, stale_path: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """M and r of the shared system: only M's upper triangle (compiled ``pair_matrix``) for
        the two-class stale path, else both from `system`."""
        first = self.first
        if stale_path and len(stats.labels) == 2:
            if _native.compiled("pair_matrix"):
                # Only M's upper triangle, all that the stale path reads (symv, potrf, its
                # diagonal): half the bytes of the product with the stacked scatters
                dim = stats.dim
                matrix = np.empty((dim - first, dim - first), order="F")
                w_0, w_1 = mix[0].tolist()  # M = w_0 A^0 + w_1 A^1 + b I
                _native.pair_matrix(stats.buffer, dim, first, w_0, w_1, self.l2, matrix)
                return matrix, right_hand_sides_of(stats, mix, first)
        return system(stats, mix, self.l2, first)

    def _shared_rows(self, weights: np.ndarray, dim: int, opposite: bool) -> np.ndarray:
        """The shared system's solutions (columns) as rows of ``dim`` weights; ``opposite``
        (tau = 0, two classes): the one column is w_0, and w_1 = -w_0 (exact)."""
        if opposite:
            rows = np.empty((2, len(weights)), order="F")
            rows[0] = weights[:, 0]
            np.negative(weights[:, 0], out=rows[1])
            return self._full_width(rows, dim)
        return self._full_width(weights.T, dim)

    def class_threshold(self) -> int:
        """The width from which reweighted multiclass keeps a stale factor per class:
        ``class_stale_min_dim`` when set, else ``COMPILED_CLASS_STALE_MIN_DIM`` where the
        compiled ``each_weights`` solves the C systems and ``CLASS_STALE_MIN_DIM`` where
        numpy's batched solve does."""
        if self.class_stale_min_dim is not None:
            return self.class_stale_min_dim
        if _native.compiled("each_weights"):
            return COMPILED_CLASS_STALE_MIN_DIM
        return CLASS_STALE_MIN_DIM

    def pair_kernel(self, stats: ClassStatistics) -> PairParameters | None:
        """The parameters of the two-class direct solve in one call (``pair_weights``, and
        the fused prediction's ``pair_outputs``), when `solve` would take it on ``stats``;
        None otherwise."""
        dim = stats.dim
        if len(stats.labels) != 2 or dim <= self.first or (self.primed and self._wide(dim)):
            return None
        return self  # (its first, reweight, tau, eta and l2: a `PairParameters`)

    def pair_kernel_solved(self, stats: ClassStatistics) -> None:
        """A caller solved as `solve` would when `pair_kernel` gave the parameters (the fused
        ``pair_outputs`` of `river_nrrls._fused`): the same bookkeeping."""
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
