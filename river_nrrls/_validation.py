"""The values of a sample: which are missing, which are refused, and the error naming the culprit.

Every encoding of `river_nrrls._index.FeatureIndex` validates through this module, so every
estimator of the package reads values the same way:

- ``None`` or ``pd.NA`` in a dict, and ``NaN`` in a dataframe, are *missing*, that is zero
  (the value the statistics already assume for an absent feature);
- a non-numeric value (a string, a container, a complex, ...) raises ``TypeError``, and a
  non-finite one (NaN in a dict, an infinity, a number too large for a float) ``ValueError``,
  both naming the feature (and the row, in a dataframe);
- ints, floats, bools (0/1), ``Fraction`` and ``Decimal`` are numbers.

Plain ints and floats (`PLAIN_NUMBERS`) are checked in one pass (`finite_reals`); anything else
goes value by value (`check_value`). Nothing here changes a model: an estimator validates a
whole call first and commits only once nothing can fail any more.

"""

from __future__ import annotations

import decimal
import math
import numbers
import typing

import numpy as np
import pandas as pd

from ._checks import short_repr
from ._frames import as_frame

__all__ = [
    "PLAIN_NUMBERS",
    "check_value",
    "finite_reals",
    "is_missing_value",
    "not_a_dict",
    "validate_frame",
    "validate_one",
]

#: The exact types of the values that may skip the value-by-value validation: plain floats and
#: ints (no subclass, no bool).
PLAIN_NUMBERS = frozenset((float, int))


def not_a_dict(x: typing.Any) -> TypeError:
    """The error for a sample ``x`` that is not a dict of features."""
    return TypeError(f"x must be a dict of features, got {type(x).__name__}")


def is_missing_value(value: typing.Any) -> bool:
    """Whether a feature value of a dict sample is missing (zero): ``None`` or ``pd.NA``."""
    return value is None or value is pd.NA


def check_value(name: typing.Hashable, value: typing.Any) -> float | None:
    """Return ``value`` as a finite float, ``None`` for a missing value, or raise naming ``name``.

    ``None`` and ``pd.NA`` are missing. Booleans count as 0/1; ``Fraction`` and ``Decimal`` are
    numbers like ints and floats. Strings, containers and other non-numbers raise ``TypeError``;
    NaN, infinities and numbers too large for a float raise ``ValueError``.

    """
    if is_missing_value(value):
        return None
    if isinstance(value, (str, bytes)) or not isinstance(
        value, (numbers.Real, np.bool_, decimal.Decimal)
    ):
        raise TypeError(
            f"feature {name!r} has a non-numeric value {short_repr(value)} "
            f"of type {type(value).__name__}"
        )
    try:
        number = float(value)
    except Exception as error:  # OverflowError, or anything a number's own __float__ raises
        raise ValueError(
            f"feature {name!r} has a value {short_repr(value)} that is not a float"
        ) from error
    if not math.isfinite(number):
        raise ValueError(f"feature {name!r} has a non-finite value {short_repr(value)}")
    return number


def finite_reals(values: typing.Collection) -> bool:
    """True when every value is a plain ``int`` or ``float`` (its exact type: no subclass, no
    bool) and their sum is a finite float: every value is then finite, as `check_value` would
    find it.

    The exact types come first: a subclass of float may answer the sum with what it likes (its
    ``__radd__`` is tried before float's own addition, and may say 0.0 for an infinity), so only
    plain numbers are trusted to add up honestly. ``sum(values, 0.0)`` then adds in floats: an int
    beyond float range raises ``OverflowError`` (even when ints that cancel exactly would sum to
    0), and a non-finite value (or a sum that overflows) gives inf or NaN. Those go the slow way,
    value by value (where the valid ones are accepted all the same).

    """
    if not PLAIN_NUMBERS.issuperset(map(type, values)):
        return False
    try:
        total = sum(values, 0.0)
    except OverflowError:  # an int beyond float range
        return False
    return math.isfinite(total)


def validate_one(x: dict) -> dict:
    """Validate a feature dict and return ``{feature: number}`` without the missing (None) values.

    A dict that is already clean (only finite ints and floats) is returned as it is, not copied:
    callers only read it.

    """
    if not isinstance(x, dict):
        raise not_a_dict(x)
    if finite_reals(x.values()):
        return x
    clean = {}
    for name, value in x.items():
        number = check_value(name, value)
        if number is not None:
            clean[name] = number
    return clean


def validate_frame(X: typing.Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a dataframe: its values as a float matrix (NaN, missing, as 0) and a mask of the
    columns that hold at least one observed (non-missing) value. ``X`` is any dataframe
    `as_frame` accepts."""
    X = as_frame(X)
    if X.columns.has_duplicates:
        duplicated = X.columns[X.columns.duplicated()].tolist()
        raise ValueError(f"X has duplicated columns: {duplicated}")
    dtypes = X.dtypes
    for name, dtype in zip(X.columns, dtypes):
        if pd.api.types.is_complex_dtype(dtype):
            raise TypeError(f"feature {name!r} has complex values (dtype {dtype})")
    if all(pd.api.types.is_numeric_dtype(dtype) for dtype in dtypes):
        # Fast path: one conversion of the whole frame (bools count as 0/1, NA as NaN).
        try:
            matrix = X.to_numpy(dtype=float, na_value=np.nan, copy=True)
        except (TypeError, ValueError):
            pass
        else:
            if np.isfinite(matrix).all():  # no missing cell: every column observed if any row
                return matrix, np.full(matrix.shape[1], len(matrix) > 0)
            if not np.isinf(matrix).any():
                missing = np.isnan(matrix)
                matrix[missing] = 0.0
                return matrix, ~missing.all(axis=0)
    matrix = np.empty(X.shape, dtype=float)
    for j, name in enumerate(X.columns):
        column = X.iloc[:, j]
        if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
            try:
                values = column.to_numpy(dtype=float, na_value=np.nan)
            except (TypeError, ValueError):
                values = _object_column(name, column)
        else:
            values = _object_column(name, column)
        bad = np.isinf(values)
        if bad.any():
            row = X.index[int(np.argmax(bad))]
            raise ValueError(f"feature {name!r} has a non-finite value at row {row!r}")
        matrix[:, j] = values
    observed = np.logical_not(np.isnan(matrix).all(axis=0))
    np.nan_to_num(matrix, copy=False, nan=0.0)
    return matrix, observed


def _object_column(name: typing.Hashable, column: pd.Series) -> np.ndarray:
    """The values of a dataframe column that numpy cannot convert at once, one by one: missing
    ones (``None``, ``pd.NA``, NaN) as NaN, the others through `check_value`, whose error then
    names the row too."""
    values = np.empty(len(column), dtype=float)
    for i, (row, value) in enumerate(column.items()):
        if is_missing_value(value) or (isinstance(value, float) and math.isnan(value)):
            values[i] = np.nan
            continue
        try:
            number = check_value(name, value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{error} at row {row!r}") from error
        values[i] = number
    return values
