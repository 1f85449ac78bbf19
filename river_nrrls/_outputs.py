"""The outputs ``f_k = w_k . x`` of a one-vs-rest least-squares classifier (`products`) and
what they become: the probabilities (a softmax of ``2 f_k / eta``) and the refusal of outputs
that overflow.

Shared by `NRRLS` and the order selector's nested orders (`river_nrrls._orders`), which
compute the same outputs from the same weights and must answer alike. Internal interface.

"""

from __future__ import annotations

import math
import typing

import numpy as np

from . import _native

if typing.TYPE_CHECKING:
    from ._ranges import ColumnNamer

__all__ = ["products", "refuse_overflow", "softmax"]


def products(
    weights: np.ndarray, vector: np.ndarray, namer: typing.Callable[[], ColumnNamer]
) -> list[float]:
    """w_k . x of every row of ``weights`` (one class a row, over the model's dense columns),
    refusing outputs that overflow (`refuse_overflow`, the columns named by ``namer()``).

    The one computation of NRRLS's outputs from solved weights, so that whoever holds the same
    weights and x gets the same floats (the selector's orders and their pipelines): a Fortran
    array of weights goes to the compiled ``outputs`` (dgemv, as the fused two-class
    prediction), any other to numpy's product.

    """
    if weights.flags.f_contiguous:
        outputs = _native.outputs(weights, vector)  # one compiled call; None: not finite
    else:
        outputs = (weights @ vector).tolist()
        if not all(map(math.isfinite, outputs)):
            outputs = None
    if outputs is None:
        refuse_overflow(weights, vector, namer())
    return outputs


def softmax(outputs: np.ndarray, eta: float) -> np.ndarray:
    """Row-wise softmax of ``2 f / eta`` of an ``(n, C)`` array of outputs, finite for any
    finite outputs (a new array).

    It is computed as exp((f_k / 2 - f_max / 2) * 4 / eta): the halved difference cannot
    overflow (where 2 f / eta, or f_k - f_max, can for |f| near 1e308); a difference that
    the scaling sends to -inf gives a probability of exactly 0, and the largest output
    always gets exp(0) = 1 before the normalisation.

    Parameters
    ----------
    outputs
        One row per sample, one column per class.
    eta
        The validated ``eta`` of the model (a float > 0).

    """
    halves = outputs * 0.5
    scaled = halves - halves.max(axis=1, keepdims=True)  # (f_k - f_max) / 2 <= 0
    factor = 4.0 / eta
    if factor == float("inf"):  # eta below 2.2e-308: every class but the best gets 0
        scaled = np.where(scaled == 0.0, 0.0, -1000.0)
    else:
        np.maximum(scaled, -1000.0 / factor, out=scaled)  # exp(-1000) is 0 already
        scaled *= factor
    np.exp(scaled, out=scaled)
    scaled /= scaled.sum(axis=1, keepdims=True)
    return scaled


def refuse_overflow(
    weights: np.ndarray, vector: np.ndarray, name_of: ColumnNamer, where: str = ""
) -> typing.NoReturn:
    """Raise the ``ValueError`` for outputs ``w_k . x`` that overflow, naming the column of
    the largest term ``|w_kj x_j|``: dense column 0 is "the intercept", any other is named by
    ``name_of(column)`` (``"feature 'a'"``, `NRRLS.column_namer`).

    Parameters
    ----------
    weights
        One row of weights per class, over the model's dense columns.
    vector
        The sample over the same columns.
    name_of
        How the model names a dense column >= 1.
    where
        Appended to "the outputs overflow" (``" at row 3"``).

    """
    with np.errstate(over="ignore", invalid="ignore"):
        terms = np.abs(weights * vector).max(axis=0)
    column = int(np.argmax(np.where(np.isnan(terms), np.inf, terms)))
    name = "the intercept" if column == 0 else name_of(column)
    raise ValueError(
        f"the outputs overflow{where}: {name} has a value too large for the model's weights"
    )
