"""Sample weights: ``learn_one(x, y, w)`` and ``learn_many(X, y, w)`` are the exact weighted TER.

A sample of weight ``w`` has ``w`` times the mass of a sample of weight 1 (times the forgetting's
decay), so the model must equal the batch reference of ``tests/reference.py`` with those masses
after every prefix; a weight-0 sample is not in the stream at all.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import TERReference, assert_model_matches, class_masses
from test_nrrls import PARAMS, PROBE, _frame, _series, streams

from river_nrrls import NRRLS, datasets

RTOL = 1e-9
RTOL_WOODBURY = 1e-6
WEIGHTS = st.sampled_from([0.0, 0.25, 1.0, 1.0, 2.0, 3, 7.5])


def _weights(draw, n: int) -> list:
    return draw(st.lists(WEIGHTS, min_size=n, max_size=n))


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    stream=streams(),
    params=PARAMS,
    solver=st.sampled_from(["cholesky"] * 3 + ["woodbury"]),
)
def test_learn_one_with_weights_equals_weighted_batch_ter(data, stream, params, solver):
    rows, labels = stream
    weights = _weights(data.draw, len(rows))
    model = NRRLS(**params, solver=solver)
    rtol = RTOL if solver == "cholesky" else RTOL_WOODBURY
    for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
        model.learn_one(x, y, w=w)
        if not any(weights[: i + 1]):
            assert model.weights == {} and model.n_samples == {}
            continue
        ref = TERReference(
            rows[: i + 1], labels[: i + 1], **params, sample_weights=weights[: i + 1]
        )
        assert_model_matches(model, ref, [PROBE, x], rtol)
        masses = class_masses(labels[: i + 1], params["forgetting"], weights[: i + 1])
        assert model.n_samples == pytest.approx(masses, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    stream=streams(),
    params=PARAMS,
    solver=st.sampled_from(["cholesky", "woodbury"]),
)
def test_learn_many_with_weights_equals_the_learn_one_loop(data, stream, params, solver):
    rows, labels = stream
    weights = _weights(data.draw, len(rows))
    cut = data.draw(st.integers(0, len(rows)))
    many = NRRLS(**params, solver=solver)
    one = NRRLS(**params, solver=solver)
    for start, stop in ((0, cut), (cut, len(rows))):
        many.learn_many(
            _frame(rows[start:stop], start),
            _series(labels[start:stop], start),
            w=pd.Series(weights[start:stop], index=_series(labels[start:stop], start).index),
        )
    for x, y, w in zip(rows, labels, weights):
        one.learn_one(x, y, w=w)
    assert many.n_samples == pytest.approx(one.n_samples, rel=1e-12)
    assert list(many.n_samples) == list(one.n_samples)  # same classes, same order
    if any(weights):
        ref = TERReference(rows, labels, **params, sample_weights=weights)
        rtol = RTOL if solver == "cholesky" else RTOL_WOODBURY
        assert_model_matches(many, ref, [PROBE], rtol)
        assert_model_matches(one, ref, [PROBE], rtol)


@pytest.mark.parametrize("solver", ["cholesky", "woodbury"])
def test_an_integer_weight_equals_repeating_the_sample(solver):
    samples = list(datasets.Pima().take(120))
    weighted, repeated = NRRLS(solver=solver), NRRLS(solver=solver)
    for i, (x, y) in enumerate(samples):
        copies = 1 + i % 3
        weighted.learn_one(x, y, w=copies)
        for _ in range(copies):
            repeated.learn_one(x, y)
    assert weighted.n_samples == repeated.n_samples
    rtol = RTOL if solver == "cholesky" else RTOL_WOODBURY
    rows = [x for x, _ in samples]
    ref = TERReference(
        rows, [y for _, y in samples], sample_weights=[1 + i % 3 for i in range(120)]
    )
    assert_model_matches(weighted, ref, rows[:5], rtol)
    assert_model_matches(repeated, ref, rows[:5], rtol)


def test_weight_zero_is_a_no_op():
    model = NRRLS()
    model.learn_one({"a": 1.0}, True)
    model.learn_one({"a": -1.0}, False)
    before = pickle.dumps(model)
    model.learn_one({"a": 3.0, "new": 1.0}, "new class", w=0)
    model.learn_many(pd.DataFrame({"a": [2.0], "other": [1.0]}), pd.Series(["c"]), w=0.0)
    assert pickle.dumps(model) == before


def test_a_scalar_weight_in_learn_many_weights_every_row():
    X = pd.DataFrame({"a": [1.0, -1.0, 0.5], "b": [0.0, 2.0, 1.0]})
    y = pd.Series([True, False, True])
    scaled, one_by_one = NRRLS(), NRRLS()
    scaled.learn_many(X, y, w=2.5)
    for (_, row), label in zip(X.iterrows(), y):
        one_by_one.learn_one(row.to_dict(), label, w=2.5)
    assert scaled.n_samples == one_by_one.n_samples == {True: 5.0, False: 2.5}
    np.testing.assert_allclose(
        list(scaled.weights[True].values()), list(one_by_one.weights[True].values()), rtol=1e-12
    )


def test_merging_weighted_models_is_exact():
    rows = [
        {"a": float(v), "b": float(u)} for v, u in np.random.default_rng(3).normal(size=(30, 2))
    ]
    labels = [i % 3 == 0 for i in range(30)]
    weights = [0.5 + (i % 4) for i in range(30)]
    left, right = NRRLS(), NRRLS()
    for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
        (left if i < 12 else right).learn_one(x, y, w=w)
    ref = TERReference(rows, labels, sample_weights=weights)
    assert_model_matches(left + right, ref, rows[:3], RTOL)


@pytest.mark.parametrize(
    ("w", "error", "message"),
    [
        (-1.0, ValueError, "w"),
        (float("nan"), ValueError, "w"),
        (float("inf"), ValueError, "w"),
        ("2", TypeError, "w"),
        (True, TypeError, "w"),
        (None, TypeError, "w"),
    ],
)
def test_a_bad_weight_is_refused_and_changes_nothing(w, error, message):
    model = NRRLS()
    model.learn_one({"a": 1.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(error, match=message):
        model.learn_one({"a": 2.0, "new": 1.0}, False, w=w)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    ("w", "error", "message"),
    [
        ([1.0, -1.0], ValueError, "row 1"),
        ([1.0, float("nan")], ValueError, "row 1"),
        (pd.Series([1.0, 2.0], index=[10, 11]), ValueError, "index"),
        ([1.0], ValueError, "1 weights"),
        (["1", 2.0], TypeError, "row 0"),
        ([True, 1.0], TypeError, "row 0"),
        (-2.0, ValueError, "w"),
        ("heavy", TypeError, "w"),
    ],
)
def test_bad_batch_weights_are_refused_and_change_nothing(w, error, message):
    model = NRRLS()
    model.learn_one({"a": 1.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(error, match=message):
        model.learn_many(
            pd.DataFrame({"a": [1.0, 2.0], "new": [0.5, 1.0]}), pd.Series([True, "x"]), w=w
        )
    assert pickle.dumps(model) == before
