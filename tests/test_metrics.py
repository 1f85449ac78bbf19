"""MisclassificationCost against a plain-numpy computation, and inside river's machinery."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import evaluate, linear_model, metrics

from river_nrrls import NRRLS, datasets
from river_nrrls import metrics as nrrls_metrics
from river_nrrls.metrics import MisclassificationCost


def _average_cost(y_true, y_pred, cost_pos, cost_neg, weights=None) -> float:
    """(C+ FN + C- FP) / n, with sample weights, in plain numpy."""
    y_true, y_pred = np.asarray(y_true, dtype=bool), np.asarray(y_pred, dtype=bool)
    weights = np.ones(len(y_true)) if weights is None else np.asarray(weights, dtype=float)
    costs = np.where(y_true & ~y_pred, cost_pos, 0.0) + np.where(~y_true & y_pred, cost_neg, 0.0)
    return float(weights @ costs / weights.sum()) if weights.sum() else 0.0


@settings(max_examples=40, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.booleans(), st.booleans(), st.floats(0.01, 5.0)), min_size=1, max_size=40
    ),
    cost_pos=st.floats(0.0, 20.0),
    cost_neg=st.floats(0.0, 20.0),
)
def test_the_average_cost_equals_a_numpy_computation(pairs, cost_pos, cost_neg):
    y_true, y_pred, weights = zip(*pairs)
    metric = MisclassificationCost(cost_pos, cost_neg)
    weighted = MisclassificationCost(cost_pos, cost_neg)
    for i, (yt, yp, w) in enumerate(pairs):
        metric.update(yt, yp)
        weighted.update(yt, yp, w)
        assert metric.get() == pytest.approx(
            _average_cost(y_true[: i + 1], y_pred[: i + 1], cost_pos, cost_neg), abs=1e-12
        )
    assert weighted.get() == pytest.approx(
        _average_cost(y_true, y_pred, cost_pos, cost_neg, weights), abs=1e-12
    )


def test_revert_undoes_update():
    metric = MisclassificationCost(5.0, 1.0)
    for yt, yp in [(True, False), (False, True), (True, True)]:
        metric.update(yt, yp)
    value = metric.get()
    metric.update(True, False)
    assert metric.get() != value
    metric.revert(True, False)
    assert metric.get() == pytest.approx(value)


def test_unit_costs_give_the_error_rate():
    y_true = [True, False, False, True, True, False]
    y_pred = [False, False, True, True, True, True]
    cost, accuracy = MisclassificationCost(), metrics.Accuracy()
    for yt, yp in zip(y_true, y_pred):
        cost.update(yt, yp)
        accuracy.update(yt, yp)
    assert cost.get() == pytest.approx(1.0 - accuracy.get())


def test_empty_metric_is_zero_and_smaller_is_better():
    metric = MisclassificationCost(5.0, 1.0)
    assert metric.get() == 0.0
    assert metric.bigger_is_better is False
    better, worse = MisclassificationCost(5.0, 1.0), MisclassificationCost(5.0, 1.0)
    better.update(True, True)
    worse.update(True, False)
    assert better.is_better_than(worse)
    assert repr(worse) == "MisclassificationCost: 5."  # river's format, trailing zeros stripped


def test_a_positive_label_other_than_true():
    metric = MisclassificationCost(5.0, 1.0, pos_val="sick")
    y_true = ["sick", "sick", "healthy", "healthy"]
    y_pred = ["healthy", "sick", "sick", "healthy"]
    for yt, yp in zip(y_true, y_pred):
        metric.update(yt, yp)
    assert metric.get() == pytest.approx((5.0 + 1.0) / 4)


def test_works_with_classifiers_only():
    metric = MisclassificationCost(5.0, 1.0)
    assert metric.works_with(NRRLS())
    assert metric.works_with(linear_model.LogisticRegression())
    assert not metric.works_with(linear_model.LinearRegression())
    with pytest.raises(ValueError, match="not compatible"):
        evaluate.progressive_val_score([({"a": 1.0}, 1.0)], linear_model.LinearRegression(), metric)


def test_composition_and_progressive_validation():
    data = list(datasets.Pima())[::3]
    combined = MisclassificationCost(5.0, 1.0) + metrics.Accuracy() + metrics.Recall()
    assert isinstance(combined, metrics.base.Metrics)
    evaluate.progressive_val_score(data, NRRLS(), combined)

    model, y_true, y_pred = NRRLS(), [], []
    for x, y in data:
        prediction = model.predict_one(x)
        if prediction is not None:
            y_true.append(y)
            y_pred.append(prediction)
        model.learn_one(x, y)
    cost, accuracy, recall = combined.get()
    assert cost == pytest.approx(_average_cost(y_true, y_pred, 5.0, 1.0))
    assert accuracy == pytest.approx(np.mean(np.equal(y_true, y_pred)))
    assert "MisclassificationCost" in repr(combined)
    with pytest.raises(ValueError, match="not compatible"):
        MisclassificationCost() + metrics.MAE()


def test_a_shared_confusion_matrix():
    cm = metrics.ConfusionMatrix()
    shared = MisclassificationCost(5.0, 1.0, cm=cm) + metrics.Recall(cm=cm)
    alone = MisclassificationCost(5.0, 1.0)
    for yt, yp in [(True, False), (False, True), (True, True), (False, False), (True, False)]:
        shared.update(yt, yp)
        alone.update(yt, yp)
    assert shared[0].get() == pytest.approx(alone.get())


def test_clone_and_pickle():
    metric = MisclassificationCost(5.0, 2.0)
    metric.update(True, False)
    clone = metric.clone()
    assert (clone.cost_pos, clone.cost_neg, clone.get()) == (5.0, 2.0, 0.0)
    assert pickle.loads(pickle.dumps(metric)).get() == metric.get()


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"cost_pos": -1.0}, ValueError),
        ({"cost_neg": float("nan")}, ValueError),
        ({"cost_pos": float("inf")}, ValueError),
        ({"cost_neg": "1"}, TypeError),
        ({"cost_pos": True}, TypeError),
        ({"cost_pos": None}, TypeError),
    ],
)
def test_invalid_costs(params, error):
    with pytest.raises(error, match=next(iter(params))):
        MisclassificationCost(**params)


def test_the_module_is_exported():
    assert nrrls_metrics.MisclassificationCost is MisclassificationCost
