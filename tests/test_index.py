"""Tests of the shared dict <-> dense mapping and its encodings (river_nrrls._index).

The validation of values alone is tested in test_validation.py.
"""

from __future__ import annotations

import decimal
import itertools
import pickle
import random
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from river_nrrls._index import FeatureIndex, sort_features

# ----------------------------------------------------------------------- sort_features


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(-5, 5), st.text(max_size=3), st.tuples(st.integers(0, 2))),
        unique=True,
        max_size=8,
    ),
    st.randoms(use_true_random=False),
)
def test_sort_features_is_deterministic_for_mixed_types(names, rng):
    shuffled = list(names)
    rng.shuffle(shuffled)
    assert sort_features(shuffled) == sort_features(names)
    assert sorted(map(repr, sort_features(names))) == sorted(map(repr, names))


# ----------------------------------------------------------------------- FeatureIndex


def test_encode_one_reports_new_features_without_committing_them():
    index = FeatureIndex()
    columns, values, new = index.encode_one({"b": 2.0, "a": 1.0, "c": None})
    assert new == ["a", "b"]  # sorted, missing "c" is not a feature
    assert len(index) == 0 and "a" not in index and index.size == 0
    assert dict(zip(columns, values.tolist())) == {0: 1.0, 1: 2.0}  # provisional columns
    index.add(new)
    assert index.position == {"a": 0, "b": 1}
    assert index.features == ["a", "b"]
    columns, values, new = index.encode_one({"b": 5.0, "z": 1.0, "a": -1.0})
    assert new == ["z"]
    assert dict(zip(columns, values.tolist())) == {1: 5.0, 2: 1.0, 0: -1.0}
    assert index.size == 2


def test_encode_one_with_offset_reserves_leading_columns():
    index = FeatureIndex(offset=1)
    assert index.size == 1
    columns, values, new = index.encode_one({"y": 2.0, "x": 1.0})
    assert new == ["x", "y"]
    assert dict(zip(columns, values.tolist())) == {1: 1.0, 2: 2.0}
    index.add(new)
    assert index.size == 3 and len(index) == 2
    vector = np.array([9.0, 1.0, 2.0])
    assert index.to_dict(vector) == {"x": 1.0, "y": 2.0}


def test_encode_one_without_growing_validates_and_drops_unknown_features():
    index = FeatureIndex()
    index.add(["a"])
    columns, values, new = index.encode_one({"a": 3.0, "unknown": 1.0}, grow=False)
    assert new == [] and columns == [0] and values.tolist() == [3.0]
    with pytest.raises(ValueError, match="unknown"):
        index.encode_one({"a": 3.0, "unknown": float("nan")}, grow=False)
    with pytest.raises(TypeError, match="unknown"):
        index.encode_one({"a": 3.0, "unknown": "3"}, grow=False)
    assert index.features == ["a"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(0, 9), st.text(min_size=1, max_size=2)),
        unique=True,
        min_size=1,
        max_size=8,
    ),
    st.randoms(use_true_random=False),
)
def test_column_order_does_not_depend_on_key_order(names, rng):
    x = {name: float(i + 1) for i, name in enumerate(names)}
    reference = FeatureIndex(offset=1)
    reference.add(reference.encode_one(x)[2])
    for _ in range(3):
        keys = list(x)
        rng.shuffle(keys)
        index = FeatureIndex(offset=1)
        _, _, new = index.encode_one({key: x[key] for key in keys})
        index.add(new)
        assert index.position == reference.position
        vector = index.dense_one({key: x[key] for key in keys}, grow=False).vector
        assert index.to_dict(vector) == x


def test_dense_one_layout_and_fill():
    index = FeatureIndex(offset=1, fill=1.0)
    vector, new, _ = index.dense_one({"b": 2.0, "a": -1.0})
    assert new == ["a", "b"]
    assert vector.tolist() == [1.0, -1.0, 2.0]
    assert index.size == 1  # still not committed
    index.add(new)
    vector, new, _ = index.dense_one({"b": 4.0, "unknown": 3.0}, grow=False)
    assert new == [] and vector.tolist() == [1.0, 0.0, 4.0]


def test_dense_one_never_returns_stale_values():
    index = FeatureIndex(offset=1, fill=1.0)
    index.add(["a", "b"])
    x = {"a": 1.0, "b": 2.0}
    first = index.dense_one(x, grow=False)[0].tolist()
    assert index.dense_one(x, grow=False)[0].tolist() == first == [1.0, 1.0, 2.0]
    assert index.dense_one({"a": 1.0, "b": 3.0}, grow=False)[0].tolist() == [1.0, 1.0, 3.0]
    x["a"] = 5.0  # the same dict, modified in place
    assert index.dense_one(x, grow=False)[0].tolist() == [1.0, 5.0, 2.0]
    assert index.dense_one({"b": 2.0, "a": 5.0}, grow=False)[0].tolist() == [1.0, 5.0, 2.0]
    index.add(["c"])
    assert index.dense_one(x, grow=False)[0].tolist() == [1.0, 5.0, 2.0, 0.0]
    with pytest.raises(ValueError, match="'b'"):
        index.dense_one({"a": 5.0, "b": float("nan")}, grow=False)
    with pytest.raises(TypeError, match="'b'"):
        index.dense_one({"a": 5.0, "b": "2.0"}, grow=False)


class _Raising:
    """A value whose arithmetic raises something else than a TypeError."""

    def __radd__(self, other):
        raise ZeroDivisionError("no")

    def __repr__(self) -> str:
        return "_Raising()"


@pytest.mark.parametrize(
    "bad", [1 + 0j, "1.0", np.array([1.0]), [1.0], np.complex128(1.0), _Raising()], ids=repr
)
def test_dense_one_cache_does_not_skip_validation(bad):
    index = FeatureIndex()
    index.add(["a"])
    index.dense_one({"a": 1.0}, grow=False)
    with pytest.raises(TypeError, match="'a'"):
        index.dense_one({"a": bad}, grow=False)


@pytest.mark.parametrize(
    "values",
    [
        (True, Fraction(1, 2)),
        (1, 2.0),  # ints equal to the cached floats: the cached vector
        (decimal.Decimal("1"), np.float32(2.0)),
        (np.float64(-0.0), 2**70),
        (None, 2.0),
        (False, pd.NA),
    ],
    ids=repr,
)
def test_dense_one_cache_gives_what_validation_gives(values):
    """A cached key set takes valid values of every real type as a fresh index does."""
    cached, fresh = FeatureIndex(offset=1, fill=1.0), FeatureIndex(offset=1, fill=1.0)
    for index in (cached, fresh):
        index.add(["a", "b"])
    cached.dense_one({"a": 1.0, "b": 2.0}, grow=False)
    x = dict(zip("ab", values))
    vector = cached.dense_one(x, grow=False)[0]
    fresh_vector = fresh.dense_one(x, grow=False)[0]
    assert vector.tobytes() == fresh_vector.tobytes()
    assert cached.dense_one(x, grow=False)[0].tobytes() == fresh_vector.tobytes()  # cached


def test_pickled_index_is_independent_of_encoding_calls():
    index = FeatureIndex(offset=1, fill=1.0)
    index.add(["a", "b"])
    before = pickle.dumps(index)
    index.dense_one({"a": 1.0, "b": 2.0}, grow=False)
    index.encode_one({"a": 1.0, "new": 2.0})
    index.encode_many(pd.DataFrame({"a": [1.0], "new": [2.0]}))
    assert pickle.dumps(index) == before


# ------------------------------------------------------------------------ frames


def test_encode_many_nan_is_missing_and_all_nan_column_is_no_feature():
    index = FeatureIndex(offset=1, fill=1.0)
    index.add(["known"])
    X = pd.DataFrame(
        {
            "zeta": [1.0, np.nan, 3.0],
            "empty": [np.nan, np.nan, np.nan],
            "nones": pd.Series([None, None, None], dtype=object),
            "known": [np.nan, 2.0, np.nan],
            "alpha": [np.nan, 0.5, np.nan],
        },
        index=["r0", "r1", "r2"],
    )
    matrix, new = index.encode_many(X)
    assert new == ["alpha", "zeta"]  # sorted; all-missing columns create no feature
    assert index.features == ["known"]  # not committed
    assert matrix.tolist() == [
        [1.0, 0.0, 0.0, 1.0],
        [1.0, 2.0, 0.5, 0.0],
        [1.0, 0.0, 0.0, 3.0],
    ]
    matrix, new = index.encode_many(X, grow=False)
    assert new == [] and matrix.tolist() == [[1.0, 0.0], [1.0, 2.0], [1.0, 0.0]]


def test_encode_many_orders_columns_by_the_index_not_the_frame():
    index = FeatureIndex()
    index.add(["b", "a"])
    X = pd.DataFrame({"a": [1.0, 2.0], "c": [5.0, 6.0], "b": [3.0, 4.0]})
    matrix, new = index.encode_many(X)
    assert new == ["c"]
    assert matrix.tolist() == [[3.0, 1.0, 5.0], [4.0, 2.0, 6.0]]
    for columns in itertools.permutations(X.columns):
        again, new_again = index.encode_many(X[list(columns)])
        assert new_again == new and np.array_equal(again, matrix)


def test_encode_many_agrees_with_dense_one_row_by_row():
    rng = random.Random(0)
    rows = []
    for _ in range(20):
        rows.append({name: rng.choice([None, rng.uniform(-1, 1)]) for name in "pqrs"})
    X = pd.DataFrame(rows)
    index = FeatureIndex(offset=1, fill=1.0)
    matrix, new = index.encode_many(X)
    index.add(new)
    for row, x in zip(matrix, rows):
        assert np.array_equal(row, index.dense_one(x, grow=False)[0])
