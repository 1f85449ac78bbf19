"""ACOG: adaptive regularized cost-sensitive online gradient descent (Zhao et al. 2019)."""

from __future__ import annotations

import numpy as np

from .._checks import check_real
from ._gaussian import GaussianLinearClassifier

__all__ = ["ACOGClassifier"]

_METRICS = ("sum", "cost")
_LOSSES = ("I", "II")


class ACOGClassifier(GaussianLinearClassifier):
    """Adaptive regularized cost-sensitive online gradient descent (ACOG), full or diagonal.

    Cost-sensitive online gradient descent (CSOGD, algorithms page, "CSOGD") with AROW-style
    second-order adaptive regularisation (algorithms page, "Perceptron, PA, CW, AROW and ACOG"):
    weights ``w`` (``mu``) and a
    matrix ``Sigma`` (``Sigma_0 = I``). For a sample ``(x, y)``, ``y in {-1, +1}``, with
    ``rho_y = rho`` for a positive (``True``) sample and 1 for a negative one, if the loss is
    positive (type II: ``rho_y max(0, 1 - y w.x) > 0``; type I: ``max(0, rho_y - y w.x) > 0``):

        Sigma <- Sigma - Sigma x x^T Sigma / (gamma + x^T Sigma x)
        w     <- w - eta Sigma g,    g = -rho_y y x (type II)  or  g = -y x (type I)

    with the *updated* Sigma. The cost ratio ``rho`` comes from the metric to optimise:

    * ``"sum"`` (``eta_p`` sensitivity + ``eta_n`` specificity, ``eta_n = 1 - eta_p``):
      ``rho = eta_p T_n / (eta_n T_p)``, with ``T_p`` and ``T_n`` the numbers of positives and
      negatives seen so far, the current sample included (the stream totals are unknown
      online). ``rho = 0`` until a negative has been seen.
    * ``"cost"`` (``c_p`` false negatives + ``c_n`` false positives, ``c_n = 1 - c_p``):
      ``rho = c_p / c_n``.

    The update is reconstructed from a public implementation by a co-author (algorithms page,
    "Perceptron, PA, CW, AROW and ACOG")
    and is not verified against the journal text, which gives no default for the learning rate
    and ``gamma`` (both tuned by grid search there): the defaults ``learning_rate = 1`` and
    ``gamma = 1`` are a neutral start (``gamma`` plays AROW's ``r``).

    A sample weight ``w`` (``learn_one(x, y, w)``, river's importance weight) scales the
    gradient step as in river's linear models, ``w <- w - w_t eta Sigma g``, and the sample
    counts ``w_t`` times in ``T_p`` or ``T_n``; ``Sigma``'s update is the paper's. ``w = 0``
    skips the sample.

    Parameters
    ----------
    learning_rate
        ``eta`` (> 0). Default 1 (the paper tunes it; no canonical value).
    gamma
        Regularisation (> 0). Default 1 (the paper tunes it; no canonical value).
    metric
        ``"sum"`` (default) or ``"cost"``: how ``rho`` is computed (see above).
    positive_weight
        ``eta_p`` for ``"sum"``, ``c_p`` for ``"cost"``, in (0, 1). The default 0.5 makes
        ``"sum"`` the balanced accuracy (``rho = T_n / T_p``) and ``"cost"`` cost-neutral.
    loss
        ``"II"`` (default: cost-weighted hinge, the form of the public implementation) or
        ``"I"`` (cost-dependent margin).
    diagonal
        Keep only the diagonal of Sigma: the step applies the full update and keeps its
        diagonal, and ``w`` then moves along ``diag(Sigma) * x`` (O(d) per sample).
    intercept
        Add a constant feature 1 (the paper has none).

    Attributes
    ----------
    weights
        ``{feature: w_j}``.
    variances
        ``{feature: Sigma_jj}``.
    rho
        The current cost ratio ``rho`` applied to positive samples.

    Notes
    -----
    Labels must be bool-like (``True``/``False`` or 1/0), ``True`` being the positive class.
    ``predict_one`` is ``w.x >= 0`` and ``predict_proba_one`` is
    ``Phi(w.x / sqrt(x^T Sigma x))`` (0.5 for a sample with no known feature). A new feature
    has weight 0 and ``Sigma`` entry 1. A ``None`` value is missing (zero); bad values raise an
    error naming the feature and leave the model unchanged.

    Examples
    --------

    Pima's file lists the classes in blocks, which flatters any learner that tracks the most
    recent class, so the examples shuffle it once (deterministically).

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import ACOGClassifier, datasets

    >>> pima = stream.shuffle(datasets.Pima(), buffer_size=768, seed=42)
    >>> model = ACOGClassifier(intercept=True)
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 69.49%
    BalancedAccuracy: 70.11%

    >>> round(model.rho, 4)  # T_n / T_p = 500 / 268
    1.8657

    References
    ----------
    [^1]: Zhao, P., Zhang, Y., Wu, M., Hoi, S. C. H., Tan, M. and Huang, J. (2019). Adaptive
        cost-sensitive online classification. IEEE Transactions on Knowledge and Data
        Engineering, 31(2), 214-228.
    [^2]: Wang, J., Zhao, P. and Hoi, S. C. H. (2014). Cost-sensitive online classification.
        IEEE Transactions on Knowledge and Data Engineering, 26(10), 2425-2438.
    [^3]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    _derived_attributes = ("_learning_rate", "_gamma", "_positive_weight")

    def __init__(
        self,
        learning_rate: float = 1.0,
        gamma: float = 1.0,
        metric: str = "sum",
        positive_weight: float = 0.5,
        loss: str = "II",
        diagonal: bool = False,
        intercept: bool = False,
    ):
        self.learning_rate = learning_rate
        self.gamma = gamma
        self.metric = metric
        self.positive_weight = positive_weight
        self.loss = loss
        self.diagonal = diagonal
        self.intercept = intercept
        self._learning_rate = check_real("learning_rate", learning_rate, low=0.0, low_open=True)
        self._gamma = check_real("gamma", gamma, low=0.0, low_open=True)
        self._positive_weight = check_real(
            "positive_weight", positive_weight, low=0.0, high=1.0, low_open=True
        )
        if self._positive_weight == 1.0:
            raise ValueError("positive_weight must be < 1 (the negative weight is 1 - it)")
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
        if loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
        self._setup(1.0, diagonal, intercept)  # Sigma_0 = I
        self._n_positive: float = 0  # T_p
        self._n_negative: float = 0  # T_n

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"diagonal": True, "intercept": True, "loss": "I"}
        yield {"metric": "cost", "positive_weight": 0.8, "learning_rate": 0.5, "gamma": 2.0}

    @property
    def rho(self) -> float:
        """The cost ratio rho of positive samples (with the counts seen so far)."""
        with self._lock:
            return self._rho()

    def _rho(self) -> float:
        weight_negative = 1.0 - self._positive_weight
        if self.metric == "cost":
            return self._positive_weight / weight_negative  # rho = c_p / c_n
        if self._n_positive == 0:
            return 0.0 if self._n_negative == 0 else float("inf")
        # rho = eta_p T_n / (eta_n T_p)
        return self._positive_weight * self._n_negative / (weight_negative * self._n_positive)

    def _update(self, vector: np.ndarray, sign: float, weight: float) -> None:
        if sign > 0:
            self._n_positive += weight  # T_p (a sample of weight w counts w times)
        else:
            self._n_negative += weight  # T_n
        rho_y = self._rho() if sign > 0 else 1.0
        margin = sign * float(self._mean @ vector)  # y w.x
        if self.loss == "II":
            if rho_y <= 0.0 or margin >= 1.0:  # rho_y max(0, 1 - y w.x) = 0
                return
            step = weight * self._learning_rate * rho_y  # -w eta g = w eta rho_y y x
        else:
            if margin >= rho_y:  # max(0, rho_y - y w.x) = 0
                return
            step = weight * self._learning_rate  # -w eta g = w eta y x
        sigma_x = self._sigma_x(vector)  # Sigma x
        v = float(vector @ sigma_x)  # v = x^T Sigma x
        self._shrink(sigma_x, 1.0 / (self._gamma + v))  # Sigma - Sigma x x^T Sigma / (gamma + v)
        self._mean += (step * sign) * self._sigma_x(vector)  # w <- w + eta rho_y y Sigma_new x
