"""Baselines (AR-RLS, IR-RLS, CW, AROW, ACOG) against independent plain-numpy references.

The exact ones (AR-RLS: weighted ridge with harmonic sample weights; IR-RLS: the total-error-rate
least squares) are compared with the batch closed form after every sample. The second-order
ones (CW, AROW, ACOG) are compared with their update formulas written out again here, step by
step, with full and diagonal covariances. Streams have features that appear late and others
that disappear, so the exact extension of the state is tested too.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from river_nrrls import ARRLS, IRRLS, ACOGClassifier, AROWClassifier, CWClassifier

FEATURES = ["a", "b", "c", "d"]


def _mixed_stream(n_samples: int, labels: list, seed: int) -> list[tuple[dict, object]]:
    """A stream where "d" appears after a third of it and "b" disappears after two thirds."""
    rng = np.random.default_rng(seed)
    stream = []
    for i in range(n_samples):
        names = ["a", "b", "c"]
        if i >= n_samples // 3:
            names.append("d")
        if i >= 2 * n_samples // 3:
            names.remove("b")
        x = {name: float(rng.normal()) for name in names}
        stream.append((x, labels[int(rng.integers(len(labels)))]))
    return stream


def _design(stream, intercept: bool) -> np.ndarray:
    """The stream as a zero-padded matrix over FEATURES (plus a leading 1 with an intercept)."""
    rows = [[x.get(name, 0.0) for name in FEATURES] for x, _ in stream]
    matrix = np.array(rows, dtype=float).reshape(len(stream), len(FEATURES))
    if intercept:
        matrix = np.hstack([np.ones((len(stream), 1)), matrix])
    return matrix


def _ridge(X: np.ndarray, sample_weights: np.ndarray, targets: np.ndarray, b: float) -> np.ndarray:
    """argmin sum_i omega_i (t_i - w.x_i)^2 + b |w|^2, by the normal equations."""
    gram = X.T @ (sample_weights[:, None] * X) + b * np.eye(X.shape[1])
    return np.linalg.solve(gram, X.T @ (sample_weights * targets))


def _model_vector(model, label, intercept: bool) -> np.ndarray:
    """A one-vs-rest least-squares model's weights of ``label`` over FEATURES (0 if unseen)."""
    weights = model.weights[label]
    vector = [weights.get(name, 0.0) for name in FEATURES]
    if intercept:
        vector = [model.intercepts[label]] + vector
    return np.array(vector)


# ------------------------------------------------------------------ AR-RLS and IR-RLS


def _arrls_reference(stream, l2, tau, eta, intercept):
    """Batch weighted ridge: the k-th sample of a class weighs 1/k; one-vs-rest targets."""
    X = _design(stream, intercept)
    labels = [y for _, y in stream]
    seen: dict = {}
    harmonic = []
    for y in labels:
        seen[y] = seen.get(y, 0) + 1
        harmonic.append(1.0 / seen[y])  # 1 / rank of the sample within its class
    harmonic = np.array(harmonic)
    return {
        k: _ridge(X, harmonic, np.where(np.array(labels) == k, tau + eta, tau - eta), l2)
        for k in seen
    }


def _ter_reference(stream, l2, tau, eta, intercept):
    """Batch TER one-vs-rest: class k weighs 1/n^k, the rest 1/n^rest."""
    X = _design(stream, intercept)
    labels = np.array([y for _, y in stream], dtype=object)
    solutions = {}
    for k in dict.fromkeys(labels.tolist()):
        mine = labels == k
        n_k, n_rest = mine.sum(), (~mine).sum()
        weights = np.where(mine, 1.0 / n_k, 1.0 / max(n_rest, 1))
        solutions[k] = _ridge(X, weights, np.where(mine, tau + eta, tau - eta), l2)
    return solutions


@pytest.mark.parametrize(
    ("klass", "reference"), [(ARRLS, _arrls_reference), (IRRLS, _ter_reference)]
)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"l2": 0.05, "tau": 0.3, "eta": 2.0, "intercept": False},
    ],
)
@pytest.mark.parametrize("labels", [[False, True], ["x", "y", "z"]])
def test_least_squares_match_batch_after_every_sample(klass, reference, params, labels):
    stream = _mixed_stream(30, labels, seed=len(labels))
    full = {"l2": 1e-4, "tau": 0.0, "eta": 1.0, "intercept": True} | params
    model = klass(**params)
    for t, (x, y) in enumerate(stream, start=1):
        model.learn_one(x, y)
        expected = reference(stream[:t], **full)
        assert set(model.weights) == set(expected)
        for label, weights in expected.items():
            np.testing.assert_allclose(
                _model_vector(model, label, full["intercept"]), weights, rtol=1e-6, atol=1e-7
            )
    # The raw outputs and the probabilities follow from those weights.
    probe = {"a": 0.5, "c": -1.0, "d": 2.0, "unseen": 3.0}
    vector = _design([(probe, None)], full["intercept"])[0]
    decision = model.decision_one(probe)
    for label, weights in reference(stream, **full).items():
        assert math.isclose(decision[label], float(vector @ weights), rel_tol=1e-6, abs_tol=1e-7)
    scores = np.array([2.0 * decision[label] / full["eta"] for label in decision])
    softmax = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(list(model.predict_proba_one(probe).values()), softmax)
    assert model.predict_one(probe) == max(decision, key=decision.get)


def test_arrls_differs_from_ter_and_irrls_does_not():
    """AR-RLS is only an approximation of TER: on an imbalanced stream it must differ."""
    stream = _mixed_stream(60, [False, False, False, True], seed=7)
    arrls, irrls = ARRLS(), IRRLS()
    for x, y in stream:
        arrls.learn_one(x, y)
        irrls.learn_one(x, y)
    ter = _ter_reference(stream, l2=1e-4, tau=0.0, eta=1.0, intercept=True)[True]
    assert np.allclose(_model_vector(irrls, True, True), ter, rtol=1e-6, atol=1e-8)
    assert not np.allclose(_model_vector(arrls, True, True), ter, rtol=1e-2)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.dictionaries(
                st.sampled_from(FEATURES),
                st.floats(-3, 3, allow_nan=False, allow_infinity=False),
                min_size=1,
            ),
            st.sampled_from([0, 1, 2]),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_least_squares_match_batch_on_random_streams(stream):
    for klass, reference in ((ARRLS, _arrls_reference), (IRRLS, _ter_reference)):
        model = klass(l2=0.1)
        for x, y in stream:
            model.learn_one(x, y)
        expected = reference(stream, l2=0.1, tau=0.0, eta=1.0, intercept=True)
        for label, weights in expected.items():
            np.testing.assert_allclose(
                _model_vector(model, label, True), weights, rtol=1e-7, atol=1e-9
            )


def test_least_squares_before_learning():
    for model in (ARRLS(), IRRLS()):
        assert model.decision_one({"a": 1.0}) == {}
        assert model.predict_proba_one({"a": 1.0}) == {}
        assert model.predict_one({"a": 1.0}) is None


def test_irrls_skips_only_the_memory_check():
    assert IRRLS()._unit_test_skips() == {"check_bounded_memory_growth"}
    assert "check_bounded_memory_growth" not in ARRLS()._unit_test_skips()


def test_irrls_stores_every_sample():
    model = IRRLS()
    stream = _mixed_stream(40, [False, True], seed=3)
    for x, y in stream:
        model.learn_one(x, y)
    assert model._n_stored == len(stream)
    expected = [[1.0] + [x.get(name, 0.0) for name in model._index.features] for x, _ in stream]
    np.testing.assert_array_equal(model._samples[: len(stream)], expected)


# -------------------------------------------------------------- CW, AROW and ACOG


class _Gaussian:
    """mu and Sigma over FEATURES (+ a leading constant), full or diagonal, written out plainly."""

    def __init__(self, variance: float, diagonal: bool, intercept: bool):
        self.intercept = intercept
        self.diagonal = diagonal
        dim = len(FEATURES) + intercept
        self.mu = np.zeros(dim)
        self.sigma = np.full(dim, variance) if diagonal else variance * np.eye(dim)
        self.updates = 0
        self.gaps: list[float] = []  # distance of every update decision from its threshold

    def x(self, features: dict) -> np.ndarray:
        return _design([(features, None)], self.intercept)[0]

    def sigma_x(self, x: np.ndarray) -> np.ndarray:
        return self.sigma * x if self.diagonal else self.sigma @ x

    def shrink(self, sigma_x: np.ndarray, beta: float) -> None:
        if self.diagonal:
            self.sigma = self.sigma - beta * sigma_x**2
        else:
            self.sigma = self.sigma - beta * np.outer(sigma_x, sigma_x)

    def record(self, gap: float) -> None:
        """Keep the distance of a decision from its threshold (with mu = 0 it is exactly 0)."""
        if self.mu.any():
            self.gaps.append(gap)

    def full_sigma(self) -> np.ndarray:
        return np.diag(self.sigma) if self.diagonal else self.sigma


def _cw_reference(stream, confidence, variance, variant, diagonal, intercept):
    state = _Gaussian(variance, diagonal, intercept)
    phi = norm.ppf(confidence)
    for features, label in stream:
        x, y = state.x(features), (1.0 if label else -1.0)
        sx = state.sigma_x(x)
        v = x @ sx
        m = y * (state.mu @ x)
        if variant == "exact":
            psi, xi = 1 + phi**2 / 2, 1 + phi**2
            state.record(phi * np.sqrt(v) - m)
            if phi * np.sqrt(v) - m <= 0:
                continue
            alpha = max(0.0, (-m * psi + np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * xi)) / (v * xi))
            u = (-alpha * v * phi + np.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2 / 4
            beta = alpha * phi / (np.sqrt(u) + v * alpha * phi)
        else:
            state.record(phi * v - m)
            c = 1 + 2 * phi * m
            alpha = max(0.0, (-c + np.sqrt(c**2 - 8 * phi * (m - phi * v))) / (4 * phi * v))
            beta = 2 * alpha * phi / (1 + 2 * alpha * phi * v)
        if alpha <= 0:
            continue
        state.mu = state.mu + alpha * y * sx
        state.shrink(sx, beta)
        state.updates += 1
    return state


def _arow_reference(stream, r, variance, diagonal, intercept):
    state = _Gaussian(variance, diagonal, intercept)
    for features, label in stream:
        x, y = state.x(features), (1.0 if label else -1.0)
        loss = max(0.0, 1 - y * (state.mu @ x))
        state.record(1 - y * (state.mu @ x))
        if loss == 0:
            continue
        sx = state.sigma_x(x)
        beta = 1 / (x @ sx + r)
        state.mu = state.mu + loss * beta * y * sx
        state.shrink(sx, beta)
        state.updates += 1
    return state


def _acog_reference(
    stream, learning_rate, gamma, metric, positive_weight, loss, diagonal, intercept
):
    state = _Gaussian(1.0, diagonal, intercept)
    n_pos = n_neg = 0
    for features, label in stream:
        x, y = state.x(features), (1.0 if label else -1.0)
        n_pos, n_neg = n_pos + (y > 0), n_neg + (y < 0)
        if metric == "sum":
            rho = positive_weight * n_neg / ((1 - positive_weight) * n_pos) if n_pos else 0.0
        else:
            rho = positive_weight / (1 - positive_weight)
        rho_y = rho if y > 0 else 1.0
        margin = y * (state.mu @ x)
        if loss == "II":
            value, gradient = rho_y * max(0.0, 1 - margin), -rho_y * y * x
            if rho_y > 0:
                state.record(1 - margin)
        else:
            value, gradient = max(0.0, rho_y - margin), -y * x
            state.record(rho_y - margin)
        if value <= 0:
            continue
        sx = state.sigma_x(x)
        state.shrink(sx, 1 / (gamma + x @ sx))
        new_sigma = state.full_sigma()
        state.mu = state.mu - learning_rate * new_sigma @ gradient
        state.updates += 1
    return state


def _second_order_stream():
    """Twelve samples labelled by a fixed linear rule: "d" appears at the third, "b" leaves at
    the eighth, and the last ones have a larger scale so that some are learned already."""
    rng = np.random.default_rng(5)
    rule = {"a": 2.0, "b": -1.0, "c": 1.0, "d": -0.5}
    stream = []
    for i in range(12):
        names = ["a", "b", "c"] + (["d"] if i >= 2 else [])
        if i >= 7:
            names.remove("b")
        scale = 1.0 if i < 6 else 4.0
        x = {name: float(scale * rng.uniform(-1, 1)) for name in names}
        stream.append((x, sum(rule[name] * value for name, value in x.items()) > 0))
    return stream


def _assert_model_matches(model, state, stream, intercept):
    """Weights, variances, full covariance and probabilities equal the reference's."""
    seen = [name for name in FEATURES if any(name in x for x, _ in stream)]
    offset = 1 if intercept else 0
    for name in seen:
        column = offset + FEATURES.index(name)
        assert math.isclose(model.weights[name], state.mu[column], rel_tol=1e-10, abs_tol=1e-12)
        assert math.isclose(
            model.variances[name], state.full_sigma()[column, column], rel_tol=1e-10
        )
    if intercept:
        assert math.isclose(model.intercept_, state.mu[0], rel_tol=1e-10, abs_tol=1e-12)
    # x^T Sigma x of a probe (with an unseen feature, prior variance) checks off-diagonals too.
    # Features the model has not seen yet ("d" early on, "never_seen") have their prior variance.
    probe = {"a": 0.7, "c": -0.4, "d": 1.3, "b": 0.2, "never_seen": 0.9}
    x = state.x(probe)
    margin = state.mu @ x
    variance = x @ state.full_sigma() @ x + _prior_variance(model) * 0.9**2
    expected = norm.cdf(margin / np.sqrt(variance))
    proba = model.predict_proba_one(probe)
    assert set(proba) == {False, True}
    assert math.isclose(proba[True], expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(proba[False] + proba[True], 1.0)
    assert model.predict_one(probe) == (margin >= 0)
    assert math.isclose(model.decision_one(probe), margin, rel_tol=1e-10, abs_tol=1e-12)


def _prior_variance(model) -> float:
    return getattr(model, "initial_variance", 1.0)  # ACOG: Sigma_0 = I


SECOND_ORDER_CASES = [
    (CWClassifier, {}, _cw_reference, {"confidence": 0.7, "variance": 1.0, "variant": "exact"}),
    (
        CWClassifier,
        {"confidence": 0.9, "initial_variance": 0.5},
        _cw_reference,
        {"confidence": 0.9, "variance": 0.5, "variant": "exact"},
    ),
    (
        CWClassifier,
        {"variant": "variance"},
        _cw_reference,
        {"confidence": 0.7, "variance": 1.0, "variant": "variance"},
    ),
    (AROWClassifier, {}, _arow_reference, {"r": 1.0, "variance": 1.0}),
    (
        AROWClassifier,
        {"r": 0.3, "initial_variance": 2.0},
        _arow_reference,
        {"r": 0.3, "variance": 2.0},
    ),
    (
        ACOGClassifier,
        {},
        _acog_reference,
        {"learning_rate": 1.0, "gamma": 1.0, "metric": "sum", "positive_weight": 0.5, "loss": "II"},
    ),
    (
        ACOGClassifier,
        {"loss": "I", "positive_weight": 0.3, "gamma": 0.5},
        _acog_reference,
        {"learning_rate": 1.0, "gamma": 0.5, "metric": "sum", "positive_weight": 0.3, "loss": "I"},
    ),
    (
        ACOGClassifier,
        {"metric": "cost", "positive_weight": 0.8, "learning_rate": 0.4},
        _acog_reference,
        {
            "learning_rate": 0.4,
            "gamma": 1.0,
            "metric": "cost",
            "positive_weight": 0.8,
            "loss": "II",
        },
    ),
]


@pytest.mark.parametrize(("klass", "params", "reference", "reference_params"), SECOND_ORDER_CASES)
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("intercept", [False, True])
def test_second_order_match_hand_computed_updates(
    klass, params, reference, reference_params, diagonal, intercept
):
    stream = _second_order_stream()
    model = klass(**params, diagonal=diagonal, intercept=intercept)
    for t, (x, y) in enumerate(stream, start=1):
        model.learn_one(x, y)
        state = reference(stream[:t], **reference_params, diagonal=diagonal, intercept=intercept)
        _assert_model_matches(model, state, stream[:t], intercept)
    # The stream exercises both branches (some samples update, some do not), and no decision is
    # so close to its threshold that rounding could flip it.
    assert 0 < state.updates < len(stream)
    assert min(abs(gap) for gap in state.gaps) > 1e-6
    if not diagonal:  # the whole covariance, not only what a probe sees
        dim = len(model._mean)
        order = [0] * intercept + [
            intercept + FEATURES.index(name) for name in model._index.features
        ]
        np.testing.assert_allclose(
            np.triu(model._covariance),
            np.triu(state.full_sigma()[np.ix_(order, order)]),
            rtol=1e-10,
            atol=1e-13,
        )
        assert dim == len(order)


def test_diagonal_equals_full_with_one_feature():
    stream = [
        ({"a": value}, label)
        for value, label in [(0.5, True), (-1.0, False), (2.0, True), (0.1, False), (0.3, True)]
    ]
    for klass in (CWClassifier, AROWClassifier, ACOGClassifier):
        full, diagonal = klass(), klass(diagonal=True)
        for x, y in stream:
            full.learn_one(x, y)
            diagonal.learn_one(x, y)
        assert math.isclose(full.weights["a"], diagonal.weights["a"], rel_tol=1e-12)
        assert math.isclose(full.variances["a"], diagonal.variances["a"], rel_tol=1e-12)


def test_acog_rho_follows_the_counts():
    model = ACOGClassifier(positive_weight=0.25)
    assert model.rho == 0.0
    for y in [True, False, False, True, False]:
        model.learn_one({"a": 1.0}, y)
    # rho = eta_p T_n / (eta_n T_p) = 0.25 * 3 / (0.75 * 2)
    assert math.isclose(model.rho, 0.5)
    assert math.isclose(ACOGClassifier(metric="cost", positive_weight=0.8).rho, 4.0)


@pytest.mark.parametrize("klass", [CWClassifier, AROWClassifier, ACOGClassifier])
def test_second_order_before_learning(klass):
    model = klass()
    assert model.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}
    assert model.predict_one({"a": 1.0}) is True
    assert model.predict_proba_one({}) == {False: 0.5, True: 0.5}


@pytest.mark.parametrize("klass", [CWClassifier, AROWClassifier, ACOGClassifier])
def test_second_order_accepts_bool_like_labels(klass):
    as_bools, as_ints = klass(), klass()
    for x, y in _second_order_stream():
        as_bools.learn_one(x, y)
        as_ints.learn_one(x, np.int64(1) if y else 0)
    assert pickle.dumps(as_bools) == pickle.dumps(as_ints)
    np_bools = klass()
    for x, y in _second_order_stream():
        np_bools.learn_one(x, np.bool_(y))
    assert pickle.dumps(np_bools) == pickle.dumps(as_bools)


@pytest.mark.parametrize("klass", [CWClassifier, AROWClassifier, ACOGClassifier])
@pytest.mark.parametrize("label", [2, -1, 0.5, "yes", "True", None, (1,)])
def test_second_order_rejects_other_labels(klass, label):
    model = klass()
    model.learn_one({"a": 1.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=repr(label).replace("(", r"\(").replace(")", r"\)")):
        model.learn_one({"a": 1.0, "new": 2.0}, label)
    assert pickle.dumps(model) == before


# ------------------------------------------------------------ bad input, parameters

ALL_ESTIMATORS = [
    ARRLS(),
    IRRLS(),
    ARRLS(intercept=False),
    CWClassifier(),
    CWClassifier(diagonal=True),
    AROWClassifier(),
    AROWClassifier(diagonal=True),
    ACOGClassifier(),
    ACOGClassifier(diagonal=True),
]


@pytest.mark.parametrize("estimator", ALL_ESTIMATORS, ids=lambda model: type(model).__name__)
@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (-float("inf"), ValueError),
        (10**400, ValueError),
        ("3.0", TypeError),
        ([1.0], TypeError),
        ({"x": 1}, TypeError),
    ],
)
def test_bad_values_raise_naming_the_feature_and_change_nothing(estimator, value, error):
    model = estimator.clone()
    for x, y in _second_order_stream()[:4]:
        model.learn_one(x, y)
    before = pickle.dumps(model)
    bad = {"a": 1.0, "brand_new": 2.0, "culprit": value}
    with pytest.raises(error, match="culprit"):
        model.learn_one(bad, True)
    assert pickle.dumps(model) == before
    for method in (model.predict_one, model.predict_proba_one, model.decision_one):
        with pytest.raises(error, match="culprit"):
            method(bad)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("estimator", ALL_ESTIMATORS, ids=lambda model: type(model).__name__)
def test_none_is_missing(estimator):
    with_none, without = estimator.clone(), estimator.clone()
    for x, y in _second_order_stream():
        with_none.learn_one({**x, "e": None}, y)
        without.learn_one(x, y)
    assert pickle.dumps(with_none) == pickle.dumps(without)


@pytest.mark.parametrize("estimator", ALL_ESTIMATORS, ids=lambda model: type(model).__name__)
@pytest.mark.parametrize("x", [[1.0, 2.0], "ab", None])
def test_x_must_be_a_dict(estimator, x):
    model = estimator.clone()
    model.learn_one({"a": 1.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="dict"):
        model.learn_one(x, True)
    with pytest.raises(TypeError, match="dict"):
        model.predict_proba_one(x)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("klass", [ARRLS, IRRLS])
def test_least_squares_reject_unhashable_labels(klass):
    model = klass()
    model.learn_one({"a": 1.0}, "x")
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="hashable"):
        model.learn_one({"a": 1.0, "b": 2.0}, ["x"])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    ("klass", "params"),
    [
        (ARRLS, {"l2": 0.0}),
        (ARRLS, {"l2": -1.0}),
        (ARRLS, {"eta": 0.0}),
        (ARRLS, {"tau": float("nan")}),
        (ARRLS, {"l2": float("inf")}),
        (IRRLS, {"l2": 0.0}),
        (IRRLS, {"eta": -1.0}),
        (CWClassifier, {"confidence": 0.5}),
        (CWClassifier, {"confidence": 1.0}),
        (CWClassifier, {"confidence": 0.3}),
        (CWClassifier, {"initial_variance": 0.0}),
        (CWClassifier, {"variant": "full"}),
        (AROWClassifier, {"r": 0.0}),
        (AROWClassifier, {"r": -2.0}),
        (AROWClassifier, {"initial_variance": -1.0}),
        (ACOGClassifier, {"learning_rate": 0.0}),
        (ACOGClassifier, {"gamma": -1.0}),
        (ACOGClassifier, {"metric": "mean"}),
        (ACOGClassifier, {"loss": "III"}),
        (ACOGClassifier, {"positive_weight": 0.0}),
        (ACOGClassifier, {"positive_weight": 1.0}),
    ],
)
def test_invalid_parameters_raise_value_error(klass, params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=name):
        klass(**params)


@pytest.mark.parametrize(
    ("klass", "params"),
    [
        (ARRLS, {"l2": "1"}),
        (IRRLS, {"intercept": 1}),
        (CWClassifier, {"diagonal": "no"}),
        (AROWClassifier, {"r": None}),
        (ACOGClassifier, {"intercept": None}),
        (CWClassifier, {"confidence": True}),
    ],
)
def test_parameters_of_the_wrong_type_raise(klass, params):
    with pytest.raises((TypeError, ValueError), match=next(iter(params))):
        klass(**params)
