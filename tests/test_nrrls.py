"""Tests of NRRLS against the specification, with a plain-numpy batch TER reference.

The reference (``tests/reference.py``) solves the weighted ridge normal equations of the whole
prefix from scratch; the relative-error convention is documented there.
"""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from helpers import pickled_state as _state
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    TERReference,
    assert_model_matches,
    class_masses,
    model_matrix,
    sample_masses,
    softmax,
)

import river_nrrls._solver
from river_nrrls import NRRLS, datasets

RTOL = 1e-9  # Cholesky solver against the batch reference
RTOL_WOODBURY = 1e-6  # the paper's recursive inverse

LABEL_POOL = ("cat", 7, ("t", 1), "dog", 2.5)  # mixed hashable types (no bool/int clash)
FEATURE_POOL = ("a", "b", 3, "c", "e", "f")  # mixed feature names (usable as DataFrame columns)
VALUES = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 6))
PROBE = {"a": 0.5, "b": -1.25, 3: 2.0, "c": -0.3, "e": 1.0, "f": 0.7, "never_seen": 11.0}

PARAMS = st.fixed_dictionaries(
    {
        "l2": st.floats(1e-3, 10.0),
        "tau": st.floats(-2.0, 2.0),
        "eta": st.floats(0.1, 3.0),
        "intercept": st.booleans(),
        "reweight": st.booleans(),
        "forgetting": st.sampled_from([1.0, 1.0, 0.97, 0.6]),
    }
)


@st.composite
def streams(draw, min_classes=1, max_classes=5, max_samples=25, max_features=5):
    """(rows, labels): emerging features, absent keys, ``None`` values, shuffled key order."""
    n_classes = draw(st.integers(min_classes, max_classes))
    classes = draw(st.permutations(LABEL_POOL))[:n_classes]
    n_samples = draw(st.integers(1, max_samples))
    labels = draw(st.lists(st.sampled_from(classes), min_size=n_samples, max_size=n_samples))
    n_features = draw(st.integers(0, max_features))
    names = FEATURE_POOL[:n_features]
    starts = draw(st.lists(st.integers(0, n_samples - 1), min_size=n_features, max_size=n_features))
    shuffler = draw(st.randoms(use_true_random=False))
    rows = []
    for i in range(n_samples):
        row = {}
        for name, start in zip(names, starts):
            if i < start:
                continue  # the feature has not emerged yet
            kind = draw(st.sampled_from(("value", "value", "value", "absent", "none")))
            if kind == "value":
                row[name] = draw(VALUES)
            elif kind == "none":
                row[name] = None
        keys = list(row)
        shuffler.shuffle(keys)
        rows.append({key: row[key] for key in keys})
    return rows, labels


def _frame(rows: list[dict], start: int = 0) -> pd.DataFrame:
    """Rows as a DataFrame (absent keys and None become NaN), with a non-default index."""
    index = pd.RangeIndex(100 + start, 100 + start + len(rows))
    return pd.DataFrame(rows, index=index)


def _series(labels: list, start: int = 0) -> pd.Series:
    index = pd.RangeIndex(100 + start, 100 + start + len(labels))
    return pd.Series(labels, index=index, dtype=object)


def _trained(params=None, n=30, seed=0, classes=("cat", 7, ("t", 1))):
    rng = np.random.default_rng(seed)
    model = NRRLS(**(params or {}))
    rows, labels = [], []
    for i in range(n):
        x = {"alpha_feature": float(rng.normal()), "beta": float(rng.normal())}
        if i >= n // 2:
            x["gamma"] = float(rng.uniform())
        y = classes[i % len(classes)]
        model.learn_one(x, y)
        rows.append(x)
        labels.append(y)
    return model, rows, labels


# ------------------------------------------------------------------ the reference itself


def test_reference_masses_by_hand():
    labels = ["a", "b", "a", "a", "b"]
    np.testing.assert_allclose(sample_masses(labels, 0.5), [0.25, 0.5, 0.5, 1.0, 1.0])
    assert class_masses(labels, 0.5) == {"a": 1.75, "b": 1.5}
    assert class_masses(labels) == {"a": 3.0, "b": 2.0}


def test_reference_matches_sklearn_weighted_ridge():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    labels = list(rng.choice(["u", "v"], size=40))
    rows = [dict(enumerate(row.tolist())) for row in X]
    ref = TERReference(rows, labels, l2=0.3, tau=0.2, eta=1.5, forgetting=0.9)
    masses = sample_masses(labels, 0.9)
    design = np.hstack([np.ones((40, 1)), X])
    for k, label in enumerate(ref.labels):
        in_k = np.array([y == label for y in labels])
        row_weight = np.where(in_k, masses / masses[in_k].sum(), masses / masses[~in_k].sum())
        targets = np.where(in_k, 1.7, -1.3)
        ridge = Ridge(alpha=0.3, fit_intercept=False).fit(design, targets, sample_weight=row_weight)
        np.testing.assert_allclose(ref.matrix[k], ridge.coef_, rtol=1e-8, atol=1e-10)


def test_reference_minimises_the_ter_objective():
    rng = np.random.default_rng(2)
    rows = [{"p": float(v), "q": float(w)} for v, w in rng.normal(size=(25, 2))]
    labels = list(rng.choice([1, 2, 3], size=25))
    ref = TERReference(rows, labels, l2=0.01, tau=0.5, eta=2.0)
    X = np.array([ref.dense(row) for row in rows])
    for k, label in enumerate(ref.labels):
        in_k = np.array([y == label for y in labels])

        def objective(w, in_k=in_k):
            residual = np.where(in_k, 2.5, -1.5) - X @ w
            return (
                (residual[in_k] ** 2).sum() / (2 * in_k.sum())
                + (residual[~in_k] ** 2).sum() / (2 * (~in_k).sum())
                + 0.01 / 2 * w @ w
            )

        best = objective(ref.matrix[k])
        for direction in np.eye(ref.dim):
            assert objective(ref.matrix[k] + 1e-4 * direction) > best
            assert objective(ref.matrix[k] - 1e-4 * direction) > best


# ---------------------------------------------------------------- exactness: learn_one


@settings(max_examples=60, deadline=None)
@given(stream=streams(), params=PARAMS)
def test_learn_one_equals_batch_ter_after_every_sample(stream, params):
    rows, labels = stream
    model = NRRLS(**params)
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.learn_one(x, y)
        ref = TERReference(rows[: i + 1], labels[: i + 1], **params)
        assert_model_matches(model, ref, [PROBE, x, *rows[i + 1 : i + 2]], RTOL)
        masses = class_masses(labels[: i + 1], params["forgetting"])
        assert set(model.n_samples) == set(masses)
        for label, mass in masses.items():
            assert model.n_samples[label] == pytest.approx(mass, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(stream=streams(min_classes=2, max_classes=2), params=PARAMS)
def test_binary_outputs_are_opposite_when_tau_is_zero(stream, params):
    """Documented: two classes and tau = 0 give outputs f and -f, P(first) = 1/(1+e^{-4f/eta})."""
    rows, labels = stream
    params = {**params, "tau": 0.0}
    model = NRRLS(**params)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    decision = model.decision_one(PROBE)
    if len(decision) < 2:
        return
    (first, f), (_, g) = decision.items()
    scale = max(1.0, abs(f))
    assert abs(f + g) <= 1e-9 * scale
    proba = model.predict_proba_one(PROBE)
    assert proba[first] == pytest.approx(1 / (1 + math.exp(-4 * f / params["eta"])), rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(stream=streams(max_samples=15, max_features=4), params=PARAMS)
def test_woodbury_solver_equals_batch_ter(stream, params):
    rows, labels = stream
    model = NRRLS(**params, solver="woodbury")
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.learn_one(x, y)
        ref = TERReference(rows[: i + 1], labels[: i + 1], **params)
        assert_model_matches(model, ref, [PROBE, x], RTOL_WOODBURY)


def test_zero_ridge_with_full_rank_data_equals_least_squares():
    rng = np.random.default_rng(3)
    rows = [{"u": float(u), "v": float(v), "w": float(w)} for u, v, w in rng.normal(size=(60, 3))]
    labels = [("k", i % 3) for i in range(60)]
    for reweight in (True, False):
        model = NRRLS(l2=0.0, reweight=reweight)
        for x, y in zip(rows, labels):
            model.learn_one(x, y)
        ref = TERReference(rows, labels, l2=0.0, reweight=reweight)
        assert_model_matches(model, ref, rows[:5], RTOL)


def test_zero_ridge_on_a_singular_system_is_a_least_squares_solution():
    """Binary inputs with exact dependencies (fewer distinct rows than columns): with l2 = 0
    the TER system is singular, and the model's weights are one of its least-squares
    solutions (the documented contract): the normal equations hold, and the outputs on every
    learnt sample are those of numpy's minimum-norm solution, whichever solution it is."""
    X = [
        [0, 0, 1, 0, 1, 1],
        [1, 0, 1, 1, 1, 1],
        [0, 1, 0, 1, 0, 1],
        [0, 0, 1, 0, 1, 0],
        [1, 0, 0, 1, 1, 1],
        [0, 1, 0, 1, 0, 0],
        [1, 0, 0, 0, 0, 1],
    ]  # x0 + 2 x1 + x4 = 1 + x3 on every row: with the intercept, rank 6 of 7 (from fuzzing)
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    labels = [2, 0, 1, 2, 1, 2, 1]
    model = NRRLS(l2=0.0)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    ref = TERReference(rows, labels, l2=0.0)
    W = model_matrix(model.weights, model.intercepts, ref)
    for (M, r), w in zip(ref.systems, W):
        assert np.linalg.matrix_rank(M) < len(M)  # singular indeed
        assert np.linalg.norm(M @ w - r) <= 1e-10 * np.linalg.norm(M, 2) * np.linalg.norm(w)
    for x in rows:
        outputs = model.decision_one(x)
        assert outputs == pytest.approx(ref.decision(x), rel=1e-9, abs=1e-9)


# --------------------------------------------------------------- exactness: learn_many


@settings(max_examples=50, deadline=None)
@given(
    stream=streams(),
    params=PARAMS,
    cuts=st.lists(st.integers(0, 25), max_size=6),
    solver=st.sampled_from(["cholesky", "cholesky", "woodbury"]),
)
def test_learn_many_in_chunks_equals_learn_one_and_batch_ter(stream, params, cuts, solver):
    rows, labels = stream
    n = len(rows)
    rtol = RTOL if solver == "cholesky" else RTOL_WOODBURY
    ends = sorted(min(cut, n) for cut in cuts) + [n]  # repeated cuts give empty chunks
    many = NRRLS(**params, solver=solver)
    one = NRRLS(**params, solver=solver)
    start = 0
    for end in ends:
        chunk_rows, chunk_labels = rows[start:end], labels[start:end]
        many.learn_many(_frame(chunk_rows, start), _series(chunk_labels, start))
        for x, y in zip(chunk_rows, chunk_labels):
            one.learn_one(x, y)
        start = end
        if end == 0:
            assert many.predict_proba_one(PROBE) == {}
            continue
        ref = TERReference(rows[:end], labels[:end], **params)
        assert_model_matches(many, ref, [PROBE, *rows[end : end + 1]], rtol)
        difference = model_matrix(many.weights, many.intercepts, ref) - model_matrix(
            one.weights, one.intercepts, ref
        )
        assert np.linalg.norm(difference) <= rtol * ref.scale
        for label, mass in one.n_samples.items():
            assert many.n_samples[label] == pytest.approx(mass, rel=1e-12)
        assert set(many.n_samples) == set(one.n_samples)


# -------------------------------------------------------------------------- real data

REAL = [
    ("Pima", {}),
    ("Pima", {"forgetting": 0.99, "tau": 0.5, "eta": 0.5}),
    ("Pima", {"reweight": False, "l2": 1.0}),
    ("Sonar", {}),
    ("Sonar", {"intercept": False, "l2": 1e-2, "tau": -1.0, "eta": 2.0}),
    ("Wdbc", {}),
    ("Wdbc", {"forgetting": 0.95}),
]


def _load(name):
    data = list(getattr(datasets, name)())
    return [x for x, _ in data], [y for _, y in data]


@pytest.mark.parametrize(("name", "params"), REAL, ids=[f"{n}-{p}" for n, p in REAL])
def test_real_data_learn_one_equals_batch_ter(name, params):
    rows, labels = _load(name)
    model = NRRLS(**params)
    checkpoints = {1, 2, 5, 20, 100, len(rows) // 2, len(rows)}
    for i, (x, y) in enumerate(zip(rows, labels), start=1):
        model.learn_one(x, y)
        if i in checkpoints:
            ref = TERReference(rows[:i], labels[:i], **params)
            assert_model_matches(model, ref, rows[i : i + 3] or rows[:3], RTOL)


@pytest.mark.parametrize("name", ["Pima", "Sonar", "Wdbc"])
def test_real_data_learn_many_equals_learn_one_and_batch_ter(name):
    rows, labels = _load(name)
    frame = pd.DataFrame(rows)
    target = pd.Series(labels)
    many, one = NRRLS(forgetting=0.995), NRRLS(forgetting=0.995)
    start = 0
    for size in itertools.cycle([1, 7, 0, 64, 150]):
        end = min(start + size, len(rows))
        many.learn_many(frame.iloc[start:end], target.iloc[start:end])
        for x, y in zip(rows[start:end], labels[start:end]):
            one.learn_one(x, y)
        start = end
        if end == len(rows):
            break
    ref = TERReference(rows, labels, forgetting=0.995)
    assert_model_matches(many, ref, rows[:5], RTOL)
    difference = model_matrix(many.weights, many.intercepts, ref) - model_matrix(
        one.weights, one.intercepts, ref
    )
    assert np.linalg.norm(difference) <= RTOL * ref.scale
    assert many.predict_many(frame).tolist() == [one.predict_one(x) for x in rows]


def test_real_data_multiclass_with_tuple_labels():
    rows, labels = _load("Pima")
    labels = [(y, x["glucose"] > 0.5) for x, y in zip(rows, labels)]  # four tuple classes
    model = NRRLS(forgetting=0.999)
    for i, (x, y) in enumerate(zip(rows, labels), start=1):
        model.learn_one(x, y)
        if i in (3, 50, len(rows)):
            ref = TERReference(rows[:i], labels[:i], forgetting=0.999)
            assert_model_matches(model, ref, rows[:4], RTOL)
    assert len(model.weights) == 4


@pytest.mark.parametrize("name", ["Pima", "Sonar"])
def test_real_data_woodbury_equals_batch_ter(name):
    rows, labels = _load(name)
    model = NRRLS(solver="woodbury")
    for i, (x, y) in enumerate(zip(rows, labels), start=1):
        model.learn_one(x, y)
        if i in (1, 10, 100, len(rows)):
            ref = TERReference(rows[:i], labels[:i])
            assert_model_matches(model, ref, rows[:3], RTOL_WOODBURY)


# ------------------------------------------------------------------------- bad input

BAD_VALUES = [
    pytest.param(float("nan"), id="nan"),
    pytest.param(np.float64("nan"), id="np-nan"),
    pytest.param(float("inf"), id="inf"),
    pytest.param(-float("inf"), id="-inf"),
    pytest.param("3.5", id="str"),
    pytest.param(b"1", id="bytes"),
    pytest.param([1.0], id="list"),
    pytest.param({"v": 1.0}, id="dict"),
    pytest.param(10**400, id="huge-int"),
    pytest.param(1 + 2j, id="complex"),
]
ONE_METHODS = ["learn_one", "predict_one", "predict_proba_one", "decision_one"]


def _call_one(model, method, x):
    if method == "learn_one":
        model.learn_one(x, "cat")
    else:
        getattr(model, method)(x)


@pytest.mark.parametrize("bad", BAD_VALUES)
@pytest.mark.parametrize("method", ONE_METHODS)
@pytest.mark.parametrize("feature", ["alpha_feature", "brand_new_feature"])
@pytest.mark.parametrize("trained", [True, False], ids=["trained", "fresh"])
def test_bad_value_in_dict_raises_naming_feature_and_keeps_state(bad, method, feature, trained):
    if trained:
        model, _, _ = _trained()
        model.predict_one({"alpha_feature": 1.0})  # warm any cache so it is part of the state
    else:
        model = NRRLS()
    before = _state(model)
    x = {"beta": 0.5, feature: bad, "zeta": 1.0}
    with pytest.raises((ValueError, TypeError), match=feature):
        _call_one(model, method, x)
    assert _state(model) == before


@pytest.mark.parametrize("method", ONE_METHODS)
def test_bad_value_equal_to_the_previous_value_still_raises(method):
    model, _, _ = _trained()
    x = {"alpha_feature": 1.0, "beta": 2.0, "gamma": 0.5}
    model.predict_one(x)  # every feature known and present
    before = _state(model)
    with pytest.raises(TypeError, match="alpha_feature"):
        _call_one(model, method, {**x, "alpha_feature": 1 + 0j})
    assert _state(model) == before


FRAME_BAD_VALUES = [
    pytest.param(float("inf"), id="inf"),
    pytest.param(-float("inf"), id="-inf"),
    pytest.param("3.5", id="str"),
    pytest.param([1.0], id="list"),
    pytest.param({"v": 1.0}, id="dict"),
    pytest.param(10**400, id="huge-int"),
    pytest.param(1 + 2j, id="complex-in-object-column"),
]


def _frame_with_bad_last_row(bad, feature):
    X = pd.DataFrame(
        {"alpha_feature": [0.1, 0.2, 0.3, 0.4], "beta": [1.0, -1.0, 0.5, 0.0]},
        index=["r0", "r1", "r2", "r3"],
    )
    column = pd.Series([0.5, 0.25, 0.125, None], index=X.index, dtype=object)
    column.iloc[3] = bad
    X[feature] = column.infer_objects() if isinstance(bad, float) else column
    return X


@pytest.mark.parametrize("bad", FRAME_BAD_VALUES)
@pytest.mark.parametrize("method", ["learn_many", "predict_many", "predict_proba_many"])
@pytest.mark.parametrize("feature", ["alpha_feature", "brand_new_feature"])
def test_bad_value_in_last_row_of_frame_raises_and_keeps_state(bad, method, feature):
    model, _, _ = _trained()
    model.predict_one({"alpha_feature": 1.0})
    before = _state(model)
    X = _frame_with_bad_last_row(bad, feature)
    with pytest.raises((ValueError, TypeError), match=feature):
        if method == "learn_many":
            model.learn_many(X, pd.Series(["cat", 7, "cat", "new_class"], index=X.index))
        else:
            getattr(model, method)(X)
    assert _state(model) == before


@pytest.mark.parametrize("method", ["learn_many", "predict_many"])
def test_complex_dtype_column_raises_like_a_complex_value_in_a_dict(method):
    model, _, _ = _trained()
    model.predict_one({"alpha_feature": 1.0})
    before = _state(model)
    X = pd.DataFrame({"alpha_feature": [0.1, 0.2], "cplx": np.array([1.0 + 0j, 2.0 + 3j])})
    assert X["cplx"].dtype == np.complex128
    with pytest.raises(TypeError, match="cplx"):
        if method == "learn_many":
            model.learn_many(X, pd.Series(["cat", 7]))
        else:
            model.predict_many(X)
    assert _state(model) == before


def test_frame_nan_is_missing_not_an_error():
    model, _, _ = _trained()
    X = pd.DataFrame({"alpha_feature": [np.nan, 1.0], "beta": [0.5, np.nan]})
    expected = [model.predict_one({"beta": 0.5}), model.predict_one({"alpha_feature": 1.0})]
    assert model.predict_many(X).tolist() == expected
    model.learn_many(X, pd.Series(["cat", 7]))  # no error


@pytest.mark.parametrize("label", [[1], {"a": 1}, {1, 2}, np.array([1, 2])], ids=repr)
def test_unhashable_label_raises_type_error_and_keeps_state(label):
    model, _, _ = _trained()
    before = _state(model)
    with pytest.raises(TypeError):
        model.learn_one({"alpha_feature": 1.0, "new": 2.0}, label)
    assert _state(model) == before
    y = pd.Series(["cat", 7, None], dtype=object)
    y.iloc[2] = label
    with pytest.raises(TypeError):
        model.learn_many(pd.DataFrame({"alpha_feature": [1.0, 2.0, 3.0], "new": 1.0}), y)
    assert _state(model) == before


@pytest.mark.parametrize("n_labels", [2, 4, 0])
def test_learn_many_with_mismatched_lengths_raises_and_keeps_state(n_labels):
    model, _, _ = _trained()
    before = _state(model)
    X = pd.DataFrame({"alpha_feature": [1.0, 2.0, 3.0], "brand_new": [1.0, 0.0, 1.0]})
    with pytest.raises(ValueError):
        model.learn_many(X, pd.Series(["cat"] * n_labels, dtype=object))
    assert _state(model) == before


def test_learn_many_pairs_rows_by_position_and_refuses_a_reordered_y():
    """river pairs a mini-batch by position: a y without an index is paired row by row, but a
    y holding X's row labels in another order would silently mismatch them."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]}, index=[10, 11, 12, 13])
    y = pd.Series([True, True, False, False], index=X.index)
    aligned, by_position = NRRLS(), NRRLS()
    aligned.learn_many(X, y)
    by_position.learn_many(X, y.to_numpy())  # no index: paired by position
    assert by_position.weights == aligned.weights
    before = _state(aligned)
    with pytest.raises(ValueError, match=r"indexes of X and y differ .*position 0: row 10 of X"):
        aligned.learn_many(X, y.loc[[13, 12, 11, 10]])
    assert _state(aligned) == before
    aligned.learn_many(X, y.loc[[13, 12, 11, 10]].loc[X.index])  # aligned first: accepted


@pytest.mark.parametrize("as_labels", [list, tuple, np.array], ids=["list", "tuple", "ndarray"])
def test_learn_many_takes_labels_without_an_index(as_labels):
    """A list, tuple or numpy array of labels has no index: paired by position, like a
    Series on X's index (the pairing check must not ask it for one)."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]}, index=[10, 11, 12, 13])
    labels = [True, True, False, False]
    as_series, as_given = NRRLS(), NRRLS()
    as_series.learn_many(X, pd.Series(labels, index=X.index))
    as_given.learn_many(X, as_labels(labels))
    assert as_given.weights == as_series.weights


@pytest.mark.parametrize(
    ("params", "culprit"),
    [
        ({"l2": -1e-3}, "l2"),
        ({"l2": float("nan")}, "l2"),
        ({"l2": float("inf")}, "l2"),
        ({"l2": "1"}, "l2"),
        ({"forgetting": 0.0}, "forgetting"),
        ({"forgetting": 1.5}, "forgetting"),
        ({"forgetting": -0.5}, "forgetting"),
        ({"forgetting": float("nan")}, "forgetting"),
        ({"eta": 0.0}, "eta"),
        ({"eta": -1.0}, "eta"),
        ({"eta": float("nan")}, "eta"),
        ({"tau": float("nan")}, "tau"),
        ({"tau": None}, "tau"),
        ({"solver": "qr"}, "solver"),
        ({"solver": "woodbury", "l2": 0.0}, "woodbury"),
        ({"reweight": "yes"}, "reweight"),
        ({"intercept": None}, "intercept"),
    ],
    ids=repr,
)
def test_invalid_parameters_raise_at_construction(params, culprit):
    with pytest.raises((ValueError, TypeError), match=culprit):
        NRRLS(**params)


# ------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize(
    "params",
    [{}, {"intercept": False}, {"tau": 1.0, "eta": 0.5}, {"forgetting": 0.5, "reweight": False}],
    ids=repr,
)
def test_only_one_class_seen(params):
    model = NRRLS(**params)
    rows = [{"a": 1.0, "b": -2.0}, {"a": 0.5}, {}]
    for x in rows:
        model.learn_one(x, "only")
    for x in [*rows, PROBE]:
        decision = model.decision_one(x)
        assert list(decision) == ["only"] and math.isfinite(decision["only"])
        assert model.predict_one(x) == "only"
        assert model.predict_proba_one(x) == {"only": 1.0}
    X = pd.DataFrame(rows)
    assert model.predict_many(X).tolist() == ["only"] * 3
    assert model.predict_proba_many(X)["only"].tolist() == [1.0] * 3
    assert_model_matches(model, TERReference(rows, ["only"] * 3, **params), [PROBE], RTOL)


def test_empty_x_and_all_zero_rows():
    rows = [{}, {"a": 0.0, "b": 0.0}, {}, {"a": 0.0}]
    labels = ["x", "y", "y", "x"]
    for intercept in (True, False):
        model = NRRLS(intercept=intercept)
        for x, y in zip(rows, labels):
            model.learn_one(x, y)
        ref = TERReference(rows, labels, intercept=intercept)
        assert_model_matches(model, ref, [{}, PROBE], RTOL)
        assert model.weights == {"x": {"a": 0.0, "b": 0.0}, "y": {"a": 0.0, "b": 0.0}}
        if not intercept:
            # every output is 0: a tie, which goes to the class seen first
            assert model.decision_one(PROBE) == {"x": 0.0, "y": 0.0}
            assert model.predict_one(PROBE) == "x"
            assert model.predict_proba_one({}) == {"x": 0.5, "y": 0.5}


@pytest.mark.parametrize("params", list(NRRLS._unit_test_params()), ids=repr)
def test_predict_before_learning(params):
    model = NRRLS(**params)
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [0.0, 1.0]}, index=[5, 9])
    assert model.predict_proba_one({"a": 1.0}) == {}
    assert model.predict_one({"a": 1.0}) is None
    assert model.decision_one({"a": 1.0}) == {}
    predictions = model.predict_many(X)
    assert len(predictions) == 2 and predictions.isna().all()
    assert list(predictions.index) == [5, 9]
    assert model.predict_proba_many(X).empty
    assert model.weights == {} and model.intercepts == {} and model.n_samples == {}
    # predicting learned nothing
    assert pickle.dumps(model) == pickle.dumps(NRRLS(**params))


def test_features_seen_only_at_predict_time_are_ignored():
    model, _, _ = _trained()
    x = {"alpha_feature": 0.3, "beta": -0.2}
    reference = model.decision_one(x)
    before = _state(model)
    assert model.decision_one({**x, "unseen": 123.0, "other": -4.0}) == reference
    assert model.predict_proba_one({**x, "unseen": 5.0}) == model.predict_proba_one(x)
    X = pd.DataFrame([{**x, "unseen": 9.0}])
    assert model.predict_many(X).tolist() == [model.predict_one(x)]
    assert _state(model) == before
    assert all("unseen" not in w for w in model.weights.values())


def test_numpy_and_bool_labels_come_back_as_python_objects():
    model = NRRLS()
    model.learn_one({"a": 1.0}, np.bool_(True))
    model.learn_one({"a": -1.0}, np.bool_(False))
    model.learn_one({"a": 0.9}, True)  # the same class as np.bool_(True)
    assert model.n_samples == {True: 2.0, False: 1.0}
    assert all(type(label) is bool for label in model.n_samples)
    prediction = model.predict_one({"a": 1.0})
    assert prediction is True
    assert model.predict_one({"a": -1.0}) is False
    assert all(type(label) is bool for label in model.predict_proba_one({"a": 1.0}))
    assert all(type(label) is bool for label in model.weights)

    many = NRRLS()
    many.learn_many(pd.DataFrame({"a": [1.0, -1.0]}), pd.Series(np.array([True, False])))
    assert all(type(label) is bool for label in many.n_samples)
    assert all(type(p) is bool for p in many.predict_many(pd.DataFrame({"a": [2.0, -2.0]})))

    ints = NRRLS()
    ints.learn_one({"a": 1.0}, np.int64(3))
    ints.learn_one({"a": -1.0}, np.int64(4))
    assert type(ints.predict_one({"a": 1.0})) is int
    assert ints.predict_one({"a": 1.0}) == 3


@settings(max_examples=30, deadline=None)
@given(stream=streams(min_classes=2), params=PARAMS)
def test_prediction_outputs_are_consistent(stream, params):
    rows, labels = stream
    model = NRRLS(**params)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    probes = [PROBE, {}, *rows[:6]]
    for x in probes:
        decision = model.decision_one(x)
        proba = model.predict_proba_one(x)
        assert list(proba) == list(decision)
        assert sum(proba.values()) == pytest.approx(1.0, abs=1e-12)
        assert all(0.0 <= p <= 1.0 for p in proba.values())
        # the documented mapping: softmax of 2 f / eta
        expected = softmax([2 * f / params["eta"] for f in decision.values()])
        np.testing.assert_allclose(list(proba.values()), expected, rtol=1e-9, atol=1e-15)
        prediction = model.predict_one(x)
        assert decision[prediction] == max(decision.values())
        assert proba[prediction] == max(proba.values())
    X = _frame(probes)
    predictions = model.predict_many(X)
    assert list(predictions.index) == list(X.index)
    assert predictions.tolist() == [model.predict_one(x) for x in probes]
    probas = model.predict_proba_many(X)
    assert list(probas.index) == list(X.index)
    for (_, row), x in zip(probas.iterrows(), probes):
        expected = model.predict_proba_one(x)
        assert set(row.index) == set(expected)
        for label, p in expected.items():
            assert row[label] == pytest.approx(p, abs=1e-12)


def test_ties_go_to_the_class_seen_first():
    model = NRRLS(intercept=False)
    model.learn_one({"a": 1.0}, "late")
    model.learn_one({"a": -1.0}, "early")
    # x = {} gives every class the output 0
    assert model.predict_one({}) == "late"
    assert model.predict_many(pd.DataFrame({"a": [0.0, 0.0]})).tolist() == ["late", "late"]


def test_order_of_keys_does_not_change_the_result():
    rng = np.random.default_rng(4)
    names = ["f0", "f1", 2, "f3", "f4", "f5"]
    rows, labels = [], []
    for i in range(60):
        active = names[: 2 + i // 12]  # features emerge, several at once
        rows.append({name: float(rng.normal()) for name in active})
        labels.append(["p", "q", "r"][int(rng.integers(3))])
    straight, shuffled = NRRLS(forgetting=0.98), NRRLS(forgetting=0.98)
    for x, y in zip(rows, labels):
        straight.learn_one(x, y)
        keys = list(x)
        rng.shuffle(keys)
        shuffled.learn_one({key: x[key] for key in keys}, y)
    ref = TERReference(rows, labels, forgetting=0.98)
    a = model_matrix(straight.weights, straight.intercepts, ref)
    b = model_matrix(shuffled.weights, shuffled.intercepts, ref)
    assert np.linalg.norm(b - a) <= 1e-12 * ref.scale
    probe = rows[-1]
    reversed_probe = dict(reversed(list(probe.items())))
    for model in (straight, shuffled):
        d1, d2 = model.decision_one(probe), model.decision_one(reversed_probe)
        for label in d1:
            assert abs(d1[label] - d2[label]) <= 1e-12 * max(1.0, abs(d1[label]))


@pytest.mark.parametrize("params", list(NRRLS._unit_test_params()), ids=repr)
def test_pickled_model_continues_identically(params):
    model, rows, labels = _trained(params, n=20)
    copy = pickle.loads(pickle.dumps(model))
    rng = np.random.default_rng(5)
    for i in range(20):
        x = {"alpha_feature": float(rng.normal()), "delta": float(rng.normal())}
        y = ["cat", 7, ("t", 1), "new"][i % 4]
        model.learn_one(x, y)
        copy.learn_one(x, y)
        assert copy.decision_one(x) == model.decision_one(x)
    assert copy.weights == model.weights
    assert copy.n_samples == model.n_samples


def test_clone_gives_a_fresh_model():
    params = {"l2": 0.5, "forgetting": 0.9, "tau": 0.3, "eta": 2.0, "reweight": False}
    model, rows, labels = _trained(params)
    fresh = model.clone()
    assert fresh is not model
    assert fresh._get_params() == model._get_params()
    assert fresh.predict_proba_one(rows[0]) == {}
    assert fresh.n_samples == {}
    before = _state(model)
    for x, y in zip(rows, labels):
        fresh.learn_one(x, y)
    assert _state(model) == before
    assert fresh.weights == model.weights


def test_n_samples_are_decayed_masses():
    labels = ["a", "b", "a", "a", "c", "b", "a"]
    rows = [{"v": float(i)} for i in range(len(labels))]
    for forgetting in (1.0, 0.5, 0.9):
        one, many = NRRLS(forgetting=forgetting), NRRLS(forgetting=forgetting)
        for x, y in zip(rows, labels):
            one.learn_one(x, y)
        many.learn_many(pd.DataFrame(rows[:3]), pd.Series(labels[:3]))
        many.learn_many(pd.DataFrame(rows[3:]), pd.Series(labels[3:]))
        expected = class_masses(labels, forgetting)
        for model in (one, many):
            assert list(model.n_samples) == list(expected)
            for label, mass in expected.items():
                assert model.n_samples[label] == pytest.approx(mass, rel=1e-12)
    assert class_masses(labels, 0.5)["a"] == 0.125 + 0.25 + 0.5 + 1.0


# --------------------------------------------------------------------------- merging


@settings(max_examples=25, deadline=None)
@given(
    stream=streams(),
    params=PARAMS,
    cut=st.integers(0, 25),
    solver=st.sampled_from(["cholesky", "woodbury"]),
)
def test_merged_shards_equal_batch_ter_on_the_whole_stream(stream, params, cut, solver):
    rows, labels = stream
    params = {**params, "forgetting": 1.0}
    cut = min(cut, len(rows))
    left, right = NRRLS(**params, solver=solver), NRRLS(**params, solver=solver)
    for x, y in zip(rows[:cut], labels[:cut]):
        left.learn_one(x, y)
    for x, y in zip(rows[cut:], labels[cut:]):
        right.learn_one(x, y)
    states = _state(left), _state(right)
    merged = left + right
    assert (_state(left), _state(right)) == states
    ref = TERReference(rows, labels, **params)
    assert_model_matches(merged, ref, [PROBE], RTOL if solver == "cholesky" else RTOL_WOODBURY)
    left += right
    assert_model_matches(left, ref, [PROBE], RTOL if solver == "cholesky" else RTOL_WOODBURY)


def test_merging_with_forgetting_or_different_parameters_raises():
    a, _, _ = _trained({"forgetting": 0.9})
    b, _, _ = _trained({"forgetting": 0.9})
    with pytest.raises(ValueError, match="forgetting"):
        a + b
    c, _, _ = _trained({"l2": 1.0})
    d, _, _ = _trained({"l2": 2.0})
    before = _state(c)
    with pytest.raises(ValueError, match="l2"):
        c += d
    assert _state(c) == before


# --------------------------------------------------------------------- cost structure


def test_solves_happen_only_when_a_prediction_needs_new_weights(monkeypatch):
    calls = []
    solver_class = river_nrrls._solver.SystemSolver
    # A solve is a call of `solve`, or the compiled two-class prediction's (`_fused.pair_outputs`,
    # whose solve is reported by `pair_kernel_solved`).
    for name in ("solve", "pair_kernel_solved"):
        original = getattr(solver_class, name)

        def counting(*args, original=original, **kwargs):
            calls.append(1)
            return original(*args, **kwargs)

        monkeypatch.setattr(solver_class, name, counting)
    for classes in (("u", "v"), ("u", "v", "w", "z")):
        calls.clear()
        model, rows, labels = _trained(n=40, classes=classes)
        assert calls == []  # learn_one never solves
        model.learn_many(pd.DataFrame(rows[:10]), pd.Series(labels[:10]))
        assert calls == []  # neither does learn_many
        model.predict_one(rows[0])
        first = len(calls)
        assert 1 <= first <= len(classes)
        model.predict_one(rows[1])
        model.predict_proba_one(rows[2])
        model.decision_one(rows[3])
        model.predict_many(pd.DataFrame(rows))
        model.predict_proba_many(pd.DataFrame(rows))
        _ = model.weights, model.intercepts, model.n_samples
        assert len(calls) == first  # cached until the statistics change
        model.learn_one(rows[0], labels[0])
        assert len(calls) == first
        model.predict_one(rows[0])
        assert len(calls) == 2 * first


def test_state_size_does_not_grow_with_the_number_of_samples():
    sizes = []
    for n in (60, 600):
        model, _, _ = _trained({"forgetting": 0.99}, n=n)
        model.learn_one({"alpha_feature": 1.0, "beta": 2.0, "gamma": 0.5}, "cat")
        sizes.append(len(pickle.dumps(model)))
    assert sizes[0] == sizes[1]


def test_debug_one_contributions_add_up_to_the_outputs():
    """NRRLS.debug_one shares its tables with RLSRegressor.debug_one (`_debug`): per class, the
    contributions add up to the class's output; no feature and no intercept: the header."""
    model = NRRLS()
    for x, y in [({"a": 1.0, "b": 0.0}, "u"), ({"a": 0.5, "b": 1.0}, "v"), ({"b": 2.0}, "w")]:
        model.learn_one(x, y)
    probe = {"a": 2.0, "b": 0.5, "unseen": 1.0}
    tables = model.debug_one(probe, decimals=10).split("\n\n")
    for table, (label, output) in zip(tables, model.decision_one(probe).items()):
        assert table.startswith(f"Class {label!r}")
        total = sum(float(line.split()[-1]) for line in table.splitlines()[2:])
        assert total == pytest.approx(output, abs=1e-8)
    bare = NRRLS(intercept=False)
    bare.learn_one({"a": 1.0}, True)
    bare.learn_one({"a": -1.0}, False)
    assert all("Contribution" in table for table in bare.debug_one({}).split("\n\n"))
