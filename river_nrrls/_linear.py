"""Small helpers of the first-order linear models (OCSCA's correction, CSOGD): a weight vector
that grows with the shared feature index, an order-independent dot product, the logistic map."""

from __future__ import annotations

import math
import operator

import numpy as np
from river.base.typing import ClfTarget

__all__ = ["binary_proba", "exact_dot", "sigmoid", "weights_at", "with_capacity"]


#: Up to this many entries, `exact_dot` multiplies in Python floats (as fast as numpy there, and
#: a Python product never warns); beyond, numpy's products under ``np.errstate``.
_PYTHON_PRODUCTS = 64


def exact_dot(weights: np.ndarray, values: np.ndarray) -> float:
    """w . x, correctly rounded from the products so that it does not depend on the order of the
    features (a margin on the edge of a hinge must not flip with the order of the keys of x).

    Products or a sum beyond float range give inf or NaN, without numpy's overflow warning: the
    callers check the result and refuse the sample with an error of their own."""
    if len(values) <= _PYTHON_PRODUCTS:  # Python's float products: the same IEEE results
        products = list(map(operator.mul, weights.tolist(), values.tolist()))
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            products = (weights * values).tolist()
    try:
        return math.fsum(products)
    except (OverflowError, ValueError):  # a sum that overflows, or inf - inf
        return float(sum(products))  # Python floats: inf or NaN, no exception


def weights_at(weights: np.ndarray, columns: np.ndarray, new: list) -> np.ndarray:
    """``weights[columns]``, 0 for the provisional columns of not yet added features."""
    if not new:
        return weights[columns]
    column_array = np.asarray(columns, dtype=np.intp)
    known = column_array < len(weights)  # spare capacity holds zeros
    current = np.zeros(len(column_array))
    current[known] = weights[column_array[known]]
    return current


def with_capacity(weights: np.ndarray, size: int) -> np.ndarray:
    """``weights`` itself, or a copy zero-padded to at least ``size`` (capacity doubling)."""
    if size <= len(weights):
        return weights
    grown = np.zeros(max(2 * len(weights), size))
    grown[: len(weights)] = weights
    return grown


def sigmoid(value: float) -> float:
    """The logistic function 1 / (1 + exp(-value)), without overflow."""
    if value >= 0.0:
        return 1.0 / (1.0 + math.exp(-value))
    exponential = math.exp(value)
    return exponential / (1.0 + exponential)


def binary_proba(score: float) -> dict[ClfTarget, float]:
    """river's binary contract: ``{False: p0, True: p1}`` with p1 = sigmoid(score)."""
    return {False: sigmoid(-score), True: sigmoid(score)}
