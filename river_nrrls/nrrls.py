"""NR-RLS: non-iteratively reweighted recursive least squares (Jang 2023)."""

from __future__ import annotations

import copy
import sys
import typing

import numpy as np
import pandas as pd
from river import base

from ._checks import (
    as_label,
    check_bool,
    check_label,
    check_labels,
    check_paired,
    check_real,
    factorize_labels,
    row_name,
    sample_weights,
)
from ._debug import contribution_table, format_number
from ._frames import as_frame, as_series, native_frame, native_series
from ._fused import learn_remembered, pair_outputs
from ._index import FeatureIndex, MergedColumns
from ._locking import OneCallAtATime
from ._memory import SizeBudget, solver_nbytes
from ._merging import Mergeable
from ._outputs import products, refuse_overflow, softmax
from ._parameters import LiveParameters
from ._ranges import ColumnNamer, check_batch, check_merge, check_sample
from ._solver import Solver, SystemSolver
from ._stats import ClassStatistics
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread
from ._validation import validate_one
from ._woodbury import RecursiveInverse

__all__ = ["NRRLS"]

_SOLVERS = ("cholesky", "woodbury")
_MAX_FLOAT = sys.float_info.max
# Labels that need no check: never missing, always hashable, stored as they are.
_PLAIN_LABELS = frozenset((bool, int, str))


class NRRLS(LiveParameters, Mergeable, OneCallAtATime, base.MiniBatchClassifier):
    """Non-iteratively reweighted recursive least squares (NR-RLS), exact online TER.

    After every sample the weights equal the batch *total-error-rate* (TER) least-squares solution
    on everything seen so far (Jang; Toh and Eng 2008): a ridge least squares in which each class
    carries total weight 1 (class weights 1/n^- and 1/n^+ that change as the stream goes on), so
    that a rare class is not drowned by a frequent one. For class ``k``:

        w_k = argmin  1/(2 n^k) sum_{i in k} (tau + eta - w.x_i)^2
                    + 1/(2 n^rest) sum_{i not in k} (tau - eta - w.x_i)^2 + l2/2 |w|^2

    The model keeps per-class counts, scatter matrices and sums (O(d^2) per ``learn_one``,
    whatever the number of classes) and solves the normal equations with a Cholesky factorisation
    only when a prediction needs new weights (cached until the next update). Multiclass problems
    are one-vs-rest as in the paper's Appendix B, every class's system assembled from the same
    statistics; two classes share one matrix.

    Parameters
    ----------
    l2
        Ridge constant (the paper's b, 1e-4). It regularises the intercept too, as in the batch
        form. ``l2 = 0`` is allowed with the Cholesky solver. A singular system (collinear
        features, or fewer samples than columns) then has many least-squares solutions, with the
        same outputs on every sample learnt but not elsewhere: the model returns the Cholesky
        solve's when rounding lets the factorisation through, else the minimum-norm solution of
        the equilibrated system. A positive ``l2`` makes the answer unique.
    reweight
        ``True``: class weights 1/n (TER, the paper's NR-RLS). ``False``: frozen class weights 1,
        giving plain ridge least squares, the paper's RLS baseline.
    tau
        Threshold: the class targets are ``tau - eta`` (rest) and ``tau + eta`` (class).
    eta
        Half the distance between the targets (> 0).
    intercept
        Add a constant feature 1, regularised by l2 like the others. On by default, as in the
        paper (the TER targets need a bias); the margin-based baselines default to ``False``
        to reproduce their papers (see the Baselines page of the API reference).
    forgetting
        Per-class exponential forgetting lambda in (0, 1]: an arrival of class c multiplies class
        c's mass, scatter and sum by lambda before the sample is added, so the model equals the
        batch TER in which a sample of class c that was followed by j arrivals of its class has
        mass lambda^j. ``1.0`` (no forgetting) is the paper.
    solver
        ``"cholesky"`` (default): statistics + on-demand Cholesky. ``"woodbury"``: the paper's
        Algorithm 1, a recursive inverse updated at every sample (Theta(d^3) per sample,
        numerically fragile at high polynomial orders), kept to reproduce the paper. It needs
        ``l2 > 0``. When its weights fail a residual check (relative residual of the normal
        equations above 1e-6, e.g. after a badly scaled sample) it warns
        (``WoodburyAccuracyWarning``) and solves from the statistics instead.
    max_size
        Memory budget of the model's statistics, in MiB (as river's trees count theirs).
        ``None`` (default): the machine's physical memory. The statistics take d^2 numbers per
        class, so a sample or mini-batch whose new features (or class) would take them beyond
        the budget is refused before anything is allocated (``ValueError`` naming the width
        and the memory, the model unchanged). Whatever the budget, a ``ModelSizeWarning`` says
        when the model passes 16 MiB, then 64 MiB, 256 MiB, ...: a stream whose features keep
        appearing (a one-hot encoding of continuous values) wants hashing or selection.

    Attributes
    ----------
    weights
        ``{label: {feature: weight}}`` of every seen class's one-vs-rest system.
    intercepts
        ``{label: intercept}`` (0 when ``intercept=False``).

    Notes
    -----
    ``decision_one`` gives the raw least-squares output ``f_k = w_k . x`` of every seen class.
    ``predict_one`` is the class with the largest output (ties go to the class seen first).
    ``predict_proba_one`` is the softmax of ``2 f_k / eta``: monotone in the outputs, with the
    same argmax. For two classes and ``tau = 0`` the outputs are ``f`` and ``-f``, so the
    probability of the first is ``1 / (1 + exp(-4 f / eta))``: 0.5 on the decision boundary and
    0.98 at the class target. Before any learning ``predict_proba_one`` returns ``{}`` and
    ``predict_one`` returns ``None``.

    Sample weights: ``learn_one(x, y, w=w)`` gives the sample the mass ``w`` (``w`` copies of it,
    exactly), so the model is the batch TER with weighted (and, with forgetting, decayed) sample
    masses; ``w = 0`` is a no-op. ``learn_many`` takes one weight or one per row. This is what
    ``progressive_val_score`` passes for ``(x, y, {"w": w})`` streams.

    Features may appear at any time (the statistics are extended exactly: past samples had zeros
    there) or be absent (zero). A ``None`` or ``pd.NA`` value, or ``NaN`` in a DataFrame, is
    missing (zero). Non-numeric or non-finite values, and missing labels (None, NaN, pd.NA,
    NaT), raise an error naming the culprit and leave the model as it was. So does a sample, a
    weight or a merge that would take a class's mass or a feature's sum of squared values beyond
    1e300 (any value beyond 1e150): the statistics stay finite however samples accumulate.
    Probabilities are always finite; a prediction whose output ``w . x`` overflows raises.

    Threads: one model serves one call at a time (a lock per model), so two threads sharing a
    model lose no update and never see a half-learnt state; river's own models make no such
    promise. A call re-entered from inside another (a feature name whose ``__eq__`` calls the
    model) either completes first, or leaves the outer call refused whole (``RuntimeError``).

    A parameter set after construction (``model.l2 = 10``) is validated and takes effect: the
    weights are solved again from the statistics (which no parameter changes); a new
    ``forgetting`` applies to later arrivals. ``sum(models)`` merges models (see ``+``).

    Examples
    --------

    Pima's file lists the classes in blocks, so the examples shuffle it once (deterministically):

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import NRRLS, datasets

    >>> pima = list(stream.shuffle(datasets.Pima(), buffer_size=768, seed=42))
    >>> model = NRRLS()
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 73.07%
    BalancedAccuracy: 73.19%

    The outputs of the two classes are f and -f (tau = 0); the probabilities map them monotonically:

    >>> x, y = pima[0]
    >>> {label: round(f, 4) for label, f in model.decision_one(x).items()}
    {False: -0.4975, True: 0.4975}
    >>> {label: round(p, 4) for label, p in model.predict_proba_one(x).items()}
    {False: 0.1203, True: 0.8797}
    >>> model.predict_one(x), y
    (True, False)

    The same model as a plain ridge least squares (the paper's RLS baseline) misses more of the
    minority class:

    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, NRRLS(reweight=False), metric)
    GeometricMean: 69.68%
    BalancedAccuracy: 71.26%

    References
    ----------
    [^1]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)
    [^2]: Toh, K.-A. and Eng, H.-L. (2008). Between classification-error approximation and
        weighted least-squares learning. IEEE Transactions on Pattern Analysis and Machine
        Intelligence, 30(4), 658-669.

    """

    def __init__(
        self,
        l2: float = 1e-4,
        reweight: bool = True,
        tau: float = 0.0,
        eta: float = 1.0,
        intercept: bool = True,
        forgetting: float = 1.0,
        solver: str = "cholesky",
        max_size: float | None = None,
    ):
        self.l2 = l2
        self.reweight = reweight
        self.tau = tau
        self.eta = eta
        self.intercept = intercept
        self.forgetting = forgetting
        self.solver = solver
        self.max_size = max_size
        self._l2 = check_real("l2", l2, low=0.0)
        self._tau = check_real("tau", tau)
        self._eta = check_real("eta", eta, low=0.0, low_open=True)
        self._forgetting = check_real("forgetting", forgetting, low=0.0, high=1.0, low_open=True)
        check_bool("reweight", reweight)
        check_bool("intercept", intercept)
        if solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}, got {solver!r}")
        if solver == "woodbury" and self._l2 == 0.0:
            raise ValueError("solver='woodbury' needs l2 > 0 (its recursion starts from I / b)")
        self._budget = SizeBudget.of(max_size)
        self._first = 0 if intercept else 1  # first column the systems use
        self._solver = self._new_solver()
        # Column 0 is a constant 1: the intercept, and the count/sum slot of the statistics.
        self._index = FeatureIndex(offset=1, fill=1.0)
        self._stats = ClassStatistics(dim=self._index.size, forgetting=self._forgetting)
        self._solution: np.ndarray | None = None  # cached weights, one row per class
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    def _new_solver(self) -> Solver:
        """How the weights come out of the statistics (see `river_nrrls._solver.Solver`)."""
        if self.solver == "woodbury":
            return RecursiveInverse(
                self._l2, bool(self.reweight), self._first, self._tau, self._eta
            )
        return SystemSolver(
            self._l2, self._tau, self._eta, bool(self.reweight), self._first, self._forgetting
        )

    # Taken from the validated construction when a parameter is set after learning
    # (`LiveParameters`); the statistics, which no parameter changes, stay.
    _derived_attributes = ("_l2", "_tau", "_eta", "_forgetting", "_first", "_budget", "_solver")

    def _adopt(self, trial: NRRLS, name: str) -> None:
        """A parameter set after learning takes effect from the statistics: the new solver is
        rebuilt from them (the woodbury recursion) and the weights are solved again at the next
        prediction. A new ``forgetting`` applies to the arrivals that follow."""
        super()._adopt(trial, name)
        self._stats.forgetting = self._forgetting
        self._solver.invalidate(self._stats)
        self._solution = None

    def _has_learnt(self, parameters: dict) -> bool:
        return self._stats.n_classes > 0 or len(self._index) > 0

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"forgetting": 0.99}
        yield {"solver": "woodbury"}
        yield {"reweight": False, "intercept": False, "tau": 0.5, "eta": 2.0}

    @property
    def _multiclass(self):
        return True

    # ----------------------------------------------------------------- helpers

    def column_namer(self, new: typing.Sequence = ()) -> ColumnNamer:
        """How errors name a dense column >= 1: ``"feature 'a'"`` (``new``: features not
        committed yet). Internal: the order selector names its overflows with it."""
        return lambda column: f"feature {self._index.feature_at(column, new)!r}"

    def _check_size(self, n_new: int, n_new_classes: int, where: str = "") -> None:
        """Refuse new features or classes whose statistics would not fit ``max_size`` (or the
        machine's memory), before anything is allocated; warn as the model grows large."""
        dim = self._index.size + n_new
        n_classes = self._stats.n_classes + n_new_classes
        needed = self._stats.nbytes_for(dim, n_classes) + solver_nbytes(dim - self._first)
        self._budget.check(needed, type(self).__name__, dim - 1, n_classes, where)

    def _grow(self, new_features: list) -> None:
        """Commit new features: the statistics first (the one allocation that may fail), then
        the index and the solver."""
        if not new_features:
            return
        dim = self._index.size + len(new_features)
        self._stats.grow(dim)
        self._index.add(new_features)
        self._solver.grow(dim)

    def _slot(self, label: typing.Hashable) -> int:
        slot = self._stats.slot.get(label)
        if slot is None:
            slot = self._stats.add_class(label)
            self._solver.add_class(self._stats)
        return slot

    def _weight_matrix(self) -> np.ndarray:
        """Weights of every class (rows), solved only when the statistics changed."""
        if self._solution is None:
            self._solution = self._solver.solve(self._stats)
        return self._solution

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Learn one sample of mass ``w``: the same as learning it ``w`` times (w >= 0).

        A sample of weight ``w`` adds ``w x x^T``, ``w x`` and ``w`` to its class's scatter, sum
        and mass (after the forgetting's decay), so the model is the batch TER with those sample
        masses. ``w = 0`` is a no-op (the sample is still validated). A refused sample (an
        error naming the culprit) changes nothing.

        """
        # The usual w = 1.0 and labels of the plain types skip the general checks.
        weight = w if w.__class__ is float and 0.0 <= w <= _MAX_FLOAT else check_real("w", w, 0.0)
        label = y if y.__class__ in _PLAIN_LABELS else check_label(y)
        with self._lock:
            if learn_remembered(self._index, self._stats, self._solver, x, label, weight):
                self._solution = None  # the whole update in one compiled call (`_fused`)
                return
            stats = self._stats
            # encode -> check -> observe -> update
            vector, new, support = self._index.dense_one(x, True, stats.sparse_updates)
            if weight == 0.0:
                return
            load = check_sample(stats, label, vector, weight, self.column_namer(new))
            if new or label not in stats.slot:
                self._check_size(len(new), label not in stats.slot)
                self._grow(new)
            slot = self._slot(label)
            self._solver.observe(stats, slot, vector, weight)
            stats.update_one(slot, vector, weight, support, load)
            self._solution = None

    def learn_many(self, X: pd.DataFrame, y: pd.Series, w: float | pd.Series | None = None) -> None:
        """Learn a mini-batch exactly as the ``learn_one`` loop over its rows would.

        The rows of ``X`` and the labels of ``y`` are paired by position, as river's mini-batch
        learners pair them; a Series ``y`` whose index is not that of ``X`` (other row labels,
        or the same in another order) is refused (``ValueError`` naming the first row where they
        differ), since it would pair rows with other rows' labels. ``w`` is one
        weight for every row, or one per row (a Series with ``y``'s index, or a sequence as long
        as ``y``); rows of weight 0 are left out, as ``learn_one`` would.

        """
        X, y, w = as_frame(X), as_series(y), as_series(w)
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)} labels")
        check_paired(X, y)
        weights = sample_weights(w, y)
        check_labels(y)
        codes, labels = factorize_labels(y)
        with self._lock:
            if weights is not None and not weights.all():
                self._index.encode_many(X, grow=False)  # validate every row, the left-out too
                kept = weights > 0
                X, weights = X[kept], weights[kept]
                codes, first_codes = pd.factorize(codes[kept])  # the classes left, in order
                labels = [labels[code] for code in first_codes]
            # encode -> check -> update
            matrix, new = self._index.encode_many(X, grow=True)
            stats = self._stats
            check_batch(stats, matrix, codes, labels, weights, self.column_namer(new), X.index)
            new_classes = sum(label not in stats.slot for label in labels)
            if new or new_classes:
                self._check_size(len(new), new_classes)
            self._grow(new)
            if len(codes) == 0:
                return
            self._y_name = getattr(y, "name", None)  # river names predict_many's Series after y
            self._solution = None
            if self._solver.sequential:  # exactly the learn_one loop
                row_weights = np.ones(len(codes)) if weights is None else weights
                for code, row, weight in zip(codes, matrix, row_weights.tolist()):
                    slot = self._slot(labels[code])
                    self._solver.observe(stats, slot, row, weight)
                    stats.update_one(slot, row, weight)
                return
            # Labels in order of first appearance, as the learn_one loop would register them.
            for code, label in enumerate(labels):
                rows = codes == code
                class_weights = None if weights is None else weights[rows]
                stats.update_many(self._slot(label), matrix[rows], class_weights)
            self._solver.invalidate(stats)

    def reset(self) -> NRRLS:
        """Forget every sample and every class, in place, and return the model.

        The whole state of NR-RLS is its per-class statistics, so this is an exact restart (as a
        fresh model would be) for recovering after a concept drift. It keeps the feature index:
        the columns of the features seen so far, so that ``weights`` keeps listing them (with
        weight 0 until they are seen again) and no growth is needed when they come back.

        """
        with self._lock:
            self._stats = ClassStatistics(dim=self._index.size, forgetting=self._forgetting)
            self._solver.invalidate(self._stats)
            self._solution = None
        return self

    # ------------------------------------------------ internal interface (the order selector)
    # `PolynomialOrderSelector` solves every polynomial order from one model's statistics
    # (river_nrrls/_orders.py): it reads them and renumbers the model's columns through these
    # members, never through the model's private state. Not part of the user-facing API.

    @property
    def statistics(self) -> ClassStatistics:
        """The per-class statistics the weights are solved from (internal: read them, and
        teach the model only through its own methods)."""
        return self._stats

    @property
    def weight_solver(self) -> Solver:
        """The solver that gives the weights from `statistics` (internal: its tuning, such
        as ``stale_min_dim``, may be read or set; its state is the model's)."""
        return self._solver

    def new_solver(self) -> Solver:
        """A solver with no state, of this model's parameters and its solver's tuning: what
        an independent model of a block of these statistics would hold (internal)."""
        solver, own = self._new_solver(), self._solver
        if isinstance(solver, SystemSolver) and isinstance(own, SystemSolver):  # its tuning
            solver.stale_min_dim = own.stale_min_dim
            solver.class_stale_min_dim = own.class_stale_min_dim
        return solver

    def check_learnable(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Raise what ``learn_one(x, y, w)`` would refuse (a bad value, statistics beyond
        their range, ``max_size``), learning nothing (internal: a model made of several
        checks its most demanding one before any of them learns or predicts)."""
        weight = check_real("w", w, 0.0)
        label = check_label(y)
        with self._lock:
            stats = self._stats
            vector, new, _ = self._index.dense_one(x, True)
            if weight == 0.0:
                return
            check_sample(stats, label, vector, weight, self.column_namer(new))
            if new or label not in stats.slot:
                self._check_size(len(new), label not in stats.slot)

    def nbytes_after(self, x: dict, y: typing.Hashable) -> int:
        """The bytes the statistics and the solver would take once ``x`` (validated) of
        class ``y`` is learnt, with its new features and class (internal: a model made of
        several checks its ``max_size`` over all of them with it). Changes nothing."""
        with self._lock:
            _, new, _ = self._index.dense_one(x, True)
            dim = self._index.size + len(new)
            n_classes = self._stats.n_classes + (as_label(y) not in self._stats.slot)
            return self._stats.nbytes_for(dim, n_classes) + solver_nbytes(dim - self._first)

    @property
    def features(self) -> tuple:
        """The features, in the order of their dense columns 1, 2, ... (column 0 is the
        constant 1; internal)."""
        return tuple(self._index.features)

    def encode(self, x: dict) -> np.ndarray:
        """``x`` over the dense columns, as the predictions read it: column 0 the constant 1,
        unknown features dropped (internal). Read-only, and valid until the next encoding."""
        return self._index.dense_one(x, False)[0]

    def permute_columns(self, order: np.ndarray) -> None:
        """Renumber the dense columns: column ``j`` becomes the present column ``order[j]``,
        in the index and in the statistics (``order`` a permutation of the columns that keeps
        the constant column 0 first). Exact: the model predicts as before; its solver starts
        again from the statistics (internal).

        """
        with self._lock:
            if len(order) != self._stats.dim or order[0] != 0:
                raise ValueError("permute_columns needs a permutation that keeps column 0")
            features = [self._index.feature_at(column) for column in order[1:].tolist()]
            self._index.reorder(features)  # (first: it refuses anything but a permutation)
            self._stats.permute(order)
            self._solver.invalidate(self._stats)
            self._solution = None

    def restricted(self, features: typing.Sequence[typing.Hashable]) -> NRRLS:
        """A new model of this model's parameters whose statistics are this model's over the
        constant column and ``features`` (some of its features, in the new model's column
        order): what a model of the same parameters that saw only those features of the same
        samples would hold (internal; the statistics' blocks are exact).

        """
        with self._lock:
            leading = [0, *map(self._index.position.__getitem__, features)]
            labels = list(self._stats.labels)
            # these statistics with ``leading`` first, read over those columns
            rest = sorted(set(range(self._stats.dim)).difference(leading))
            renumbered = copy.deepcopy(self._stats)
            renumbered.permute(np.array(leading + rest, dtype=np.intp))  # (no class: nothing)
        model = self.clone()
        model._grow(list(features))  # a new model of the same class: commit as a merge does
        for label in labels:
            model._slot(label)
        if labels:
            model._stats.assign(renumbered.leading_view(len(leading)).data)
            model._solver.invalidate(model._stats)
        return model

    # ------------------------------------------------------------------ merging

    # What must be equal for a merge (`Mergeable`); max_size is each model's own budget.
    _merge_parameters = ("l2", "reweight", "tau", "eta", "intercept", "forgetting", "solver")

    def _merge_plan(self, other: NRRLS) -> MergedColumns:
        """Check a merge of ``other`` into this model (parameters, range, size) and say where
        its columns go, committing nothing."""
        self._check_mergeable(other)
        plan = self._index.merged_columns(other._index)
        new, columns = plan
        check_merge(self._stats, other._stats, columns, self.column_namer(new))
        new_classes = sum(label not in self._stats.slot for label in other._stats.labels)
        if new or new_classes:
            self._check_size(len(new), new_classes, " (merging)")
        return plan

    def __iadd__(self, other: NRRLS) -> NRRLS:
        """Add the samples ``other`` has learnt, in place: exact, the statistics are additive."""
        with self._lock:
            plan = self._merge_plan(other)
            self._grow(plan.new)
            for label in other._stats.labels:
                self._slot(label)
            self._stats.merge(other._stats, plan.columns)
            self._solver.invalidate(self._stats)
            self._solution = None
        return self

    def __add__(self, other: NRRLS) -> NRRLS:
        """A new model equal to one trained on both streams; ``self`` and ``other`` unchanged.

        Features and classes are the union (``self``'s first). Incompatible parameters, or
        forgetting < 1, raise ``ValueError``.

        """
        self._merge_plan(other)  # refuse before copying
        merged = copy.deepcopy(self)
        merged += other
        return merged

    # --------------------------------------------------------------- inference

    def _outputs(self, x: dict) -> list[float]:
        """w_k . x of every seen class, in the order of ``self._stats.labels``."""
        with self._lock:
            if self._solution is None:  # two classes: the prediction in one call (`_fused`)
                fused = pair_outputs(self._index, self._stats, self._solver, x)
                if fused is not None:
                    self._solution, vector, outputs = fused
                    if outputs is None:  # not finite
                        refuse_overflow(self._solution, vector, self.column_namer())
                    return outputs
            vector = self._index.dense_one(x, False)[0]
            if not self._stats.labels:
                return []
            if self._stats.dim < ONE_THREAD_MIN_DIM:
                weights = self._solution
                if weights is None:
                    weights = self._weight_matrix()
                return self._products(weights, vector)
            # the solve and the outputs' dgemv on one BLAS thread (one setting for both: the
            # solve's own context, nested, only counts)
            with one_blas_thread(self._stats.dim):
                return self._products(self._weight_matrix(), vector)

    def _products(self, weights: np.ndarray, vector: np.ndarray) -> list[float]:
        """w_k . x of every row of ``weights``, refusing outputs that overflow (`products`)."""
        return products(weights, vector, self.column_namer)

    def decision_one(self, x: dict) -> dict[typing.Hashable, float]:
        """Raw one-vs-rest least-squares output ``w_k . x`` of every seen class.

        Parameters
        ----------
        x
            A dictionary of features; unseen features are ignored (weight 0), ``None`` values
            are missing.

        Returns
        -------
        ``{label: f_k}`` in the order the classes were first learnt; ``{}`` before learning.

        """
        return dict(zip(self._stats.labels, self._outputs(x)))

    def predict_one(self, x: dict) -> typing.Hashable | None:  # type: ignore[override]  # (river's **kwargs: unused here, a misspelt keyword raises)
        """The class with the largest output ``w_k . x`` (ties go to the class seen first).

        Parameters
        ----------
        x
            A dictionary of features.

        Returns
        -------
        A label as it was learnt, or ``None`` before any learning.

        """
        outputs = self._outputs(x)
        if not outputs:
            return None
        # The largest output; ties go to the class seen first (as max over decision_one).
        if len(outputs) == 2:
            return self._stats.labels[0 if outputs[0] >= outputs[1] else 1]
        return self._stats.labels[max(range(len(outputs)), key=outputs.__getitem__)]

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:  # type: ignore[override]  # (river's **kwargs: unused here, a misspelt keyword raises)
        """Class probabilities: the softmax of ``2 f_k / eta`` over the outputs.

        Monotone in the outputs, so its argmax is `predict_one`'s; with two classes and
        ``tau = 0`` the first class gets ``1 / (1 + exp(-4 f / eta))``, 0.5 on the decision
        boundary. Always finite, even for outputs near the float range.

        Parameters
        ----------
        x
            A dictionary of features.

        Returns
        -------
        ``{label: probability}`` for every seen class; ``{}`` before any learning.

        """
        decision = self.decision_one(x)
        if not decision:
            return {}
        scores = np.fromiter(decision.values(), dtype=float, count=len(decision))
        # the softmax of 2 f_k / eta, finite for any finite outputs (`_outputs.softmax`)
        return dict(zip(decision, softmax(scores[None, :], self._eta)[0].tolist()))

    def _outputs_many(self, X: typing.Any) -> np.ndarray:
        """Raw outputs f(x) = w_c^T x of every row (rows) for every seen class (columns)."""
        frame = as_frame(X)
        with self._lock:
            matrix, _ = self._index.encode_many(frame, grow=False)
            if not self._stats.labels:
                return np.empty((len(matrix), 0))
            weights = self._weight_matrix()
        with np.errstate(over="ignore", invalid="ignore"):
            outputs = matrix @ weights.T
        if not np.isfinite(outputs).all():
            row = int(np.argmax(~np.isfinite(outputs).all(axis=1)))
            where = f" at row {row_name(frame.index, row)!r}"
            refuse_overflow(weights, matrix[row], self.column_namer(), where)
        return outputs

    def decision_many(self, X: typing.Any) -> typing.Any:
        """Raw outputs for every row of ``X``: one column per seen class.

        ``X`` is any dataframe river accepts (pandas, polars, pyarrow, ...), and so is the
        result, in ``X``'s backend (pandas: on ``X``'s index). The columns are the classes in the
        order they were first learned (the order of `n_samples`); with pandas they are the labels
        themselves (a tuple label stays one tuple), other backends need ``str(label)``.

        """
        return native_frame(self._outputs_many(X), columns=list(self._stats.labels), like=X)

    def predict_many(self, X: typing.Any) -> typing.Any:
        """The most likely class of every row, as a Series of the labels' dtype (bool labels give
        a bool Series) named after the ``y`` of `learn_many`, in ``X``'s backend."""
        outputs = self._outputs_many(X)
        labels = np.empty(len(self._stats.labels), dtype=object)
        labels[:] = self._stats.labels
        if len(labels) == 0:
            values = np.full(len(outputs), None, dtype=object)
        else:
            values = labels[outputs.argmax(axis=1)]
        return native_series(values, name=getattr(self, "_y_name", None), like=X)

    def predict_proba_many(self, X: typing.Any) -> typing.Any:
        """Class probabilities of every row; columns as in `decision_many`."""
        outputs = self._outputs_many(X)
        if outputs.shape[1]:
            outputs = softmax(outputs, self._eta)
        return native_frame(outputs, columns=list(self._stats.labels), like=X)

    # -------------------------------------------------------------- inspection

    def debug_one(self, x: dict, decimals: int = 5) -> str:
        """Explain the outputs for ``x``: per class, every feature's value, weight and
        contribution ``value * weight`` to the class's output (as river's
        ``LinearRegression.debug_one``).

        The classes come in the order of `decision_one` and the rows by decreasing
        contribution; the contributions of a class add up to its output ``f_k = w_k . x``.
        Features the model has not seen have weight 0; missing (``None``) values are left out.

        Parameters
        ----------
        x
            A dictionary of features.
        decimals
            The number of decimals shown for every number.

        Returns
        -------
        One table per class, as a string.

        Examples
        --------

        >>> from river_nrrls import NRRLS
        >>> model = NRRLS()
        >>> for x, y in [({"a": 1.0, "b": 0.0}, True), ({"a": 0.5, "b": 1.0}, False),
        ...              ({"a": 0.0, "b": 2.0}, False)]:
        ...     model.learn_one(x, y)
        >>> print(model.debug_one({"a": 2.0, "b": 0.5}, decimals=3))
        Class True (output 1.030)
        Name        Value    Weight   Contribution
                a    2.000    0.606          1.212
        Intercept    1.000    0.212          0.212
                b    0.500   -0.788         -0.394
        <BLANKLINE>
        Class False (output -1.030)
        Name        Value    Weight   Contribution
                b    0.500    0.788          0.394
        Intercept    1.000   -0.212         -0.212
                a    2.000   -0.606         -1.212

        The contributions of a class add up to its output:

        >>> round(sum(model.weights[True][f] * v for f, v in {"a": 2.0, "b": 0.5}.items())
        ...       + model.intercepts[True], 3)
        1.03

        """
        clean = validate_one(x)
        outputs = self.decision_one(clean)
        weights, intercepts = self.weights, self.intercepts
        tables = []
        for label, output in outputs.items():
            intercept = intercepts[label] if self.intercept else None
            table = contribution_table(clean, weights[label], intercept, decimals)
            header = f"Class {label!r} (output {format_number(output, decimals).strip()})"
            tables.append(f"{header}\n{table}")
        return "\n\n".join(tables)

    @property
    def weights(self) -> dict[typing.Hashable, dict[typing.Hashable, float]]:
        """``{label: {feature: weight}}`` (read-only copy)."""
        with self._lock:
            if not self._stats.labels:
                return {}
            solution = self._weight_matrix()
            labels = list(self._stats.labels)
        return {label: self._index.to_dict(row) for label, row in zip(labels, solution)}

    @property
    def intercepts(self) -> dict[typing.Hashable, float]:
        """``{label: intercept}`` (0 for every class when ``intercept=False``)."""
        with self._lock:
            if not self._stats.labels:
                return {}
            solution = self._weight_matrix()
            labels = list(self._stats.labels)
        return {
            label: float(row[0]) if self.intercept else 0.0 for label, row in zip(labels, solution)
        }

    @property
    def n_samples(self) -> dict[typing.Hashable, float]:
        """Mass of every class: its sample count, decayed when ``forgetting < 1``."""
        return dict(zip(self._stats.labels, self._stats.counts.tolist()))
