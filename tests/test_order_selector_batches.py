"""PolynomialOrderSelector's mini-batches: with shared statistics (block=1) learn_many is what
the orders' pipelines do with a batch (predict_many, then learn_many); otherwise it is the
``learn_one`` loop over the rows (the race included). predict_many and predict_proba_many are
the ``*_one`` loops, and a refused batch changes nothing."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from helpers import leading_inputs, nonlinear_stream
from kernel_paths import kernel_path  # noqa: F401  (a fixture)
from river import base, metrics

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector, datasets

MEAN = PolynomialExtender(aggregate="mean", n_features=8)

SELECTORS = {
    "shared": dict(orders=(1, 2, 3), extender=MEAN),
    "grid-window": dict(orders=(1, 3), extender=MEAN, forgetting_grid=(1.0, 0.98), window=40),
    "block": dict(orders=(1, 2), extender=MEAN, block=4, metric=metrics.BalancedAccuracy()),
    "pipelines": dict(orders=(1, 2), extender=MEAN, classifier=NRRLS(solver="woodbury")),
}


def _frame(n_rows: int, start: int = 0, gaps: bool = True) -> tuple[pd.DataFrame, pd.Series]:
    """Pima's rows as a frame (index labels 'r<i>'), some values missing (NaN, None)."""
    rows = list(itertools.islice(datasets.Pima(), start, start + n_rows))
    X = pd.DataFrame([x for x, _ in rows], index=[f"r{start + i}" for i in range(n_rows)])
    if gaps:
        X.iloc[::7, 1] = np.nan
        X = X.astype(object)
        X.iloc[3::11, 2] = None
    y = pd.Series([label for _, label in rows], index=X.index, name="diabetes")
    return X, y


def _rows(X: pd.DataFrame) -> list[dict]:
    """The rows as learn_one gets them: missing values left out."""
    return [
        {k: v for k, v in row.items() if v is not None and not (isinstance(v, float) and v != v)}
        for row in X.to_dict(orient="records")
    ]


LOOPED = ("block", "pipelines")  # the selectors whose learn_many is the learn_one loop


@pytest.mark.parametrize("params", [SELECTORS[k] for k in LOOPED], ids=LOOPED)
def test_learn_many_is_the_learn_one_loop(params):
    """The same race (scores, best candidate) and the same predictions as the loop, batch
    after batch; predict_many and predict_proba_many are the predict_*_one loops."""
    looped, batched = PolynomialOrderSelector(**params), PolynomialOrderSelector(**params)
    for start in (0, 40, 55, 130):
        X, y = _frame({0: 40, 40: 15, 55: 75, 130: 30}[start], start)
        for x, label in zip(_rows(X), y):
            looped.learn_one(x, label)
        batched.learn_many(X, y)
        assert {k: s.get() for k, s in batched.scores.items()} == {
            k: s.get() for k, s in looped.scores.items()
        }
        assert batched._best == looped._best
    X, _ = _frame(30, 200)
    expected = [looped.predict_one(x) for x in _rows(X)]
    predictions = batched.predict_many(X)
    assert isinstance(predictions, pd.Series) and predictions.index.equals(X.index)
    assert predictions.tolist() == expected and predictions.dtype == bool
    probabilities = batched.predict_proba_many(X)
    assert list(probabilities.columns) == list(looped.predict_proba_one(_rows(X)[0]))
    assert probabilities.index.equals(X.index)
    for i, x in enumerate(_rows(X)):
        assert probabilities.iloc[i].to_dict() == looped.predict_proba_one(x)
    assert pickle.dumps(batched) == pickle.dumps(looped)


def test_before_any_learning_and_empty_batches():
    selector = PolynomialOrderSelector(orders=(1, 2), extender=MEAN)
    X, y = _frame(3, gaps=False)
    assert selector.predict_many(X).tolist() == [None, None, None]
    assert selector.predict_proba_many(X).shape == (3, 0)
    selector.learn_many(X.iloc[:0], y.iloc[:0])
    assert selector.predict_many(X).tolist() == [None, None, None]
    selector.learn_many(X, y.tolist())  # a list: paired by position
    assert selector.predict_many(X.iloc[:0]).tolist() == []


def _refusals(X: pd.DataFrame, y: pd.Series):
    """(X, y, error, words) of batches a selector must refuse whole."""
    bad_value = X.astype(object).copy()
    bad_value.iloc[20, 0] = "high"
    huge = X.copy()
    huge.iloc[25, 0] = 1e300  # its order-2 expansion overflows
    missing_label = y.astype(object).copy()
    missing_label.iloc[30] = None
    unhashable = y.astype(object).copy()
    unhashable.iloc[12] = ["a", "list"]
    return [
        (X, y.set_axis(list(reversed(X.index))), ValueError, "indexes of X and y differ"),
        (X, pd.Series(y.to_numpy()), ValueError, "position 0"),  # a default RangeIndex
        (X, y.iloc[:-1], ValueError, "labels"),
        (bad_value, y, (TypeError, ValueError), f"'{X.index[20]}'"),
        (huge, y, ValueError, f"'{X.index[25]}'"),
        (X, missing_label, ValueError, f"'{X.index[30]}'"),
        (X, unhashable, TypeError, f"'{X.index[12]}'"),
    ]


@pytest.mark.parametrize("params", SELECTORS.values(), ids=SELECTORS.keys())
def test_a_refused_batch_changes_nothing(params):
    selector = PolynomialOrderSelector(**params)
    selector.learn_many(*_frame(30, gaps=False))
    before = pickle.dumps(selector)
    X, y = _frame(40, 30, gaps=False)
    for bad_X, bad_y, error, words in _refusals(X, y):
        with pytest.raises(error, match=words):
            selector.learn_many(bad_X, bad_y)
        assert pickle.dumps(selector) == before, words
    selector.learn_many(X, y)  # still usable


@pytest.mark.parametrize(
    ("params", "words"),
    [
        (dict(block=2), "row 2"),  # the learn_one loop
        (dict(), "'a\\*sum' is too large"),  # the orders' learn_many: the highest refuses
        (dict(forgetting_grid=(0.9, 1.0)), "'a\\*sum' is too large"),  # ... with no forgetting
    ],
)
def test_a_row_refused_mid_batch_rolls_the_batch_back(params, words):
    """A value within the range of a lone row but whose statistics would leave the range once
    the rows before it are learnt: refused (by the model after those rows were learnt, or by
    the batch's range check), and the batch is rolled back."""
    selector = PolynomialOrderSelector(orders=(1, 2), classifier=NRRLS(), **params)
    selector.learn_one({"a": 1.0, "b": 2.0}, True)
    before = pickle.dumps(selector)
    big = 1e75  # squared 1e150 and, to order 2, 1e300: near the statistics' limit
    X = pd.DataFrame({"a": [0.5, big, big], "b": [1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match=words):
        selector.learn_many(X, [False, True, True])
    assert pickle.dumps(selector) == before


def test_river_sees_a_mini_batch_classifier():
    assert isinstance(PolynomialOrderSelector(), base.MiniBatchClassifier)


def test_a_polars_batch_is_the_pandas_one():
    """Any backend river accepts: a polars batch learns as the pandas one (nulls missing), and
    the answers come back in polars."""
    import polars as pl

    X, y = _frame(40)
    on_pandas = PolynomialOrderSelector(orders=(1, 2), extender=MEAN)
    on_polars = PolynomialOrderSelector(orders=(1, 2), extender=MEAN)
    on_pandas.learn_many(X.reset_index(drop=True), y.reset_index(drop=True))
    frame = pl.from_pandas(X.reset_index(drop=True).astype(float))
    on_polars.learn_many(frame, pl.Series("diabetes", y.tolist()))
    assert pickle.dumps(on_polars) == pickle.dumps(on_pandas)
    predictions = on_polars.predict_many(frame)
    assert isinstance(predictions, pl.Series)
    assert predictions.to_list() == on_pandas.predict_many(X).tolist()
    probabilities = on_polars.predict_proba_many(frame)
    expected = on_pandas.predict_proba_many(X)
    assert isinstance(probabilities, pl.DataFrame)
    assert probabilities.columns == [str(label) for label in expected.columns]
    assert probabilities.to_numpy().tolist() == expected.to_numpy().tolist()


def _stream_batches(stream: list, sizes: tuple, drop: dict) -> list:
    """``stream`` cut into frames of ``sizes`` rows (index labels 'r<i>'); ``drop`` maps a
    batch's number to the columns missing from it (absent: NaN in every row, or a column
    left out of the frame)."""
    batches, start = [], 0
    for number, size in enumerate(sizes):
        rows = stream[start : start + size]
        X = pd.DataFrame([x for x, _ in rows], index=[f"r{start + i}" for i in range(size)])
        for column in drop.get(number, ()):
            if number % 2:
                X[column] = np.nan  # a column of missing values
            else:
                X = X.drop(columns=column)  # the column absent
        batches.append((X, pd.Series([y for _, y in rows], index=X.index, name="y")))
        start += size
    return batches


BATCH_RACES = {
    # (stream, selector parameters, batch sizes, missing columns by batch)
    "wide-real": (
        leading_inputs("Ionosphere", 21, 240),
        dict(orders=(1, 2, 3, 4, 5, 6)),
        (30, 1, 50, 80, 79),
        {0: ("a03", "a04"), 1: ("a05",), 3: ("a06",)},
    ),
    "random-grid": (
        nonlinear_stream(300, 6, seed=3),
        dict(orders=(1, 2, 3), forgetting_grid=(1.0, 0.97)),
        (40, 60, 7, 120, 73),
        {0: ("x2",), 3: ("x4", "x5")},
    ),
    "int-names": (
        [({int(k[1:]): v for k, v in x.items()}, y) for x, y in nonlinear_stream(200, 5, seed=5)],
        dict(orders=(1, 2, 4)),
        (30, 90, 80),
        {0: (3,), 1: (4,)},
    ),
    "forgetting-mean": (
        nonlinear_stream(250, 8, seed=4),
        dict(orders=(2, 3), extender=MEAN, classifier=NRRLS(forgetting=0.99, l2=1e-3)),
        (50, 100, 100),
        {1: ("x0",)},
    ),
}


@pytest.mark.usefixtures("kernel_path")  # the compiled kernels, then the Python paths
@pytest.mark.parametrize("case", BATCH_RACES.values(), ids=BATCH_RACES.keys())
def test_learn_many_is_what_the_pipelines_do_with_the_batch(case):
    """Shared statistics: every candidate scores every row of a batch as its independent
    pipeline ``PolynomialExtender(degree=r) | NRRLS(...)`` predicts it before learning the
    batch (``predict_many``), the race moving row by row, and every order's statistics are that
    pipeline's after its ``learn_many``, to the bit (wide real inputs whose order 6 is badly
    conditioned, a forgetting grid, forgetting; features emerging in later batches and missing
    from some). The selector then predicts, row by row, as the best candidate's pipeline."""
    stream, params, sizes, drop = case
    selector = PolynomialOrderSelector(**params)
    extender = params.get("extender", PolynomialExtender())
    classifier = params.get("classifier", NRRLS())
    grid = params.get("forgetting_grid")
    keys = (
        list(params["orders"])
        if grid is None
        else [(order, factor) for order in params["orders"] for factor in grid]
    )
    pipelines, scores = {}, {}
    for key in keys:
        order, factor = (key, None) if grid is None else key
        model = classifier.clone() if factor is None else classifier.clone({"forgetting": factor})
        pipelines[key] = extender.clone({"degree": order}) | model
        scores[key] = metrics.GeometricMean()
    for X, y in _stream_batches(stream, sizes, drop):
        predicted = {key: pipeline.predict_many(X).tolist() for key, pipeline in pipelines.items()}
        selector.learn_many(X, y)
        for i, label in enumerate(y):
            for key in keys:
                if predicted[key][i] is not None:
                    scores[key].update(label, predicted[key][i])
        for pipeline in pipelines.values():
            pipeline.learn_many(X, y)
        assert {k: s.get() for k, s in selector.scores.items()} == {
            k: s.get() for k, s in scores.items()
        }
        values = [scores[key].get() for key in keys]
        assert selector._best == keys[values.index(max(values))]  # ties to the first
        for key, pipeline in pipelines.items():
            order, factor = (key, None) if grid is None else key
            mine = selector._nested[factor].models[order]
            theirs = pipeline["NRRLS"]
            assert mine.features == theirs.features
            assert np.array_equal(mine.statistics.data, theirs.statistics.data)
    best = selector.best_model  # a copy of the best order's model: its pipeline
    rest = [x for x, _ in stream[sum(sizes) :]] or [x for x, _ in stream[:40]]
    assert [selector.predict_one(x) for x in rest] == [best.predict_one(x) for x in rest]
    key = selector._best
    assert [selector.predict_one(x) for x in rest] == [pipelines[key].predict_one(x) for x in rest]


@pytest.mark.usefixtures("kernel_path")
def test_a_batch_between_learn_one_calls_follows_the_pipelines():
    """A batch between learn_one calls: every order's solver lets its stale factor go, as its
    pipeline's does in learn_many, so before every later sample every order's outputs are its
    pipeline's to the bit (wide real inputs: orders 4 to 6 on their stale factors)."""
    stream = leading_inputs("SpectfHeart", 21, 150)
    selector = PolynomialOrderSelector()
    pipelines = {r: PolynomialExtender(degree=r) | NRRLS() for r in range(1, 7)}
    (nested,) = selector._nested.values()
    (X, y), *_ = _stream_batches(stream[60:100], (40,), {})
    for i, (x, label) in enumerate(stream):
        if 60 <= i < 100:
            if i == 60:
                selector.learn_many(X, y)
                for pipeline in pipelines.values():
                    pipeline.learn_many(X, y)
            continue
        outputs = nested.outputs(nested.solve(), nested.vector(nested.expand(x).values))
        for q, (r, pipeline) in enumerate(pipelines.items()):
            expanded = pipeline["PolynomialExtender"].transform_one(x)
            expected = list(pipeline["NRRLS"].decision_one(expanded).values())
            assert outputs[q].tolist() == expected or not expected, (i, r)
        selector.learn_one(x, label)
        for pipeline in pipelines.values():
            pipeline.learn_one(x, label)
    assert nested.sizes()[-1] >= 112  # order 6 on its stale factor
