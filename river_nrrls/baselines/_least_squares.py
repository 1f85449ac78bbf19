"""What AR-RLS and IR-RLS share: one-vs-rest least-squares inference and the weighted RLS step."""

from __future__ import annotations

import typing

import numpy as np
from river import base, utils

from .._checks import check_bool, check_label, check_real
from .._index import FeatureIndex
from .._locking import OneCallAtATime
from .._parameters import LiveParameters
from .._stale import inverse_step
from .._woodbury import grow_inverse

__all__ = ["OneVsRestLeastSquares", "grow_inverse", "inverse_step"]  # the shared step


class OneVsRestLeastSquares(LiveParameters, OneCallAtATime, base.Classifier):
    """What AR-RLS and IR-RLS share: parameters, labels, features and inference.

    A subclass implements `_learn` (one validated sample) and `_weight_matrix`: one weight
    vector per seen class (rows, in the order the classes were first seen) over the columns of
    ``self._index``.

    Every public call holds the model's lock (`OneCallAtATime`): threads sharing a model take
    turns, and a pickle, copy or clone is a state that existed.

    """

    # The recursions are built with l2, tau and eta; the intercept lays out the columns.
    _state_parameters = frozenset(("l2", "tau", "eta", "intercept"))

    def __init__(self, l2: float, tau: float, eta: float, intercept: bool):
        self.l2 = l2
        self.tau = tau
        self.eta = eta
        self.intercept = intercept
        self._l2 = check_real("l2", l2, low=0.0, low_open=True)
        self._tau = check_real("tau", tau)
        self._eta = check_real("eta", eta, low=0.0, low_open=True)
        check_bool("intercept", intercept)
        # With an intercept, column 0 is the constant 1 (filled in by the index).
        self._index = FeatureIndex(offset=1, fill=1.0) if intercept else FeatureIndex()
        self._labels: list[typing.Hashable] = []
        self._slots: dict[typing.Hashable, int] = {}
        self._counts: list[float] = []  # n^c, mass (weighted count) seen per class
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    @property
    def _multiclass(self):
        return True

    def _weight_matrix(self) -> np.ndarray:
        raise NotImplementedError

    def _learn(self, label: typing.Hashable, vector: np.ndarray, new: list, weight: float) -> None:
        """Learn a validated sample of mass ``weight > 0`` (its dense vector over the known
        columns then the ``new`` features, not committed yet)."""
        raise NotImplementedError

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Learn one sample of mass ``w`` (>= 0): it adds ``w`` to its class's count ``n^c`` and
        weighs ``gamma = w / n^c`` in the recursion (for IR-RLS, exactly as learning it ``w``
        times). ``w = 0`` is a no-op (the sample is still validated)."""
        weight = check_real("w", w, low=0.0)
        label = check_label(y)
        with self._lock:
            vector, new_features, _ = self._index.dense_one(x, grow=True)  # (validated)
            if weight > 0.0:
                self._learn(label, vector, new_features, weight)

    def _dense(self, x: dict) -> np.ndarray:
        vector = self._index.dense_one(x, grow=False).vector
        return vector

    def _add_class(self, label: typing.Hashable) -> int:
        self._slots[label] = len(self._labels)
        self._labels.append(label)
        self._counts.append(0)
        return self._slots[label]

    def decision_one(self, x: dict) -> dict[typing.Hashable, float]:
        """Raw one-vs-rest least-squares output ``w_k . x`` of every seen class."""
        with self._lock:
            vector = self._dense(x)
            if not self._labels:
                return {}
            return dict(zip(self._labels, (self._weight_matrix() @ vector).tolist()))

    # river's Classifier declares ``**kwargs`` (a Pipeline passes its own on) and labels of its
    # ClfTarget (bool, str, int); this classifier takes no keyword, so that a stray one raises, as
    # river's own classifiers do, and any hashable label
    def predict_one(self, x: dict) -> typing.Hashable | None:  # type: ignore[override]
        """The class with the largest output ``w_k . x``; ``None`` before any learning.

        Ties go to the class seen first.

        """
        decision = self.decision_one(x)
        if not decision:
            return None
        return max(decision, key=decision.__getitem__)

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:  # type: ignore[override]
        """Softmax of ``2 f_k / eta`` over the seen classes (NRRLS's convention)."""
        scale = 2.0 / self._eta
        probabilities = {label: scale * output for label, output in self.decision_one(x).items()}
        utils.math.softmax(probabilities)  # in place
        return probabilities

    @property
    def weights(self) -> dict[typing.Hashable, dict[typing.Hashable, float]]:
        """``{label: {feature: weight}}`` (read-only copy)."""
        with self._lock:
            rows = self._weight_matrix()
            return {label: self._index.to_dict(row) for label, row in zip(self._labels, rows)}

    @property
    def intercepts(self) -> dict[typing.Hashable, float]:
        """``{label: intercept}`` (0 for every class when ``intercept=False``)."""
        with self._lock:
            return {
                label: float(row[0]) if self.intercept else 0.0
                for label, row in zip(self._labels, self._weight_matrix())
            }

    @property
    def n_samples(self) -> dict[typing.Hashable, float]:
        """Mass of every class: its number of samples, or the sum of their weights ``w``."""
        with self._lock:
            return dict(zip(self._labels, map(float, self._counts)))
