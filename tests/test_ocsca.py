"""OCSCA against Algorithm 1 of the paper, written here independently in plain numpy."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import base, compose, evaluate, linear_model, optim, preprocessing

from river_nrrls import NRRLS, OCSCA
from river_nrrls.metrics import MisclassificationCost

FEATURES = ["a", "b", "c", "d"]


# ------------------------------------------------------------------ fixtures


def _synthetic(n: int, seed: int, features=FEATURES) -> list[tuple[dict, bool]]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, len(features)))
    scores = X @ np.linspace(1.5, -1.0, len(features)) + 0.3 * rng.standard_normal(n) - 0.1
    return [(dict(zip(features, map(float, row))), bool(s > 0)) for row, s in zip(X, scores)]


def _trained_logistic(weight_pos: float = 2.0) -> linear_model.LogisticRegression:
    """f0: a logistic regression trained with positives weighted ``weight_pos``."""
    model = linear_model.LogisticRegression(optimizer=optim.SGD(0.5), intercept_lr=0.1)
    for _ in range(3):
        for x, y in _synthetic(150, seed=1):
            model.learn_one(x, y, w=weight_pos if y else 1.0)
    return model


def _trained_nrrls() -> NRRLS:
    model = NRRLS()
    for x, y in _synthetic(80, seed=2):
        model.learn_one(x, y)
    model.decision_one({})  # fill NRRLS's solution cache, so that its pickle no longer changes
    return model


def _stream() -> list[tuple[dict, bool, float | None]]:
    """Emerging features, per-sample costs, zero rows and missing values."""
    rows = []
    for i, (x, y) in enumerate(_synthetic(60, seed=3, features=["a", "b", "c", "d", "e"])):
        if i < 15:
            x = {k: x[k] for k in ("a", "b")}  # c, d, e emerge later
        elif i < 30:
            x = {k: x[k] for k in ("a", "b", "c", "d")}
        cost = None if i % 3 else 0.5 + (i % 7)  # a per-sample cost on one sample in three
        rows.append((x, y, cost))
    rows[5] = ({}, True, None)  # empty row
    rows[20] = ({"a": 0.0, "c": 0.0}, False, 4.0)  # zero row
    rows[35] = ({"a": None, "b": 0.3, "e": 0.9}, True, None)  # a missing value
    rows[38] = ({"a": 0.4, "b": pd.NA, "e": 0.1}, False, 2.0)  # pandas' missing value
    rows[40] = ({"z": 0.0, "b": 0.5}, False, None)  # a new feature with a zero value
    return rows


# ------------------------------------------------------ independent reference


def _missing(value) -> bool:
    return value is None or value is pd.NA


def _score_of(model, kind: str, x: dict) -> float:
    """f0(x) as the issue defines it, read from the model in the test."""
    x = {k: v for k, v in x.items() if not _missing(v)}
    if kind == "proba":
        out = model.predict_proba_one(x)
        return 0.0 if not out else 2.0 * out[True] - 1.0
    if kind == "logit":
        out = model.predict_proba_one(x)
        if not out:
            return 0.0
        p = min(max(out[True], 1e-6), 1.0 - 1e-6)
        return math.log(p / (1.0 - p))
    if kind == "decision":
        out = model.decision_one(x)
        return 0.0 if not out else out[True]
    prediction = model.predict_one(x)
    return 0.0 if prediction is None else prediction


class Algorithm1:
    """The paper's Algorithm 1 on dense vectors over a fixed feature list (+ a constant 1).

    ``alpha="scale"``: alpha_t = 0.05 / (the mean of x_s . x_s over the rows s <= t with
    x_s . x_s > 0)."""

    def __init__(self, f0, kind, features, alpha, cost_pos, cost_neg, intercept, learn_base):
        self.f0, self.kind, self.features = f0, kind, list(features)
        self.alpha, self.cost_pos, self.cost_neg = alpha, cost_pos, cost_neg
        self.intercept, self.learn_base = intercept, learn_base
        self.w = np.zeros(len(self.features) + 1)  # last entry: the constant feature's weight
        self.squared_norms: list[float] = []  # x . x of the rows with x . x > 0

    def vector(self, x):
        v = np.zeros(len(self.features) + 1)
        for name, value in x.items():
            if not _missing(value) and name in self.features:
                v[self.features.index(name)] = value
        v[-1] = 1.0 if self.intercept else 0.0
        return v

    def f(self, x):
        return _score_of(self.f0, self.kind, x) + self.w @ self.vector(x)

    def learn(self, x, y, cost):
        y_t = 1.0 if y else -1.0
        C_t = cost if cost is not None else (self.cost_pos if y else self.cost_neg)
        v = self.vector(x)
        if v @ v > 0:
            alpha = self.alpha
            if alpha == "scale":
                self.squared_norms.append(v @ v)
                alpha = 0.05 / float(np.mean(self.squared_norms))  # inf past float range
            tau = (1.0 - y_t * self.f(x)) / (v @ v)  # eq. 19
            tau = 0.0 if tau <= 0 else (tau if tau <= alpha * C_t else alpha * C_t)
            self.w = self.w + tau * y_t * v  # eq. 21
        if self.learn_base:  # the sample's own cost is passed on as a sample weight
            x = {k: v for k, v in x.items() if not _missing(v)}
            self.f0.learn_one(x, y) if cost is None else self.f0.learn_one(x, y, w=cost)


def _assert_matches(model: OCSCA, reference: Algorithm1, probes):
    weights = model.weights
    expected = dict(zip(reference.features, reference.w[:-1]))
    for name, value in expected.items():
        assert weights.get(name, 0.0) == pytest.approx(value, rel=1e-10, abs=1e-12), name
    assert set(weights) <= set(expected)
    assert model.bias == pytest.approx(reference.w[-1], rel=1e-10, abs=1e-12)
    for x in probes:
        f = reference.f(x)
        assert model.decision_one(x) == pytest.approx({True: f, False: -f}, rel=1e-10, abs=1e-12)


def _run_against_reference(f0, kind, score, stream, learn_base=False, **params):
    features = sorted({k for x, _, _ in stream for k in x})
    reference = Algorithm1(
        copy.deepcopy(f0),
        kind,
        features,
        params.get("alpha", "scale"),
        params.get("cost_pos", 1.0),
        params.get("cost_neg", 1.0),
        params.get("intercept", False),
        learn_base,
    )
    model = OCSCA(f0, score=score, learn_base=learn_base, **params)
    probes = [x for x, _, _ in stream[:3]] + [{"a": 0.4, "e": 0.2}]
    for x, y, cost in stream:
        # the decision before the step: what progressive validation would score
        assert model.decision_one(x)[True] == pytest.approx(reference.f(x), rel=1e-10, abs=1e-12)
        model.learn_one(x, y, w=cost)
        reference.learn(x, y, cost)
        _assert_matches(model, reference, probes)
    return model, reference


# ----------------------------------------------------------- Algorithm 1


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("kind", ["proba", "logit"])
def test_step_by_step_equality_with_a_frozen_logistic_regression(kind, intercept):
    f0 = _trained_logistic()
    model, _ = _run_against_reference(
        f0, kind, kind, _stream(), alpha=0.3, cost_pos=5.0, cost_neg=1.0, intercept=intercept
    )
    assert model.weights  # the stream did move w
    auto = OCSCA(_trained_logistic(), alpha=0.3, cost_pos=5.0, intercept=intercept)
    if kind == "proba":  # "auto" is 2 p - 1 for a classifier
        for x, y, cost in _stream():
            auto.learn_one(x, y, w=cost)
        assert auto.weights == pytest.approx(model.weights)


def test_step_by_step_equality_with_nrrls_as_f0():
    _run_against_reference(
        _trained_nrrls(), "decision", "auto", _stream(), alpha=0.2, cost_pos=8.0, intercept=True
    )


def test_step_by_step_equality_with_a_regressor_as_f0():
    regressor = linear_model.LinearRegression(optimizer=optim.SGD(0.05))
    for x, y in _synthetic(100, seed=4):
        regressor.learn_one(x, 1.0 if y else -1.0)
    _run_against_reference(regressor, "regression", "auto", _stream(), alpha=1.0, cost_neg=2.0)


def test_step_by_step_equality_when_the_base_model_keeps_learning():
    _run_against_reference(
        _trained_logistic(),
        "proba",
        "proba",
        _stream(),
        learn_base=True,
        alpha=0.5,
        cost_pos=3.0,
        intercept=True,
    )


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.dictionaries(
                st.sampled_from(["a", "b", "c", "q"]),
                st.one_of(st.none(), st.floats(-3.0, 3.0, allow_nan=False)),
                max_size=4,
            ),
            st.booleans(),
            st.one_of(st.none(), st.floats(0.0, 10.0, allow_nan=False)),
        ),
        max_size=25,
    ),
    alpha=st.one_of(st.just("scale"), st.floats(1e-3, 10.0)),
    cost_pos=st.floats(0.0, 10.0),
    intercept=st.booleans(),
)
def test_random_streams_follow_algorithm_1(rows, alpha, cost_pos, intercept):
    _run_against_reference(
        _FROZEN_F0, "proba", "auto", rows, alpha=alpha, cost_pos=cost_pos, intercept=intercept
    )


_FROZEN_F0 = _trained_logistic()


# ------------------------------------------------------------- alpha="scale"


@pytest.mark.parametrize("intercept", [False, True])
def test_the_default_scale_step_follows_its_definition(intercept):
    """alpha_t = 0.05 / (mean of x . x over the rows with x . x > 0 so far), in Algorithm 1."""
    model, reference = _run_against_reference(
        _trained_logistic(), "proba", "auto", _stream(), cost_pos=5.0, intercept=intercept
    )
    assert model.alpha == "scale"
    assert model.weights
    assert model._n_norms == len(reference.squared_norms)  # the empty and zero rows left out
    assert model._mean_squared_norm == pytest.approx(np.mean(reference.squared_norms))


class _ReadsTheRatio(base.Classifier):
    """A frozen f0 that compares x['a'] with x['b']: the same on x and on s x, for s > 0."""

    def learn_one(self, x, y):
        pass

    def predict_proba_one(self, x):
        p = 0.8 if x.get("a", 0.0) > x.get("b", 0.0) else 0.3
        return {False: 1.0 - p, True: p}


@pytest.mark.parametrize("power", [-12, 12])
def test_the_scale_step_does_not_depend_on_the_scale_of_the_features(power):
    """x multiplied by s: w divided by s, the same decisions (s a power of 2: exactly)."""
    s = 2.0**power
    data = _synthetic(200, seed=13)
    model, scaled = OCSCA(_ReadsTheRatio(), cost_pos=5.0), OCSCA(_ReadsTheRatio(), cost_pos=5.0)
    for x, y in data:
        x_scaled = {name: s * value for name, value in x.items()}
        assert scaled.decision_one(x_scaled) == model.decision_one(x)
        model.learn_one(x, y)
        scaled.learn_one(x_scaled, y)
    assert {name: s * weight for name, weight in scaled.weights.items()} == model.weights
    assert len(set(model.weights.values())) > 1
    # With the paper's constant alpha, the largest step does depend on the scale.
    paper, paper_scaled = OCSCA(_ReadsTheRatio(), alpha=0.01), OCSCA(_ReadsTheRatio(), alpha=0.01)
    for x, y in data:
        paper.learn_one(x, y)
        paper_scaled.learn_one({name: s * value for name, value in x.items()}, y)
    assert {name: s * weight for name, weight in paper_scaled.weights.items()} != pytest.approx(
        paper.weights
    )


def _cost_after_a_third(model, data, f0_alone: bool = False) -> float:
    metric = MisclassificationCost(cost_pos=5.0, cost_neg=1.0)
    for x, y in data:
        metric.update(y, model.predict_one(x))
        if not f0_alone:
            model.learn_one(x, y)
    return metric.get()


def test_the_default_step_costs_less_than_f0_where_alpha_one_costs_more():
    """Issue 30's example: f0 (a scaled logistic regression) trained on the first third of
    Phishing without costs, OCSCA with C+ = 5 on the rest, progressive validation."""
    from river import datasets as river_datasets

    data = list(river_datasets.Phishing())
    third = len(data) // 3
    f0 = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    for x, y in data[:third]:
        f0.learn_one(x, y)
    rest = data[third:]
    f0_cost = _cost_after_a_third(f0, rest, f0_alone=True)
    default_cost = _cost_after_a_third(OCSCA(f0, cost_pos=5.0), rest)
    paper_one_cost = _cost_after_a_third(OCSCA(f0, alpha=1.0, cost_pos=5.0), rest)
    assert default_cost < f0_cost < paper_one_cost


def test_switching_to_the_scale_step_after_learning():
    model = OCSCA(_trained_logistic(), alpha=0.05, cost_pos=5.0)
    for x, y, cost in _stream()[:20]:
        model.learn_one(x, y, w=cost)
    assert model._n_norms == 0  # a constant alpha keeps Algorithm 1's state: w alone
    model.alpha = "scale"
    for x, y, cost in _stream()[20:]:
        model.learn_one(x, y, w=cost)
    assert model._n_norms > 0 and model.alpha == "scale"
    assert OCSCA(NRRLS()).clone({"alpha": 0.5}).alpha == 0.5


def test_a_zero_cost_takes_no_step_even_with_a_tiny_scale():
    model = OCSCA(linear_model.LogisticRegression())
    model.learn_one({"a": 1e-160}, True, w=0.0)  # x . x = 1e-320: alpha_t is inf
    assert model.weights == {}


def test_the_step_is_clipped_at_alpha_times_the_cost():
    f0 = linear_model.LogisticRegression()  # untrained: f0 = 0
    model = OCSCA(f0, alpha=0.01, cost_pos=5.0, cost_neg=1.0)
    model.learn_one({"a": 1.0}, True)  # tau' = 1 > alpha C+ = 0.05
    assert model.weights == pytest.approx({"a": 0.05})
    model.learn_one({"b": 2.0}, False, w=3.0)  # tau' = 1/4 > alpha w = 0.03
    assert model.weights == pytest.approx({"a": 0.05, "b": -0.06})
    model.learn_one({"a": 10.0}, True, w=1000.0)  # tau' = (1 - 0.5) / 100, not clipped
    assert model.weights["a"] == pytest.approx(0.05 + 0.005 * 10.0)


def test_zero_rows_and_passive_steps_leave_the_model_unchanged():
    model = OCSCA(_trained_logistic(), alpha=1.0)
    for x, y, cost in _stream()[:10]:
        model.learn_one(x, y, w=cost)
    before = pickle.dumps(model)
    for zero in ({}, {"a": 0.0, "new": 0.0}, {"a": None}):
        model.learn_one(zero, True)
    assert pickle.dumps(model) == before
    model.learn_one({"a": 1.0}, True, w=0.0)  # cost 0: tau = 0
    assert pickle.dumps(model) == before
    model.learn_one({"a": 1.0, "b": 1.0}, True)
    if model.decision_one({"a": 1.0, "b": 1.0})[True] >= 1.0:  # margin reached: a passive step
        before = pickle.dumps(model)
        model.learn_one({"a": 1.0, "b": 1.0}, True)
        assert pickle.dumps(model) == before


def test_an_intercept_learns_even_from_an_empty_row():
    model = OCSCA(linear_model.LogisticRegression(), alpha=10.0, intercept=True)
    model.learn_one({}, False)  # x . x = 1 (the constant): tau = 1, bias = -1
    assert model.bias == pytest.approx(-1.0)
    assert model.weights == {}
    assert model.predict_one({"a": 0.0}) is False
    assert OCSCA(linear_model.LogisticRegression()).bias == 0.0


@pytest.mark.parametrize("trained", [False, True])
def test_the_order_of_the_features_does_not_matter(trained):
    def f0():  # the dot product of a trained logistic regression depends on the order
        return _trained_logistic() if trained else linear_model.LogisticRegression()

    first = OCSCA(f0(), alpha=0.5, intercept=True)
    second = OCSCA(f0(), alpha=0.5, intercept=True)
    for x, y, cost in _stream():
        first.learn_one(x, y, w=cost)
        second.learn_one(dict(reversed(list(x.items()))), y, w=cost)
    if trained:
        assert first.weights == pytest.approx(second.weights, rel=1e-12)
    else:  # w . x is correctly rounded: the same bits whatever the order
        assert first.weights == second.weights
        assert first.bias == second.bias


# ------------------------------------------------------------ the base model


def test_the_base_model_is_used_as_given_and_never_modified():
    f0 = _trained_logistic()
    snapshot = pickle.dumps(f0)
    model = OCSCA(f0, alpha=0.5, cost_pos=5.0, intercept=True)
    assert model.model is f0
    for x, y, cost in _stream():
        model.predict_proba_one(x)
        model.learn_one(x, y, w=cost)
    assert pickle.dumps(f0) == snapshot

    nrrls = _trained_nrrls()
    snapshot = pickle.dumps(nrrls)
    model = OCSCA(nrrls)
    for x, y, _ in _stream():
        model.learn_one(x, y)
    assert pickle.dumps(nrrls) == snapshot


def test_learn_base_trains_the_base_model_on_the_stream():
    f0 = _trained_logistic()
    twin = copy.deepcopy(f0)
    model = OCSCA(f0, learn_base=True)
    stream = _stream()
    for x, y, _ in stream:
        model.learn_one(x, y)
        twin.learn_one({k: v for k, v in x.items() if not _missing(v)}, y)
    assert pickle.dumps(f0) == pickle.dumps(twin)


def test_learn_base_passes_the_sample_weight_on_when_the_base_model_takes_it():
    f0, twin = _trained_logistic(), _trained_logistic()
    model = OCSCA(f0, learn_base=True)
    for x, y in _synthetic(20, seed=9):
        model.learn_one(x, y, w=7.0 if y else 0.5)
        twin.learn_one(x, y, w=7.0 if y else 0.5)
    assert pickle.dumps(f0) == pickle.dumps(twin)


def test_scores_of_the_base_model_before_it_knows_anything():
    x = {"a": 0.3, "b": 0.7}
    for f0 in (NRRLS(), linear_model.LogisticRegression(), linear_model.LinearRegression()):
        model = OCSCA(f0)
        assert model.decision_one(x) == {True: 0.0, False: -0.0}
        assert model.predict_proba_one(x) == {False: 0.5, True: 0.5}
        assert list(model.predict_proba_one(x)) == [False, True]
        assert model.predict_one(x) is True  # f = 0: ties go to the positive class


def test_auto_score_resolution():
    pipeline = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    assert OCSCA(NRRLS())._score == "decision"
    assert OCSCA(linear_model.LogisticRegression())._score == "proba"
    assert OCSCA(linear_model.LinearRegression())._score == "regression"
    assert OCSCA(pipeline)._score == "proba"
    regression_pipeline = preprocessing.StandardScaler() | linear_model.LinearRegression()
    assert OCSCA(regression_pipeline)._score == "regression"
    assert OCSCA(NRRLS(), score="proba")._score == "proba"


def test_a_pipeline_as_base_model():
    pipeline = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    for x, y in _synthetic(100, seed=5):
        pipeline.learn_one(x, y)
    snapshot = pickle.dumps(pipeline)
    model = OCSCA(pipeline, alpha=0.5)
    reference = Algorithm1(pipeline, "proba", FEATURES, 0.5, 1.0, 1.0, False, False)
    for x, y in _synthetic(40, seed=6):
        model.learn_one(x, y)
        reference.learn(x, y, None)
    assert pickle.dumps(pipeline) == snapshot
    _assert_matches(model, reference, [x for x, _ in _synthetic(5, seed=7)])


def test_predict_proba_is_a_monotone_map_of_the_decision():
    model = OCSCA(_trained_logistic(), alpha=0.5, score="logit")
    for x, y, cost in _stream():
        model.learn_one(x, y, w=cost)
    decisions, probabilities = [], []
    for x, _ in _synthetic(50, seed=8):
        f = model.decision_one(x)[True]
        proba = model.predict_proba_one(x)
        assert list(proba) == [False, True]
        assert proba[True] == pytest.approx(1.0 / (1.0 + math.exp(-f)))
        assert proba[False] + proba[True] == pytest.approx(1.0)
        assert model.predict_one(x) is (f >= 0.0)
        decisions.append(f)
        probabilities.append(proba[True])
    order = np.argsort(decisions)
    assert np.all(np.diff(np.asarray(probabilities)[order]) >= 0.0)


def test_logit_with_no_adaptation_gives_back_the_base_probability():
    f0 = _trained_logistic()
    model = OCSCA(f0, score="logit")
    for x, _ in _synthetic(10, seed=10):
        assert model.predict_proba_one(x)[True] == pytest.approx(f0.predict_proba_one(x)[True])


# ------------------------------------------------------- costs and evaluation


def test_progressive_val_score_passes_the_per_sample_costs():
    data = _synthetic(300, seed=11)
    costs = [5.0 if y else 1.0 for _, y in data]
    weighted = [(x, y, {"w": c}) for (x, y), c in zip(data, costs)]

    by_stream = OCSCA(_trained_logistic(), alpha=0.05)
    evaluate.progressive_val_score(weighted, by_stream, MisclassificationCost(5.0, 1.0))
    by_hand = OCSCA(_trained_logistic(), alpha=0.05)
    for (x, y), c in zip(data, costs):
        by_hand.learn_one(x, y, w=c)
    by_class = OCSCA(_trained_logistic(), alpha=0.05, cost_pos=5.0, cost_neg=1.0)
    evaluate.progressive_val_score(data, by_class, MisclassificationCost(5.0, 1.0))
    unweighted = OCSCA(_trained_logistic(), alpha=0.05)
    evaluate.progressive_val_score(data, unweighted, MisclassificationCost(5.0, 1.0))

    assert by_stream.weights == by_hand.weights == by_class.weights
    assert by_stream.weights != unweighted.weights  # the costs did reach learn_one


def test_a_per_sample_cost_overrides_the_class_cost():
    first = OCSCA(linear_model.LogisticRegression(), alpha=0.01, cost_pos=5.0)
    second = OCSCA(linear_model.LogisticRegression(), alpha=0.01, cost_pos=1.0)
    first.learn_one({"a": 1.0}, True, w=2.0)
    second.learn_one({"a": 1.0}, True, w=2.0)
    assert first.weights == second.weights == pytest.approx({"a": 0.02})


def test_progressive_validation_of_the_adaptation():
    data = _synthetic(300, seed=12)
    model = OCSCA(_trained_logistic(), alpha=0.05, cost_pos=5.0, intercept=True)
    shadow = OCSCA(_trained_logistic(), alpha=0.05, cost_pos=5.0, intercept=True)
    metric = evaluate.progressive_val_score(data, model, MisclassificationCost(5.0, 1.0))
    total = 0.0
    for x, y in data:
        total += (5.0 if y else 1.0) * (shadow.predict_one(x) != y)
        shadow.learn_one(x, y)
    assert metric.get() == pytest.approx(total / len(data))


# ---------------------------------------------------------------- clone


def test_clone_keeps_the_trained_base_model():
    f0 = _trained_logistic()
    model = OCSCA(f0, alpha=0.5, intercept=True)
    for x, y, cost in _stream():
        model.learn_one(x, y, w=cost)
    clone = model.clone()
    assert clone.model is not f0
    assert pickle.dumps(clone.model) == pickle.dumps(f0)
    assert clone.weights == {} and clone.bias == 0.0
    x = {"a": 0.2, "b": 0.9}
    assert clone.decision_one(x) == OCSCA(f0, alpha=0.5, intercept=True).decision_one(x)
    assert clone.clone({"alpha": 2.0}).alpha == 2.0
    assert pickle.dumps(clone.clone({"alpha": 2.0}).model) == pickle.dumps(f0)


def test_clone_with_learn_base_gives_the_base_model_as_it_was_given():
    f0 = _trained_logistic()
    given = pickle.dumps(f0)
    model = OCSCA(f0, learn_base=True)
    for x, y, _ in _stream():
        model.learn_one(x, y)
    assert pickle.dumps(f0) != given
    assert pickle.dumps(model.clone().model) == given


def test_clone_with_other_base_model_parameters_is_river_clone():
    f0 = _trained_logistic()
    model = OCSCA(f0)
    same = model.clone({"model": (type(f0), f0._get_params())})
    assert pickle.dumps(same.model) == pickle.dumps(f0)
    other = model.clone({"model": (type(f0), {**f0._get_params(), "l2": 0.5})})
    assert other.model.l2 == 0.5
    assert other.model.weights == {}  # a fresh model with those parameters
    replaced = model.clone({"model": NRRLS()})
    assert isinstance(replaced.model, NRRLS)


# ------------------------------------------------------------- bad input


def _fitted() -> OCSCA:
    model = OCSCA(_trained_logistic(), alpha=0.5, intercept=True, learn_base=True)
    for x, y, cost in _stream()[:20]:
        model.learn_one(x, y, w=cost)
    return model


@pytest.mark.parametrize(
    ("label", "error"),
    [
        ("yes", ValueError),
        (2, ValueError),
        (-1, ValueError),
        (None, ValueError),
        (1.5, ValueError),
        (0.0, ValueError),
        ([True], ValueError),
    ],
)
def test_labels_that_are_not_bool_like_raise_naming_the_label(label, error):
    model = _fitted()
    before = pickle.dumps(model)
    with pytest.raises(error, match="label"):
        model.learn_one({"a": 1.0}, label)
    assert pickle.dumps(model) == before


def test_bool_like_labels():
    for positive, negative in ((True, False), (np.True_, np.False_), (1, 0), (np.int64(1), 0)):
        first, second = OCSCA(NRRLS(), alpha=0.1), OCSCA(NRRLS(), alpha=0.1)
        first.learn_one({"a": 1.0}, positive)
        first.learn_one({"b": 1.0}, negative)
        second.learn_one({"a": 1.0}, True)
        second.learn_one({"b": 1.0}, False)
        assert first.weights == second.weights


@pytest.mark.parametrize(
    ("x", "error", "culprit"),
    [
        ({"a": float("nan")}, ValueError, "'a'"),
        ({"a": 1.0, "b": float("inf")}, ValueError, "'b'"),
        ({"a": "high"}, TypeError, "'a'"),
        ({"a": [1.0]}, TypeError, "'a'"),
        ({"new": 1e200, "a": 1e200}, ValueError, "overflow"),
        ([1.0, 2.0], TypeError, "dict"),
    ],
)
def test_bad_features_raise_and_leave_the_model_unchanged(x, error, culprit):
    model = _fitted()
    before = pickle.dumps(model)
    with warnings.catch_warnings():  # no numpy overflow warning before the refusal
        warnings.simplefilter("error")
        with pytest.raises(error, match=culprit):
            model.learn_one(x, True)
    assert pickle.dumps(model) == before
    if culprit != "overflow":
        with pytest.raises(error, match=culprit):
            model.predict_one(x)
        assert pickle.dumps(model) == before


@pytest.mark.parametrize("width", [2, 40])  # 40: past exact_dot's Python products
def test_overflowing_samples_are_refused_without_a_numpy_warning(width):
    model = _fitted()
    before = pickle.dumps(model)
    x = {f"f{i}": 1e200 for i in range(width)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="overflow"):
            model.learn_one(x, True)
        assert pickle.dumps(model) == before
        model.learn_one({name: 1.0 for name in x}, True)
        huge = {name: 1e308 for name in x}  # w . x overflows for 40 features, not for 2
        try:
            model.predict_one(huge)
        except ValueError as error:  # refused, as any inf score is: no numpy warning first
            assert "overflow" in str(error)


@pytest.mark.parametrize(
    ("w", "error"),
    [
        (-1.0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("5", TypeError),
        (True, TypeError),
        ([5.0], TypeError),
    ],
)
def test_bad_costs_raise_and_leave_the_model_unchanged(w, error):
    model = _fitted()
    before = pickle.dumps(model)
    with pytest.raises(error, match="w"):
        model.learn_one({"a": 1.0}, True, w=w)
    assert pickle.dumps(model) == before


class _BrokenRegressor(base.Regressor):
    """A regressor whose prediction is not finite."""

    def learn_one(self, x, y):
        pass

    def predict_one(self, x):
        return float("nan")


def test_a_non_finite_base_score_raises_and_leaves_the_model_unchanged():
    model = OCSCA(_BrokenRegressor())
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="_BrokenRegressor"):
        model.learn_one({"a": 1.0}, True)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    ("params", "error", "culprit"),
    [
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": -1.0}, ValueError, "alpha"),
        ({"alpha": float("nan")}, ValueError, "alpha"),
        ({"alpha": "1"}, TypeError, "alpha"),
        ({"alpha": "Scale"}, TypeError, "'scale'"),
        ({"alpha": None}, TypeError, "alpha"),
        ({"cost_pos": -1.0}, ValueError, "cost_pos"),
        ({"cost_neg": float("inf")}, ValueError, "cost_neg"),
        ({"cost_neg": None}, TypeError, "cost_neg"),
        ({"score": "margin"}, ValueError, "score"),
        ({"score": "decision"}, TypeError, "decision_one"),
        ({"intercept": 1}, TypeError, "intercept"),
        ({"learn_base": "yes"}, TypeError, "learn_base"),
    ],
)
def test_invalid_parameters(params, error, culprit):
    with pytest.raises(error, match=culprit):
        OCSCA(linear_model.LogisticRegression(), **params)


def test_the_model_must_be_a_river_estimator():
    with pytest.raises(TypeError, match="river estimator"):
        OCSCA(None)
    with pytest.raises(TypeError, match="river estimator"):
        OCSCA(lambda x: 0.0)
    with pytest.raises(TypeError, match="regressor"):
        OCSCA(preprocessing.StandardScaler(), score="auto")


def test_weights_are_a_read_only_copy():
    model = _fitted()
    weights = model.weights
    weights["a"] = 1e9
    weights["intruder"] = 1.0
    assert model.weights != weights


def test_unit_test_params_cover_a_classifier_nrrls_and_a_regressor():
    kinds = {type(params["model"]).__name__ for params in OCSCA._unit_test_params()}
    assert {"LogisticRegression", "NRRLS", "LinearRegression"} <= kinds
    trained = [p["model"] for p in OCSCA._unit_test_params() if p.get("learn_base") is not True]
    assert any(isinstance(m, NRRLS) and m.n_samples for m in trained)
    assert any(isinstance(m, linear_model.LogisticRegression) and m.weights for m in trained)
