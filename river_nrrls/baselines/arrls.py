"""AR-RLS: approximately reweighted recursive least squares (Kim, Toh, Teoh, Eng and Yau 2013)."""

from __future__ import annotations

import typing

import numpy as np
from river import base, utils
from scipy.linalg import blas

from .._checks import as_label, check_bool, check_real
from .._index import FeatureIndex

__all__ = ["ARRLS"]


def inverse_step(
    inverse: np.ndarray, x: np.ndarray, inverse_weight: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Add the sample ``x`` with weight ``gamma = 1 / inverse_weight`` to ``P`` (Sherman-Morrison).

    ``inverse`` is ``P = (sum_i gamma_i x_i x_i^T + b I)^{-1}`` (Fortran order, upper triangle
    authoritative), updated in place whenever BLAS can. Returns the new ``P``, the old ``P x``
    and ``1/gamma + x^T P x``: the RLS gain is ``g = gamma P_new x = P x / (1/gamma + x^T P x)``.

    """
    px = blas.dsymv(1.0, inverse, x, lower=0)  # P x
    denominator = inverse_weight + float(x @ px)  # 1/gamma + x^T P x
    # P <- P - gamma P x x^T P / (1 + gamma x^T P x)
    inverse = blas.dsyr(-1.0 / denominator, px, lower=0, a=inverse, overwrite_a=1)
    return inverse, px, denominator


def grow_inverse(inverse: np.ndarray, dim: int, b: float) -> np.ndarray:
    """``P`` extended to ``dim`` columns: past samples had zeros there, so ``P`` gains ``1/b``."""
    old = len(inverse)
    if dim <= old:
        return inverse
    grown = np.zeros((dim, dim), order="F")
    grown[:old, :old] = inverse
    grown.flat[old * (dim + 1) :: dim + 1] = 1.0 / b  # P_0 = I / b on the new diagonal
    return grown


class OneVsRestLeastSquares(base.Classifier):
    """What AR-RLS and IR-RLS share: parameters, labels, features and inference.

    A subclass implements :meth:`_weight_matrix`: one weight vector per seen class (rows, in the
    order the classes were first seen) over the columns of ``self._index``.

    """

    def __init__(self, b: float, tau: float, eta: float, intercept: bool):
        self.b = b
        self.tau = tau
        self.eta = eta
        self.intercept = intercept
        self._b = check_real("b", b, low=0.0, low_open=True)
        self._tau = check_real("tau", tau)
        self._eta = check_real("eta", eta, low=0.0, low_open=True)
        check_bool("intercept", intercept)
        # With an intercept, column 0 is the constant 1 (filled in by the index).
        self._index = FeatureIndex(offset=1, fill=1.0) if intercept else FeatureIndex()
        self._labels: list[typing.Hashable] = []
        self._slots: dict[typing.Hashable, int] = {}
        self._counts: list[int] = []  # n^c, samples seen per class

    @property
    def _multiclass(self):
        return True

    def _weight_matrix(self) -> np.ndarray:
        raise NotImplementedError

    def _encode_sample(
        self, x: dict, y: typing.Hashable
    ) -> tuple[typing.Hashable, np.ndarray, list]:
        """Validate a sample without touching the model: its label, dense vector, new features."""
        label = as_label(y)
        vector, new_features = self._index.dense_one(x, grow=True)
        return label, vector, new_features

    def _dense(self, x: dict) -> np.ndarray:
        vector, _ = self._index.dense_one(x, grow=False)
        return vector

    def _add_class(self, label: typing.Hashable) -> int:
        self._slots[label] = len(self._labels)
        self._labels.append(label)
        self._counts.append(0)
        return self._slots[label]

    def decision_one(self, x: dict) -> dict[typing.Hashable, float]:
        """Raw one-vs-rest least-squares output ``w_k . x`` of every seen class."""
        vector = self._dense(x)
        if not self._labels:
            return {}
        return dict(zip(self._labels, (self._weight_matrix() @ vector).tolist()))

    def predict_one(self, x: dict) -> typing.Hashable | None:
        decision = self.decision_one(x)
        if not decision:
            return None
        return max(decision, key=decision.__getitem__)

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:
        """Softmax of ``2 f_k / eta`` over the seen classes (NRRLS's convention)."""
        scale = 2.0 / self._eta
        return utils.math.softmax(
            {label: scale * output for label, output in self.decision_one(x).items()}
        )

    @property
    def weights(self) -> dict[typing.Hashable, dict[typing.Hashable, float]]:
        """``{label: {feature: weight}}`` (read-only copy)."""
        rows = self._weight_matrix()
        return {label: self._index.to_dict(row) for label, row in zip(self._labels, rows)}

    @property
    def intercepts(self) -> dict[typing.Hashable, float]:
        """``{label: intercept}`` (0 for every class when ``intercept=False``)."""
        return {
            label: float(row[0]) if self.intercept else 0.0
            for label, row in zip(self._labels, self._weight_matrix())
        }

    @property
    def n_samples(self) -> dict[typing.Hashable, int]:
        """Number of samples seen from every class."""
        return dict(zip(self._labels, self._counts))


class ARRLS(OneVsRestLeastSquares):
    """Approximately reweighted recursive least squares (AR-RLS), a class-rebalancing RLS.

    Weighted RLS in which a sample enters with the *current* weight of its class, ``1/k`` for the
    k-th sample of the class, and keeps that weight forever (algorithms.md section 4, the assumed
    form of Kim et al. 2013). After every sample the weights are exactly the weighted ridge

        w_k = argmin_w  sum_i gamma_i (t_ki - w.x_i)^2 + b |w|^2,    gamma_i = 1 / r_i

    where ``r_i`` is the rank of sample ``i`` within its class (1 for the first), with targets
    ``t_ki = tau + eta`` when sample ``i`` is of class ``k`` and ``tau - eta`` otherwise. This
    only approximates the total-error-rate (TER) solution that :class:`NRRLS`
    computes: a class carries the harmonic total ``H(n^c) ~ ln n^c + 0.58`` rather than 1, so the
    rebalancing is partial.

    One recursive inverse ``P = (sum_i gamma_i x_i x_i^T + b I)^{-1}`` is shared by every class
    (the sample weights do not depend on the class whose system is solved), so a sample costs
    Theta(d^2) whatever the number of classes. Multiclass problems are one-vs-rest like
    :class:`NRRLS`; with three classes or more, a "rest" sample keeps the harmonic weight of its
    own class (it is not re-ranked within the rest).

    Parameters
    ----------
    b
        Ridge constant (> 0; the recursion starts from ``P = I / b``). It regularises the
        intercept too.
    tau
        Threshold: the class targets are ``tau - eta`` (rest) and ``tau + eta`` (class).
    eta
        Half the distance between the targets (> 0).
    intercept
        Add a constant feature 1, regularised by b like the others.

    Attributes
    ----------
    weights
        ``{label: {feature: weight}}`` of every seen class's one-vs-rest system.
    intercepts
        ``{label: intercept}`` (0 when ``intercept=False``).

    Notes
    -----
    ``decision_one``, ``predict_one`` and ``predict_proba_one`` follow :class:`NRRLS`: raw
    outputs, the class with the largest output (ties go to the class seen first), and the softmax
    of ``2 f_k / eta``. A class first seen after ``t`` samples starts from the weighted ridge of
    those samples with target ``tau - eta`` (kept as an extra row updated with the same gain).
    New features extend ``P`` exactly (past samples had zeros there); a ``None`` value is
    missing (zero). Bad values raise an error naming the feature and leave the model unchanged.

    Examples
    --------

    Pima's file lists the classes in blocks, which flatters any learner that tracks the most
    recent class, so the examples shuffle it once (deterministically).

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import ARRLS, datasets

    >>> pima = stream.shuffle(datasets.Pima(), buffer_size=768, seed=42)
    >>> model = ARRLS()
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 69.09%
    BalancedAccuracy: 69.96%

    >>> model.n_samples
    {False: 500, True: 268}

    References
    ----------
    [^1]: Kim, Y., Toh, K.-A., Teoh, A. B. J., Eng, H.-L. and Yau, W.-Y. (2013). An online
        learning network for biometric scores fusion. Neurocomputing, 102, 65-77.

    """

    def __init__(
        self, b: float = 1e-4, tau: float = 0.0, eta: float = 1.0, intercept: bool = True
    ):
        super().__init__(b=b, tau=tau, eta=eta, intercept=intercept)
        self._inverse = grow_inverse(np.zeros((0, 0), order="F"), self._index.size, self._b)
        # Row 0: the weighted ridge with target 1 for every sample, the start of a new class.
        self._rows = np.zeros((1, self._index.size))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"b": 0.1, "tau": 0.5, "eta": 2.0, "intercept": False}

    def learn_one(self, x: dict, y: typing.Hashable) -> None:
        label, vector, new_features = self._encode_sample(x, y)
        if new_features:
            self._index.add(new_features)
            self._inverse = grow_inverse(self._inverse, self._index.size, self._b)
            self._rows = np.pad(self._rows, ((0, 0), (0, len(new_features))))
        slot = self._slots.get(label)
        if slot is None:
            slot = self._add_class(label)
            # So far every sample was "rest" for the new class: target tau - eta throughout.
            self._rows = np.vstack([self._rows, (self._tau - self._eta) * self._rows[0]])
        self._counts[slot] += 1  # n^c += 1, the new sample's weight is gamma = 1 / n^c
        targets = np.full(len(self._rows), self._tau - self._eta)
        targets[0] = 1.0
        targets[slot + 1] = self._tau + self._eta
        if len(vector):
            errors = targets - self._rows @ vector  # a-priori errors, target - w^T x
            self._inverse, px, denominator = inverse_step(
                self._inverse, vector, float(self._counts[slot])
            )
            self._rows += np.outer(errors, px / denominator)  # w <- w + g (target - w^T x)

    def _weight_matrix(self) -> np.ndarray:
        return self._rows[1:]
