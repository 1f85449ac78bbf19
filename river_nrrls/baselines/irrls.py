"""IR-RLS: iteratively reweighted recursive least squares (Jang, Tan, Toh and Teoh 2017)."""

from __future__ import annotations

import typing

import numpy as np
from scipy.linalg import blas

from ._least_squares import OneVsRestLeastSquares, grow_inverse, inverse_step

__all__ = ["IRRLS"]


class IRRLS(OneVsRestLeastSquares):
    """Iteratively reweighted recursive least squares (IR-RLS): exact TER, O(n d^2) per sample.

    Every arrival changes the class weights of the total-error-rate (TER) least squares to
    ``1/n^c``, so IR-RLS stores *all* the samples and, on each arrival, re-runs the weighted RLS
    recursion ("iterative inversion") from ``P = I / b`` over every stored sample, each with the
    current weight of its class (algorithms page, "IR-RLS", the assumed form of Jang et al. 2017):

        P <- P - gamma_i P x_i x_i^T P / (1 + gamma_i x_i^T P x_i),   gamma_i = 1 / n^{c_i}
        w_k = P sum_i gamma_i t_ki x_i

    with targets ``t_ki = tau + eta`` for the samples of class ``k`` and ``tau - eta`` for the
    others. After every sample the weights are therefore exactly those of `NRRLS`
    (batch TER), at a cost of Theta(n_t d^2) per arrival and O(n d + d^2) memory. It is the
    paper's "iterative" baseline, kept for the running-time comparison: `NRRLS` computes
    the same solution at Theta(d^2) per sample.

    Multiclass problems are one-vs-rest like `NRRLS`: the system of class ``k`` weighs
    its class by ``1/n^k`` and the rest by ``1/n^rest``. With two classes both systems share one
    recursion; with more, each class needs its own pass over the stored samples.

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
    of ``2 f_k / eta``. New features are zero in the stored samples, which is exact. A ``None``
    value is missing (zero). Bad values raise an error naming the feature and leave the model
    unchanged.

    Memory grows with the number of samples by design, so river's
    ``check_bounded_memory_growth`` is skipped for this estimator.

    Examples
    --------

    Pima's file lists the classes in blocks, which flatters any learner that tracks the most
    recent class, so the examples shuffle it once (deterministically).

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import IRRLS, NRRLS, datasets

    >>> pima = list(stream.shuffle(datasets.Pima(), buffer_size=768, seed=42))
    >>> model = IRRLS()
    >>> metric = metrics.GeometricMean() + metrics.BalancedAccuracy()
    >>> evaluate.progressive_val_score(pima, model, metric)
    GeometricMean: 73.07%
    BalancedAccuracy: 73.19%

    The same weights as NR-RLS, at a much higher cost:

    >>> nrrls = NRRLS()
    >>> for x, y in pima:
    ...     nrrls.learn_one(x, y)
    >>> round(model.weights[True]['glucose'], 6) == round(nrrls.weights[True]['glucose'], 6)
    True

    References
    ----------
    [^1]: Jang, S.-I., Tan, G.-C., Toh, K.-A. and Teoh, A. B. J. (2017). Online heterogeneous
        face recognition based on total error rate minimization. IEEE Transactions on Systems,
        Man, and Cybernetics: Systems.
    [^2]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    def __init__(
        self, l2: float = 1e-4, tau: float = 0.0, eta: float = 1.0, intercept: bool = True
    ):
        super().__init__(l2=l2, tau=tau, eta=eta, intercept=intercept)
        self._samples = np.zeros((0, self._index.size))  # stored x_i, one row each (capacity)
        self._sample_slots = np.zeros(0, dtype=np.intp)  # class slot of each stored sample
        self._sample_masses = np.ones(0)  # w_i of each stored sample
        self._n_stored = 0
        self._solution = np.zeros((0, self._index.size))  # one row per class

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"l2": 0.1, "tau": 0.5, "eta": 2.0, "intercept": False}

    def _unit_test_skips(self):
        # IR-RLS stores every sample (the paper's O(n)-memory algorithm, kept only as a running
        # time baseline), so its memory grows with the stream by design.
        return {"check_bounded_memory_growth"}

    def _store(self, vector: np.ndarray, slot: int, weight: float) -> None:
        capacity, dim = self._samples.shape
        if self._n_stored == capacity or len(vector) > dim:
            if self._n_stored == capacity:
                capacity = max(2 * capacity, 16)
            grown = np.zeros((capacity, len(vector)))
            grown[: self._n_stored, :dim] = self._samples[: self._n_stored]
            self._samples = grown
            slots = np.zeros(len(grown), dtype=np.intp)
            slots[: self._n_stored] = self._sample_slots[: self._n_stored]
            self._sample_slots = slots
            masses = np.ones(len(grown))
            masses[: self._n_stored] = self._sample_masses[: self._n_stored]
            self._sample_masses = masses
        self._samples[self._n_stored] = vector
        self._sample_slots[self._n_stored] = slot
        self._sample_masses[self._n_stored] = weight
        self._n_stored += 1

    def _learn(
        self, label: typing.Hashable, vector: np.ndarray, new_features: list, weight: float
    ) -> None:
        """A sample of mass ``w > 0``, exactly as learning it ``w`` times: its class's count
        ``n^c`` grows by ``w`` and the sample weighs ``w / n^c``."""
        self._index.add(new_features)
        slot = self._slots.get(label)
        if slot is None:
            slot = self._add_class(label)
        self._counts[slot] += weight  # n^c += w: every stored sample i of class c weighs w_i/n^c
        self._store(vector, slot, weight)
        self._solution = self._rerun()

    def _rerun(self) -> np.ndarray:
        """Re-run the weighted recursion over every stored sample, once per distinct system."""
        dim = self._index.size
        samples = self._samples[: self._n_stored, :dim]
        slots = self._sample_slots[: self._n_stored]
        masses = self._sample_masses[: self._n_stored]
        counts = np.asarray(self._counts, dtype=float)
        total = counts.sum()
        classes = np.arange(len(counts))
        # System k weighs class k by 1/n^k and the rest by 1/n^rest; systems with the same
        # weights (always the case for two classes) share one pass over the samples.
        passes: dict[tuple[float, ...], list[int]] = {}
        for k, count in enumerate(counts):
            inverse_weights = np.where(classes == k, count, total - count)  # 1/gamma per class
            passes.setdefault(tuple(inverse_weights.tolist()), []).append(k)
        solution = np.zeros((len(counts), dim))
        for inverse_weights, systems in passes.items():
            # 1/gamma_i = n^{c_i} / w_i
            sample_inverse_weights = np.asarray(inverse_weights)[slots] / masses
            targets = np.where(  # t_ki: tau + eta for system k's own class, tau - eta otherwise
                slots[:, None] == np.asarray(systems)[None, :],
                self._tau + self._eta,
                self._tau - self._eta,
            )
            if not dim:
                continue
            inverse = grow_inverse(np.zeros((0, 0), order="F"), dim, self._l2)  # P_0 = I / b
            for sample, inverse_weight in zip(samples, sample_inverse_weights.tolist()):
                inverse, _, _ = inverse_step(inverse, sample, inverse_weight)
            # r_k = sum_i gamma_i t_ki x_i, then w_k = P r_k
            rhs = samples.T @ (targets / sample_inverse_weights[:, None])
            solution[systems] = blas.dsymm(1.0, inverse, rhs, lower=0).T
        return solution

    def _weight_matrix(self) -> np.ndarray:
        return self._solution
