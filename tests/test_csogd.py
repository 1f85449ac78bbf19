"""CSOGDClassifier against the CSOGD updates written here independently in plain numpy."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import evaluate

from river_nrrls import CSOGDClassifier
from river_nrrls.metrics import MisclassificationCost


def _synthetic(n: int, seed: int, features=("a", "b", "c")) -> list[tuple[dict, bool]]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, len(features)))
    scores = X @ np.linspace(2.0, -1.0, len(features)) + 0.3 * rng.standard_normal(n) - 0.4
    return [(dict(zip(features, map(float, row))), bool(s > 0)) for row, s in zip(X, scores)]


def _stream() -> list[tuple[dict, bool, float | None]]:
    rows = []
    for i, (x, y) in enumerate(_synthetic(80, seed=1, features=("a", "b", "c", "d"))):
        if i < 20:
            x = {k: x[k] for k in ("a", "b")}  # c and d emerge later
        rows.append((x, y, None if i % 4 else 0.5 + i % 5))
    rows[3] = ({}, True, None)
    rows[10] = ({"a": 0.0, "z": 0.0}, False, None)
    rows[30] = ({"a": None, "c": 0.7}, True, 2.0)
    return rows


class Reference:
    """CSOGD (algorithms page, "CSOGD") on dense vectors over a fixed feature list (+ a 1)."""

    def __init__(
        self,
        features,
        learning_rate=0.1,
        loss="II",
        objective="cost",
        cost_pos=1.0,
        cost_neg=1.0,
        eta_pos=0.5,
        intercept=False,
    ):
        self.features = list(features)
        self.lr, self.loss, self.objective = learning_rate, loss, objective
        self.cost_pos, self.cost_neg, self.eta_pos = cost_pos, cost_neg, eta_pos
        self.intercept = intercept
        self.w = np.zeros(len(self.features) + 1)
        self.T_p = self.T_n = 0

    def vector(self, x):
        v = np.zeros(len(self.features) + 1)
        for name, value in x.items():
            if value is not None and name in self.features:
                v[self.features.index(name)] = value
        v[-1] = 1.0 if self.intercept else 0.0
        return v

    def f(self, x):
        return math.fsum(self.w * self.vector(x))

    def learn(self, x, y, c):
        y_t = 1.0 if y else -1.0
        self.T_p += y
        self.T_n += not y
        if self.objective == "cost":
            cost = c if c is not None else (self.cost_pos if y else self.cost_neg)
            rho_y = cost / self.cost_neg
        else:
            rho = self.eta_pos * max(self.T_n, 1) / ((1.0 - self.eta_pos) * self.T_p) if y else 1
            rho_y = rho * (1.0 if c is None else c)
        margin = y_t * self.f(x)
        v = self.vector(x)
        if self.loss == "I" and max(0.0, rho_y - margin) > 0:
            self.w = self.w + self.lr * y_t * v
        elif self.loss == "II" and rho_y * max(0.0, 1.0 - margin) > 0:
            self.w = self.w + self.lr * rho_y * y_t * v


def _assert_matches(model, reference, probes):
    expected = dict(zip(reference.features, reference.w[:-1]))
    for name, value in model.weights.items():
        assert value == pytest.approx(expected[name], rel=1e-12, abs=1e-14), name
    for name, value in expected.items():
        assert model.weights.get(name, 0.0) == pytest.approx(value, rel=1e-12, abs=1e-14)
    assert model.bias == pytest.approx(reference.w[-1], rel=1e-12, abs=1e-14)
    for x in probes:
        f = reference.f(x)
        assert model.decision_one(x) == pytest.approx({True: f, False: -f}, rel=1e-12, abs=1e-14)
        assert model.predict_one(x) is (f >= 0.0)


def _run(stream, **params):
    reference = Reference(sorted({k for x, _, _ in stream for k in x}), **params)
    model = CSOGDClassifier(**params)
    probes = [x for x, _, _ in stream[:3]] + [{"a": 0.5, "d": 0.1}]
    for x, y, c in stream:
        model.learn_one(x, y, w=c)
        reference.learn(x, y, c)
        _assert_matches(model, reference, probes)
    return model


@pytest.mark.parametrize("loss", ["I", "II"])
@pytest.mark.parametrize("objective", ["cost", "sum"])
@pytest.mark.parametrize("intercept", [False, True])
def test_step_by_step_equality_with_the_reference(loss, objective, intercept):
    model = _run(
        _stream(),
        learning_rate=0.3,
        loss=loss,
        objective=objective,
        cost_pos=5.0,
        cost_neg=2.0,
        eta_pos=0.7,
        intercept=intercept,
    )
    assert model.weights


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.dictionaries(
                st.sampled_from(["a", "b", "c"]),
                st.one_of(st.none(), st.floats(-3.0, 3.0, allow_nan=False)),
                max_size=3,
            ),
            st.booleans(),
            st.one_of(st.none(), st.floats(0.0, 10.0, allow_nan=False)),
        ),
        max_size=25,
    ),
    learning_rate=st.floats(1e-3, 2.0),
    loss=st.sampled_from(["I", "II"]),
    objective=st.sampled_from(["cost", "sum"]),
    cost_pos=st.floats(0.1, 10.0),
    eta_pos=st.floats(0.05, 0.95),
    intercept=st.booleans(),
)
def test_random_streams_follow_the_reference(
    rows, learning_rate, loss, objective, cost_pos, eta_pos, intercept
):
    _run(
        rows,
        learning_rate=learning_rate,
        loss=loss,
        objective=objective,
        cost_pos=cost_pos,
        eta_pos=eta_pos,
        intercept=intercept,
    )


def test_type_ii_steps_by_hand():
    model = CSOGDClassifier(learning_rate=0.5, cost_pos=4.0, cost_neg=2.0)
    model.learn_one({"a": 1.0}, True)  # rho_+ = 2: w = 0.5 * 2 * 1
    assert model.weights == pytest.approx({"a": 1.0})
    model.learn_one({"a": 1.0}, True)  # margin 1: no loss, no step
    assert model.weights == pytest.approx({"a": 1.0})
    model.learn_one({"a": 1.0, "b": 1.0}, False)  # margin -1: w -= 0.5 * 1 * x
    assert model.weights == pytest.approx({"a": 0.5, "b": -0.5})


def test_the_running_class_ratio_of_the_sum_objective():
    model = CSOGDClassifier(learning_rate=1.0, objective="sum", eta_pos=0.5)
    for _ in range(3):
        model.learn_one({"b": 1.0}, False)  # three negatives
    model.learn_one({"a": 1.0}, True)  # rho = T_n / T_p = 3
    assert model.weights["a"] == pytest.approx(3.0)
    model.learn_one({"c": 1.0}, True)  # rho = 3 / 2
    assert model.weights["c"] == pytest.approx(1.5)


def test_progressive_val_score_passes_the_per_sample_costs():
    data = _synthetic(300, seed=2)
    weighted = [(x, y, {"w": 5.0 if y else 1.0}) for x, y in data]
    by_stream = CSOGDClassifier(learning_rate=0.2)
    evaluate.progressive_val_score(weighted, by_stream, MisclassificationCost(5.0, 1.0))
    by_class = CSOGDClassifier(learning_rate=0.2, cost_pos=5.0)
    evaluate.progressive_val_score(data, by_class, MisclassificationCost(5.0, 1.0))
    unweighted = CSOGDClassifier(learning_rate=0.2)
    evaluate.progressive_val_score(data, unweighted, MisclassificationCost(5.0, 1.0))
    assert by_stream.weights == by_class.weights
    assert by_stream.weights != unweighted.weights


def test_the_order_of_the_features_does_not_matter():
    first, second = CSOGDClassifier(intercept=True), CSOGDClassifier(intercept=True)
    for x, y, c in _stream():
        first.learn_one(x, y, w=c)
        second.learn_one(dict(reversed(list(x.items()))), y, w=c)
        assert first.predict_proba_one(x) == second.predict_proba_one(dict(reversed(x.items())))
    assert first.weights == second.weights


def test_outputs_before_and_after_learning():
    model = CSOGDClassifier()
    assert model.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}
    assert model.predict_one({"a": 1.0}) is True
    for x, y, c in _stream():
        model.learn_one(x, y, w=c)
    for x, _ in _synthetic(20, seed=3):
        f = model.decision_one(x)[True]
        proba = model.predict_proba_one(x)
        assert list(proba) == [False, True]
        assert proba[True] == pytest.approx(1.0 / (1.0 + math.exp(-f)))
        assert model.predict_one(x) is (proba[True] >= 0.5)


def _fitted():
    model = CSOGDClassifier(objective="sum", intercept=True)
    for x, y, c in _stream()[:30]:
        model.learn_one(x, y, w=c)
    return model


@pytest.mark.parametrize(
    ("x", "y", "w", "error", "culprit"),
    [
        ({"a": float("nan")}, True, None, ValueError, "'a'"),
        ({"a": "x"}, True, None, TypeError, "'a'"),
        ({"a": [1.0]}, False, None, TypeError, "'a'"),
        ({"a": 1.0}, "yes", None, ValueError, "label"),
        ({"a": 1.0}, 2, None, ValueError, "label"),
        ({"a": 1.0}, None, None, ValueError, "label"),
        ({"a": 1.0}, True, -1.0, ValueError, "w"),
        ({"a": 1.0}, True, float("nan"), ValueError, "w"),
        ({"a": 1.0}, True, "2", TypeError, "w"),
    ],
)
def test_bad_input_raises_and_leaves_the_model_unchanged(x, y, w, error, culprit):
    model = _fitted()
    before = pickle.dumps(model)
    with pytest.raises(error, match=culprit):
        model.learn_one(x, y, w=w)
    assert pickle.dumps(model) == before


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_an_overflowing_update_raises_and_leaves_the_model_unchanged():
    model = CSOGDClassifier(learning_rate=1.0)
    model.learn_one({"a": 1.0}, False)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="overflow"):
        model.learn_one({"a": 1e200, "new": 1e200}, True, w=1e200)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"learning_rate": 0.0}, ValueError),
        ({"learning_rate": "1"}, TypeError),
        ({"loss": "III"}, ValueError),
        ({"objective": "accuracy"}, ValueError),
        ({"cost_pos": 0.0}, ValueError),
        ({"cost_neg": float("inf")}, ValueError),
        ({"eta_pos": 1.0}, ValueError),
        ({"eta_pos": 0.0}, ValueError),
        ({"intercept": "no"}, TypeError),
    ],
)
def test_invalid_parameters(params, error):
    with pytest.raises(error, match=next(iter(params))):
        CSOGDClassifier(**params)


def test_zero_rows_leave_the_weights_unchanged():
    model = CSOGDClassifier()
    for x, y, c in _stream()[:30]:
        model.learn_one(x, y, w=c)
    weights = model.weights
    model.learn_one({"a": 0.0, "brand_new": 0.0}, True)
    model.learn_one({}, False)
    assert model.weights == weights
