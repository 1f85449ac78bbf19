"""Plain-numpy batch references for the tests (no code shared with ``river_nrrls``).

Batch TER (total error rate) least squares, one-vs-rest
-------------------------------------------------------
For every class ``k`` seen in the stream, with ``X`` the matrix of all samples seen so far (a
leading column of ones when ``intercept=True``; a feature absent from a sample, or ``None``, is 0
there, so emerging features are zero in the past rows):

    w_k = (X^T W X + b I)^{-1} X^T W t_k

* ``t_k[i] = tau + eta`` if sample ``i`` is of class ``k``, ``tau - eta`` otherwise;
* mass of sample ``i`` of class ``c``: ``w_i * lambda ** (number of LATER arrivals of class c)``
  (1 for every sample when ``lambda = forgetting = 1`` and there are no sample weights ``w_i``);
  a sample of weight 0 is not in the stream at all (no class, no feature, no arrival);
* ``n_k`` = total mass of class ``k``, ``n_rest`` = total mass of the other classes;
* ``W[i, i] = mass_i / n_k`` for the rows of class ``k`` and ``mass_i / n_rest`` for the others
  (``reweight=True``, TER); ``W[i, i] = mass_i`` when ``reweight=False`` (plain ridge). An empty
  side never has rows, so its 0/0 never appears.

The system is solved with ``np.linalg.solve`` (``np.linalg.lstsq``, minimum norm, when
``b = 0``), never by any recursion.

Relative error (the tolerance convention of the tests)
------------------------------------------------------
A model is the matrix ``W`` whose row ``k`` is class ``k``'s vector ``[intercept_k, w_k]`` over the
reference's feature columns. Its error against the reference ``W_ref`` is

    relative_error(W, W_ref) = ||W - W_ref||_F / scale
    scale = max(||W_ref||_F, ||(||r_abs_k|| / ||M_k||_2)_k||),   r_abs_k = |X|^T W |t_k|

The whole model's norm is the scale, so a class whose weights are tiny is measured on the scale
of the model, which is what conditioning gives a least-squares solver. ``M_k = X^T W X + b I`` and
``r_abs_k`` is ``X^T W t_k`` computed on absolute values: the size the solution would have if
nothing cancelled in the right-hand side. When nothing cancels,
``||r_abs_k|| / ||M_k|| = ||M_k w_k|| / ||M_k|| <= ||w_k||`` and the floor is inactive; it only
matters when the exact answer is (nearly) zero by cancellation (e.g. two balanced classes,
``tau = 0`` and empty ``x``), where any solver returns rounding noise of about eps times that
size. A decision ``f_k = w_k . x`` is accepted when

    |f_k - f_ref_k| <= rtol * scale * ||x_tilde||

with ``x_tilde`` the dense probe over the reference's columns (1 in the intercept column), the
bound that a relative weight error ``rtol`` implies by Cauchy-Schwarz.

"""

from __future__ import annotations

import math
import typing

import numpy as np
from helpers import is_missing

__all__ = [
    "TERReference",
    "sample_masses",
    "class_masses",
    "relative_error",
    "model_matrix",
    "assert_model_matches",
    "softmax",
]


def sample_masses(
    labels: typing.Sequence, forgetting: float = 1.0, sample_weights: typing.Sequence | None = None
) -> np.ndarray:
    """Mass of every sample: ``w_i * forgetting ** (later arrivals of the same class)``.

    The samples must all have positive weights (drop the weight-0 ones first).

    """
    weights = np.ones(len(labels)) if sample_weights is None else np.asarray(sample_weights)
    masses = np.empty(len(labels))
    later: dict = {}
    for i in range(len(labels) - 1, -1, -1):
        j = later.get(labels[i], 0)
        masses[i] = weights[i] * forgetting**j
        later[labels[i]] = j + 1
    return masses


def class_masses(
    labels: typing.Sequence, forgetting: float = 1.0, sample_weights: typing.Sequence | None = None
) -> dict:
    """``{label: total mass}``, labels in order of first appearance (weight-0 samples ignored)."""
    if sample_weights is not None:
        kept = [i for i, w in enumerate(sample_weights) if w != 0]
        labels = [labels[i] for i in kept]
        sample_weights = [sample_weights[i] for i in kept]
    totals: dict = {}
    for label, mass in zip(labels, sample_masses(labels, forgetting, sample_weights)):
        totals[label] = totals.get(label, 0.0) + float(mass)
    return totals


class TERReference:
    """Batch TER solution of a whole stream prefix.

    Parameters
    ----------
    rows
        Feature dicts in stream order; ``None`` (or a float NaN) is a missing value.
    labels
        Labels in stream order.
    sample_weights
        The samples' weights ``w_i`` (default 1): a sample of weight ``w`` has ``w`` times the
        mass of a sample of weight 1; one of weight 0 is left out of the stream.

    """

    def __init__(
        self,
        rows: typing.Sequence[dict],
        labels: typing.Sequence,
        *,
        l2: float = 1e-4,
        tau: float = 0.0,
        eta: float = 1.0,
        intercept: bool = True,
        reweight: bool = True,
        forgetting: float = 1.0,
        sample_weights: typing.Sequence[float] | None = None,
    ):
        if sample_weights is not None:  # a sample of weight 0 is not in the stream at all
            kept = [i for i, w in enumerate(sample_weights) if w != 0]
            rows = [rows[i] for i in kept]
            labels = [labels[i] for i in kept]
            sample_weights = [float(sample_weights[i]) for i in kept]
        self.intercept = intercept
        self.labels: list = list(dict.fromkeys(labels))
        features: dict = {}
        for row in rows:
            for name, value in row.items():
                if not is_missing(value):
                    features.setdefault(name, None)
        self.features: list = list(features)
        X = np.array([self.dense(row) for row in rows], dtype=float).reshape(len(rows), self.dim)
        masses = sample_masses(list(labels), forgetting, sample_weights)
        solution = np.zeros((len(self.labels), self.dim))
        floors = np.zeros(len(self.labels))
        self.systems: list[tuple[np.ndarray, np.ndarray]] = []  # (M_k, r_k) of every class
        for k, label in enumerate(self.labels):
            in_k = np.array([y == label for y in labels], dtype=bool)
            if reweight:
                n_k, n_rest = masses[in_k].sum(), masses[~in_k].sum()
                row_weight = np.where(
                    in_k,
                    masses / (n_k if n_k > 0 else 1.0),
                    masses / (n_rest if n_rest > 0 else 1.0),
                )
            else:
                row_weight = masses
            targets = np.where(in_k, tau + eta, tau - eta)
            if self.dim == 0:
                continue
            M = X.T @ (row_weight[:, None] * X) + l2 * np.eye(self.dim)  # X^T W X + b I
            r = X.T @ (row_weight * targets)  # X^T W t
            r_abs = np.abs(X).T @ (row_weight * np.abs(targets))  # |X|^T W |t|
            floors[k] = np.linalg.norm(r_abs) / np.linalg.norm(M, 2)
            self.systems.append((M, r))
            if l2 > 0:
                try:
                    solution[k] = np.linalg.solve(M, r)
                except np.linalg.LinAlgError:  # singular in double precision (b lost in M)
                    solution[k] = np.linalg.lstsq(M, r, rcond=None)[0]
            else:
                solution[k] = np.linalg.lstsq(M, r, rcond=None)[0]
        self.matrix = solution  # one row per class: [intercept?, features...]
        # the error scale (module docstring): the solution's size, floored against cancellation
        self.scale = max(float(np.linalg.norm(solution)), float(np.linalg.norm(floors)))

    @property
    def dim(self) -> int:
        return len(self.features) + (1 if self.intercept else 0)

    def dense(self, x: dict) -> np.ndarray:
        """``x`` over the reference's columns (unknown features dropped, missing = 0)."""
        values = [0.0 if is_missing(x.get(name)) else float(x[name]) for name in self.features]
        if self.intercept:
            values.insert(0, 1.0)
        return np.asarray(values, dtype=float)

    def weights(self) -> dict:
        offset = 1 if self.intercept else 0
        return {
            label: dict(zip(self.features, row[offset:].tolist()))
            for label, row in zip(self.labels, self.matrix)
        }

    def intercepts(self) -> dict:
        return {
            label: float(row[0]) if self.intercept else 0.0
            for label, row in zip(self.labels, self.matrix)
        }

    def decision(self, x: dict) -> dict:
        return dict(zip(self.labels, (self.matrix @ self.dense(x)).tolist()))


def relative_error(matrix: np.ndarray, ref: TERReference) -> float:
    """``||W - W_ref||_F / scale``: ``ref.matrix`` is ``W_ref``; ``matrix`` is laid out like it."""
    difference = float(np.linalg.norm(np.asarray(matrix) - ref.matrix))
    return difference / ref.scale if ref.scale > 0 else difference


def model_matrix(weights: dict, intercepts: dict, ref: TERReference) -> np.ndarray:
    """A model's ``weights``/``intercepts`` laid out like ``ref.matrix`` (absent features = 0)."""
    rows = []
    for label in ref.labels:
        row = [weights[label].get(name, 0.0) for name in ref.features]
        if ref.intercept:
            row.insert(0, intercepts[label])
        rows.append(row)
    return np.asarray(rows, dtype=float).reshape(len(ref.labels), ref.dim)


def assert_model_matches(model, ref: TERReference, probes: typing.Iterable[dict], rtol: float):
    """Weights, intercepts and ``decision_one`` of ``model`` against the batch reference."""
    weights, intercepts = model.weights, model.intercepts
    assert set(weights) == set(ref.labels), (set(weights), ref.labels)
    assert set(intercepts) == set(ref.labels)
    for label in ref.labels:
        assert set(weights[label]) == set(ref.features), (weights[label], ref.features)
        if not ref.intercept:
            assert intercepts[label] == 0.0
    error = relative_error(model_matrix(weights, intercepts, ref), ref)
    assert error <= rtol, f"relative weight error {error:.3g} > {rtol:.1g}"
    for x in probes:
        decision = model.decision_one(x)
        expected = ref.decision(x)
        assert set(decision) == set(expected)
        tolerance = rtol * ref.scale * float(np.linalg.norm(ref.dense(x))) + 1e-300
        for label, value in expected.items():
            assert math.isfinite(decision[label])
            assert abs(decision[label] - value) <= tolerance, (label, decision[label], value)


def softmax(scores: typing.Sequence[float]) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    exps = np.exp(scores - scores.max())
    return exps / exps.sum()
