"""RLSRegressor(standardized_penalty=True) is the batch StandardScaler + Ridge of every prefix.

The reference below is written in plain numpy, independently of the package: it standardises
the prefix with its weighted population moments (two passes: the mean, then the centred
variance), fits the weighted ridge with a free intercept on the standardised features by least
squares (stacked rows, no normal equations), and maps the weights back to the raw features
(``w_j = w'_j / s_j``, ``b = b' - sum_j w_j mu_j``). Without an intercept it is scikit-learn's
``StandardScaler(with_mean=False)`` + ``Ridge(fit_intercept=False)``: scaled, not centred.
"""

from __future__ import annotations

import math
import pickle
import typing

import numpy as np
import pandas as pd
import pytest
from helpers import is_missing
from reference import RidgeReference
from river import datasets

from river_nrrls import RLSRegressor

RTOL = 1e-8
EPS = float(np.finfo(float).eps)


class StandardizedReference:
    """Batch ``StandardScaler + Ridge(l2 lambda^t)`` of a prefix, sample masses
    ``m_i = w_i lambda^(t - 1 - i)`` (weight-0 samples left out), features in order of first
    appearance, absent or ``None`` values 0. A variance within the rounding error of the
    model's sums (``16 t eps`` times the second moment) is 0, and a zero variance gets the scale
    1 (scikit-learn's rule): the feature's standardised column is 0."""

    def __init__(
        self,
        rows: typing.Sequence[dict],
        targets: typing.Sequence[float],
        weights: typing.Sequence[float] | None = None,
        *,
        l2: float = 1.0,
        forgetting: float = 1.0,
        intercept: bool = True,
    ):
        weights = [1.0] * len(rows) if weights is None else list(weights)
        kept = [i for i, weight in enumerate(weights) if weight != 0]
        rows = [rows[i] for i in kept]
        self.features = list(
            dict.fromkeys(k for row in rows for k, v in row.items() if not is_missing(v))
        )
        X = np.array(
            [[self._value(row, name) for name in self.features] for row in rows], dtype=float
        ).reshape(len(rows), len(self.features))
        y = np.array([float(targets[i]) for i in kept])
        t = len(rows)
        masses = np.array([float(weights[i]) for i in kept])
        masses *= forgetting ** np.arange(t - 1, -1, -1, dtype=float)
        total = masses.sum()
        self.means = masses @ X / total  # mu_j
        variances = masses @ (X - self.means) ** 2 / total  # s_j^2, ddof 0
        second = masses @ (X * X) / total
        variances = np.where(variances <= 16 * max(t, 1) * EPS * second, 0.0, variances)
        self.scales = np.where(variances > 0.0, np.sqrt(variances), 1.0)
        self.intercept = intercept
        Z = (X - self.means) / self.scales if intercept else X / self.scales
        if intercept:
            Z = np.column_stack((np.ones(t), Z))
        penalty = np.full(Z.shape[1], l2 * forgetting**t)
        if intercept:
            penalty[0] = 0.0
        roots = np.sqrt(masses)
        stacked = np.vstack((Z * roots[:, None], np.diag(np.sqrt(penalty))))
        right = np.concatenate((y * roots, np.zeros(Z.shape[1])))
        self.scaled = np.linalg.lstsq(stacked, right, rcond=None)[0]  # [b', w'] (z space)
        weights_raw = self.scaled[1:] / self.scales if intercept else self.scaled / self.scales
        bias = self.scaled[0] - weights_raw @ self.means if intercept else 0.0
        self.coefficients = np.concatenate(([bias] if intercept else [], weights_raw))
        self.X, self.y, self.masses = X, y, masses
        self.penalty = np.concatenate(([0.0] if intercept else [], l2 * forgetting**t * variances))
        self.penalty[int(intercept) :][variances == 0.0] = l2 * forgetting**t

    @staticmethod
    def _value(row: dict, name) -> float:
        value = row.get(name)
        return 0.0 if is_missing(value) else float(value)

    def predict(self, row: dict) -> float:
        """The batch pipeline's prediction: standardise ``row`` with the prefix's moments,
        then the ridge of the standardised features (unseen features are dropped)."""
        x = np.array([self._value(row, name) for name in self.features])
        z = (x - self.means) / self.scales if self.intercept else x / self.scales
        return float(self.scaled @ np.concatenate(([1.0] if self.intercept else [], z)))

    def model_vector(self, model) -> np.ndarray:
        weights = model.weights
        vector = [weights.get(name, 0.0) for name in self.features]
        return np.array(([model.bias] if self.intercept else []) + vector)

    def design(self) -> np.ndarray:
        return np.column_stack((np.ones(len(self.X)), self.X)) if self.intercept else self.X

    def relative_error(self, model) -> float:
        difference = np.linalg.norm(self.model_vector(model) - self.coefficients)
        return difference / max(np.linalg.norm(self.coefficients), 1e-300)

    def fitted_error(self, model) -> float:
        """The relative error of the fitted values (well conditioned when the coefficients
        are not: a date of ~7e5 beside the intercept)."""
        roots = np.sqrt(self.masses)[:, None]
        design = roots * self.design()
        difference = np.linalg.norm(design @ (self.model_vector(model) - self.coefficients))
        return difference / max(np.linalg.norm(design @ self.coefficients), 1e-300)


def _stream(n: int, seed: int = 0):
    """Features in very different units that emerge (a new one every 12 samples) or are absent,
    ``None`` values, a constant feature, one constant from its late first appearance on (zeros
    before: not constant), weights with zeros."""
    rng = np.random.default_rng(seed)
    units = 10.0 ** rng.uniform(-3, 3, size=8)
    coefficients = rng.normal(size=8) / units
    rows, targets, weights = [], [], []
    for i in range(n):
        row: dict = {}
        for j in range(min(1 + i // 12, 8)):
            if rng.random() < 0.25:
                continue
            row[f"f{j}"] = float(rng.normal(loc=j, scale=1.0) * units[j])
        if i % 9 == 4 and row:
            row[next(iter(row))] = None  # missing: zero
        row["constant"] = 3.7
        if i >= 30:
            row["late"] = 2.0  # 0 before it emerges: not constant
        y = sum(coefficients[int(k[1:])] * (v or 0.0) for k, v in row.items() if k[0] == "f")
        rows.append(row)
        targets.append(float(y + rng.normal() + 5.0))
        weights.append(0.0 if i % 13 == 6 else float(rng.uniform(0.2, 3.0)))
    return rows, targets, weights


SETTINGS = [
    {},
    {"forgetting": 0.95},
    {"l2": 30.0},
    {"intercept": False, "l2": 0.3},
    {"intercept": False, "forgetting": 0.9, "l2": 4.0},
]


def _model(**params) -> RLSRegressor:
    return RLSRegressor(standardized_penalty=True, **params)


@pytest.mark.parametrize("params", SETTINGS)
@pytest.mark.parametrize("weighted", [False, True])
def test_learn_one_is_the_batch_scaler_and_ridge_after_every_prefix(params, weighted):
    rows, targets, weights = _stream(160, seed=len(params) + 3 * weighted)
    model = _model(**params)
    for i, (x, y, w) in enumerate(zip(rows, targets, weights)):
        model.learn_one(x, y, w=w if weighted else 1.0)
        ref = StandardizedReference(
            rows[: i + 1], targets[: i + 1], weights[: i + 1] if weighted else None, **params
        )
        assert ref.relative_error(model) <= RTOL, i
        probe = rows[(7 * i) % (i + 1)]
        assert model.predict_one(probe) == pytest.approx(ref.predict(probe), rel=1e-9, abs=1e-9)
    # centred, the constant feature's standardised column is 0: its raw weight is 0
    # (scaled only, without an intercept, it is 3.7 and acts as one)
    if model.intercept:
        assert abs(model.weights["constant"]) <= 1e-9 * np.abs(ref.coefficients).max()


@pytest.mark.parametrize("name", ["TrumpApproval", "ChickWeights"])
@pytest.mark.parametrize("forgetting", [1.0, 0.98])
def test_bundled_regression_sets_after_every_prefix(name, forgetting):
    """TrumpApproval's ordinal_date (~7.4e5, varying by a few days at first) beside the free
    intercept makes the raw coefficients ill conditioned (see tests/test_rls.py), and its
    variance S_jj / N - mu^2 would cancel to nothing from the sums: the model reads it off its
    QR factor. The fitted values (well conditioned) must agree to 1e-10, the coefficients to
    1e-7."""
    samples = list(getattr(datasets, name)())
    rows = [x for x, _ in samples]
    targets = [float(y) for _, y in samples]
    model = _model(forgetting=forgetting)
    for i, (x, y) in enumerate(zip(rows, targets)):
        model.learn_one(x, y)
        if i % 3 == 0 or i == len(rows) - 1:
            ref = StandardizedReference(rows[: i + 1], targets[: i + 1], forgetting=forgetting)
            assert ref.fitted_error(model) <= 1e-10, (name, i)
            assert ref.relative_error(model) <= 1e-7, (name, i)
            assert model.predict_one(x) == pytest.approx(ref.predict(x), rel=1e-8)


def test_the_penalty_is_scale_free():
    """A feature expressed in other units (times 1000) gets its weight divided by 1000 and
    every prediction stays; the plain ridge penalty is not scale free."""
    rows, targets, _ = _stream(120, seed=5)

    def rescaled(row: dict) -> dict:
        return {k: (v * 1000.0 if k == "f1" and v is not None else v) for k, v in row.items()}

    for standardized in (True, False):
        model = RLSRegressor(l2=30.0, standardized_penalty=standardized)
        other = RLSRegressor(l2=30.0, standardized_penalty=standardized)
        for x, y in zip(rows, targets):
            model.learn_one(x, y)
            other.learn_one(rescaled(x), y)
        same = model.predict_one(rows[50]) == pytest.approx(
            other.predict_one(rescaled(rows[50])), rel=1e-9
        )
        assert same == standardized
    assert other.weights["f1"] != pytest.approx(model.weights["f1"] / 1000.0, rel=1e-6)


@pytest.mark.parametrize("params", [{}, {"forgetting": 0.97}, {"intercept": False}])
def test_learn_many_equals_the_batch(params):
    rows, targets, weights = _stream(150, seed=8)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    model, one = _model(**params), _model(**params)
    for x, y, w in zip(rows, targets, weights):
        one.learn_one(x, y, w=w)
    for start, stop in [(0, 1), (1, 50), (50, 51), (51, 150)]:
        frame = pd.DataFrame(
            [{k: (np.nan if v is None else v) for k, v in r.items()} for r in rows[start:stop]],
            columns=columns,
            dtype=float,
        ).dropna(axis=1, how="all")
        model.learn_many(frame, pd.Series(targets[start:stop]), w=pd.Series(weights[start:stop]))
        ref = StandardizedReference(rows[:stop], targets[:stop], weights[:stop], **params)
        assert ref.relative_error(model) <= RTOL, stop
    assert ref.relative_error(one) <= RTOL
    assert model.noise_variance == pytest.approx(one.noise_variance, rel=1e-8)


def test_merge_is_the_model_of_both_streams():
    rows, targets, weights = _stream(200, seed=2)
    models = []
    for start, stop in [(0, 60), (60, 61), (61, 200)]:
        model = _model(l2=5.0)
        for x, y, w in zip(rows[start:stop], targets[start:stop], weights[start:stop]):
            model.learn_one(x, y, w=w)
        models.append(model)
    before = [pickle.dumps(model) for model in models]
    merged = models[0] + models[1] + models[2]
    assert [pickle.dumps(model) for model in models] == before
    ref = StandardizedReference(rows, targets, weights, l2=5.0)
    assert ref.relative_error(merged) <= RTOL
    merged.learn_one(rows[0], targets[0])  # keeps learning online
    ref = StandardizedReference(rows + rows[:1], targets + targets[:1], weights + [1.0], l2=5.0)
    assert ref.relative_error(merged) <= RTOL
    plain = RLSRegressor(l2=5.0)
    plain.learn_one(rows[0], targets[0])
    state = pickle.dumps(merged)
    with pytest.raises(ValueError, match="standardized_penalty"):
        merged += plain
    assert pickle.dumps(merged) == state


def test_pickle_and_clone_keep_the_option():
    rows, targets, weights = _stream(90, seed=4)
    model = _model(forgetting=0.97)
    for x, y, w in zip(rows[:60], targets[:60], weights[:60]):
        model.learn_one(x, y, w=w)
    copy = pickle.loads(pickle.dumps(model))
    for x, y, w in zip(rows[60:], targets[60:], weights[60:]):
        model.learn_one(x, y, w=w)
        copy.learn_one(x, y, w=w)
    assert copy.predict_one(rows[3]) == model.predict_one(rows[3])
    ref = StandardizedReference(rows, targets, weights, forgetting=0.97)
    assert ref.relative_error(copy) <= RTOL
    fresh = model.clone()
    assert fresh.standardized_penalty and fresh.weights == {}


def test_predictive_distribution_uses_the_standardized_penalty():
    rows, targets, _ = _stream(100, seed=6)
    model = _model(l2=3.0)
    for x, y in zip(rows, targets):
        model.learn_one(x, y)
    ref = StandardizedReference(rows, targets, l2=3.0)
    design = ref.design()
    residuals = ref.y - design @ ref.coefficients
    noise = float(residuals @ residuals) / (len(ref.y) - design.shape[1])
    assert model.noise_variance == pytest.approx(noise, rel=1e-7)
    matrix = design.T @ design + np.diag(ref.penalty)  # X^T X + l2 diag(0, s_j^2)
    probe = {"f0": 0.5, "f2": -2.0, "new": 3.0}
    vector = np.array([1.0] + [probe.get(name, 0.0) for name in ref.features])
    spread = float(vector @ np.linalg.solve(matrix, vector)) + 3.0**2 / 3.0  # unseen: 1 / l2
    dist = model.predict_one(probe, with_dist=True)
    assert dist.mu == pytest.approx(ref.predict(probe), rel=1e-9)
    assert dist.sigma**2 == pytest.approx(noise * (1 + spread), rel=1e-7)
    assert math.isinf(_model().predict_one({"a": 1.0}, with_dist=True).sigma)


def test_debug_one_adds_up_to_the_prediction():
    rows, targets, _ = _stream(60, seed=7)
    model = _model()
    for x, y in zip(rows, targets):
        model.learn_one(x, y)
    probe = {"f0": 1.5, "f2": -0.5, "constant": 3.7}
    lines = model.debug_one(probe, decimals=12).splitlines()[1:]
    total = sum(float(line.split()[-1]) for line in lines)
    assert total == pytest.approx(model.predict_one(probe), rel=1e-9, abs=1e-9)


def test_the_option_set_after_learning_takes_effect():
    rows, targets, weights = _stream(80, seed=9)
    model = RLSRegressor(l2=2.0)
    for x, y, w in zip(rows, targets, weights):
        model.learn_one(x, y, w=w)
    model.standardized_penalty = True
    assert StandardizedReference(rows, targets, weights, l2=2.0).relative_error(model) <= RTOL
    state = pickle.dumps(model)
    with pytest.raises(ValueError, match="penalize_intercept"):
        model.penalize_intercept = True
    assert pickle.dumps(model) == state
    model.standardized_penalty = False
    ref = RidgeReference(rows, targets, sample_weights=weights, l2=2.0)
    assert ref.relative_error(model) <= RTOL


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"penalize_intercept": True}, ValueError, "penalize_intercept"),
        ({"standardized_penalty": 1}, TypeError, "standardized_penalty"),
    ],
)
def test_invalid_combinations_are_refused(params, error, message):
    with pytest.raises(error, match=message):
        RLSRegressor(**{"standardized_penalty": True, **params})


BAD_CALLS = [
    (lambda m: m.learn_one({"a": "x"}, 1.0), TypeError, "feature 'a'"),
    (lambda m: m.learn_one({"a": 1.0}, math.inf), ValueError, "y must be finite"),
    (lambda m: m.learn_one({"a": 1.0}, 1.0, w=-1.0), ValueError, "w must be"),
    (lambda m: m.learn_one({"new": 1e200}, 1.0), ValueError, "feature 'new'"),
    (
        lambda m: m.learn_many(pd.DataFrame({"a": [1.0, 2.0]}), pd.Series([1.0, math.nan])),
        ValueError,
        "row 1",
    ),
    (
        lambda m: m.learn_many(pd.DataFrame({"z": [1e200, 2.0]}), pd.Series([1.0, 2.0])),
        ValueError,
        "feature 'z'",
    ),
]


@pytest.mark.parametrize("forgetting", [1.0, 0.9])
@pytest.mark.parametrize(("call", "error", "message"), BAD_CALLS)
def test_refused_calls_leave_the_model_unchanged(call, error, message, forgetting):
    model = _model(forgetting=forgetting)
    for i in range(20):
        model.learn_one({"a": float(i), "b": float(i % 3)}, float(i))
    before = pickle.dumps(model)
    with pytest.raises(error, match=message):
        call(model)
    assert pickle.dumps(model) == before
