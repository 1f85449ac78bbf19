"""Small helpers shared by the tests (the plain-numpy references are in ``reference.py``).

Each name has one meaning across the test suite:

- `pickled_state`: a model's learnt state as bytes, to check that a refused call left it
  exactly as it was;
- `is_missing`: whether the package reads a feature value as missing;
- `relative_difference`: ``||a - b||_2 / ||b||_2`` of two arrays (``reference.relative_error``
  is another measure: the error of a weight matrix on the batch TER's own scale).
"""

from __future__ import annotations

import math
import pickle
import typing

import numpy as np
import pandas as pd

__all__ = ["is_missing", "pickled_state", "relative_difference"]


def pickled_state(model: typing.Any) -> bytes:
    """The pickle of ``model``'s learnt state: of the model itself, or of a pipeline's steps
    (river's `compose.Pipeline` also caches the plan of its calls, which a refused call may
    build without anything being learnt)."""
    if hasattr(model, "steps"):
        return pickle.dumps(list(model.steps.values()))
    return pickle.dumps(model)


def is_missing(value: typing.Any) -> bool:
    """Whether ``value`` is a missing feature value: ``None``, ``pd.NA`` or a float NaN.

    A dict's ``None`` or ``pd.NA``, a dataframe's empty cell (NaN): the package reads each as
    zero and adds no feature for it (a NaN in a dict, though, it refuses).
    """
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def relative_difference(a: np.ndarray, reference: np.ndarray) -> float:
    """``||a - reference||_2 / ||reference||_2``: the Euclidean norm of vectors (Frobenius of
    matrices) of the difference, relative to that of ``reference`` (which must not be 0)."""
    a, reference = np.asarray(a, dtype=float), np.asarray(reference, dtype=float)
    return float(np.linalg.norm(a - reference) / np.linalg.norm(reference))
