"""CSOGD: cost-sensitive online gradient descent (Wang, Zhao and Hoi)."""

from __future__ import annotations

import math
import typing

import numpy as np
from river import base

from .._checks import check_real, label_sign
from .._index import FeatureIndex
from .._linear import binary_proba, exact_dot, weights_at, with_capacity
from .._locking import OneCallAtATime
from .._parameters import LiveParameters

__all__ = ["CSOGDClassifier"]

_LOSSES = ("I", "II")
_OBJECTIVES = ("cost", "sum")


class CSOGDClassifier(LiveParameters, OneCallAtATime, base.Classifier):
    """Cost-sensitive online gradient descent (CSOGD), the online baseline of OCSCA.

    A linear classifier ``f(x) = w . x`` learnt by online gradient descent on a cost-sensitive
    surrogate of the weighted mistakes (Wang, Zhao and Hoi, "Cost-Sensitive Online
    Classification"). Positives weigh ``rho``, negatives 1; with ``y = +1`` for ``True`` and
    ``rho_y = rho`` for a positive, 1 for a negative, the two surrogate losses are

        type I  (cost-dependent margin):  l(w; x, y) = max(0, rho_y - y w . x)
        type II (cost-weighted hinge):    l(w; x, y) = rho_y max(0, 1 - y w . x)

    and whenever ``l > 0`` the gradient step with learning rate ``lambda`` is

        type I:   w <- w + lambda y x
        type II:  w <- w + lambda rho_y y x

    O(number of features of x) per sample.

    Parameters
    ----------
    learning_rate
        The constant learning rate lambda > 0 (tuned by grid search in the paper; there is no
        canonical default).
    loss
        ``"II"`` (cost-weighted hinge, default) or ``"I"`` (cost-dependent margin).
    objective
        ``"cost"``: minimise the weighted cost ``c_p M_p + c_n M_n`` (mistakes on positives and
        on negatives), ``rho = cost_pos / cost_neg``. ``"sum"``: maximise
        ``eta_pos sensitivity + (1 - eta_pos) specificity``,
        ``rho = eta_pos T_n / ((1 - eta_pos) T_p)`` with the running counts of positives ``T_p``
        and negatives ``T_n``.
    cost_pos
        Cost c_p > 0 of a misclassified positive (``objective="cost"``).
    cost_neg
        Cost c_n > 0 of a misclassified negative (``objective="cost"``).
    eta_pos
        Weight eta_p in (0, 1) of the sensitivity (``objective="sum"``); 0.5 gives balanced
        accuracy.
    intercept
        Append a constant feature 1 to ``x`` (the paper's model has no bias; ``False`` is the
        paper).

    Attributes
    ----------
    weights
        ``w`` as ``{feature: weight}`` (a copy), for the features that took part in a step.
    bias
        The weight of the constant feature (0 when ``intercept=False``).

    Notes
    -----
    **Per-sample costs.** ``learn_one(x, y, w=c)`` (this is how
    `river.evaluate.progressive_val_score` passes the ``{"w": c}`` of a stream of triples)
    gives the sample the cost ``c`` in place of ``cost_pos`` or ``cost_neg``, so that
    ``rho_y = c / cost_neg``: with the default ``cost_neg = 1``, ``rho_y`` is the given cost.
    With ``objective="sum"``, ``w`` is a sample weight that multiplies ``rho_y``.

    **Running counts** (``objective="sum"``). The paper's ``T_p`` and ``T_n`` are totals of the
    whole stream, unknown online: the counts so far are used, the current sample included, and
    ``T_n`` is taken as at least 1 (before the first negative, ``rho = eta_pos / eta_neg``).

    **Outputs.** ``predict_one`` is ``w . x >= 0`` (ties go to the positive class, as in LIBOL);
    ``predict_proba_one`` is ``{False: 1 - s(f), True: s(f)}`` with the logistic
    ``s(f) = 1 / (1 + exp(-f))`` of ``f = w . x``, ``{False: 0.5, True: 0.5}`` before learning.

    Labels are bool-like (``True`` = positive; ``np.bool_`` and 0/1 are accepted); anything
    else raises ``ValueError``. Features may appear at any time (their weight starts at 0) or
    be absent; a ``None`` value is missing (zero). Non-numeric or non-finite values raise an
    error naming the feature and leave the model as it was.

    **Threads.** Every public call holds the model's lock: threads sharing a model take turns,
    and a pickle, copy or clone is a state that existed.

    Examples
    --------

    >>> import random
    >>> from river import evaluate, metrics
    >>> from river_nrrls import CSOGDClassifier, datasets
    >>> from river_nrrls.metrics import MisclassificationCost

    >>> data = list(datasets.Pima())
    >>> random.Random(1).shuffle(data)

    >>> model = CSOGDClassifier(learning_rate=0.1, cost_pos=5.0, cost_neg=1.0, intercept=True)
    >>> metric = MisclassificationCost(cost_pos=5.0, cost_neg=1.0) + metrics.Accuracy()
    >>> evaluate.progressive_val_score(data, model, metric)
    MisclassificationCost: 0.636719
    Accuracy: 42.58%

    The same costs given per sample, as a third element of the stream:

    >>> weighted = [(x, y, {"w": 5.0 if y else 1.0}) for x, y in data]
    >>> evaluate.progressive_val_score(
    ...     weighted,
    ...     CSOGDClassifier(learning_rate=0.1, intercept=True),
    ...     MisclassificationCost(cost_pos=5.0, cost_neg=1.0),
    ... )
    MisclassificationCost: 0.636719

    References
    ----------
    [^1]: Wang, J., Zhao, P. and Hoi, S. C. H. (2012). Cost-sensitive online classification.
        Proceedings of the 12th IEEE International Conference on Data Mining (ICDM 2012),
        1140-1145.
    [^2]: Wang, J., Zhao, P. and Hoi, S. C. H. (2014). Cost-sensitive online classification.
        IEEE Transactions on Knowledge and Data Engineering, 26(10), 2425-2438.

    """

    _derived_attributes = ("_learning_rate", "_cost_pos", "_cost_neg", "_eta_pos")
    _state_parameters = frozenset(("intercept",))  # the learnt bias belongs to the intercept

    def __init__(
        self,
        learning_rate: float = 0.1,
        loss: str = "II",
        objective: str = "cost",
        cost_pos: float = 1.0,
        cost_neg: float = 1.0,
        eta_pos: float = 0.5,
        intercept: bool = False,
    ):
        self.learning_rate = learning_rate
        self.loss = loss
        self.objective = objective
        self.cost_pos = cost_pos
        self.cost_neg = cost_neg
        self.eta_pos = eta_pos
        self.intercept = intercept
        self._learning_rate = check_real("learning_rate", learning_rate, low=0.0, low_open=True)
        if loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
        if objective not in _OBJECTIVES:
            raise ValueError(f"objective must be one of {_OBJECTIVES}, got {objective!r}")
        self._cost_pos = check_real("cost_pos", cost_pos, low=0.0, low_open=True)
        self._cost_neg = check_real("cost_neg", cost_neg, low=0.0, low_open=True)
        self._eta_pos = check_real("eta_pos", eta_pos, low=0.0, low_open=True)
        if self._eta_pos >= 1.0:
            raise ValueError(f"eta_pos must be < 1, got {eta_pos!r}")
        if not isinstance(intercept, (bool, np.bool_)):
            raise TypeError(f"intercept must be a bool, got {intercept!r}")
        self._constant = 1.0 if intercept else 0.0  # the appended feature's value (0: none)
        self._index = FeatureIndex()
        self._w = np.zeros(8)  # w, with spare capacity beyond self._index.size (zeros)
        self._bias = 0.0
        self._n_pos = 0  # T_p so far
        self._n_neg = 0  # T_n so far
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"loss": "I", "objective": "sum", "eta_pos": 0.7, "intercept": True}
        yield {"learning_rate": 0.5, "cost_pos": 5.0, "cost_neg": 2.0, "intercept": True}

    # ----------------------------------------------------------------- helpers

    def _rho(self, y_t: float, w: float | None, n_pos: int, n_neg: int) -> float:
        """rho_y of the current sample."""
        if self.objective == "cost":
            if w is not None:
                cost = check_real("w (the sample's cost)", w, low=0.0)  # the sample's own cost
            else:
                cost = self._cost_pos if y_t > 0 else self._cost_neg
            return cost / self._cost_neg  # rho_y = c_y / c_n
        weight = 1.0 if w is None else check_real("w (the sample's weight)", w, low=0.0)
        if y_t < 0:
            return weight
        eta_neg = 1.0 - self._eta_pos
        return weight * self._eta_pos * max(n_neg, 1) / (eta_neg * n_pos)  # eta_p T_n/(eta_n T_p)

    def _grow(self, new_features: list) -> None:
        if new_features:
            self._index.add(new_features)
            self._w = with_capacity(self._w, self._index.size)

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y: typing.Any, w: float | None = None) -> None:
        """One gradient step on ``(x, y)``, with the sample's cost ``w`` if given."""
        y_t = label_sign(y, "CSOGDClassifier")  # y_t in {-1, +1}
        with self._lock:
            self._learn_one(x, y_t, w)

    def _learn_one(self, x: dict, y_t: float, w: float | None) -> None:
        n_pos = self._n_pos + (y_t > 0)
        n_neg = self._n_neg + (y_t < 0)
        rho = self._rho(y_t, w, n_pos, n_neg)  # rho_y
        columns, values, new, _ = self._index.encode_sparse(x, grow=True)
        current = weights_at(self._w, columns, new)
        margin = y_t * (exact_dot(current, values) + self._bias * self._constant)  # y w . x
        if self.loss == "I":
            step = self._learning_rate * y_t if rho - margin > 0.0 else 0.0  # lambda y
        else:
            step = self._learning_rate * rho * y_t if rho > 0.0 and margin < 1.0 else 0.0
        if step != 0.0 and (self._constant or values.any()):  # x = 0: no-op
            updated = current + step * values  # w + step x
            updated_bias = self._bias + step * self._constant
            if not math.isfinite(float(updated.sum()) + updated_bias):  # inf or nan somewhere
                raise ValueError("the update of w overflows (x has values that are too large)")
            self._grow(new)
            self._w[columns] = updated
            self._bias = updated_bias
        self._n_pos, self._n_neg = n_pos, n_neg

    # --------------------------------------------------------------- inference

    def _score_one(self, x: dict) -> float:
        with self._lock:
            columns, values, _, _ = self._index.encode_sparse(x, grow=False)
            return exact_dot(self._w[columns], values) + self._bias * self._constant  # w . x

    def decision_one(self, x: dict) -> dict[bool, float]:
        """``{True: w . x, False: -w . x}``."""
        score = self._score_one(x)
        return {True: score, False: -score}

    # river's Classifier declares ``**kwargs`` (a Pipeline passes its own on); this classifier
    # takes none, so that a stray keyword raises, as river's own classifiers do
    def predict_one(self, x: dict) -> bool:  # type: ignore[override]
        """``True`` when the score ``w . x`` is at least 0 (so ``True`` before any learning)."""
        return self._score_one(x) >= 0.0

    def predict_proba_one(self, x: dict) -> dict[base.typing.ClfTarget, float]:  # type: ignore[override]
        """``{False: sigmoid(-w . x), True: sigmoid(w . x)}``: a monotone map of the score, not
        a calibrated probability."""
        return binary_proba(self._score_one(x))

    # -------------------------------------------------------------- inspection

    @property
    def weights(self) -> dict[typing.Hashable, float]:
        """``w`` as ``{feature: weight}`` (read-only copy)."""
        with self._lock:
            return self._index.to_dict(self._w)

    @property
    def bias(self) -> float:
        """The weight of the constant feature (0 when ``intercept=False``)."""
        with self._lock:
            return float(self._bias)
