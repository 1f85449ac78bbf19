"""Every polynomial order's NR-RLS from ONE set of statistics: the highest order's.

This module is the order selector's own layer, below `PolynomialOrderSelector`
(``model_selection.py``, its one user) and above the estimators it composes: one `NRRLS` of
the highest order and the `PolynomialExtender` of every order, used through their internal
interfaces (`NRRLS.permute_columns`, `NRRLS.statistics`, `NRRLS.encode`, `NRRLS.restricted`,
`PolynomialExtender.expand_with_layout`, ...), never through their private state. It is not
a shared piece: it imports those estimators; the shared pieces it solves with
(`ClassStatistics`, `SystemSolver`, ``_outputs``) import nothing of it.

Toh's reduced model is nested (`PolynomialExtender.output_orders`): the columns of order r are
those of order R > r whose order is at most r, with the same values. So the TER system of order
r (algorithms page, "Total error rate (TER)"),

    M_r = w_k A^k_r + w_rest A^rest_r + b I,    r_r = (tau + eta) w_k s^k_r + (tau - eta) ...,

is the principal block of order R's over order r's columns: the class scatters and sums of
order r are blocks of order R's, and the class weights w_k, w_rest (masses), b, tau and eta are
the same. With the columns grouped by order (the constant first, then the columns of order 1,
2, ...; within a group in the order of the model's feature index), every M_r is a LEADING
principal block of M_R and r_r the leading part of r_R. The Cholesky factor of a leading block
is the leading block of the factor (M = U^T U, U upper triangular: U_r^T U_r = M_r), so

    U^T y = r_R      (one forward substitution, all orders at once: y_r is the leading part)
    U_r w_r = y_r    (a back substitution per order on the leading block U_r; all of them in
                      one call with the whole U: the right-hand side [y_r; 0] solves to
                      [w_r; 0])

gives every order's weights from ONE factorisation of M_R. Reweighted multiclass has one M_k
per class: one factorisation per class system, each serving every order. Where the
factorisation fails in floating point (info = j: the leading minor of order j is not
definite), the orders whose block is narrower than j are solved from the factor of their
definite leading block and the others by `solve_spd`, as their pipelines' fallbacks would.

`NestedOrders` keeps one `NRRLS` of the highest order (it validates, refuses out-of-range
samples and learns exactly as the order-R pipeline would) with its columns GROUPED BY ORDER:
whenever features come (the first sample's, and features that emerge later, which the index
appends at its end), the model renumbers its columns (`NRRLS.permute_columns`, a permutation:
exact), so that every order's columns are the model's leading ones. ``arrival`` keeps the order
in which the features came, an independent pipeline's own (`NestedOrders.pipeline`).

**Wide orders.** A pipeline of 112 columns or more (``_stale.STALE_MIN_DIM``; for the
per-class systems of reweighted multiclass, `SystemSolver.class_threshold`) does not factorise
at every step: it runs conjugate gradients preconditioned by a stale explicit inverse, O(d^2) a
step. Grouped, order r's statistics are the leading 1 + d_r columns of the shared ones
(`ClassStatistics.leading_view`). So every order that wide can be solved by its pipeline's OWN
solver (a `SystemSolver` per order, told of every sample as the pipeline's NRRLS tells its
own): the same stale factor, stopping tests, refreshes and fallbacks, hence the same
exactness. The orders narrower than that, and the wider ones that the cost model of
`_direct_orders` finds cheaper so, are solved directly from one factorisation of the largest of
their blocks, as above. Both ways are exact; the split only moves the cost. With two classes
the highest order's M and r are assembled once (`_pair_system`) and every other order's (the
direct block's too) are their leading blocks, read in place: the wide orders' solvers take
their stale-factor step on them directly (`SystemSolver.stale_pair_columns`). Where every order
is direct the factorisation overwrites the system it assembled (the fallbacks assemble it
again).

The orders' solves are not shared further: one stale Cholesky factor for all orders (whose
leading blocks nest, where explicit inverses do not) applies as two triangular solves where a
pipeline's explicit inverse is one symmetric product, and the orders' CG iterations run as one
block (zero-padded) cost more than one after the other; both were measured slower
(``benchmarks/results/selector.md`` has the selector's costs).

"""

from __future__ import annotations

import math
import typing

import numpy as np
from river import compose
from scipy.linalg import lapack

# the shared pieces
from . import _native
from ._checks import as_label
from ._direct import TINY_RIDGE, solve_spd
from ._outputs import refuse_overflow, softmax
from ._solver import SystemSolver
from ._stats import ClassStatistics
from ._systems import (
    PairSystem,
    mixing,
    one_vs_rest_matrices,
    pair_class_weights,
    systems_share_matrix,
)
from ._threads import one_blas_thread

# the estimators this layer of the selector composes (through their internal interfaces)
from .nrrls import NRRLS
from .poly import Expansion, PolynomialExtender

__all__ = ["NestedOrders", "NestedSolution", "label_of", "labels_of", "shares_statistics"]

# The cost model of `_direct_orders` (units: one entry of an s x s stale-factor solve's work)
FACTOR_RATE = 83.0  # a Cholesky factorisation of s columns costs s^3 / FACTOR_RATE
STALE_OVERHEAD = 18_000.0  # a stale-factor solve of s columns costs s^2 + STALE_OVERHEAD
ONE_CALL_MAX_WIDTH = 128  # narrower, one back substitution with the whole factor for every
# order costs less than one call per order on its leading block (wider, the wasted work costs
# more than the calls)
_PLAIN = frozenset((float, int))  # value types whose equality means an equal expansion


def shares_statistics(classifier: typing.Any) -> bool:
    """Whether a classifier template can be scored from shared statistics: an `NRRLS` whose
    solver works from the statistics (``solver="woodbury"`` keeps a recursion per model)."""
    return type(classifier) is NRRLS and classifier.solver == "cholesky"


class NestedSolution(typing.NamedTuple):
    """Every order's weights at one moment (frozen for block-prequential scoring)."""

    labels: tuple  # the classes, in the statistics' order
    weights: np.ndarray  # (n_orders * n_classes, width): row q * C + k is orders[q]'s class k
    columns: slice  # the dense columns of the weight columns (grouped by order: all of them)


class NestedOrders:
    """One `NRRLS` of the highest order whose statistics serve every order.

    The model's dense columns are kept grouped by order (`_regroup`, whenever features come),
    so that every order's columns are the leading ones: ``column_orders`` is nondecreasing.

    Parameters
    ----------
    orders
        The orders, increasing.
    extender
        Template of the expansion (its degree is ignored).
    classifier
        Template of the `NRRLS` (``solver="cholesky"``).

    """

    def __init__(self, orders: tuple[int, ...], extender: PolynomialExtender, classifier: NRRLS):
        self.orders = orders
        self.extenders = {order: extender.clone({"degree": order}) for order in orders}
        self.top = self.extenders[orders[-1]]
        self.model = classifier.clone()  # the highest order's NR-RLS
        # the order of every dense column of the model's index (column 0, the constant: 0),
        # nondecreasing: the columns are grouped by order (`_regroup`)
        self.column_orders = np.zeros(1, dtype=np.intp)
        # the features in the order they came: an independent pipeline's own column order
        self.arrival: list = []
        # the pipeline's solver of every order wide enough for its stale factor (by position
        # in ``orders``), each solving its order's leading block of the shared statistics (not
        # pickled, see __getstate__)
        self.solvers: dict[int, SystemSolver] = {}
        self._views: dict[int, ClassStatistics] = {}  # their statistics (see `_view`)
        self._sizes: list[int] | None = None  # every order's width (see `sizes`)
        self._split: tuple | None = None  # the last `_direct_orders` (key, result)
        self.solution: NestedSolution | None = None  # cached until the statistics change
        self._last: tuple | None = None  # the last x's items and its Expansion (see expand)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        # The orders' solvers hold what the statistics determine (a stale factor and a queue:
        # a cache, like the solution), so a pickle is the same whatever they went through; a
        # model loaded from it solves directly first, then builds their factors again.
        state["solvers"] = {}
        state["_views"] = {}  # views of the statistics
        state["_sizes"] = None  # derived from column_orders
        state["_split"] = None
        state["solution"] = None  # derived from the statistics
        state["_last"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("solvers", {})
        self.__dict__.setdefault("_views", {})
        self.__dict__.setdefault("_sizes", None)
        self.__dict__.setdefault("_split", None)
        if "arrival" not in state:  # pickled before the columns were grouped
            self.__dict__.pop("_layout", None)
            self.arrival = list(self.model.features)
            self._regroup()

    # ------------------------------------------------------------------------- encoding

    def expand(self, x: dict, order: int | None = None) -> Expansion:
        """Order ``order``'s expansion of ``x`` (default: the highest), with the names and
        orders of its columns (`PolynomialExtender.expand_with_layout`).

        The highest order's expansion of the last ``x`` is remembered (river's prequential
        loop expands every sample twice, to predict and to learn), when its values are plain
        ints and floats (equal keys and values then give the same expansion).

        """
        if order is not None:
            return self.extenders[order].expand_with_layout(x)
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        items = tuple(x.items())
        last = self._last
        if last is not None and _PLAIN.issuperset(map(type, x.values())) and last[0] == items:
            return last[1]
        result = self.top.expand_with_layout(x)
        if _PLAIN.issuperset(map(type, x.values())):
            self._last = (items, result)
        return result

    def vector(self, expanded: dict) -> np.ndarray:
        """The expansion over the model's dense columns (unknown features dropped; read-only,
        valid until the next encoding: `NRRLS.encode`)."""
        return self.model.encode(expanded)

    # ------------------------------------------------------------------------- learning

    def learn(self, expansion: Expansion, y: typing.Hashable, weight: float):
        """Let the highest order learn an expanded sample; group the new columns by order;
        tell the orders' solvers of the sample (as each pipeline's NRRLS tells its own)."""
        model, expanded = self.model, expansion.values
        known = len(self.column_orders)  # the model's dense columns before learning
        # the sample over the current columns, before learning (copied: the model's encoding
        # is read-only and refilled by the next sample)
        vector = self.vector(expanded).copy() if self.solvers else None
        if weight == 1.0:
            model.learn_one(expanded, y)
        else:
            model.learn_one(expanded, y, w=weight)
        self.solution = None
        stats = model.statistics
        if stats.dim > known:  # new columns: every solver refactors (new widths)
            orders = dict(zip(expansion.names, expansion.orders))
            new = model.features[known - 1 :]  # (column 0 is the constant)
            self.arrival.extend(new)
            new_orders = np.asarray([orders[feature] for feature in new], np.intp)
            self.column_orders = np.concatenate((self.column_orders, new_orders))
            self._regroup()
        elif vector is not None:
            slot = stats.slot[as_label(y)]
            sizes, first = self.sizes(), self.first
            for q, solver in self.solvers.items():
                solver.observe(stats, slot, vector[: first + sizes[q]], weight)

    def _regroup(self) -> None:
        """Renumber the model's columns grouped by order (then in their present order), the
        statistics with them (`NRRLS.permute_columns`): every order's columns become the
        leading ones."""
        order = np.argsort(self.column_orders, kind="stable")  # column 0 (order 0) stays first
        self._sizes = None
        for solver in self.solvers.values():
            solver.invalidate()
        if (order == np.arange(len(order))).all():
            return
        self.model.permute_columns(order)
        self.column_orders = self.column_orders[order]

    # -------------------------------------------------------------------------- solving

    @property
    def first(self) -> int:
        return 0 if self.model.intercept else 1

    def sizes(self) -> list[int]:
        """Every order's number of system columns: its leading block of the model's."""
        if self._sizes is None:
            ordered = self.column_orders[self.first :]
            self._sizes = np.searchsorted(ordered, self.orders, side="right").tolist()
        return self._sizes

    def _stale_width(self, stats: ClassStatistics) -> int:
        """The width from which a pipeline's solver may take its stale factor (shared system,
        or one per class: reweighted multiclass)."""
        solver = typing.cast(SystemSolver, self.model.weight_solver)  # (solver="cholesky")
        if systems_share_matrix(stats.n_classes, bool(self.model.reweight)):
            return solver.stale_min_dim
        return solver.class_threshold()

    def solve(self) -> NestedSolution:
        """Every order's weights from the statistics (cached until they change).

        The orders narrower than the pipelines' stale-factor width are solved directly from ONE
        factorisation of the largest of their blocks (`_solve_nested`); each wider order by its
        pipeline's own solver (its stale factor, `river_nrrls._solver.SystemSolver`) on its
        leading block of the statistics.

        """
        if self.solution is not None:
            return self.solution
        stats = self.model.statistics
        labels, dim, first = tuple(stats.labels), stats.dim, self.first
        sizes = self.sizes()
        n_classes = len(labels)
        weights = np.zeros((len(self.orders) * n_classes, dim - first), order="F")
        if n_classes and dim > first:
            narrow = self._direct_orders(stats)  # the leading orders
            with one_blas_thread(dim):
                # Two classes with stale orders: M and r of the highest order assembled once,
                # every other order's (the narrow block's too) their leading blocks, in place
                top = self._pair_system(stats) if narrow < len(sizes) else None
                if narrow:
                    self._solve_narrow(stats, sizes[:narrow], weights, top)
                self._solve_wide(stats, sizes, narrow, weights, top)
            for q in [q for q in self.solvers if q < narrow]:  # no longer wide: let go
                del self.solvers[q]
        self.solution = NestedSolution(labels, weights, slice(first, dim))
        return self.solution

    def _solve_wide(self, stats: ClassStatistics, sizes: list[int], narrow: int, weights, top):
        """Orders ``narrow`` on, each by its pipeline's solver (`_solver_of`): with ``top``
        (the highest order's two-class system) the solver's stale-factor step on its leading
        block (`SystemSolver.stale_pair_columns`), else (or before the solver is primed) its
        whole `solve` on its leading block of the statistics (`_view`)."""
        first, n_classes = self.first, len(stats.labels)
        class_weights = (0.0, 0.0)  # (w_0, w_1) of the two-class system, read with ``top``
        if top is not None:
            class_weights = pair_class_weights(stats, bool(self.model.reweight))
        for q in range(narrow, len(sizes)):
            size = sizes[q]
            start = q * n_classes
            solver = self._solver_of(q)
            given = columns = None
            if top is not None:  # M_r and r_r: leading blocks of M_R and r_R, in place
                given = PairSystem(top.matrix[:size, :size], top.rhs[:size])
                columns = solver.stale_pair_columns(first + size, class_weights, *given)
            if columns is None:
                solution = solver.solve(self._view(q, first + size), given)
                weights[start : start + n_classes, :size] = solution[:, first:]
            elif columns.shape[1] == 1:  # tau = 0: w_0, and w_1 = -w_0 (exact)
                weights[start, :size] = columns[:, 0]
                np.negative(columns[:, 0], out=weights[start + 1, :size])
            else:
                weights[start : start + 2, :size] = columns.T

    def _direct_orders(self, stats: ClassStatistics) -> int:
        """How many of the leading orders to solve directly (`_direct_orders`, cached)."""
        key = (self.sizes(), self._stale_width(stats), FACTOR_RATE, STALE_OVERHEAD)
        cached = self._split
        if cached is None or cached[0] != key:
            cached = self._split = (key, _direct_orders(*key[:2]))
        return cached[1]

    def _solver_of(self, q: int) -> SystemSolver:
        """orders[q]'s solver: the one its pipeline's NRRLS would hold (`NRRLS.new_solver`)."""
        solver = self.solvers.get(q)
        if solver is None:
            solver = self.solvers[q] = typing.cast(SystemSolver, self.model.new_solver())
        return solver

    def _view(self, q: int, dim: int) -> ClassStatistics:
        """The statistics of orders[q]: the model's, read over their leading ``dim`` columns
        (`ClassStatistics.leading_view`: the same buffer; order q's view refreshed in place)."""
        view = self._views[q] = self.model.statistics.leading_view(dim, self._views.get(q))
        return view

    def _pair_system(self, stats: ClassStatistics) -> PairSystem | None:
        """Two classes (compiled kernels): the highest order's M = w_0 A^0 + w_1 A^1 + b I
        (upper triangle, Fortran order) and r_0 (and r_1 unless tau = 0), as its pipeline's
        solver assembles them; else None."""
        if stats.n_classes != 2 or not _native.compiled("pair_matrix"):
            return None
        (w_0, w_1), mix = self._pair_mix(stats)
        width = stats.dim - self.first
        matrix = np.empty((width, width), order="F")
        _native.pair_matrix(stats.buffer, stats.dim, self.first, w_0, w_1, self.model.l2, matrix)
        targets = mix[:1] if self.model.tau == 0.0 else mix  # r_1 = -r_0 when tau = 0
        return PairSystem(matrix, stats.sums(self.first) @ targets.T)  # r_k = sum_j mix_kj s^j

    def _solve_narrow(
        self, stats: ClassStatistics, sizes: list[int], weights, top: PairSystem | None = None
    ) -> None:
        """The narrow orders (``sizes``, the leading ones) from one factorisation of the
        largest block of each system (``top``: the highest order's two-class system, whose
        leading block it is, when already assembled)."""
        model, first = self.model, self.first
        width = sizes[-1]
        end = first + width
        reweight = bool(model.reweight)
        if top is not None:  # dpotrf copies the view (overwrite_a = 0)
            system, rhs = top[0][:width, :width], top[1][:width]
            opposite = model.tau == 0.0  # r_1 = -r_0: one right-hand side, w_1 = -w_0
            self._solve_nested(system, rhs, weights, sizes, 0, opposite=opposite)
        elif stats.n_classes == 2 and _native.compiled("pair_matrix"):
            (w_0, w_1), mix = self._pair_mix(stats)

            def assemble() -> np.ndarray:
                # M = w_0 A^0 + w_1 A^1 + b I over the block's columns, upper triangle
                system = np.empty((width, width), order="F")
                _native.pair_matrix(stats.buffer, end, first, w_0, w_1, model.l2, system)
                return system

            if model.tau == 0.0:  # r_1 = -r_0: one right-hand side, w_1 = -w_0
                rhs = stats.sums(first)[:width] @ mix[0]  # r_0 = sum_j mix[0, j] s^j
                self._solve_nested(assemble(), rhs[:, None], weights, sizes, 0, True, assemble)
                return
            rhs = stats.sums(first)[:width] @ mix.T  # r_k = sum_j mix[k, j] s^j
            self._solve_nested(assemble(), rhs, weights, sizes, 0, rebuild=assemble)
        elif systems_share_matrix(stats.n_classes, reweight):
            mix = self._mix(stats)
            # M = sum_j mix_j A^j over the block's columns (column-major), + b I
            capacity = stats.buffer.shape[0]
            combined = stats.stacked()[: end * capacity] @ mix[0]
            system = np.array(combined.reshape(capacity, end, order="F")[first:end, first:])
            system.ravel(order="F")[:: width + 1] += model.l2  # + b I (l2 is the paper's b)
            rhs = stats.sums(first)[:width] @ mix[1:].T  # r_k = sum_j mix[1 + k, j] s^j
            self._solve_nested(system, rhs, weights, sizes, 0)
        else:  # reweighted multiclass: every class's own M_k, each serving every order
            matrix_mix, rhs_mix = mixing(stats, reweight, model.tau, model.eta)
            rhs = rhs_mix @ stats.sums(first)[:width].T  # r_k, one row per class
            matrices = one_vs_rest_matrices(stats, matrix_mix, model.l2, first)
            for k, matrix in enumerate(matrices):
                system = np.array(matrix[:width, :width], order="F")
                self._solve_nested(system, rhs[k][:, None], weights, sizes, k)

    def _mix(self, stats) -> np.ndarray:
        """The shared system's coefficients: row 0 M's (sum_j mix_j A^j + b I), then r_k's."""
        if stats.n_classes == 2:
            pair, targets = self._pair_mix(stats)
            return np.vstack((pair, targets))
        model = self.model
        matrix_mix, rhs_mix = mixing(stats, bool(model.reweight), model.tau, model.eta)
        return np.vstack((matrix_mix[:1], rhs_mix))

    def _pair_mix(self, stats) -> tuple[tuple[float, float], np.ndarray]:
        """Two classes: (w_0, w_1) of M = w_0 A^0 + w_1 A^1 + b I, and r_0's and r_1's
        coefficients (Python floats: `mixing`'s general C x C form costs several times
        more)."""
        model = self.model
        w_0, w_1 = pair_class_weights(stats, bool(model.reweight))
        target_pos, target_rest = model.tau + model.eta, model.tau - model.eta
        targets = np.array(
            [[target_pos * w_0, target_rest * w_1], [target_rest * w_0, target_pos * w_1]]
        )
        return (w_0, w_1), targets

    def _solve_nested(
        self,
        system,
        rhs,
        weights,
        sizes: list[int],
        first_class: int,
        opposite: bool = False,
        rebuild: typing.Callable[[], np.ndarray] | None = None,
    ) -> None:
        """w_r = M_r^-1 r_r of the orders of ``sizes`` (the leading ones) for the columns of
        ``rhs``, M (``system``) over the largest of them, upper triangle authoritative. Row
        ``q * n_classes + first_class + j`` of ``weights`` gets order q's solution for column
        j; with ``opposite`` (two classes, tau = 0: r_1 = -r_0) ``rhs`` is r_0 alone, and
        class 1's row gets -w_0. With ``rebuild`` (which assembles ``system`` again) the
        factorisation overwrites ``system`` (a Fortran array of the caller's: no copy), and
        the fallbacks get a new one."""
        l2 = self.model.l2
        n_classes, count = len(weights) // len(self.orders), rhs.shape[1]
        in_place = rebuild is not None and l2 > TINY_RIDGE  # (l2 = 0 takes the fallbacks)
        # (a, lower, clean, overwrite_a) by position: f2py parses a keyword for ~0.4 us
        factor, info = lapack.dpotrf(system, 0, 0, int(in_place))  # M_R = U^T U
        if info != 0 or l2 <= TINY_RIDGE:
            if in_place and rebuild is not None:  # dpotrf wrote over M: assemble it again
                system = rebuild()
            if opposite:
                rhs = np.hstack((rhs, -rhs))
            self._solve_fallbacks(system, factor, info, rhs, weights, sizes, first_class)
            return
        width = len(factor)
        # U^T y = r_R: ONE forward substitution serves every order (y_r is the leading part)
        reduced, _ = lapack.dtrtrs(factor, rhs, 0, 1)  # (a, b, lower, trans)
        rows = len(sizes) * n_classes
        if width >= ONE_CALL_MAX_WIDTH:
            for q, size in enumerate(sizes):
                if size == 0:
                    continue
                # U_r w_r = y_r on the leading block U_r of the factor, read in place: its first
                # ``size`` columns (contiguous), lda = width (a, b, lower, trans, unitdiag, lda,
                # overwrite_b)
                solution, _ = lapack.dtrtrs(factor[:, :size], reduced[:size], 0, 0, 0, width, 0)
                start = q * n_classes + first_class
                if opposite:  # w_0, and w_1 = -w_0 (exact)
                    weights[start, :size] = solution[:, 0]
                    np.negative(solution[:, 0], out=weights[start + 1, :size])
                elif count == n_classes:
                    weights[start : start + count, :size] = solution.T
                else:
                    weights[start, :size] = solution[:, 0]
            return
        # Narrow: every order in ONE back substitution with the whole U: the right-hand side
        # [y_r; 0] gives [w_r; 0] (U is upper triangular: the zero tail solves to zero and
        # leaves U_r w_r = y_r), with no copy of any block U_r.
        padded = np.zeros((width, len(sizes) * count), order="F")
        for q, size in enumerate(sizes):
            padded[:size, q * count : (q + 1) * count] = reduced[:size]
        solutions, _ = lapack.dtrtrs(factor, padded, 0, 0, 0, width, 1)  # overwrite_b
        if opposite:  # w_0 of every order, and w_1 = -w_0 (exact)
            weights[0:rows:2, :width] = solutions.T
            np.negative(solutions.T, out=weights[1:rows:2, :width])
        elif count == n_classes:  # every class at once: the rows are already in place
            weights[:rows, :width] = solutions.T
        else:
            weights[first_class:rows:n_classes, :width] = solutions.T

    def _solve_fallbacks(self, system, factor, info, rhs, weights, sizes, first_class) -> None:
        """`_solve_nested` when M_R is not definite in floating point (``info`` > 0), or
        l2 = 0 (a solution may then overflow): the orders whose leading block is definite are
        solved from its factor, the others as their pipelines would (`solve_spd`)."""
        width, l2 = len(system), self.model.l2
        n_classes, count = len(weights) // len(self.orders), rhs.shape[1]
        valid = width if info == 0 else info - 1  # the leading minors known to be definite
        usable = [size for size in sizes if 0 < size <= valid]
        if usable and info != 0:  # refactor the largest definite leading block
            factor, info = lapack.dpotrf(system[: usable[-1], : usable[-1]], lower=0, clean=0)
            if info != 0:
                usable = []
        if usable:
            largest = usable[-1]  # U^T y = r over the largest definite block
            reduced, _ = lapack.dtrtrs(factor[:largest, :largest], rhs[:largest], lower=0, trans=1)
        for q, size in enumerate(sizes):
            if size == 0:
                continue
            solution = None
            if size in usable:
                block = factor if size == len(factor) else factor[:size, :size]
                solution, _ = lapack.dtrtrs(block, reduced[:size], lower=0)  # U_r w_r = y_r
                if l2 <= TINY_RIDGE and not np.isfinite(solution).all():
                    solution = None
            if solution is None:  # not definite in floating point: the pipeline's fallbacks
                solution = solve_spd(system[:size, :size], rhs[:size], l2)
            start = q * n_classes + first_class
            weights[start : start + count, :size] = solution.T

    # ---------------------------------------------------------------------- predictions

    def outputs(self, solution: NestedSolution, vector: np.ndarray, order: int | None = None):
        """``w . x`` for a dense vector: of every order (rows) and class (columns), or of
        ``order``'s classes only."""
        weights, n_classes = solution.weights, len(solution.labels)
        if order is not None:
            start = self.orders.index(order) * n_classes
            weights = weights[start : start + n_classes]
        values = vector[solution.columns]  # grouped by order, as the weights
        with np.errstate(over="ignore", invalid="ignore"):
            outputs = weights @ values
        if not np.isfinite(outputs).all():
            self._refuse_overflow(weights, values, solution.columns)
        return outputs if order is not None else outputs.reshape(len(self.orders), n_classes)

    def _refuse_overflow(self, weights, values, columns) -> typing.NoReturn:
        """NRRLS's error for outputs that overflow, over the model's dense columns."""
        model = self.model
        dense = np.zeros((len(weights), model.statistics.dim))
        dense[:, columns] = weights
        vector = np.zeros(dense.shape[1])
        vector[columns] = values
        refuse_overflow(dense, vector, model.column_namer())

    def probabilities(self, labels: tuple, outputs: np.ndarray) -> dict:
        """NRRLS.predict_proba_one's probabilities for outputs of one order (`softmax`)."""
        return dict(zip(labels, softmax(outputs[None, :], float(self.model.eta))[0].tolist()))

    def order_outputs(self, x: dict, order: int) -> tuple[tuple, np.ndarray | None]:
        """Order ``order``'s classes and outputs for ``x`` from the present statistics (None
        before any class)."""
        solution = self.solve()
        # The highest order's expansion (the one learning will need: expanded once), whose
        # leading columns are the order's; if it overflows, the order's own (a value too large
        # for a higher order is fine for a lower one).
        try:
            expanded = self.expand(x).values
        except ValueError:
            expanded = self.expand(x, order).values
        vector = self.vector(expanded)
        if not solution.labels:
            return solution.labels, None
        return solution.labels, self.outputs(solution, vector, order)

    def predictions(self, solution: NestedSolution, expanded: dict, labels: bool) -> list:
        """Every order's prediction of an expanded sample from ``solution``: its class
        (``labels``) or its probabilities (before any class: None, or {})."""
        if not solution.labels:
            empty: dict | None = None if labels else {}
            return [empty] * len(self.orders)
        outputs = self.outputs(solution, self.vector(expanded))
        if labels:
            return labels_of(solution.labels, outputs)
        return [self.probabilities(solution.labels, row) for row in outputs]

    # -------------------------------------------------------------------- materialising

    def pipeline(self, order: int) -> compose.Pipeline:
        """A new ``PolynomialExtender(degree=order) | NRRLS`` with the statistics that the
        independent pipeline of that order would have learnt (its blocks of the shared ones),
        ready to predict and to go on learning on its own."""
        top = self.model
        order_of = dict(zip(top.features, self.column_orders[1:].tolist()))
        # in the order the features came: the pipeline's own order
        features = [feature for feature in self.arrival if order_of[feature] <= order]
        return compose.Pipeline(self.extenders[order].clone(), top.restricted(features))


def _direct_orders(sizes: list[int], stale_width: int) -> int:
    """How many of the leading orders (``sizes``: their widths, increasing) to solve directly,
    from one factorisation of the largest of their blocks; the others each by their own stale
    factor. The orders narrower than ``stale_width`` always go direct, as their pipelines'
    solves do; of the rest, the split with the least estimated cost (ties: more direct).

    Both ways are exact; only the cost differs. A factorisation of s columns costs about
    s^3 / `FACTOR_RATE`, a stale-factor solve about s^2 + `STALE_OVERHEAD` (its O(s^2) steps
    and its fixed cost, in the same unit), fitted to the per-order costs measured on the
    machine of ``benchmarks/results/selector.md`` (with the compiled CG; the Python CG's give
    the same splits at 8, 20 and 36 inputs).

    """
    least = sum(size < stale_width for size in sizes)
    best, best_cost = len(sizes), math.inf
    for split in range(len(sizes), least - 1, -1):
        cost = sizes[split - 1] ** 3 / FACTOR_RATE if split else 0.0
        cost += sum(size * size + STALE_OVERHEAD for size in sizes[split:])
        if cost < best_cost:
            best, best_cost = split, cost
    return best


def label_of(labels: tuple, outputs: np.ndarray) -> typing.Hashable:
    """NRRLS.predict_one's class for outputs of one order: the largest, ties to the first."""
    values = outputs.tolist()
    if len(values) == 2:
        return labels[0 if values[0] >= values[1] else 1]
    return labels[max(range(len(values)), key=values.__getitem__)]


def labels_of(labels: tuple, outputs: np.ndarray) -> list:
    """`label_of` for every row of ``outputs`` (one row per order), vectorised: the first
    largest output's class (numpy's argmax keeps the first of equal maxima, as ``max``)."""
    if len(labels) == 2:
        return [labels[0] if first else labels[1] for first in (outputs[:, 0] >= outputs[:, 1])]
    return [labels[k] for k in outputs.argmax(axis=1).tolist()]
