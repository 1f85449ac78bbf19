"""``river_nrrls.dask``: exact NR-RLS fits of Dask DataFrames on a local multi-process cluster.

The Dask fit learns every partition separately and adds the partial models up; it must give the
model that learns the whole stream sequentially, checked here against the plain-numpy batch TER
reference of ``tests/reference.py`` (relative error 1e-9) and against the sequential models
themselves. Every computation runs on a ``dask.distributed.LocalCluster`` of two worker
processes that this module starts and stops.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip(
    "dask.dataframe", reason='dask is not installed: pip install "river-nrrls[dask]"'
)
distributed = pytest.importorskip(
    "dask.distributed", reason='dask.distributed is not installed: pip install "river-nrrls[dask]"'
)

import dask  # noqa: E402
from dask.dataframe.utils import assert_eq  # noqa: E402
from reference import TERReference, assert_model_matches, model_matrix  # noqa: E402
from river import compose, linear_model, preprocessing  # noqa: E402

from river_nrrls import NRRLS, PolynomialExtender  # noqa: E402
from river_nrrls import dask as nrrls_dask  # noqa: E402

pytestmark = pytest.mark.slow  # a Dask cluster

RTOL = 1e-9
RTOL_WOODBURY = 1e-6
FEATURES = ["f0", "f1", "f2", "flag", "late", "never"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


# ---------------------------------------------------------------------------------- data


def _frame(n: int, classes, seed: int = 0, late_start: int | None = None) -> pd.DataFrame:
    """Features with missing values (NaN), a bool feature, a feature that emerges at
    ``late_start``, one that is never observed, and a label column from a noisy linear concept."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, 3))
    frame = pd.DataFrame(values, columns=["f0", "f1", "f2"])
    frame.loc[rng.random(n) < 0.05, "f1"] = np.nan
    frame["flag"] = rng.random(n) < 0.3
    late_start = n // 2 if late_start is None else late_start
    frame["late"] = np.where(np.arange(n) >= late_start, rng.uniform(size=n), np.nan)
    frame["never"] = np.nan
    scores = np.nan_to_num(frame[["f0", "f1", "f2", "late"]].to_numpy()) @ rng.normal(
        size=(4, len(classes))
    ) + 0.5 * rng.normal(size=(n, len(classes)))
    codes = scores.argmax(axis=1)
    frame["label"] = [classes[c] for c in codes]  # bool, int or str dtype, as pandas infers
    return frame


def _rows(frame: pd.DataFrame) -> list[dict]:
    """Feature dicts for learn_one and the reference: NaN becomes None (missing)."""
    records = frame.drop(columns="label").to_dict("records")
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        for row in records
    ]


def _labels(frame: pd.DataFrame) -> list:
    return frame["label"].tolist()


def _sequential(frame: pd.DataFrame, **params) -> NRRLS:
    model = NRRLS(**params)
    for x, y in zip(_rows(frame), _labels(frame)):
        model.learn_one(x, y)
    return model


def _by_partitions(pieces: list[pd.DataFrame], **params) -> NRRLS:
    """learn_many over the non-empty partitions in order: the class/feature order to expect."""
    model = NRRLS(**params)
    for piece in pieces:
        if len(piece):
            model.learn_many(piece.drop(columns="label"), piece["label"])
    return model


def _from_pieces(pieces: list[pd.DataFrame]):
    """A Dask DataFrame whose partitions are exactly ``pieces`` (empty ones included)."""
    return dd.from_delayed([dask.delayed(p) for p in pieces], meta=pieces[0].iloc[:0])


def _split(frame: pd.DataFrame, sizes: list[int]) -> list[pd.DataFrame]:
    bounds = np.cumsum([0, *sizes])
    assert bounds[-1] == len(frame)
    return [frame.iloc[start:stop] for start, stop in zip(bounds[:-1], bounds[1:])]


def _assert_same_model(fitted: NRRLS, expected: NRRLS, ref: TERReference, rtol: float = RTOL):
    """Same classes and features (in the same order), same weights to ``rtol`` relative."""
    assert list(fitted.weights) == list(expected.weights)
    for label in expected.weights:
        assert list(fitted.weights[label]) == list(expected.weights[label])
    assert fitted.n_samples == expected.n_samples
    difference = np.linalg.norm(
        model_matrix(fitted.weights, fitted.intercepts, ref)
        - model_matrix(expected.weights, expected.intercepts, ref)
    )
    assert difference <= rtol * ref.scale


def _probes(frame: pd.DataFrame) -> list[dict]:
    return _rows(frame.iloc[:5]) + [{"f0": 1.0, "late": 0.5, "unknown": 3.0}, {}]


# ------------------------------------------------------------------------------ fitting


def test_binary_fit_on_the_cluster_equals_the_sequential_model(client):
    frame = _frame(1500, (True, False), seed=1)
    ddf = dd.from_pandas(frame, npartitions=6)
    with distributed.get_task_stream(client) as tasks:
        fitted = nrrls_dask.fit(ddf, "label", NRRLS())
    # The work ran on the cluster's worker processes.
    workers = set(client.scheduler_info()["workers"])
    assert tasks.data and {task["worker"] for task in tasks.data} <= workers
    assert type(fitted) is NRRLS
    ref = TERReference(_rows(frame), _labels(frame))
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    assert "never" not in fitted.weights[True]  # an unobserved column is no feature
    _assert_same_model(fitted, _sequential(frame), ref)


def test_the_fitted_model_keeps_learning_online(client):
    frame = _frame(900, ("a", "b", "c"), seed=2)
    fitted = nrrls_dask.fit(dd.from_pandas(frame.iloc[:600], npartitions=3), "label")
    for x, y in zip(_rows(frame.iloc[600:]), _labels(frame.iloc[600:])):
        fitted.learn_one(x, y)
    ref = TERReference(_rows(frame), _labels(frame))
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    _assert_same_model(fitted, _sequential(frame), ref)
    # ... and merges with other models: fit more data into it exactly.
    more = _frame(300, ("a", "b", "c", "d"), seed=3)
    fitted += nrrls_dask.fit(dd.from_pandas(more, npartitions=2), "label", fitted)
    both = pd.concat([frame, more], ignore_index=True)
    assert_model_matches(fitted, TERReference(_rows(both), _labels(both)), _probes(both), RTOL)


def test_multiclass_with_a_class_that_appears_late(client):
    frame = _frame(1200, ("cat", "dog", "bird"), seed=4)
    late = _frame(300, ("cat", "eel"), seed=5)
    frame = pd.concat([frame, late], ignore_index=True)
    pieces = _split(frame, [300] * 5)
    fitted = nrrls_dask.fit(_from_pieces(pieces), "label", NRRLS(reweight=True, tau=0.2))
    assert list(fitted.weights) == list(dict.fromkeys(_labels(frame)))
    ref = TERReference(_rows(frame), _labels(frame), tau=0.2)
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    _assert_same_model(fitted, _by_partitions(pieces, tau=0.2), ref)
    assert fitted.n_samples == _sequential(frame, tau=0.2).n_samples


def test_integer_labels_and_ridge_parameters(client):
    frame = _frame(800, (3, 1, 2), seed=6)
    params = {"reweight": False, "intercept": False, "l2": 0.5, "eta": 2.0}
    fitted = nrrls_dask.fit(dd.from_pandas(frame, npartitions=4), "label", NRRLS(**params))
    assert all(type(label) is int for label in fitted.weights)
    ref = TERReference(_rows(frame), _labels(frame), **params)
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    assert fitted.intercepts == {label: 0.0 for label in (3, 1, 2)}


def test_emerging_features_follow_the_partition_order(client):
    # "late" is missing from the first three partitions entirely.
    frame = _frame(1000, (True, False), seed=7, late_start=600)
    pieces = _split(frame, [200] * 5)
    fitted = nrrls_dask.fit(_from_pieces(pieces), "label")
    expected = _by_partitions(pieces)
    assert list(fitted.weights[True]) == ["f0", "f1", "f2", "flag", "late"]
    ref = TERReference(_rows(frame), _labels(frame))
    _assert_same_model(fitted, expected, ref)
    assert_model_matches(fitted, ref, _probes(frame), RTOL)


@pytest.mark.parametrize("split_every", [2, 3, 8])
def test_unequal_and_empty_partitions(client, split_every):
    frame = _frame(1400, ("x", "y", "z"), seed=8, late_start=1000)
    sizes = [0, 1, 450, 0, 37, 2, 0, 810, 100, 0]
    pieces = _split(frame, sizes)
    fitted = nrrls_dask.fit(_from_pieces(pieces), "label", split_every=split_every)
    ref = TERReference(_rows(frame), _labels(frame))
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    _assert_same_model(fitted, _by_partitions(pieces), ref)
    assert "never" not in fitted.weights["x"]  # empty partitions register no feature


def test_empty_partitions_from_a_filter(client):
    frame = _frame(1000, (True, False), seed=9)
    ddf = dd.from_pandas(frame.sort_values("f0", ignore_index=True), npartitions=5)
    kept = ddf[ddf["f0"] > 0.3]  # the first partitions become empty
    lengths = kept.map_partitions(len).compute().tolist()
    assert 0 in lengths and sum(lengths) > 0
    fitted = nrrls_dask.fit(kept, "label")
    subset = frame.sort_values("f0", ignore_index=True)
    subset = subset[subset["f0"] > 0.3]
    assert_model_matches(
        fitted, TERReference(_rows(subset), _labels(subset)), _probes(subset), RTOL
    )


def test_target_as_a_dask_series(client):
    frame = _frame(700, ("u", "v"), seed=10)
    ddf = dd.from_pandas(frame, npartitions=3)
    fitted = nrrls_dask.fit(ddf.drop(columns="label"), ddf["label"])
    ref = TERReference(_rows(frame), _labels(frame))
    assert_model_matches(fitted, ref, _probes(frame), RTOL)
    other = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="partitions"):
        nrrls_dask.fit(ddf.drop(columns="label"), other["label"])


def test_the_given_model_is_only_a_template(client):
    frame = _frame(400, ("u", "v"), seed=11)
    template = _sequential(frame.iloc[:50], l2=0.01)
    before = pickle.dumps(template)
    fitted = nrrls_dask.fit(dd.from_pandas(frame, npartitions=2), "label", template)
    assert pickle.dumps(template) == before
    assert fitted is not template and fitted.l2 == 0.01
    assert_model_matches(
        fitted, TERReference(_rows(frame), _labels(frame), l2=0.01), _probes(frame), RTOL
    )


def test_woodbury_solver(client):
    frame = _frame(300, ("u", "v", "w"), seed=12)
    fitted = nrrls_dask.fit(dd.from_pandas(frame, npartitions=3), "label", NRRLS(solver="woodbury"))
    assert fitted.solver == "woodbury"
    ref = TERReference(_rows(frame), _labels(frame))
    assert_model_matches(fitted, ref, _probes(frame), RTOL_WOODBURY)


def test_polynomial_pipeline(client):
    frame = _frame(900, (True, False), seed=13, late_start=500)
    pieces = _split(frame, [0, 250, 250, 400, 0])
    template = PolynomialExtender(degree=3) | NRRLS(l2=1e-3)
    before = pickle.dumps(template)
    fitted = nrrls_dask.fit(_from_pieces(pieces), "label", template)
    assert pickle.dumps(template) == before
    assert isinstance(fitted, compose.Pipeline) and fitted is not template
    assert list(fitted.steps) == list(template.steps)
    assert (
        fitted["PolynomialExtender"]._get_params() == template["PolynomialExtender"]._get_params()
    )
    # The reference learns the expanded rows, one by one.
    expander = PolynomialExtender(degree=3)
    expanded = [expander.transform_one(x) for x in _rows(frame)]
    ref = TERReference(expanded, _labels(frame), l2=1e-3)
    assert_model_matches(fitted["NRRLS"], ref, expanded[:5], RTOL)
    sequential = PolynomialExtender(degree=3) | NRRLS(l2=1e-3)
    for x, y in zip(_rows(frame), _labels(frame)):
        sequential.learn_one(x, y)
    for x in _rows(frame.iloc[:20]):
        assert fitted.predict_one(x) == sequential.predict_one(x)
    # It goes on learning online, as a pipeline.
    fitted.learn_one({"f0": 1.0, "late": 0.2}, True)


# ------------------------------------------------------------------------------- errors


def test_bad_arguments_raise_before_any_work(client):
    frame = _frame(100, ("u", "v"), seed=14)
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(TypeError, match="dask DataFrame"):
        nrrls_dask.fit(frame, "label")
    with pytest.raises(ValueError, match="'nope'"):
        nrrls_dask.fit(ddf, "nope")
    with pytest.raises(ValueError, match="forgetting"):
        nrrls_dask.fit(ddf, "label", NRRLS(forgetting=0.99))
    with pytest.raises(ValueError, match="split_every"):
        nrrls_dask.fit(ddf, "label", split_every=1)
    with pytest.raises(TypeError, match="LogisticRegression"):
        nrrls_dask.fit(ddf, "label", linear_model.LogisticRegression())
    with pytest.raises(TypeError, match="StandardScaler"):
        nrrls_dask.fit(ddf, "label", preprocessing.StandardScaler() | NRRLS())
    with pytest.raises(TypeError, match="last step"):
        nrrls_dask.fit(ddf, "label", PolynomialExtender() | linear_model.LogisticRegression())
    with pytest.raises(TypeError, match="dask DataFrame"):
        nrrls_dask.predict(NRRLS(), frame)
    with pytest.raises(TypeError, match="NRRLS"):
        nrrls_dask.predict_proba(linear_model.LogisticRegression(), ddf)


def test_bad_values_in_a_partition_raise_naming_the_culprit(client):
    frame = _frame(200, ("u", "v"), seed=15)
    broken = frame.copy()
    broken.loc[150, "f2"] = np.inf
    with pytest.raises(ValueError, match="'f2'"):
        nrrls_dask.fit(dd.from_pandas(broken, npartitions=2), "label")
    unlabelled = frame.copy()
    unlabelled.loc[120, "label"] = None
    with pytest.raises(ValueError, match="'label'.*missing"):
        nrrls_dask.fit(dd.from_pandas(unlabelled, npartitions=2), "label")
    texts = frame.assign(f0=frame["f0"].astype(str))
    with pytest.raises(TypeError, match="'f0'"):
        nrrls_dask.fit(dd.from_pandas(texts, npartitions=2), "label")


def _failed_tasks_logged(client) -> int:
    """How many "Compute Failed" records (each with the task's traceback) the workers logged:
    what a worker prints on its stderr when a task raises."""
    logs = client.get_worker_logs()
    return sum("Compute Failed" in message for records in logs.values() for _, message in records)


def test_bad_data_is_refused_without_the_workers_tracebacks(client, capfd):
    frame = _frame(200, ("u", "v"), seed=16)
    unlabelled = frame.copy()
    unlabelled.loc[150, "label"] = None
    broken = frame.copy()
    broken.loc[190, "f2"] = np.inf
    broken.loc[30, "f1"] = np.inf
    failed_before = _failed_tasks_logged(client)
    capfd.readouterr()
    with pytest.raises(ValueError, match="'label' has a missing value at row 150") as error:
        nrrls_dask.fit(dd.from_pandas(unlabelled, npartitions=3), "label", split_every=2)
    assert error.value.__cause__ is None
    with pytest.raises(ValueError, match="'f1'") as error:  # the first partition's culprit
        nrrls_dask.fit(dd.from_pandas(broken, npartitions=3), "label", split_every=2)
    assert "'f2'" not in str(error.value)
    assert _failed_tasks_logged(client) == failed_before  # no worker printed a traceback
    assert "Traceback" not in capfd.readouterr().err


# ------------------------------------------------------------------------------ scoring


def _scored(model, pieces):
    """Dask predictions and probabilities next to the model's own predict_many on pandas."""
    features = [piece.drop(columns="label") for piece in pieces]
    ddf = dd.from_delayed([dask.delayed(p) for p in features], meta=features[0].iloc[:0])
    whole = pd.concat(features)
    return ddf, whole


@pytest.mark.parametrize("kind", ["nrrls", "pipeline"])
def test_predict_and_predict_proba_match_predict_many(client, kind):
    frame = _frame(900, ("cat", "dog", "eel"), seed=16)
    pieces = _split(frame, [0, 300, 100, 0, 500])
    template = NRRLS() if kind == "nrrls" else PolynomialExtender(degree=2) | NRRLS()
    model = nrrls_dask.fit(_from_pieces(pieces), "label", template)
    ddf, whole = _scored(model, pieces)
    predictions = nrrls_dask.predict(model, ddf)
    probabilities = nrrls_dask.predict_proba(model, ddf)
    assert isinstance(predictions, dd.Series) and isinstance(probabilities, dd.DataFrame)
    # assert_eq also checks that the meta (dtypes, columns) matches the computed result.
    assert_eq(predictions, model.predict_many(whole).astype(object))
    assert_eq(probabilities, model.predict_proba_many(whole))
    assert list(probabilities.columns) == list(dict.fromkeys(_labels(frame)))
    computed = probabilities.compute()
    assert np.allclose(computed.sum(axis=1), 1.0)
    assert (computed.idxmax(axis=1) == predictions.compute()).all()


def test_scoring_keeps_label_types(client):
    frame = _frame(400, (True, False), seed=17)
    model = nrrls_dask.fit(dd.from_pandas(frame, npartitions=2), "label")
    ddf = dd.from_pandas(frame.drop(columns="label"), npartitions=3)
    predictions = nrrls_dask.predict(model, ddf).compute()
    assert predictions.dtype == object
    assert {type(v) for v in predictions} == {bool}
    expected = [model.predict_one(x) for x in _rows(frame)]
    assert predictions.tolist() == expected
    probabilities = nrrls_dask.predict_proba(model, ddf).compute()
    assert list(probabilities.columns) == list(dict.fromkeys(_labels(frame)))
    assert {type(label) for label in probabilities.columns} == {bool}
    assert (probabilities.dtypes == np.float64).all()


def test_scoring_with_a_model_that_has_not_learnt(client):
    ddf = dd.from_pandas(_frame(50, ("u", "v"), seed=18).drop(columns="label"), npartitions=2)
    predictions = nrrls_dask.predict(NRRLS(), ddf).compute()
    assert len(predictions) == 50 and predictions.isna().all()
    probabilities = nrrls_dask.predict_proba(NRRLS(), ddf).compute()
    assert probabilities.shape == (50, 0)
