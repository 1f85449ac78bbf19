"""Every polynomial order's NR-RLS from ONE set of statistics: the highest order's.

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
samples and learns exactly as the order-R pipeline would) and the order of every column of its
feature index. Features that emerge later are appended at the end of that index, so the grouping
is a permutation of the index (kept as a gather index, rebuilt only when the index grows).

The solve is always direct (one Cholesky a solve). A pipeline of 112 columns or more would use
its stale-factor solver instead (`_solver.py`), O(d^2) a step: the selector then costs 2.3
(227 columns) to 4.1 (403) times the order-R pipeline alone, against 3.9 and 3.7 for the
independent pipelines (``benchmarks/results/selector.md``; at 403 columns the two are even
within the noise of a shared machine). A stale factor per order over the shared
statistics cannot do much better: the orders' squared widths add up to 2.4 times the highest
order's (widths 1, 3, ..., 11 times l for r = 1..6), so their CG steps alone cost 2.4 times
the single pipeline's.

"""

from __future__ import annotations

import typing

import numpy as np
from river import compose
from scipy.linalg import lapack

from ._solver import solve_spd
from ._threads import one_blas_thread
from .nrrls import NRRLS
from .poly import PolynomialExtender

__all__ = ["NestedOrders", "NestedSolution", "shares_statistics"]

_PLAIN = frozenset((float, int))  # value types whose equality means an equal expansion


def shares_statistics(classifier: typing.Any) -> bool:
    """Whether a classifier template can be scored from shared statistics: an `NRRLS` whose
    solver works from the statistics (``solver="woodbury"`` keeps a recursion per model)."""
    return type(classifier) is NRRLS and classifier.solver == "cholesky"


class NestedSolution(typing.NamedTuple):
    """Every order's weights at one moment (frozen for block-prequential scoring)."""

    labels: tuple  # the classes, in the statistics' order
    weights: np.ndarray  # (n_orders * n_classes, width): row q * C + k is orders[q]'s class k
    columns: np.ndarray  # the dense column of every weight column (grouped by order)


class NestedOrders:
    """One `NRRLS` of the highest order whose statistics serve every order.

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
        # the order of every dense column of the model's index (column 0, the constant: 0)
        self.column_orders = np.zeros(1, dtype=np.intp)
        self._layout: tuple | None = None  # (grouped system columns, sizes, gather index)
        self.solution: NestedSolution | None = None  # cached until the statistics change
        self._last: tuple | None = None  # the last x's items and its expansion (see expand)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_layout"] = None  # derived from column_orders
        state["solution"] = None  # derived from the statistics
        state["_last"] = None
        return state

    # ------------------------------------------------------------------------- encoding

    def expand(self, x: dict, order: int | None = None) -> tuple[dict, typing.Any]:
        """Order ``order``'s expansion of ``x`` (default: the highest) and its layout.

        The highest order's expansion of the last ``x`` is remembered (river's prequential
        loop expands every sample twice, to predict and to learn), when its values are plain
        ints and floats (equal keys and values then give the same expansion).

        """
        if order is not None:
            return self.extenders[order]._transform_layout(x)
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        items = tuple(x.items())
        last = self._last
        if last is not None and _PLAIN.issuperset(map(type, x.values())) and last[0] == items:
            return last[1]
        result = self.top._transform_layout(x)
        if _PLAIN.issuperset(map(type, x.values())):
            self._last = (items, result)
        return result

    def vector(self, expanded: dict) -> np.ndarray:
        """The expansion over the model's dense columns (unknown features dropped)."""
        return self.model._index.dense_one(expanded, grow=False)[0]

    # ------------------------------------------------------------------------- learning

    def learn(self, expanded: dict, layout: typing.Any, y: typing.Hashable, weight: float):
        """Let the highest order learn an expanded sample; record the new columns' orders."""
        index = self.model._index
        known = len(index.features)
        if weight == 1.0:
            self.model.learn_one(expanded, y)
        else:
            self.model.learn_one(expanded, y, w=weight)
        self.solution = None
        if len(index.features) > known:
            orders = dict(zip(layout.names, layout.orders))
            new = [orders[feature] for feature in index.features[known:]]
            self.column_orders = np.concatenate((self.column_orders, np.asarray(new, np.intp)))
            self._layout = None

    # -------------------------------------------------------------------------- solving

    @property
    def first(self) -> int:
        return 0 if self.model.intercept else 1

    def layout(self) -> tuple[np.ndarray, list[int]]:
        """System columns grouped by order, and every order's width.

        ``grouped[i]`` is the system column (dense column minus ``first``) at grouped position
        i; ``sizes[q]`` the number of columns of ``orders[q]`` (a leading block).

        """
        if self._layout is None:
            column_orders = self.column_orders[self.first :]
            grouped = np.argsort(column_orders, kind="stable")  # by order, then index position
            ordered = column_orders[grouped]
            sizes = np.searchsorted(ordered, self.orders, side="right").tolist()
            self._layout = (grouped, sizes, {})
        return self._layout[:2]

    def gather(self, lead: int, offset: int) -> np.ndarray:
        """Flat (column-major, leading dimension ``lead``) positions of the grouped M's
        entries in a square whose system column j is at ``offset + j``: always the entry of
        M's upper triangle (the authoritative one), so the grouped M is fully symmetric."""
        self.layout()
        grouped, _, cache = self._layout
        index = cache.get((lead, offset))
        if index is None:
            low = np.minimum.outer(grouped, grouped) + offset
            high = np.maximum.outer(grouped, grouped) + offset
            index = cache[lead, offset] = (low + high * lead).ravel(order="F")
        return index

    def solve(self) -> NestedSolution:
        """Every order's weights from the statistics (cached until they change)."""
        if self.solution is not None:
            return self.solution
        model = self.model
        stats = model._stats
        labels, dim, first = tuple(stats.labels), stats.dim, self.first
        grouped = self.layout()[0]
        n_classes = len(labels)
        weights = np.zeros((len(self.orders) * n_classes, len(grouped)), order="F")
        if n_classes and dim > first:
            reweight = bool(model.reweight)
            with one_blas_thread(dim):
                if stats.systems_share_matrix(reweight):
                    mix = self._mix(stats)
                    # M = sum_j mix_j A^j over the whole buffer (column-major), gathered below
                    combined = stats.stacked() @ mix[0]
                    rhs = stats.sums(first) @ mix[1:].T  # r_k = sum_j mix[1 + k, j] s^j
                    gather = self.gather(stats.buffer.shape[0], first)
                    self._solve_nested(combined, gather, rhs, weights, 0, True)
                else:  # reweighted multiclass: every class's own M_k, each serving every order
                    matrix_mix, rhs_mix = stats.mixing(reweight, model.tau, model.eta)
                    rhs = rhs_mix @ stats.sums(first).T  # r_k, one row per class
                    matrices = stats.one_vs_rest_matrices(matrix_mix, model.l2, first)
                    gather = self.gather(dim - first, 0)
                    for k, matrix in enumerate(matrices):
                        square = np.asfortranarray(matrix).ravel(order="F")
                        self._solve_nested(square, gather, rhs[k][:, None], weights, k, False)
        self.solution = NestedSolution(labels, weights, grouped + first)
        return self.solution

    def _mix(self, stats) -> np.ndarray:
        """The shared system's coefficients: row 0 M's (sum_j mix_j A^j + b I), then r_k's."""
        model = self.model
        if stats.n_classes != 2:
            matrix_mix, rhs_mix = stats.mixing(bool(model.reweight), model.tau, model.eta)
            return np.vstack((matrix_mix[:1], rhs_mix))
        # Two classes: w_k of one is w_rest of the other, so M = w_0 A^0 + w_1 A^1 + b I and
        # r_0, r_1 need only the two w_k (stats.mixing builds the general C x C form, 4x the
        # cost)
        weights, _ = stats.class_weights(bool(model.reweight))  # 1/n^k (or 1, 0 if empty)
        target_pos, target_rest = model.tau + model.eta, model.tau - model.eta
        targets = np.array([[target_pos, target_rest], [target_rest, target_pos]])
        return np.vstack((weights, targets * weights))  # M's, then r_0's and r_1's

    def _solve_nested(self, square, gather, rhs, weights, first_class: int, add_ridge: bool):
        """w_r = M_r^-1 r_r of every order for the columns of ``rhs`` (system order), M's
        entries at ``square[gather]`` (see `gather`; ``add_ridge``: ``square`` lacks the b I
        of M, as the combination of the whole buffer does). Row
        ``q * n_classes + first_class + j`` of ``weights`` (grouped columns) gets order q's
        solution for column j."""
        grouped, sizes = self.layout()
        width, l2 = len(grouped), self.model.l2
        n_classes, count = len(weights) // len(self.orders), rhs.shape[1]
        system = square[gather].reshape(width, width, order="F")  # M_R, grouped by order
        if add_ridge:
            system.ravel(order="F")[:: width + 1] += l2  # + b I (l2 is the paper's b)
        grouped_rhs = rhs[grouped]  # r_R, grouped by order
        # (a, lower, clean) by position: f2py parses a keyword for ~0.4 us
        factor, info = lapack.dpotrf(system, 0, 0)  # M_R = U^T U
        if info != 0 or l2 <= 1e-200:
            self._solve_fallbacks(system, factor, info, grouped_rhs, weights, first_class)
            return
        # U^T y = r_R: ONE forward substitution serves every order (y_r is the leading part)
        reduced, _ = lapack.dtrtrs(factor, grouped_rhs, 0, 1)  # (a, b, lower, trans)
        # U_r w_r = y_r for every order in ONE back substitution with the whole U: the
        # right-hand side [y_r; 0] gives [w_r; 0] (U is upper triangular: the zero tail solves
        # to zero and leaves U_r w_r = y_r), with no copy of any block U_r.
        padded = np.zeros((width, len(sizes) * count), order="F")
        for q, size in enumerate(sizes):
            padded[:size, q * count : (q + 1) * count] = reduced[:size]
        solutions, _ = lapack.dtrtrs(factor, padded, 0, 0, 0, width, 1)  # overwrite_b
        if count == n_classes:  # every class at once: the rows are already in place
            weights[:] = solutions.T
        else:
            weights[first_class::n_classes] = solutions.T

    def _solve_fallbacks(self, system, factor, info, grouped_rhs, weights, first_class) -> None:
        """`_solve_nested` when M_R is not definite in floating point (``info`` > 0), or
        l2 = 0 (a solution may then overflow): the orders whose leading block is definite are
        solved from its factor, the others as their pipelines would (`solve_spd`)."""
        sizes, width, l2 = self.layout()[1], len(system), self.model.l2
        n_classes, count = len(weights) // len(self.orders), grouped_rhs.shape[1]
        valid = width if info == 0 else info - 1  # the leading minors known to be definite
        usable = [size for size in sizes if 0 < size <= valid]
        if usable and info != 0:  # refactor the largest definite leading block
            factor, info = lapack.dpotrf(system[: usable[-1], : usable[-1]], lower=0, clean=0)
            if info != 0:
                usable = []
        if usable:
            largest = usable[-1]  # U^T y = r over the largest definite block
            reduced, _ = lapack.dtrtrs(
                factor[:largest, :largest], grouped_rhs[:largest], lower=0, trans=1
            )
        for q, size in enumerate(sizes):
            if size == 0:
                continue
            solution = None
            if size in usable:
                block = factor if size == len(factor) else factor[:size, :size]
                solution, _ = lapack.dtrtrs(block, reduced[:size], lower=0)  # U_r w_r = y_r
                if l2 <= 1e-200 and not np.isfinite(solution).all():
                    solution = None
            if solution is None:  # not definite in floating point: the pipeline's fallbacks
                solution = solve_spd(system[:size, :size], grouped_rhs[:size], l2)
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

    def _refuse_overflow(self, weights, values, columns) -> None:
        """NRRLS's error for outputs that overflow, over the model's dense columns."""
        dense = np.zeros((len(weights), self.model._stats.dim))
        dense[:, columns] = weights
        vector = np.zeros(dense.shape[1])
        vector[columns] = values
        self.model._refuse_overflow(dense, vector)

    # -------------------------------------------------------------------- materialising

    def pipeline(self, order: int) -> compose.Pipeline:
        """A new ``PolynomialExtender(degree=order) | NRRLS`` with the statistics that the
        independent pipeline of that order would have learnt (its blocks of the shared ones),
        ready to predict and to go on learning on its own."""
        top = self.model
        model = top.clone()
        features = [
            feature
            for feature, column_order in zip(top._index.features, self.column_orders[1:].tolist())
            if column_order <= order
        ]
        columns = np.array([0] + [top._index.position[f] for f in features], dtype=np.intp)
        model._index.add(features)  # in the shared index's order: the pipeline's own order
        stats = model._stats
        stats.grow(len(columns))
        for label in top._stats.labels:
            stats.add_class(label)
        if len(top._stats.labels):
            # increasing columns: the upper triangle stays the upper triangle
            stats.assign(top._stats.data[np.ix_(columns, columns)])
        return compose.Pipeline(self.extenders[order].clone(), model)


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


def probabilities_of(model: NRRLS, labels: tuple, outputs: np.ndarray) -> dict:
    """NRRLS.predict_proba_one's probabilities for outputs of one order."""
    return dict(zip(labels, model._softmax(outputs[None, :])[0].tolist()))
