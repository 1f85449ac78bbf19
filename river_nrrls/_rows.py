"""A mini-batch as the samples of the ``learn_one`` loop over its rows, for estimators whose
``*_many`` methods are that loop (`PolynomialOrderSelector`, `AutoNRRLS`).

`batch_samples` reads a dataframe of any backend river accepts and its labels into the dicts and
labels that ``learn_one`` would get, row by row, refusing what the loop would refuse for a
pairing or a label before anything is learnt; `frame_samples` does the same for the
``predict_*_many`` methods, and `label_series` and `probability_frame` put their answers in
the input's backend (`river_nrrls._frames`). A missing value of a frame (NaN, None, ``pd.NA``)
is a missing feature, left out of the row's dict, as NRRLS's own ``learn_many`` reads it.

"""

from __future__ import annotations

import typing

import numpy as np

from ._checks import check_label, check_paired, is_missing, row_name, short_repr
from ._frames import as_frame, as_series, native_frame, native_series

__all__ = ["batch_samples", "frame_samples", "label_series", "probability_frame", "row_error"]


class Batch(typing.NamedTuple):
    """A mini-batch read as the ``learn_one`` loop's samples."""

    rows: list[dict]  # every row's features (missing values left out)
    labels: list  # every row's label, checked (`check_label`)
    names: list  # every row's name (its index label), for messages


def frame_samples(X: typing.Any) -> tuple[list[dict], list]:
    """Every row of ``X`` as the dict ``*_one`` would get (missing values left out), and the
    rows' names."""
    frame = as_frame(X)
    columns = list(frame.columns)
    values = [frame[column].tolist() for column in columns] if columns else []
    rows = [
        {column: value for column, value in zip(columns, row) if not is_missing(value)}
        for row in (zip(*values) if values else [() for _ in range(len(frame))])
    ]
    names = [row_name(frame.index, position) for position in range(len(frame))]
    return rows, names


def batch_samples(X: typing.Any, y: typing.Any) -> Batch:
    """The rows and labels of a mini-batch, paired by position; a ``y`` of another length, a
    pandas ``y`` whose index is not ``X``'s (`check_paired`) or a missing or unhashable label
    (naming its row) is refused."""
    frame, labels = as_frame(X), as_series(y)
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise TypeError(f"y must be a sequence of labels, got {type(y).__name__}")
    if len(frame) != len(labels):
        raise ValueError(f"X has {len(frame)} rows but y has {len(labels)} labels")
    check_paired(frame, labels)
    rows, names = frame_samples(frame)
    values = labels.tolist() if hasattr(labels, "tolist") else list(labels)
    checked = []
    for name, label in zip(names, values):
        try:
            checked.append(check_label(label))
        except (TypeError, ValueError) as error:
            raise row_error(error, name) from error
    return Batch(rows, checked, names)


def row_error(error: Exception, name: typing.Any) -> Exception:
    """``error`` (a ValueError or TypeError) with the row it came from in its message."""
    return type(error)(f"{error} (row {short_repr(name)})")


def label_series(labels: list, like: typing.Any) -> typing.Any:
    """Predicted labels (None before any learning) as a Series in ``like``'s backend."""
    values = np.empty(len(labels), dtype=object)
    values[:] = labels
    return native_series(values, name=None, like=like)


def probability_frame(probabilities: list[dict], like: typing.Any) -> typing.Any:
    """Per-row ``{class: probability}`` dicts (the same classes in every row, or none) as a
    frame with one column per class, in ``like``'s backend."""
    classes = list(probabilities[0]) if probabilities else []
    values = np.array([[row[c] for c in classes] for row in probabilities], dtype=float)
    return native_frame(
        values.reshape(len(probabilities), len(classes)), columns=classes, like=like
    )
