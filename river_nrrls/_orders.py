"""Every polynomial order's NR-RLS from ONE expansion: each order's model is its pipeline's.

This module is the order selector's own layer, below `PolynomialOrderSelector`
(``model_selection.py``, its one user) and above the estimators it composes: one `NRRLS` per
order and the `PolynomialExtender` of every order, used through their internal interfaces
(`NRRLS.statistics`, `NRRLS.encode`, `NRRLS.new_solver`, `PolynomialExtender.expand_with_layout`,
...), never through their private state. It is not a shared piece: it imports those estimators;
the shared pieces it solves with (`SystemSolver`, ``_outputs``) import nothing of it.

**What "every order predicts what its pipeline would" means here: the same floats.** Toh's
reduced model is nested (`PolynomialExtender.output_orders`): the expansion of order r is the
columns of order R > r's expansion whose order is at most r, with the same values bit for bit
and in the same order. So the sample that order r's pipeline ``PolynomialExtender(degree=r) |
NRRLS(...)`` learns is read off the highest order's expansion (`NestedOrders.expand`, once a
sample), and order r's `NRRLS` learns it by the pipeline's own code: its statistics are the
pipeline's to the bit (the same columns in the same order, the same updates). Each order is
solved by a `SystemSolver` of the pipeline's parameters and tuning, told of every learnt
sample as the pipeline's own solver is and solved at the same moments (every sample of the
prequential race: a pipeline predicts before it learns), so it takes the same path (direct,
stale factor, refresh, fallbacks) on the same numbers; the outputs come from those weights
and the sample's columns in the pipeline's order by NRRLS's own product (`_outputs.products`).
The weights, outputs, predictions and probabilities are the pipeline's bit for bit.

Nothing weaker is enough. High orders of unscaled inputs make TER systems whose condition
number passes 1 / eps (order 6 of 21 inputs in [0, 1]: diagonal entries near 1e16 against the
ridge b = 1e-4): two backward-stable solves of one such system, differing only in their
rounding (the columns in another order, one Cholesky factor of the highest order read for
every order, a conjugate-gradient solve stopped at its tolerance), give weights that differ
in their leading digits, and predictions that differ on some samples; even the pipeline does
not predict what the same pipeline with its stale factor switched off predicts. And one set of
statistics for every order (the highest order's, each order's a block of it) is not the
pipelines' to the bit either: BLAS's rank-1 update rounds ``w x_i x_j`` as ``(w x_j) x_i``,
which depends on where the two columns sit. So every order keeps its own statistics (the
memory and the rank-1 updates of every order's pipeline) and its own solves; the selector
saves the expansions (one for every order), the pipelines' own overheads, and nothing that
changes a bit.

A solver is a cache of the statistics (its stale factor, its queue, its warm start): the
solvers are not pickled, so that a pickle is the same whatever was solved (a refused call
solves before it refuses). A selector loaded from a pickle solves every order directly first,
as a pipeline whose solver starts again; from then on its orders follow such pipelines.

"""

from __future__ import annotations

import copy
import operator
import typing

import numpy as np
import pandas as pd
from river import compose

# the shared pieces
from ._checks import as_label
from ._outputs import products, softmax
from ._solver import SystemSolver
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

# the estimators this layer of the selector composes (through their internal interfaces)
from .nrrls import NRRLS
from .poly import Expansion, PolynomialExtender

__all__ = [
    "BatchExpansion",
    "NestedOrders",
    "NestedSolution",
    "label_of",
    "labels_of",
    "shares_statistics",
]

_PLAIN = frozenset((float, int))  # value types whose equality means an equal expansion


def shares_statistics(classifier: typing.Any) -> bool:
    """Whether a classifier template can be raced from one expansion with solvers the selector
    holds: an `NRRLS` whose solver works from the statistics (``solver="woodbury"`` keeps a
    recursion per model)."""
    return type(classifier) is NRRLS and classifier.solver == "cholesky"


class NestedSolution(typing.NamedTuple):
    """Every order's weights at one moment (frozen for block-prequential scoring)."""

    labels: tuple  # the classes, in the statistics' order
    # every order's weights as its pipeline's NRRLS holds them (one class a row, over its own
    # dense columns), and where those columns are among the highest order's (increasing)
    rows: tuple
    positions: tuple
    first: int  # the first dense column the systems use (1 without an intercept)

    @property
    def columns(self) -> slice:
        """The highest order's dense columns that `weights` covers."""
        return slice(self.first, len(self.positions[-1]))

    @property
    def weights(self) -> np.ndarray:
        """(n_orders * n_classes, width): row q * C + k is order q's class k over the highest
        order's dense `columns` (0 where order q has no column)."""
        first, n_classes = self.first, len(self.labels)
        weights = np.zeros((len(self.rows) * n_classes, len(self.positions[-1]) - first))
        for q, (rows, positions) in enumerate(zip(self.rows, self.positions)):
            block = weights[q * n_classes : (q + 1) * n_classes]
            block[:, positions[first:] - first] = rows[:, first:]
        return weights


class BatchExpansion(typing.NamedTuple):
    """A mini-batch expanded once at the highest order (`NestedOrders.expand_many`)."""

    frame: pd.DataFrame  # the highest order's ``transform_many`` (pandas, on the batch's index)
    orders: list  # the order of every column of ``frame``
    rows: list  # every row of ``frame`` as a dict (what its pipelines' predictions read)

    def columns(self, order: int) -> list:
        """Order ``order``'s columns of ``frame``: its own ``transform_many``'s, in order."""
        return [
            name
            for name, column_order in zip(self.frame.columns, self.orders)
            if column_order <= order
        ]


class _Selection(typing.NamedTuple):
    """How every order's sample is read off one layout of the highest order's expansion."""

    names: list  # the expansion's names (the extender's cached list: kept to pin its id)
    orders: list  # of every order: its names, and a getter of their values (or None: all)
    getters: list


class NestedOrders:
    """One `NRRLS` per order, each learning its order's part of ONE expansion.

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
        # every order's NR-RLS: its pipeline's statistics, to the bit
        self.models: dict[int, NRRLS] = {order: classifier.clone() for order in orders}
        # the order of every dense column of the highest order's model (column 0, the
        # constant: 0), in its column order (the order the features came)
        self.column_orders = np.zeros(1, dtype=np.intp)
        # the solver of every order (by position in ``orders``), as its pipeline's NRRLS would
        # hold it (not pickled, see __getstate__)
        self.solvers: dict[int, SystemSolver] = {}
        self._positions: tuple | None = None  # see `positions`
        self._selection: _Selection | None = None  # see `_select`
        self.solution: NestedSolution | None = None  # cached until the statistics change
        self._last: tuple | None = None  # the last x's items and its Expansion (see expand)

    @property
    def model(self) -> NRRLS:
        """The highest order's `NRRLS`."""
        return self.models[self.orders[-1]]

    @property
    def arrival(self) -> list:
        """The highest order's features in the order they came (its column order)."""
        return list(self.model.features)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        # The orders' solvers hold what the statistics and the solves determine (a cache, like
        # the solution): a pickle is the same whatever was solved.
        state["solvers"] = {}
        state["_positions"] = None
        state["_selection"] = None
        state["solution"] = None
        state["_last"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        if "models" not in state:  # pickled when one model's statistics served every order
            _from_one_model(state)
        for name in ("_views", "_sizes", "_split"):  # that version's caches
            state.pop(name, None)
        self.__dict__.update(state)

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
        """The expansion over the highest order's dense columns (unknown features dropped;
        read-only, valid until the next encoding: `NRRLS.encode`)."""
        return self.model.encode(expanded)

    def _select(self, expansion: Expansion) -> list[dict]:
        """Every order's sample: the dict its pipeline's extender gives (the names of order
        at most r of the highest order's expansion, in its order, with its values)."""
        selection = self._selection
        names = expansion.names
        if selection is None or selection.names is not names:
            selection = self._selection = _selection(names, expansion.orders, self.orders)
        values = expansion.values
        listed = list(values.values())
        return [
            values if getter is None else dict(zip(chosen, getter(listed)))
            for chosen, getter in zip(selection.orders, selection.getters)
        ]

    # ------------------------------------------------------------------------- learning

    def learn(self, expansion: Expansion, y: typing.Hashable, weight: float):
        """Let every order's model learn its part of an expanded sample (the highest order
        first: the most demanding range and size, so a refused sample changes nothing), then
        tell the orders' solvers of it (as each pipeline's NRRLS tells its own)."""
        samples = self._select(expansion)
        models = [self.models[order] for order in self.orders]
        top = models[-1]
        known = top.statistics.dim
        for model, sample in zip(reversed(models), reversed(samples)):
            if weight == 1.0:
                model.learn_one(sample, y)
            else:
                model.learn_one(sample, y, w=weight)
        if weight == 0.0:  # validated, not learnt: the models and their solutions unchanged
            return
        self.solution = None
        if top.statistics.dim > known:  # new columns (appended: every order's columns stay)
            names = dict(zip(expansion.names, expansion.orders))
            new = [names[feature] for feature in top.features[known - 1 :]]
            self.column_orders = np.concatenate((self.column_orders, np.asarray(new, np.intp)))
            self._positions = None
        keeping = [q for q, solver in self.solvers.items() if solver.keeps_samples]
        if not keeping:
            return
        vector = self.vector(expansion.values)  # the sample as the models learnt it
        positions = self.positions()
        slot = top.statistics.slot[as_label(y)]
        for q in keeping:
            stats = models[q].statistics
            self.solvers[q].observe(stats, slot, vector[positions[q]], weight)  # (a copy)

    def expand_many(self, X: pd.DataFrame) -> BatchExpansion | None:
        """The highest order's ``transform_many`` of a mini-batch with the order of every
        column (None when its columns are not the layout of the batch's observed inputs, which
        `learn_many` needs)."""
        frame = self.top.transform_many(X)
        names = list(frame.columns)
        observed = X.columns[X.notna().to_numpy().any(axis=0)] if len(X) else X.columns[:0]
        layout = self.top.expand_with_layout(dict.fromkeys(observed, 0.0))
        if layout.names != names:
            return None
        rows = [dict(zip(names, row)) for row in frame.to_numpy(dtype=float).tolist()]
        return BatchExpansion(frame, list(layout.orders), rows)

    def learn_many(self, batch: BatchExpansion, y: pd.Series) -> None:
        """Let every order's model learn its columns of an expanded mini-batch by its own
        ``learn_many`` (one batch update of its statistics, the highest order first), as its
        pipeline ``PolynomialExtender(degree=r) | NRRLS`` learns the batch; every order's
        solver is let go, as ``learn_many`` lets its pipeline's go (the next solve direct)."""
        top = self.model
        known = top.statistics.dim
        for order in reversed(self.orders):
            self.models[order].learn_many(batch.frame[batch.columns(order)], y)
        self.solution = None
        self.solvers = {}
        self._last = None
        if top.statistics.dim > known:  # new columns (appended: every order's columns stay)
            order_of = dict(zip(batch.frame.columns, batch.orders))
            new = [order_of[feature] for feature in top.features[known - 1 :]]
            self.column_orders = np.concatenate((self.column_orders, np.asarray(new, np.intp)))
            self._positions = None

    def batch_predictions(self, solution: NestedSolution, batch: BatchExpansion, labels: bool):
        """`predictions` of every row of an expanded mini-batch from one ``solution``."""
        return [self.predictions(solution, row, labels) for row in batch.rows]

    def nbytes_after(self, expansion: Expansion, y: typing.Hashable) -> int:
        """The bytes every order's statistics and solver would take once its part of an
        expanded sample of class ``y`` is learnt (`NRRLS.nbytes_after`). Changes nothing."""
        samples = self._select(expansion)
        return sum(
            self.models[order].nbytes_after(sample, y)
            for order, sample in zip(self.orders, samples)
        )

    # -------------------------------------------------------------------------- solving

    @property
    def first(self) -> int:
        return 0 if self.model.intercept else 1

    def sizes(self) -> list[int]:
        """Every order's number of system columns."""
        first = self.first
        return [self.models[order].statistics.dim - first for order in self.orders]

    def positions(self) -> tuple:
        """Every order's dense columns (the constant first, then its features in its own
        order) among the highest order's: increasing, the highest order's all of them."""
        if self._positions is None:
            column = {feature: j for j, feature in enumerate(self.model.features, 1)}
            self._positions = tuple(
                np.array([0, *[column[f] for f in self.models[order].features]], np.intp)
                for order in self.orders
            )
        return self._positions

    def solve(self) -> NestedSolution:
        """Every order's weights from its statistics by its pipeline's solver (cached until
        they change)."""
        if self.solution is not None:
            return self.solution
        rows = tuple(
            self._solver_of(q).solve(self.models[order].statistics)
            for q, order in enumerate(self.orders)
        )
        labels = tuple(self.model.statistics.labels)
        self.solution = NestedSolution(labels, rows, self.positions(), self.first)
        return self.solution

    def _solver_of(self, q: int) -> SystemSolver:
        """orders[q]'s solver: the one its pipeline's NRRLS would hold (`NRRLS.new_solver`)."""
        solver = self.solvers.get(q)
        if solver is None:
            model = self.models[self.orders[q]]
            solver = self.solvers[q] = typing.cast(SystemSolver, model.new_solver())
        return solver

    # ---------------------------------------------------------------------- predictions

    def outputs(self, solution: NestedSolution, vector: np.ndarray, order: int | None = None):
        """``w . x`` for a vector over the highest order's dense columns: of every order (rows)
        and class (columns), or of ``order``'s classes only; each order's as its pipeline's
        NRRLS computes it (`products`: its weights, x over its columns)."""
        n_classes = len(solution.labels)
        chosen = range(len(self.orders)) if order is None else [self.orders.index(order)]
        outputs = np.empty((len(chosen), n_classes))
        if n_classes:
            if len(vector) < ONE_THREAD_MIN_DIM:
                self._products(solution, vector, chosen, outputs)
            else:  # as NRRLS's wide outputs: on one BLAS thread
                with one_blas_thread(len(vector)):
                    self._products(solution, vector, chosen, outputs)
        return outputs[0] if order is not None else outputs

    def _products(self, solution: NestedSolution, vector, chosen, outputs) -> None:
        for row, q in enumerate(chosen):
            weights, positions = solution.rows[q], solution.positions[q]
            own = vector if len(positions) == len(vector) else vector[positions]
            model = self.models[self.orders[q]]
            outputs[row] = products(weights, own, model.column_namer)

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
        independent pipeline of that order has learnt (a copy of the order's model), ready to
        predict and to go on learning on its own. Its solver starts again (its first solve is
        direct, where the order's may be on its stale factor): on badly conditioned orders it
        predicts as a pipeline whose solver starts again at this point."""
        return compose.Pipeline(self.extenders[order].clone(), copy.deepcopy(self.models[order]))


def _selection(names: list, orders: list, wanted: tuple) -> _Selection:
    """Where every order's names sit in the highest order's expansion (``names``, with the
    ``orders`` of its columns): the order's names and a getter of their values (None for
    the highest order: the whole expansion)."""
    chosen: list[list] = []
    getters: list[typing.Callable[[list], typing.Any] | None] = []
    for order in wanted:
        picked = [j for j, column_order in enumerate(orders) if column_order <= order]
        chosen.append([names[j] for j in picked])
        if len(picked) == len(names):
            getters.append(None)
        elif len(picked) <= 1:  # (itemgetter of one index gives the value, not a tuple; of
            # none, an error: order 1 of an empty sample, whose sum terms are of order 2)
            start = picked[0] if picked else 0
            getters.append(operator.itemgetter(slice(start, start + len(picked))))
        else:
            getters.append(operator.itemgetter(*picked))
    return _Selection(names, chosen, getters)


def _from_one_model(state: dict) -> None:
    """A pickle of the version whose one model (the highest order's, its columns grouped by
    order or in the order they came) served every order: every order's model from its block
    of those statistics, its features in the order they came (`NRRLS.restricted`)."""
    model = state.pop("model")
    column_orders = state["column_orders"]
    arrival = state.pop("arrival", None) or list(model.features)
    order_of = dict(zip(model.features, column_orders[1:].tolist()))
    state["models"] = {
        order: model.restricted([f for f in arrival if order_of[f] <= order])
        for order in state["orders"]
    }
    state["column_orders"] = np.array([0] + [order_of[f] for f in arrival], np.intp)
    state.update(solvers={}, _positions=None, _selection=None, solution=None, _last=None)


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
