"""NR-RLS: non-iteratively reweighted recursive least squares (Jang 2023)."""

from __future__ import annotations

import copy
import math
import sys
import typing

import numpy as np
import pandas as pd
from river import base
from scipy.linalg import blas

from . import _native
from ._checks import (
    SMALLEST_WEIGHT,
    STATISTICS_LIMIT,
    check_bool,
    check_label,
    check_labels,
    check_paired,
    check_real,
    factorize_labels,
    row_name,
    sample_weights,
)
from ._frames import as_frame, as_series, native_frame, native_series
from ._index import FeatureIndex, validate_one
from ._locking import OneCallAtATime
from ._memory import SizeBudget, solver_nbytes
from ._merging import Mergeable
from ._parameters import LiveParameters
from ._ranges import ColumnNamer, check_batch, check_merge, check_sample
from ._solver import Solver, SystemSolver
from ._stats import ClassStatistics
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread
from ._woodbury import RecursiveInverse

__all__ = ["NRRLS"]

_SOLVERS = ("cholesky", "woodbury")
_MAX_FLOAT = sys.float_info.max
# A free-threaded build runs other threads during a kernel: BLAS threads are then set only by
# `one_blas_thread`, whose count of the threads inside keeps the setting consistent.
_GIL_ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()
# Labels that need no check: never missing, always hashable, stored as they are.
_PLAIN_LABELS = frozenset((bool, int, str))


class _MergePlan(typing.NamedTuple):
    """Where a merged model's columns go (`NRRLS._merge_plan`)."""

    new: list  # its features that are new here, in the order they are added
    columns: np.ndarray  # where each of its dense columns goes here


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

    def _name_of(self, new: list) -> ColumnNamer:
        """How a range error names a dense column (``new``: features not committed yet)."""
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
            if _native.learn_remembered is not None and self._learn_remembered(x, label, weight):
                return
            stats = self._stats
            # encode -> check -> observe -> update
            vector, new, support = self._index.dense_one(x, True, stats.sparse_updates)
            if weight == 0.0:
                return
            load = check_sample(stats, label, vector, weight, self._name_of(new))
            if new or label not in stats.slot:
                self._check_size(len(new), label not in stats.slot)
                self._grow(new)
            slot = self._slot(label)
            self._solver.observe(stats, slot, vector, weight)
            stats.update_one(slot, vector, weight, support, load)
            self._solution = None

    def _learn_remembered(self, x: dict, label: typing.Hashable, weight: float) -> bool:
        """``learn_one`` in one compiled call (encode, the range check's fast bound, the rank-1
        update: the kernel ``learn_remembered``) when ``x`` has the remembered sample's keys,
        its class is known, the update is a plain one (`ClassStatistics.plain_update`) and
        the solver's `observe` reads no statistics (`SystemSolver`: the woodbury recursion's
        reads them before the update).
        False when it did not learn ``x``: the general path then does (nothing has changed but
        the encoding's cache, as the general path's encoding would change it)."""
        stats, index = self._stats, self._index
        slot = stats.slot.get(label)
        cache = index.remembered()
        if (
            slot is None
            or cache is None
            or weight < SMALLEST_WEIGHT
            or cache.size != stats.dim
            or self._solver.__class__ is not SystemSolver
        ):
            return False
        bound = stats.plain_update(index.offset + len(cache.keys))
        if bound is None:
            return False
        result = _native.learn_remembered(
            x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
            stats.buffer, slot, stats.dim, weight, bound, STATISTICS_LIMIT,
        )  # fmt: skip
        if result is None:  # not the remembered keys, or values to validate
            return False
        vector, load = result
        index.refilled(cache, vector)
        if load is None:  # near the range limit: the exact check (nothing was updated)
            return False
        self._solver.observe(stats, slot, vector, weight)  # reads nothing the update changed
        stats.updated_one(load)
        self._solution = None
        return True

    def learn_many(self, X: pd.DataFrame, y: pd.Series, w: float | pd.Series | None = None) -> None:
        """Learn a mini-batch exactly as the ``learn_one`` loop over its rows would.

        The rows of ``X`` and the labels of ``y`` are paired by position, as river's mini-batch
        learners pair them; a ``y`` that holds the row labels of ``X`` in another order is
        refused (``ValueError``), since it would pair rows with other rows' labels. ``w`` is one
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
            check_batch(stats, matrix, codes, labels, weights, self._name_of(new), X.index)
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
                row_weights = None if weights is None else weights[rows]
                stats.update_many(self._slot(label), matrix[rows], row_weights)
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

    # ------------------------------------------------------------------ merging

    # What must be equal for a merge (`Mergeable`); max_size is each model's own budget.
    _merge_parameters = ("l2", "reweight", "tau", "eta", "intercept", "forgetting", "solver")

    def _merge_plan(self, other: NRRLS) -> _MergePlan:
        """Check a merge of ``other`` into this model (parameters, range, size) and say where
        its columns go, committing nothing."""
        self._check_mergeable(other)
        new = [f for f in other._index.features if f not in self._index]
        position = {**self._index.position, **self._index.provisional(new)}
        columns = np.array([0] + [position[f] for f in other._index.features], dtype=np.intp)
        check_merge(self._stats, other._stats, columns, self._name_of(new))
        new_classes = sum(label not in self._stats.slot for label in other._stats.labels)
        if new or new_classes:
            self._check_size(len(new), new_classes, " (merging)")
        return _MergePlan(new, columns)

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
            if self._solution is None and _native.pair_outputs is not None:
                outputs = self._pair_outputs(x)
                if outputs is not None:
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

    def _pair_outputs(self, x: dict) -> list[float] | None:
        """The outputs of two classes in one compiled call (encode, solve, outputs: the kernel
        ``pair_outputs``) when ``x`` has the remembered sample's keys and the solver would take
        the compiled direct solve; None otherwise, the general path's case (then nothing has
        changed but the encoding's cache, as the general path's encoding would change it)."""
        solver, stats, index = self._solver, self._stats, self._index
        cache = index.remembered()
        if (
            cache is None
            or solver.__class__ is not SystemSolver
            or not solver.takes_pair_kernel(stats)
            or cache.size != stats.dim
        ):
            return None
        dim = stats.dim
        weights = np.empty((2, dim), order="F")
        arguments = (
            x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
            stats.buffer, dim, solver.first, solver.reweight, solver.tau, solver.eta, solver.l2,
            weights,
        )  # fmt: skip
        if dim < ONE_THREAD_MIN_DIM:
            result = _native.pair_outputs(*arguments)
        elif _GIL_ENABLED and dim - solver.first < _native.NOGIL_COLUMNS:
            # one BLAS thread, set and restored in C around the solve and the outputs (the
            # kernel keeps the GIL meanwhile, so no one_blas_thread of another thread runs in
            # between): a tenth of one_blas_thread's cost
            result = _native.pair_outputs(*arguments, True)
        else:
            with one_blas_thread(dim):  # as the general path's solve and outputs
                result = _native.pair_outputs(*arguments)
        if result is None:  # not the remembered keys, or values to validate
            return None
        vector, info, outputs = result
        index.refilled(cache, vector)
        if info != 0 or (solver.l2 <= 1e-200 and not np.isfinite(weights).all()):
            return None  # the general path solves again, with solve_spd's fallbacks
        solver.pair_kernel_solved(stats)
        self._solution = weights
        if outputs is None:
            self._refuse_overflow(weights, vector)
        return outputs

    def _products(self, weights: np.ndarray, vector: np.ndarray) -> list[float]:
        """w_k . x of every row of ``weights``, refusing outputs that overflow."""
        if weights.flags.f_contiguous:
            if _native.outputs is not None:
                outputs = _native.outputs(weights, vector)  # one compiled call; None: not finite
                if outputs is None:
                    self._refuse_overflow(weights, vector)
                return outputs
            outputs = blas.dgemv(1.0, weights, vector).tolist()  # a third of ``@``'s cost
        else:
            outputs = (weights @ vector).tolist()
        if not all(map(math.isfinite, outputs)):
            self._refuse_overflow(weights, vector)
        return outputs

    def _refuse_overflow(self, weights: np.ndarray, vector: np.ndarray, where: str = "") -> None:
        """Raise for outputs w_k . x that overflow, naming the feature of the largest term."""
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.abs(weights * vector).max(axis=0)
        column = int(np.argmax(np.where(np.isnan(terms), np.inf, terms)))
        name = "the intercept" if column == 0 else f"feature {self._index.feature_at(column)!r}"
        raise ValueError(
            f"the outputs overflow{where}: {name} has a value too large for the model's weights"
        )

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

    def predict_one(self, x: dict) -> typing.Hashable | None:
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

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:
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
        return dict(zip(decision, self._softmax(scores[None, :])[0].tolist()))

    def _softmax(self, outputs: np.ndarray) -> np.ndarray:
        """Row-wise softmax of 2 f / eta, finite for any finite outputs.

        It is computed as exp((f_k / 2 - f_max / 2) * 4 / eta): the halved difference cannot
        overflow (where 2 f / eta, or f_k - f_max, can for |f| near 1e308); a difference that
        the scaling sends to -inf gives a probability of exactly 0, and the largest output
        always gets exp(0) = 1 before the normalisation.

        """
        halves = outputs * 0.5
        scaled = halves - halves.max(axis=1, keepdims=True)  # (f_k - f_max) / 2 <= 0
        factor = 4.0 / self._eta
        if factor == float("inf"):  # eta below 2.2e-308: every class but the best gets 0
            scaled = np.where(scaled == 0.0, 0.0, -1000.0)
        else:
            np.maximum(scaled, -1000.0 / factor, out=scaled)  # exp(-1000) is 0 already
            scaled *= factor
        np.exp(scaled, out=scaled)
        scaled /= scaled.sum(axis=1, keepdims=True)
        return scaled

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
            self._refuse_overflow(weights, matrix[row], f" at row {row_name(frame.index, row)!r}")
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
            outputs = self._softmax(outputs)
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
        from river.utils.pretty import print_table

        clean = validate_one(x)
        outputs = self.decision_one(clean)
        weights, intercepts = self.weights, self.intercepts

        def fmt(number: float) -> str:
            return f"{number: ,.{decimals}f}"

        tables = []
        for label, output in outputs.items():
            names = [str(name) for name in clean]
            values = list(clean.values())
            class_weights = [weights[label].get(name, 0.0) for name in clean]
            if self.intercept:
                names.append("Intercept")
                values.append(1.0)
                class_weights.append(intercepts[label])
            contributions = [value * weight for value, weight in zip(values, class_weights)]
            order = sorted(range(len(names)), key=lambda i: -contributions[i])
            table = print_table(
                headers=["Name", "Value", "Weight", "Contribution"],
                columns=[
                    names,
                    [fmt(value) for value in values],
                    [fmt(weight) for weight in class_weights],
                    [fmt(contribution) for contribution in contributions],
                ],
                order=order,
            )
            tables.append(f"Class {label!r} (output {fmt(output).strip()})\n{table}")
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
