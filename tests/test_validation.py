"""Tests of the validation of values: what is missing, what is refused, naming the culprit
(river_nrrls._validation)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from river_nrrls._validation import check_value, validate_frame, validate_one

GOOD_VALUES = [
    (3, 3.0),
    (-2.5, -2.5),
    (0, 0.0),
    (True, 1.0),
    (False, 0.0),
    (np.bool_(True), 1.0),
    (np.float32(0.5), 0.5),
    (np.float64(-1e300), -1e300),
    (np.int64(7), 7.0),
    (Fraction(1, 4), 0.25),
    (2**60, float(2**60)),
]
NON_NUMERIC = ["1.0", b"1", [1.0], (1.0,), {"v": 1.0}, {1.0}, 1 + 0j, object(), pd.NaT]
NON_FINITE = [float("nan"), np.float64("nan"), float("inf"), -float("inf"), np.inf, 10**400]


# ----------------------------------------------------------------------- check_value


@pytest.mark.parametrize(("value", "expected"), GOOD_VALUES, ids=repr)
def test_check_value_accepts_real_numbers(value, expected):
    number = check_value("f", value)
    assert type(number) is float
    assert number == expected


def test_check_value_none_is_missing():
    assert check_value("f", None) is None


@pytest.mark.parametrize("value", NON_NUMERIC, ids=repr)
def test_check_value_rejects_non_numbers_naming_the_feature(value):
    with pytest.raises(TypeError, match="my_feature"):
        check_value("my_feature", value)


@pytest.mark.parametrize("value", NON_FINITE, ids=repr)
def test_check_value_rejects_non_finite_numbers_naming_the_feature(value):
    with pytest.raises(ValueError, match="my_feature"):
        check_value("my_feature", value)


# ----------------------------------------------------------------------- validate_one


def test_validate_one_drops_missing_values_and_keeps_numbers():
    x = {"a": 1, "b": None, "c": 2.5, "d": np.float64(3.0), "e": True}
    before = dict(x)
    clean = validate_one(x)
    assert clean == {"a": 1.0, "c": 2.5, "d": 3.0, "e": 1.0}
    assert all(math.isfinite(v) for v in clean.values())
    assert x == before  # the input is not modified


@pytest.mark.parametrize("bad", NON_NUMERIC + NON_FINITE, ids=repr)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_validate_one_raises_naming_the_bad_feature(bad, position):
    items = [("ok_1", 1.0), ("ok_2", 2)]
    items.insert(position, ("the_culprit", bad))
    with pytest.raises((TypeError, ValueError), match="the_culprit"):
        validate_one(dict(items))


def test_validate_one_large_but_finite_values_are_fine():
    x = {"a": 1e308, "b": 1e308, "c": 10**300}
    assert validate_one(x) == {"a": 1e308, "b": 1e308, "c": 1e300}


@pytest.mark.parametrize("x", [[("a", 1.0)], None, "a", pd.Series({"a": 1.0})], ids=repr)
def test_validate_one_needs_a_dict(x):
    with pytest.raises(TypeError):
        validate_one(x)


# ----------------------------------------------------------------------- validate_frame


def test_validate_frame_values_and_observed_mask():
    X = pd.DataFrame(
        {
            "f": [1.0, np.nan],
            "b": [True, False],
            "i": pd.array([1, pd.NA], dtype="Int64"),
            "o": pd.Series([None, 2], dtype=object),
            "n": [np.nan, np.nan],
        }
    )
    matrix, observed = validate_frame(X)
    assert matrix.tolist() == [[1.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0, 0.0]]
    assert observed.tolist() == [True, True, True, True, False]


@pytest.mark.parametrize(
    ("column", "error"),
    [
        ([0.0, 1.0, np.inf], ValueError),
        ([0.0, 1.0, -np.inf], ValueError),
        (pd.Series([0.0, 1.0, "2"], dtype=object), TypeError),
        (pd.Series([0.0, 1.0, [2.0]], dtype=object), TypeError),
        (pd.Series([0.0, 1.0, {"v": 2.0}], dtype=object), TypeError),
        (pd.Series([0.0, 1.0, 10**400], dtype=object), ValueError),
        (pd.Series([0.0, 1.0, float("inf")], dtype=object), ValueError),
    ],
    ids=["inf", "-inf", "str", "list", "dict", "huge-int", "inf-object"],
)
def test_validate_frame_errors_name_feature_and_row(column, error):
    X = pd.DataFrame({"fine": [1.0, 2.0, 3.0]}, index=["r0", "r1", "row_seven"])
    X["the_culprit"] = pd.Series(list(column), index=X.index, dtype=object)
    if not isinstance(column, pd.Series):
        X["the_culprit"] = X["the_culprit"].astype(float)
    with pytest.raises(error) as info:
        validate_frame(X)
    assert "the_culprit" in str(info.value)
    assert "row_seven" in str(info.value)


def test_validate_frame_rejects_complex_columns():
    X = pd.DataFrame({"fine": [1.0, 2.0], "cplx": np.array([1 + 0j, 2 + 3j])})
    with pytest.raises(TypeError, match="cplx"):
        validate_frame(X)


def test_validate_frame_needs_a_dataframe_with_unique_columns():
    with pytest.raises(TypeError):
        validate_frame({"a": [1.0]})
    with pytest.raises(TypeError):
        validate_frame(np.ones((2, 2)))
    with pytest.raises(ValueError, match="dup"):
        validate_frame(pd.DataFrame([[1.0, 2.0]], columns=["dup", "dup"]))
