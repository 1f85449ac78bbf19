"""Validation of parameters and labels, shared by every estimator of the package."""

from __future__ import annotations

import math
import numbers
import sys
import typing

import numpy as np
import pandas as pd

__all__ = [
    "SMALLEST_WEIGHT",
    "STATISTICS_LIMIT",
    "VALUE_LIMIT",
    "as_label",
    "check_label",
    "check_labels",
    "check_paired",
    "is_missing",
    "short_repr",
    "check_bool",
    "check_real",
    "factorize_labels",
    "label_sign",
    "sample_weights",
]


#: The largest sum of (weighted, decayed) squares of one feature, or class mass, that a model's
#: statistics may hold: a sample or merge that would go beyond it is refused before anything is
#: committed. With it, every class scatter (and any sum of up to 1e8 of them) stays far from
#: the float overflow at 1.8e308, so the statistics and the solves stay finite; a single value
#: beyond 1e150 (whose square is 1e300) is refused.
STATISTICS_LIMIT = 1e300
#: The largest magnitude of a single value: its square is `STATISTICS_LIMIT`.
VALUE_LIMIT = math.sqrt(STATISTICS_LIMIT)
#: The smallest positive sample weight (the smallest normal float): a class mass below it has no
#: finite 1/n (1/n overflows below about 5.6e-309).
SMALLEST_WEIGHT = sys.float_info.min


def short_repr(value: typing.Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a 600-digit int is not worth printing)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}...{text[-10:]} ({len(text)} characters)"


def is_missing(value: typing.Any) -> bool:
    """True for the missing-value markers: None, NaN (float or numpy), ``pd.NA`` and ``NaT``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    return False


def check_label(label: typing.Any) -> typing.Hashable:
    """A class label as stored (see `as_label`); a missing label raises ``ValueError``.

    None, NaN, ``pd.NA`` and ``NaT`` are not classes: ``NaN != NaN`` would make every such
    sample a class of its own. river's ``stream.iter_pandas`` yields them for a target with gaps.

    """
    if is_missing(label):
        raise ValueError(f"the label is missing ({label!r}): drop the samples that have no label")
    return as_label(label)


def check_labels(y: typing.Any) -> None:
    """Raise ``ValueError`` naming the first row of a mini-batch whose label is missing."""
    if isinstance(y, pd.Series):
        index, values = y.index, y
        missing = y.isna().to_numpy()
    else:
        values = np.empty(len(y), dtype=object)
        values[:] = list(y)
        index = range(len(values))
        missing = pd.isna(values)
    if missing.any():
        position = int(np.argmax(missing))
        value = values.iloc[position] if isinstance(values, pd.Series) else values[position]
        raise ValueError(
            f"the label of row {list(index)[position]!r} is missing ({value!r}): "
            "drop the samples that have no label"
        )


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
        raise TypeError(f"{name} must be a real number, got {short_repr(value)}")
    else:
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            raise ValueError(f"{name} must be finite, got {short_repr(value)}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {short_repr(value)}")
    if low is not None and (number < low or (low_open and number == low)):
        comparison = ">" if low_open else ">="
        raise ValueError(f"{name} must be {comparison} {low}, got {short_repr(value)}")
    if high is not None and number > high:
        raise ValueError(f"{name} must be <= {high}, got {short_repr(value)}")
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


def check_paired(X: pd.DataFrame, y: typing.Any) -> None:
    """Refuse a pandas ``y`` whose index is not the index of ``X``, naming the first row where
    they differ.

    A mini-batch pairs the rows of ``X`` with the labels or targets of ``y`` by position, as
    river's mini-batch learners do. A ``y`` that has an index of its own (a pandas Series)
    must have that of ``X``: one with the row labels in another order, or with other labels,
    would pair rows with other rows' targets without a word (``river_nrrls.dask`` refuses it
    too). A list, tuple or numpy array has no index: it is paired by position.

    """
    index = getattr(y, "index", None)
    if not isinstance(index, pd.Index) or len(X) != len(y) or not len(X):
        return
    if X.index.equals(index):
        return
    position = next(
        (
            i
            for i, (row, label) in enumerate(zip(X.index, index))
            if not (row == label or (is_missing(row) and is_missing(label)))
        ),
        0,  # (labels equal by ==, of types that ``equals`` tells apart)
    )
    row, label = row_name(X.index, position), row_name(index, position)
    raise ValueError(
        f"the indexes of X and y differ (from position {position}: row {short_repr(row)} of X, "
        f"{short_repr(label)} of y); rows are paired by position, so align y first "
        "(y.loc[X.index]), or pass its values (y.to_numpy()) to pair them by position"
    )


def sample_weights(w: typing.Any, y: typing.Any) -> np.ndarray | None:
    """The per-row weights of a mini-batch: ``None`` when every weight is 1, else a float array.

    ``w`` is ``None``, one real number for every row, or one per row of ``y``: a pandas Series
    with ``y``'s index (when ``y`` is a Series too) or a sequence as long as ``y``. Weights must
    be finite and >= 0 (``ValueError`` naming the row otherwise; ``TypeError`` for non-numbers).

    """
    if w is None:
        return None
    if isinstance(w, (numbers.Real, np.number)) and not isinstance(w, (bool, np.bool_)):
        weight = check_real("w", w, low=0.0)
        return None if weight == 1.0 else np.full(len(y), weight)
    if isinstance(w, (str, bytes, dict)) or not hasattr(w, "__len__"):
        raise TypeError(f"w must be a number or one weight per row, got {type(w).__name__}")
    if len(w) != len(y):
        raise ValueError(f"w has {len(w)} weights but y has {len(y)} labels")
    if isinstance(w, pd.Series) and isinstance(y, pd.Series) and not w.index.equals(y.index):
        raise ValueError("w must have the same index as y")
    index = w.index if isinstance(w, pd.Series) else range(len(w))
    if isinstance(w, (pd.Series, np.ndarray)):
        values = w.to_numpy() if isinstance(w, pd.Series) else w
    else:  # a plain sequence: look at every element (a bool must not pass as 1.0)
        values = np.empty(len(w), dtype=object)
        for i, value in enumerate(w):
            values[i] = value
    if values.dtype.kind not in "iuf":  # bools, objects, strings: name the first bad one
        for row, value in zip(index, values):
            try:
                check_real("w", value, low=0.0)
            except (TypeError, ValueError) as error:
                raise type(error)(f"{error} (row {row!r})") from None
    weights = np.asarray(values, dtype=float)
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        row = list(index)[int(np.argmax(bad))]
        raise ValueError(f"w must be finite and >= 0, got {weights[bad][0]!r} at row {row!r}")
    return weights


def row_name(index: typing.Any, position: int) -> typing.Any:
    """The label of row ``position`` of a pandas index, as a Python scalar (for messages)."""
    label = index[position]
    return label.item() if isinstance(label, np.generic) else label
