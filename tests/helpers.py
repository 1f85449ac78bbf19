"""Small helpers shared by the tests (the plain-numpy references are in ``reference.py``).

Each name has one meaning across the test suite:

- `pickled_state`: a model's learnt state as bytes, to check that a refused call left it
  exactly as it was;
- `is_missing`: whether the package reads a feature value as missing;
- `relative_difference`: ``||a - b||_2 / ||b||_2`` of two arrays (``reference.relative_error``
  is another measure: the error of a weight matrix on the batch TER's own scale);
- `leading_inputs`, `nonlinear_stream`: the wide real and random streams on which the order
  selector is compared with its pipelines (``test_order_selector_exactness.py`` and
  ``benchmarks/selector_exactness.py``).
"""

from __future__ import annotations

import itertools
import math
import pickle
import typing

import numpy as np
import pandas as pd

__all__ = [
    "is_missing",
    "leading_inputs",
    "nonlinear_stream",
    "pickled_state",
    "relative_difference",
]


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


def leading_inputs(name: str, n_inputs: int, n_rows: int | None = None) -> list:
    """The first ``n_inputs`` inputs of a bundled data set (its first ``n_rows`` rows)."""
    from river_nrrls import datasets

    rows = itertools.islice(getattr(datasets, name)(), n_rows)
    return [(dict(itertools.islice(x.items(), n_inputs)), y) for x, y in rows]


def nonlinear_stream(n_samples: int, n_inputs: int, seed: int = 0) -> list:
    """Inputs in [0, 1], a noisy nonlinear boundary, 30 % positives."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=n_inputs)
    stream = []
    for _ in range(n_samples):
        values = rng.random(n_inputs)
        score = np.sin(3.0 * values @ direction) + 0.5 * rng.normal()
        stream.append(({f"x{j}": float(v) for j, v in enumerate(values)}, bool(score > 0.4)))
    return stream
