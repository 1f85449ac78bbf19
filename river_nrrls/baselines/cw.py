"""CW: confidence-weighted linear classification (Dredze, Crammer and Pereira 2008)."""

from __future__ import annotations

import math
import statistics

import numpy as np

from .._checks import check_real
from ._gaussian import GaussianLinearClassifier

__all__ = ["CWClassifier"]

_CW_VARIANTS = ("exact", "variance")


class CWClassifier(GaussianLinearClassifier):
    """Confidence-weighted (CW) binary linear classifier, full or diagonal covariance.

    The weights are a Gaussian ``w ~ N(mu, Sigma)``, ``Sigma_0 = a I``. A sample ``(x, y)``,
    ``y in {-1, +1}``, is learned so that ``w`` classifies it correctly with probability at
    least ``confidence`` (algorithms page, "Perceptron, PA, CW, AROW and ACOG", ``phi =
    Phi^-1(confidence)``,
    ``m = y mu.x``, ``v = x^T Sigma x``).

    ``variant="exact"`` (default, LIBOL's ``CW``: the exact convex form of Crammer, Dredze and
    Pereira, NIPS 2008), when ``phi sqrt(v) - m > 0``, with ``psi = 1 + phi^2/2`` and
    ``xi = 1 + phi^2``:

        alpha = max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 xi)) / (v xi))
        u     = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4
        beta  = alpha phi / (sqrt(u) + v alpha phi)
        mu    <- mu + alpha y Sigma x,    Sigma <- Sigma - beta Sigma x x^T Sigma

    ``variant="variance"`` (the closed form of the ICML 2008 paper cited by NR-RLS):

        alpha = max(0, (-(1 + 2 phi m) + sqrt((1 + 2 phi m)^2 - 8 phi (m - phi v))) / (4 phi v))
        mu    <- mu + alpha y Sigma x,    Sigma <- Sigma - Sigma x x^T Sigma 2 alpha phi
                                                           / (1 + 2 alpha phi v)

    `learn_one` accepts river's importance weight ``w`` (so that river's wrappers and weighted
    streams work), but a positive ``w`` does not change the step: CW's update is the smallest
    change of the Gaussian that satisfies the probabilistic margin constraint
    ``Pr[y w.x >= 0] >= confidence``, not the minimiser of a loss that a weight could scale, so
    there is no principled weighted version. ``w = 0`` skips the sample; for weighted learning
    use `AROWClassifier` (where ``w`` divides ``r``) or `NRRLS` (exact weighted TER).

    Parameters
    ----------
    confidence
        The probability eta of a correct classification, in (0.5, 1) (LIBOL: 0.7).
    initial_variance
        ``a`` in ``Sigma_0 = a I`` (> 0, LIBOL: 1); also the variance of a new feature's weight.
    variant
        ``"exact"`` or ``"variance"`` (see above).
    diagonal
        Keep only the diagonal of Sigma: each step applies the full update and keeps its
        diagonal (O(d) per sample instead of O(d^2)).
    intercept
        Add a constant feature 1 (LIBOL has none).

    Attributes
    ----------
    weights
        ``{feature: mu_j}``.
    variances
        ``{feature: Sigma_jj}``.

    Notes
    -----
    Labels must be bool-like (``True``/``False`` or 1/0); ``predict_one`` is ``mu.x >= 0`` and
    ``predict_proba_one`` the model's own probability ``Phi(mu.x / sqrt(x^T Sigma x))`` that
    ``w.x >= 0`` (0.5 for a sample with no known feature). A sample with ``v = 0`` (no feature)
    teaches nothing. A ``None`` value is missing (zero); bad values raise an error naming the
    feature and leave the model unchanged.

    Examples
    --------

    Pima's file lists the classes in blocks, which flatters any learner that tracks the most
    recent class, so the examples shuffle it once (deterministically).

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import CWClassifier, datasets

    >>> pima = stream.shuffle(datasets.Pima(), buffer_size=768, seed=42)
    >>> model = CWClassifier(intercept=True)
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 64.14%
    BalancedAccuracy: 64.93%

    >>> x, y = next(iter(datasets.Pima()))
    >>> model.predict_one(x) == (model.predict_proba_one(x)[True] >= 0.5)
    True

    References
    ----------
    [^1]: Dredze, M., Crammer, K. and Pereira, F. (2008). Confidence-weighted linear
        classification. Proceedings of the 25th International Conference on Machine Learning
        (ICML 2008), 264-271.
    [^2]: Crammer, K., Dredze, M. and Pereira, F. (2008). Exact convex confidence-weighted
        learning. Advances in Neural Information Processing Systems 21 (NIPS 2008).
    [^3]: Hoi, S. C. H., Wang, J. and Zhao, P. (2014). LIBOL: a library for online learning
        algorithms. Journal of Machine Learning Research, 15, 495-499.
    [^4]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    _derived_attributes = ("_phi",)

    def __init__(
        self,
        confidence: float = 0.7,
        initial_variance: float = 1.0,
        variant: str = "exact",
        diagonal: bool = False,
        intercept: bool = False,
    ):
        self.confidence = confidence
        self.initial_variance = initial_variance
        self.variant = variant
        self.diagonal = diagonal
        self.intercept = intercept
        confidence = check_real("confidence", confidence, low=0.5, high=1.0, low_open=True)
        if confidence == 1.0:
            raise ValueError("confidence must be < 1 (Phi^-1(1) is infinite), got 1.0")
        if variant not in _CW_VARIANTS:
            raise ValueError(f"variant must be one of {_CW_VARIANTS}, got {variant!r}")
        self._phi = statistics.NormalDist().inv_cdf(confidence)  # phi = Phi^-1(eta)
        self._setup(initial_variance, diagonal, intercept)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"diagonal": True, "intercept": True}
        yield {"variant": "variance", "confidence": 0.9}
        yield {"variant": "variance", "diagonal": True, "initial_variance": 0.5}

    def _update(self, vector: np.ndarray, sign: float, weight: float) -> None:
        # CW's step solves a probabilistic constraint and has no loss to weigh: any w > 0 takes
        # the paper's step (see the class docstring).
        phi = self._phi
        sigma_x = self._sigma_x(vector)  # Sigma x
        v = float(vector @ sigma_x)  # v = x^T Sigma x
        if v <= 0.0:
            return
        m = sign * float(self._mean @ vector)  # m = y mu.x
        if self.variant == "exact":
            if phi * math.sqrt(v) - m <= 0.0:
                return
            psi = 1.0 + phi * phi / 2.0  # psi = 1 + phi^2 / 2
            xi = 1.0 + phi * phi  # xi = 1 + phi^2
            alpha = max(
                0.0, (-m * psi + math.sqrt(m * m * phi**4 / 4.0 + v * phi * phi * xi)) / (v * xi)
            )
            u = 0.25 * (-alpha * v * phi + math.sqrt(alpha**2 * v**2 * phi**2 + 4.0 * v)) ** 2
            beta = alpha * phi / (math.sqrt(u) + v * alpha * phi)
        else:
            if m > phi * v:
                return
            first = 1.0 + 2.0 * phi * m  # 1 + 2 phi m
            alpha = max(
                0.0, (-first + math.sqrt(first**2 - 8.0 * phi * (m - phi * v))) / (4.0 * phi * v)
            )
            beta = 2.0 * alpha * phi / (1.0 + 2.0 * alpha * phi * v)
        if alpha <= 0.0:
            return
        self._mean += (alpha * sign) * sigma_x  # mu <- mu + alpha y Sigma x
        self._shrink(sigma_x, beta)  # Sigma <- Sigma - beta Sigma x x^T Sigma
