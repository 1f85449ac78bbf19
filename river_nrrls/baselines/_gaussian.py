"""What CW, AROW and ACOG share: a binary linear model with a Gaussian over its weights."""

from __future__ import annotations

import math
import typing

import numpy as np
from river import base
from scipy.linalg import blas

from .._checks import check_bool, check_real, label_sign
from .._index import FeatureIndex
from .._locking import OneCallAtATime
from .._parameters import LiveParameters

__all__ = ["GaussianLinearClassifier"]


class GaussianLinearClassifier(LiveParameters, OneCallAtATime, base.Classifier):
    """What CW, AROW and ACOG share: a binary linear model with a Gaussian over its weights.

    The state is the mean ``mu`` (the weights used to predict) and the covariance ``Sigma`` of
    the weights, full (a Fortran-ordered matrix whose upper triangle is authoritative) or
    diagonal (a vector). A subclass implements `_update`, built from `_sigma_x`
    and `_shrink`.

    Features may appear at any time: a new feature was zero in every past sample, so it got no
    update and its weight is exactly as initialised, mean 0 and variance ``initial_variance``,
    uncorrelated with the others.

    Every public call holds the model's lock (`OneCallAtATime`): threads sharing a model take
    turns, and a pickle, copy or clone is a state that existed.

    """

    # The covariance starts from initial_variance, in the layout diagonal/intercept give.
    _state_parameters = frozenset(("initial_variance", "diagonal", "intercept"))

    def _setup(self, initial_variance: float, diagonal: bool, intercept: bool) -> None:
        self._initial_variance = check_real(
            "initial_variance", initial_variance, low=0.0, low_open=True
        )
        self._diagonal = check_bool("diagonal", diagonal)
        self._intercept = check_bool("intercept", intercept)
        # With an intercept, column 0 is the constant 1 (filled in by the index).
        self._index = FeatureIndex(offset=1, fill=1.0) if self._intercept else FeatureIndex()
        dim = self._index.size
        self._mean = np.zeros(dim)  # mu
        if self._diagonal:
            self._covariance: np.ndarray = np.full(dim, self._initial_variance)  # diag(Sigma)
        else:
            self._covariance = self._initial_variance * np.eye(dim, order="F")  # Sigma_0 = a I
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    # --------------------------------------------------------------- state

    def _grow(self, new_features: list) -> None:
        """Commit new features: mean 0, variance ``initial_variance``, no correlation (exact)."""
        if not new_features:
            return
        old = self._index.size
        self._index.add(new_features)
        dim = self._index.size
        self._mean = np.concatenate([self._mean, np.zeros(dim - old)])
        if self._diagonal:
            self._covariance = np.concatenate(
                [self._covariance, np.full(dim - old, self._initial_variance)]
            )
        else:
            grown = np.zeros((dim, dim), order="F")
            grown[:old, :old] = self._covariance
            grown.flat[old * (dim + 1) :: dim + 1] = self._initial_variance
            self._covariance = grown

    def _sigma_x(self, vector: np.ndarray) -> np.ndarray:
        """Sigma x."""
        if self._diagonal:
            return self._covariance * vector
        if not len(vector):  # no column yet (BLAS rejects empty vectors)
            return np.zeros(0)
        return blas.dsymv(1.0, self._covariance, vector, lower=0)

    def _shrink(self, sigma_x: np.ndarray, beta: float) -> None:
        """Sigma <- Sigma - beta (Sigma x)(Sigma x)^T (only the diagonal of it when diagonal)."""
        if self._diagonal:
            self._covariance -= beta * sigma_x * sigma_x
        elif len(sigma_x):
            self._covariance = blas.dsyr(-beta, sigma_x, lower=0, a=self._covariance, overwrite_a=1)

    def _update(self, vector: np.ndarray, sign: float, weight: float) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ learning

    def learn_one(self, x: dict, y: typing.Any, w: float = 1.0) -> None:
        """Learn one sample of importance ``w`` (>= 0; see the class docstring for its effect).

        ``w = 0`` is a no-op (the sample is still validated).

        """
        weight = check_real("w", w, low=0.0)
        sign = label_sign(y)  # y in {-1, +1}
        with self._lock:
            vector, new_features, _ = self._index.dense_one(x, grow=True)
            if weight == 0.0:
                return
            self._grow(new_features)
            self._update(vector, sign, weight)

    # ----------------------------------------------------------- inference

    def decision_one(self, x: dict) -> float:
        """The margin ``mu . x`` (features not seen yet have weight 0)."""
        with self._lock:
            vector = self._index.dense_one(x, grow=False).vector
            return float(self._mean @ vector)

    # river's Classifier declares ``**kwargs`` (a Pipeline passes its own on); this classifier
    # takes none, so that a stray keyword raises, as river's own classifiers do
    def predict_one(self, x: dict) -> bool:  # type: ignore[override]
        """``True`` when the margin ``mu . x`` is at least 0 (so ``True`` before any learning)."""
        return self.decision_one(x) >= 0.0

    def predict_proba_one(self, x: dict) -> dict[base.typing.ClfTarget, float]:  # type: ignore[override]
        """``P(w . x >= 0)`` for ``w ~ N(mu, Sigma)``: ``Phi(mu.x / sqrt(x^T Sigma x))``.

        Features not seen yet count with their prior variance.

        """
        with self._lock:
            vector = self._index.dense_one(x, grow=True).vector  # unseen features at the end
            known = vector[: len(self._mean)]
            margin = float(self._mean @ known)  # mu . x
            unseen = vector[len(self._mean) :]
            variance = float(known @ self._sigma_x(known))  # x^T Sigma x
            variance += self._initial_variance * float(unseen @ unseen)
        if variance > 0.0:
            p_true = 0.5 * math.erfc(-margin / math.sqrt(2.0 * variance))  # Phi(m / sqrt(v))
        else:
            p_true = 0.5 if margin == 0.0 else float(margin > 0.0)
        return {False: 1.0 - p_true, True: p_true}

    # ---------------------------------------------------------- inspection

    @property
    def weights(self) -> dict[typing.Hashable, float]:
        """``{feature: mean weight}`` (read-only copy)."""
        with self._lock:
            return self._index.to_dict(self._mean)

    @property
    def variances(self) -> dict[typing.Hashable, float]:
        """``{feature: variance of its weight}``, the diagonal of Sigma (read-only copy)."""
        with self._lock:
            diagonal = self._covariance if self._diagonal else np.diag(self._covariance)
            return self._index.to_dict(diagonal)

    @property
    def intercept_(self) -> float:
        """The mean weight of the constant feature (0 when ``intercept=False``)."""
        with self._lock:
            return float(self._mean[0]) if self._intercept else 0.0
