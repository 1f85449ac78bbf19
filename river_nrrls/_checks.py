"""Validation of parameters and labels, shared by every estimator of the package."""

from __future__ import annotations

import math
import numbers
import typing

import numpy as np
import pandas as pd

__all__ = ["as_label", "check_bool", "check_real", "factorize_labels", "label_sign"]


def check_real(
    name: str, value, low: float | None = None, high: float | None = None, low_open: bool = False
) -> float:
    """``value`` as a finite float within ``[low, high]`` (``(low, high]`` if ``low_open``).

    Raises ``TypeError`` for a non-number (bools included) and ``ValueError`` naming the parameter
    for NaN, infinities and values out of range.

    """
    if type(value) is float:  # the common case first (per-sample costs are checked with this)
        number = value
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    else:
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            raise ValueError(f"{name} must be finite, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (number < low or (low_open and number == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and number > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")
    return number


def check_bool(name: str, value: typing.Any) -> bool:
    """``value`` as a bool; anything but ``bool``/``np.bool_`` raises ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def as_label(label: typing.Hashable) -> typing.Hashable:
    """A class label as stored: numpy scalars (``np.bool_``, ``np.int64``...) become Python's."""
    if isinstance(label, np.generic):
        return label.item()
    try:
        hash(label)
    except TypeError as error:
        raise TypeError(f"the label {label!r} is not hashable") from error
    return label


def factorize_labels(y) -> tuple[np.ndarray, list]:
    """Codes of ``y`` and its distinct labels in order of first appearance (Python scalars)."""
    labels = y if isinstance(y, pd.Series) and y.dtype == bool else pd.Series(y, dtype=object)
    try:
        codes, uniques = pd.factorize(labels, use_na_sentinel=False)
    except TypeError as error:
        raise TypeError(f"labels must be hashable: {error}") from error
    return codes, [as_label(label) for label in uniques]


def label_sign(label: typing.Any, estimator: str = "this binary classifier") -> float:
    """A bool-like label as y in {-1, +1}: +1.0 for True (positive), -1.0 for False.

    ``bool``, ``np.bool_`` and the integers 0 and 1 are accepted; anything else (floats
    included) raises a ``ValueError`` naming the label.

    """
    if isinstance(label, (bool, np.bool_)):
        return 1.0 if label else -1.0
    if isinstance(label, (numbers.Integral, np.integer)) and label in (0, 1):
        return 1.0 if label == 1 else -1.0
    raise ValueError(
        f"{estimator} expects bool labels (True = positive, False = negative, or 1/0); "
        f"got the label {label!r} of type {type(label).__name__}"
    )
