"""Sample weights around NRRLS: river's evaluation and wrappers, Dask, the order selector, the
baselines and every dataframe backend."""

from __future__ import annotations

import itertools
import pickle
import random

import pandas as pd
import polars as pl
import pytest
from reference import TERReference, assert_model_matches
from river import drift, evaluate, metrics

from river_nrrls import (
    ARRLS,
    IRRLS,
    NRRLS,
    ACOGClassifier,
    AROWClassifier,
    CWClassifier,
    PolynomialOrderSelector,
    datasets,
)


def _pima(n: int = 150) -> list[tuple[dict, bool]]:
    samples = list(itertools.islice(datasets.Pima(), 400))
    random.Random(7).shuffle(samples)
    return samples[:n]


def _weighted(samples, weights):
    return [(x, y, {"w": w}) for (x, y), w in zip(samples, weights)]


def _score(model, weighted_samples) -> float:
    metric = metrics.GeometricMean()
    evaluate.progressive_val_score(weighted_samples, model, metric)
    return metric.get()


def test_progressive_val_score_forwards_the_weights():
    samples = _pima()
    plain = _score(NRRLS(), _weighted(samples, [1.0] * len(samples)))
    scores = {
        w: _score(NRRLS(), _weighted(samples, [w if i % 3 == 0 else 1.0 for i in range(150)]))
        for w in (0.0, 5.0)
    }
    assert scores[0.0] != plain
    assert scores[5.0] != plain
    assert scores[0.0] != scores[5.0]


def test_weighted_stream_model_equals_the_weighted_batch_reference():
    samples = _pima(120)
    weights = [float(i % 4) for i in range(len(samples))]  # 0 (left out) to 3
    model = NRRLS()
    evaluate.progressive_val_score(_weighted(samples, weights), model, metrics.Accuracy())
    rows = [x for x, _ in samples]
    reference = TERReference(rows, [y for _, y in samples], sample_weights=weights)
    assert_model_matches(model, reference, rows[:5], 1e-9)


def test_integer_weights_equal_repeating_the_samples():
    samples = _pima(100)
    weights = [1 + i % 3 for i in range(len(samples))]
    weighted, repeated = NRRLS(), NRRLS()
    evaluate.progressive_val_score(_weighted(samples, weights), weighted, metrics.Accuracy())
    for (x, y), w in zip(samples, weights):
        for _ in range(w):
            repeated.learn_one(x, y)
    assert weighted.n_samples == repeated.n_samples
    for label, row in repeated.weights.items():
        for feature, value in row.items():
            assert weighted.weights[label][feature] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_drift_retraining_classifier_on_a_weighted_stream():
    samples = _pima()
    weights = [1.0 + (i % 2) for i in range(len(samples))]
    model = drift.DriftRetrainingClassifier(NRRLS(), drift.binary.DDM())
    metric = metrics.Accuracy()
    evaluate.progressive_val_score(_weighted(samples, weights), model, metric)
    assert 0.5 < metric.get() <= 1.0
    unweighted = drift.DriftRetrainingClassifier(NRRLS(), drift.binary.DDM())
    for x, y in samples:
        unweighted.learn_one(x, y)
    assert model.model.n_samples != unweighted.model.n_samples  # the weights reached NRRLS


@pytest.mark.parametrize("to_series", [lambda w: w, pl.from_pandas, lambda w: w.to_numpy()])
def test_learn_many_with_weights_of_any_backend(to_series):
    samples = _pima(80)
    X = pd.DataFrame([x for x, _ in samples])
    y = pd.Series([y for _, y in samples])
    w = pd.Series([float(i % 3) for i in range(len(samples))])
    batch, loop = NRRLS(), NRRLS()
    batch.learn_many(pl.from_pandas(X), y, w=to_series(w))
    for (x, label), weight in zip(samples, w):
        loop.learn_one(x, label, w=weight)
    assert batch.n_samples == loop.n_samples
    for label, row in loop.weights.items():
        for feature, value in row.items():
            assert batch.weights[label][feature] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_dask_fit_with_a_weight_column_or_series():
    import dask.dataframe as dd

    from river_nrrls import dask as nrrls_dask

    samples = _pima(90)
    X = pd.DataFrame([x for x, _ in samples])
    y = pd.Series([y for _, y in samples], name="label")
    w = pd.Series([float(i % 4) for i in range(len(samples))], name="w")
    reference = NRRLS()
    reference.learn_many(X, y, w=w)
    frame = dd.from_pandas(X.assign(label=y, w=w), npartitions=3)
    fitted = [
        nrrls_dask.fit(frame, "label", weight="w"),
        nrrls_dask.fit(frame.drop(columns=["w"]), "label", weight=frame["w"]),
    ]
    for model in fitted:
        assert model.n_samples == reference.n_samples
        assert "w" not in model.weights[True]
        for label, row in reference.weights.items():
            for feature, value in row.items():
                assert model.weights[label][feature] == pytest.approx(value, rel=1e-9, abs=1e-12)
    unweighted = nrrls_dask.fit(frame.drop(columns=["w"]), "label")
    assert unweighted.n_samples != reference.n_samples


def test_dask_fit_refuses_a_missing_weight_column():
    import dask.dataframe as dd

    from river_nrrls import dask as nrrls_dask

    frame = dd.from_pandas(pd.DataFrame({"a": [1.0, 2.0], "label": [True, False]}), 1)
    with pytest.raises(ValueError, match="'nope'"):
        nrrls_dask.fit(frame, "label", weight="nope")


def test_order_selector_passes_weights_to_its_pipelines_and_scores():
    samples = _pima(120)
    weighted, plain = PolynomialOrderSelector(orders=(1, 2)), PolynomialOrderSelector(orders=(1, 2))
    weights = [1 + i % 3 for i in range(len(samples))]
    for (x, y), w in zip(samples, weights):
        weighted.learn_one(x, y, w=w)
        plain.learn_one(x, y)
    for order in (1, 2):
        repeated = NRRLS()
        for (x, y), w in zip(samples, weights):
            for _ in range(w):
                extender = weighted.pipelines[order]["PolynomialExtender"]
                repeated.learn_one(extender.transform_one(x), y)
        assert weighted.pipelines[order]["NRRLS"].n_samples == repeated.n_samples
    assert weighted.scores[1].cm.total_weight == sum(weights[1:])  # the first is not scored
    assert plain.scores[1].cm.total_weight == len(samples) - 1


def test_order_selector_weight_zero_changes_nothing():
    samples = _pima(30)
    selector = PolynomialOrderSelector(orders=(1, 2))
    for x, y in samples:
        selector.learn_one(x, y)
    for pipeline in selector.pipelines.values():
        pipeline.predict_one(samples[0][0])  # solve now: the cached solutions are state too
    before = pickle.dumps(selector)
    selector.learn_one(samples[0][0], samples[0][1], w=0)
    assert pickle.dumps(selector) == before
    with pytest.raises(ValueError, match="w"):
        selector.learn_one(samples[0][0], samples[0][1], w=-1.0)
    assert pickle.dumps(selector) == before


def test_irrls_integer_weight_equals_repeating():
    samples = _pima(60)
    weighted, repeated = IRRLS(), IRRLS()
    for i, (x, y) in enumerate(samples):
        w = 1 + i % 3
        weighted.learn_one(x, y, w=w)
        for _ in range(w):
            repeated.learn_one(x, y)
    for label, row in repeated.weights.items():
        for feature, value in row.items():
            assert weighted.weights[label][feature] == pytest.approx(value, rel=1e-7, abs=1e-10)


BASELINES = [ARRLS, IRRLS, AROWClassifier, ACOGClassifier, CWClassifier]


@pytest.mark.parametrize("cls", BASELINES, ids=lambda cls: cls.__name__)
def test_baselines_accept_w(cls):
    samples = _pima(60)
    plain, zero, weighted = cls(), cls(), cls()
    for i, (x, y) in enumerate(samples):
        plain.learn_one(x, y)
        weighted.learn_one(x, y, w=1.0 + 2.0 * (i % 2))
        zero.learn_one(x, y, w=0.0 if i % 2 else 1.0)
    if cls is CWClassifier:  # documented: CW has no weighted update, w > 0 takes the same step
        assert weighted.weights == plain.weights
    else:
        assert weighted.weights != plain.weights
    assert zero.weights != plain.weights
    before = pickle.dumps(plain)
    for bad, error in ((-1.0, ValueError), (float("nan"), ValueError), ("2", TypeError)):
        with pytest.raises(error, match="w"):
            plain.learn_one(samples[0][0], samples[0][1], w=bad)
    assert pickle.dumps(plain) == before
    plain.learn_one(samples[0][0], samples[0][1], w=0)
    assert pickle.dumps(plain) == before


@pytest.mark.parametrize("cls", BASELINES, ids=lambda cls: cls.__name__)
def test_baselines_on_a_weighted_stream(cls):
    samples = _pima(60)
    metric = metrics.Accuracy()
    evaluate.progressive_val_score(
        _weighted(samples, [1.0 + i % 2 for i in range(60)]), cls(), metric
    )
    assert 0.0 <= metric.get() <= 1.0
