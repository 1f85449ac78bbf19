"""AROW: adaptive regularization of weight vectors (Crammer, Kulesza and Dredze 2009)."""

from __future__ import annotations

import numpy as np

from .._checks import check_real
from ._gaussian import GaussianLinearClassifier

__all__ = ["AROWClassifier"]


class AROWClassifier(GaussianLinearClassifier):
    """Adaptive regularization of weight vectors (AROW), full or diagonal covariance.

    A binary linear classifier with a mean ``mu`` and a covariance ``Sigma`` (``Sigma_0 = a I``)
    of its weights. For a sample ``(x, y)``, ``y in {-1, +1}``, with hinge loss
    ``l = max(0, 1 - y mu.x)`` and ``v = x^T Sigma x`` (algorithms page, "Perceptron, PA, CW, AROW
    and ACOG", LIBOL's
    ``AROW``), if ``l > 0``:

        beta  = 1 / (v + r)
        alpha = l beta
        mu    <- mu + alpha y Sigma x          (Sigma before the update)
        Sigma <- Sigma - beta Sigma x x^T Sigma

    A sample weight ``w`` (``learn_one(x, y, w)``, river's importance weight) multiplies the
    sample's loss terms in AROW's objective, which is the same as dividing ``r`` by ``w`` for
    that step: ``beta = 1 / (v + r / w)``. Larger weights move ``mu`` and ``Sigma`` more;
    ``w = 1`` is the paper's update and ``w = 0`` skips the sample.

    Parameters
    ----------
    r
        Regularisation (> 0, LIBOL: 1): larger values change ``mu`` and ``Sigma`` less.
    initial_variance
        ``a`` in ``Sigma_0 = a I`` (> 0, LIBOL: 1); also the variance of a new feature's weight.
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
    ``predict_proba_one`` is ``Phi(mu.x / sqrt(x^T Sigma x))``, the probability that
    ``w.x >= 0`` for ``w ~ N(mu, Sigma)`` (0.5 for a sample with no known feature). A ``None``
    value is missing (zero); bad values raise an error naming the feature and leave the model
    unchanged.

    Examples
    --------

    Pima's file lists the classes in blocks, which flatters any learner that tracks the most
    recent class, so the examples shuffle it once (deterministically).

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import AROWClassifier, datasets

    >>> pima = stream.shuffle(datasets.Pima(), buffer_size=768, seed=42)
    >>> model = AROWClassifier(intercept=True)
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 68.69%
    BalancedAccuracy: 70.65%

    The variances only shrink:

    >>> max(model.variances.values()) < 1.0
    True

    References
    ----------
    [^1]: Crammer, K., Kulesza, A. and Dredze, M. (2009). Adaptive regularization of weight
        vectors. Advances in Neural Information Processing Systems 22 (NIPS 2009), 414-422.
    [^2]: Hoi, S. C. H., Wang, J. and Zhao, P. (2014). LIBOL: a library for online learning
        algorithms. Journal of Machine Learning Research, 15, 495-499.
    [^3]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    _derived_attributes = ("_r",)

    def __init__(
        self,
        r: float = 1.0,
        initial_variance: float = 1.0,
        diagonal: bool = False,
        intercept: bool = False,
    ):
        self.r = r
        self.initial_variance = initial_variance
        self.diagonal = diagonal
        self.intercept = intercept
        self._r = check_real("r", r, low=0.0, low_open=True)
        self._setup(initial_variance, diagonal, intercept)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"diagonal": True, "intercept": True}
        yield {"r": 0.1, "initial_variance": 2.0}

    def _update(self, vector: np.ndarray, sign: float, weight: float) -> None:
        loss = 1.0 - sign * float(self._mean @ vector)  # l = 1 - y mu.x
        if loss <= 0.0:
            return
        sigma_x = self._sigma_x(vector)  # Sigma x
        v = float(vector @ sigma_x)  # v = x^T Sigma x
        beta = 1.0 / (v + self._r / weight)  # beta = 1 / (v + r / w)
        alpha = loss * beta  # alpha = l beta
        self._mean += (alpha * sign) * sigma_x  # mu <- mu + alpha y Sigma x
        self._shrink(sigma_x, beta)  # Sigma <- Sigma - beta Sigma x x^T Sigma
