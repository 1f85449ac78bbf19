"""PolynomialOrderSelector's mini-batches: learn_many, predict_many and predict_proba_many are
the ``*_one`` loops over the rows (the race included), and a refused batch changes nothing."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
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


@pytest.mark.parametrize("params", SELECTORS.values(), ids=SELECTORS.keys())
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


def test_a_row_refused_mid_batch_rolls_the_batch_back():
    """A value within the range of a lone row but whose statistics would leave the range once
    the rows before it are learnt: refused by the model after those rows were learnt, and the
    batch is rolled back."""
    selector = PolynomialOrderSelector(orders=(1, 2), classifier=NRRLS())
    selector.learn_one({"a": 1.0, "b": 2.0}, True)
    before = pickle.dumps(selector)
    big = 1e75  # squared 1e150 and, to order 2, 1e300: near the statistics' limit
    X = pd.DataFrame({"a": [0.5, big, big], "b": [1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match="row 2"):
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
