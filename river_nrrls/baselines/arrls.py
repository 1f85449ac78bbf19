"""AR-RLS: approximately reweighted recursive least squares (Kim, Toh, Teoh, Eng and Yau 2013)."""

from __future__ import annotations

import typing

import numpy as np

from ._least_squares import OneVsRestLeastSquares, grow_inverse, inverse_step

__all__ = ["ARRLS"]


class ARRLS(OneVsRestLeastSquares):
    """Approximately reweighted recursive least squares (AR-RLS), a class-rebalancing RLS.

    Weighted RLS in which a sample enters with the *current* weight of its class, ``1/k`` for the
    k-th sample of the class, and keeps that weight forever (algorithms page, "AR-RLS", the assumed
    form of Kim et al. 2013). After every sample the weights are exactly the weighted ridge

        w_k = argmin_w  sum_i gamma_i (t_ki - w.x_i)^2 + b |w|^2,    gamma_i = 1 / r_i

    where ``r_i`` is the rank of sample ``i`` within its class (1 for the first), with targets
    ``t_ki = tau + eta`` when sample ``i`` is of class ``k`` and ``tau - eta`` otherwise. This
    only approximates the total-error-rate (TER) solution that `NRRLS`
    computes: a class carries the harmonic total ``H(n^c) ~ ln n^c + 0.58`` rather than 1, so the
    rebalancing is partial.

    One recursive inverse ``P = (sum_i gamma_i x_i x_i^T + b I)^{-1}`` is shared by every class
    (the sample weights do not depend on the class whose system is solved), so a sample costs
    Theta(d^2) whatever the number of classes. Multiclass problems are one-vs-rest like
    `NRRLS`; with three classes or more, a "rest" sample keeps the harmonic weight of its
    own class (it is not re-ranked within the rest).

    Parameters
    ----------
    l2
        Ridge constant, the paper's b (> 0; the recursion starts from ``P = I / b``). It
        regularises the intercept too.
    tau
        Threshold: the class targets are ``tau - eta`` (rest) and ``tau + eta`` (class).
    eta
        Half the distance between the targets (> 0).
    intercept
        Add a constant feature 1, regularised by l2 like the others.

    Attributes
    ----------
    weights
        ``{label: {feature: weight}}`` of every seen class's one-vs-rest system.
    intercepts
        ``{label: intercept}`` (0 when ``intercept=False``).

    Notes
    -----
    ``decision_one``, ``predict_one`` and ``predict_proba_one`` follow `NRRLS`: raw
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
    {False: 500.0, True: 268.0}

    References
    ----------
    [^1]: Kim, Y., Toh, K.-A., Teoh, A. B. J., Eng, H.-L. and Yau, W.-Y. (2013). An online
        learning network for biometric scores fusion. Neurocomputing, 102, 65-77.
    [^2]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    def __init__(
        self, l2: float = 1e-4, tau: float = 0.0, eta: float = 1.0, intercept: bool = True
    ):
        super().__init__(l2=l2, tau=tau, eta=eta, intercept=intercept)
        self._inverse = grow_inverse(np.zeros((0, 0), order="F"), self._index.size, self._l2)
        # Row 0: the weighted ridge with target 1 for every sample, the start of a new class.
        self._rows = np.zeros((1, self._index.size))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"l2": 0.1, "tau": 0.5, "eta": 2.0, "intercept": False}

    def _learn(
        self, label: typing.Hashable, vector: np.ndarray, new_features: list, weight: float
    ) -> None:
        """A sample of mass ``w > 0`` adds ``w`` to its class's count ``n^c`` and enters the
        recursion with weight ``gamma = w / n^c``."""
        if new_features:
            self._index.add(new_features)
            self._inverse = grow_inverse(self._inverse, self._index.size, self._l2)
            self._rows = np.pad(self._rows, ((0, 0), (0, len(new_features))))
        slot = self._slots.get(label)
        if slot is None:
            slot = self._add_class(label)
            # So far every sample was "rest" for the new class: target tau - eta throughout.
            self._rows = np.vstack([self._rows, (self._tau - self._eta) * self._rows[0]])
        self._counts[slot] += weight  # n^c += w, the new sample's weight is gamma = w / n^c
        targets = np.full(len(self._rows), self._tau - self._eta)
        targets[0] = 1.0
        targets[slot + 1] = self._tau + self._eta
        if len(vector):
            errors = targets - self._rows @ vector  # a-priori errors, target - w^T x
            self._inverse, px, denominator = inverse_step(
                self._inverse,
                vector,
                float(self._counts[slot]) / weight,  # 1 / gamma
            )
            self._rows += np.outer(errors, px / denominator)  # w <- w + g (target - w^T x)

    def _weight_matrix(self) -> np.ndarray:
        return self._rows[1:]
