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
from ._merging import Mergeable
from ._parameters import LiveParameters
from ._solver import SystemSolver
from ._stats import ClassStatistics
from ._woodbury import RecursiveInverse

__all__ = ["NRRLS"]

_SOLVERS = ("cholesky", "woodbury")
_MAX_FLOAT = sys.float_info.max
# Labels that need no check: never missing, always hashable, stored as they are.
_PLAIN_LABELS = frozenset((bool, int, str))


class NRRLS(LiveParameters, Mergeable, base.MiniBatchClassifier):
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
        to reproduce their papers (see the README's Baselines section).
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
    ):
        self.l2 = l2
        self.reweight = reweight
        self.tau = tau
        self.eta = eta
        self.intercept = intercept
        self.forgetting = forgetting
        self.solver = solver
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
        self._init_state()

    def _init_state(self) -> None:
        # Column 0 is a constant 1: the intercept, and the count/sum slot of the statistics.
        self._index = FeatureIndex(offset=1, fill=1.0)
        self._first = 0 if self.intercept else 1  # first column the systems use
        self._stats = ClassStatistics(dim=self._index.size, forgetting=self._forgetting)
        self._recursion = (
            RecursiveInverse(self._l2, bool(self.reweight), self._first)
            if self.solver == "woodbury"
            else None
        )
        # How weights come from the statistics: direct Cholesky or stale factor (_solver.py).
        self._solver = (
            SystemSolver(
                self._l2, self._tau, self._eta, bool(self.reweight), self._first, self._forgetting
            )
            if self._recursion is None
            else None
        )
        self._solution: np.ndarray | None = None  # cached weights, one row per class
        self._bound: float | None = 0.0  # >= every diagonal entry of the statistics (or None)

    def _adopt(self, trial: NRRLS, name: str) -> None:
        """A parameter set after learning takes effect from the statistics, which every
        parameter leaves as they are: the solution is recomputed at the next prediction, and
        the woodbury recursion (when it is the solver) is rebuilt from the statistics. A new
        ``forgetting`` applies to the arrivals that follow."""
        object.__setattr__(self, name, trial.__dict__[name])
        for attribute in ("_l2", "_tau", "_eta", "_forgetting", "_first"):
            object.__setattr__(self, attribute, trial.__dict__[attribute])
        self._stats.forgetting = self._forgetting
        self._recursion = trial._recursion
        self._solver = trial._solver  # a solver of the new parameters (nothing stale in it)
        if self._recursion is not None:
            self._recursion.rebuild(self._stats)
        self._solution = None

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

    def _grow(self, new_features: list) -> None:
        """Commit new features: index, statistics and recursion get their zero columns."""
        if not new_features:
            return
        self._index.add(new_features)
        self._stats.grow(self._index.size)
        if self._recursion is not None:
            self._recursion.grow(self._index.size)

    def _slot(self, label: typing.Hashable) -> int:
        slot = self._stats.slot.get(label)
        if slot is None:
            slot = self._stats.add_class(label)
            if self._recursion is not None:
                self._recursion.sync_systems(self._stats)
        return slot

    def _learn_dense(
        self, slot: int, vector: np.ndarray, weight: float = 1.0, support: np.ndarray | None = None
    ) -> None:
        if self._recursion is not None:
            self._recursion.learn(self._stats, slot, vector, weight)
            self._stats.update_one(slot, vector, weight)
            return
        self._solver.observe(slot, vector, weight)
        # No one-thread context here (unlike the solve): OpenBLAS's rank-1 update is as fast or
        # faster with its default threading, and the setter calls cost ~2 us a sample.
        self._stats.update_one(slot, vector, weight, support)

    def _weight_matrix(self) -> np.ndarray:
        """Weights of every class (rows), solved only when the statistics changed."""
        if self._solution is None:
            if self._recursion is not None:
                self._solution = self._recursion.solve(self._stats, self._tau, self._eta)
            else:
                self._solution = self._solver.solve(self._stats)
        return self._solution

    # ------------------------------------------------------------- range checks

    def _column_name(self, column: int, new: list) -> str:
        """How an error names a dense column (the features of ``new`` come after the index's)."""
        if column == 0:
            return "the class mass (the sum of the sample weights)"
        features = self._index.features
        j = column - self._index.offset
        return f"feature {(features[j] if j < len(features) else new[j - len(features)])!r}"

    def _class_diagonal(self, label: typing.Hashable, decay: float = 1.0) -> np.ndarray | None:
        """diag of class ``label``'s augmented scatter (n^c, then sum m_i x_ij^2), decayed."""
        slot = self._stats.slot.get(label)
        if slot is None:
            return None
        diagonal = np.diagonal(self._stats.data[:, :, slot])
        return diagonal * decay if decay != 1.0 else diagonal

    def _refuse_out_of_range(self, totals: np.ndarray, new: list, where: str = "") -> None:
        with np.errstate(invalid="ignore"):
            column = int(np.argmax(~(totals <= STATISTICS_LIMIT)))
        raise ValueError(
            f"{self._column_name(column, new)}{where} is too large: the sum of its squared "
            f"values (times the sample weights) would exceed {STATISTICS_LIMIT:.0e} and the "
            "statistics could no longer be kept finite; rescale the data (a single value "
            "beyond 1e150 is always refused)"
        )

    def _diagonal_peak(self) -> float:
        """The largest diagonal entry of all class scatters: every n^c and sum m_i x_ij^2."""
        if self._stats.n_classes == 0:
            return 0.0
        return float(np.diagonal(self._stats.data, axis1=0, axis2=1).max())

    def _check_one_in_range(self, label, vector: np.ndarray, weight: float, new: list):
        """Refuse a sample that would take the class's n^c or a sum of squares beyond the limit.

        Every |A_ij| <= sqrt(A_ii A_jj) and |s_j| <= sqrt(n A_jj), so a bounded diagonal bounds
        the whole scatter: the statistics, and every solve, stay finite. The fast path keeps
        ``_bound``, an upper bound of every diagonal entry, and adds w |x|^2 to it (one dot
        product per sample); the exact check on the class's diagonal runs only when the bound
        nears the limit. Returns the bound after the sample (None: recompute it next time).

        """
        bound = self.__dict__.get("_bound")
        if bound is None:
            bound = self._diagonal_peak()
        # |x|^2 by BLAS ddot: an overflow gives inf (refused below) without numpy's warning
        grown = blas.ddot(vector, vector) * weight + bound  # >= every diagonal entry after it
        if grown <= STATISTICS_LIMIT:
            return grown
        diagonal = self._class_diagonal(label, self._forgetting)
        with np.errstate(over="ignore"):
            totals = np.square(vector) * weight  # inf where it overflows: refused below
            if diagonal is not None:
                totals[: len(diagonal)] += diagonal
        if not totals.max() <= STATISTICS_LIMIT:
            self._refuse_out_of_range(totals, new)
        return None

    def _check_many_in_range(self, matrix, codes, uniques, weights, new: list, rows) -> None:
        """`_check_one_in_range` for a mini-batch: every class's statistics after the batch."""
        if matrix.size == 0:
            return
        magnitudes = np.abs(matrix)
        if magnitudes.max() > 1e150:
            row, column = np.unravel_index(int(np.argmax(magnitudes > 1e150)), matrix.shape)
            self._refuse_out_of_range(
                np.where(np.arange(matrix.shape[1]) == column, np.inf, 0.0),
                new,
                f" (row {row_name(rows, row)!r})",
            )
        squares = matrix * matrix  # <= 1e300 each: no overflow
        for code, label in enumerate(uniques):
            in_class = codes == code
            n_rows = int(in_class.sum())
            if n_rows == 0:
                continue
            masses = self._forgetting ** np.arange(n_rows - 1, -1, -1, dtype=float)
            if weights is not None:
                masses = masses * weights[in_class]
            diagonal = self._class_diagonal(label, self._forgetting**n_rows)
            with np.errstate(over="ignore", invalid="ignore"):
                totals = masses @ squares[in_class]
                if diagonal is not None:
                    totals[: len(diagonal)] += diagonal
            if not totals.max() <= STATISTICS_LIMIT:
                self._refuse_out_of_range(totals, new)

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Learn one sample of mass ``w``: the same as learning it ``w`` times (w >= 0).

        A sample of weight ``w`` adds ``w x x^T``, ``w x`` and ``w`` to its class's scatter, sum
        and mass (after the forgetting's decay), so the model is the batch TER with those sample
        masses. ``w = 0`` is a no-op (the sample is still validated).

        """
        # The usual w = 1.0 and labels of the plain types skip the general checks.
        weight = w if w.__class__ is float and 0.0 <= w <= _MAX_FLOAT else check_real("w", w, 0.0)
        label = y if y.__class__ in _PLAIN_LABELS else check_label(y)
        vector, new, support = self._index.dense_one(
            x, grow=True, with_support=self._stats.sparse_updates
        )
        if weight == 0.0:
            return
        bound = self._check_one_in_range(label, vector, weight, new)
        self._grow(new)
        self._learn_dense(self._slot(label), vector, weight, support)
        state = self.__dict__  # private attributes: no parameter check (LiveParameters)
        state["_solution"] = None
        state["_bound"] = bound

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
        codes, uniques = factorize_labels(y)
        if weights is not None and not weights.all():
            self._index.encode_many(X, grow=False)  # validate every row, the left-out ones too
            kept = weights > 0
            X, weights = X[kept], weights[kept]
            codes, first_codes = pd.factorize(codes[kept])  # the classes left, in order
            uniques = [uniques[code] for code in first_codes]
        matrix, new = self._index.encode_many(X, grow=True)
        self._check_many_in_range(matrix, codes, uniques, weights, new, X.index)
        self._grow(new)
        if len(codes) == 0:
            return
        self._y_name = getattr(y, "name", None)  # river names predict_many's Series after y
        if self._recursion is not None:
            # The recursion is sequential by nature: exactly the learn_one loop.
            row_weights = np.ones(len(codes)) if weights is None else weights
            for code, row, weight in zip(codes, matrix, row_weights.tolist()):
                self._learn_dense(self._slot(uniques[code]), row, weight)
        else:
            self._solver.invalidate()
            # Labels in order of first appearance, as the learn_one loop would register them.
            for code, label in enumerate(uniques):
                rows = codes == code
                self._stats.update_many(
                    self._slot(label), matrix[rows], None if weights is None else weights[rows]
                )
        self._solution = None
        self._bound = None

    def reset(self) -> NRRLS:
        """Forget every sample and every class, in place, and return the model.

        The whole state of NR-RLS is its per-class statistics, so this is an exact restart (as a
        fresh model would be) for recovering after a concept drift. It keeps the feature index:
        the columns of the features seen so far, so that ``weights`` keeps listing them (with
        weight 0 until they are seen again) and no growth is needed when they come back.

        """
        self._stats = ClassStatistics(dim=self._index.size, forgetting=self._forgetting)
        if self._recursion is not None:
            self._recursion.inverses = []
        else:
            self._solver.invalidate()
        self._solution = None
        self._bound = 0.0
        return self

    # ------------------------------------------------------------------ merging

    def _check_mergeable(self, other: NRRLS) -> None:
        # issubclass, not isinstance: river makes a pipeline ending in an NRRLS an "instance".
        if not issubclass(type(other), NRRLS):
            raise TypeError(f"can only merge an NRRLS with an NRRLS, not {type(other).__name__}")
        for name in ("l2", "reweight", "tau", "eta", "intercept", "forgetting", "solver"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                raise ValueError(
                    f"cannot merge models with different {name}: {mine!r} != {theirs!r}"
                )
        if self._forgetting != 1.0:
            raise ValueError(
                "cannot merge models with forgetting < 1: their decays would have to follow one "
                "global arrival order"
            )

    def __iadd__(self, other: NRRLS) -> NRRLS:
        """Add the samples ``other`` has learnt, in place: exact, the statistics are additive."""
        self._check_mergeable(other)
        self._check_merge_in_range(other)
        self._grow([f for f in other._index.features if f not in self._index])
        position = self._index.position
        columns = np.array([0] + [position[f] for f in other._index.features], dtype=np.intp)
        self._stats.merge(other._stats, columns)
        if other._stats.n_classes:
            self._bound = None  # recomputed at the next learn_one
        if self._recursion is not None:
            self._recursion.rebuild(self._stats)
        else:
            self._solver.invalidate()
        self._solution = None
        return self

    def _check_merge_in_range(self, other: NRRLS) -> None:
        """Refuse a merge whose summed statistics would go beyond `STATISTICS_LIMIT`."""
        new = [f for f in other._index.features if f not in self._index]
        provisional = {f: self._index.size + i for i, f in enumerate(new)}
        position = self._index.position
        columns = [0] + [position.get(f, provisional.get(f)) for f in other._index.features]
        for source, label in enumerate(other._stats.labels):
            totals = np.zeros(self._index.size + len(new))
            totals[columns] = np.diagonal(other._stats.data[:, :, source])
            diagonal = self._class_diagonal(label)
            if diagonal is not None:
                totals[: len(diagonal)] += diagonal
            if not totals.max() <= STATISTICS_LIMIT:
                self._refuse_out_of_range(totals, new, f" (class {label!r} of the merged model)")

    def __radd__(self, other: typing.Any) -> NRRLS:
        """``0 + model``: a copy of the model, so that ``sum(models)`` merges a list of models."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return copy.deepcopy(self)
        return NotImplemented

    def __add__(self, other: NRRLS) -> NRRLS:
        """A new model equal to one trained on both streams; ``self`` and ``other`` unchanged.

        Features and classes are the union (``self``'s first). Incompatible parameters, or
        forgetting < 1, raise ``ValueError``.

        """
        self._check_mergeable(other)
        self._check_merge_in_range(other)
        merged = copy.deepcopy(self)
        merged += other
        return merged

    # --------------------------------------------------------------- inference

    def _outputs(self, x: dict) -> list[float]:
        """w_k . x of every seen class, in the order of ``self._stats.labels``."""
        vector = self._index.dense_one(x, grow=False).vector
        if not self._stats.labels:
            return []
        weights = self._solution
        if weights is None:
            weights = self._weight_matrix()
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
        raise ValueError(
            f"the outputs overflow{where}: {self._column_name(column, [])} has a value too large "
            "for the model's weights"
        )

    def decision_one(self, x: dict) -> dict[typing.Hashable, float]:
        """Raw one-vs-rest least-squares output ``w_k . x`` of every seen class."""
        return dict(zip(self._stats.labels, self._outputs(x)))

    def predict_one(self, x: dict) -> typing.Hashable | None:
        outputs = self._outputs(x)
        if not outputs:
            return None
        # The largest output; ties go to the class seen first (as max over decision_one).
        if len(outputs) == 2:
            return self._stats.labels[0 if outputs[0] >= outputs[1] else 1]
        return self._stats.labels[max(range(len(outputs)), key=outputs.__getitem__)]

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:
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
        if not self._stats.labels:
            return {}
        solution = self._weight_matrix()
        return {label: self._index.to_dict(row) for label, row in zip(self._stats.labels, solution)}

    @property
    def intercepts(self) -> dict[typing.Hashable, float]:
        """``{label: intercept}`` (0 for every class when ``intercept=False``)."""
        if not self._stats.labels:
            return {}
        solution = self._weight_matrix()
        return {
            label: float(row[0]) if self.intercept else 0.0
            for label, row in zip(self._stats.labels, solution)
        }

    @property
    def n_samples(self) -> dict[typing.Hashable, float]:
        """Mass of every class: its sample count, decayed when ``forgetting < 1``."""
        return dict(zip(self._stats.labels, self._stats.counts.tolist()))
