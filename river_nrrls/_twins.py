"""The Python twins of the compiled kernels that have one: the same arguments, the same results.

Where ``_kernels.pyx`` is not built (or the tests switch it off), `river_nrrls._native` binds
these functions under the kernels' names, so that a caller calls the operation without asking
which one runs. Each twin computes what its kernel computes: by the same BLAS call where it can
(the rank-1 update of a buffer without spare capacity, the outputs), else by numpy to rounding
(the rank-1 update of a block that BLAS cannot address), and gives the same answer where the
kernel decides (``refill``: the same vector, or None for the validation). The
kernels without a twin (the fused paths, the compiled solves) are `river_nrrls._native`'s
``declined``: their callers' general paths are their twins.

"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import blas

from ._encoding_cache import same_keys
from ._validation import finite_reals

__all__ = ["outputs", "rank_one", "refill"]


def rank_one(buffer: np.ndarray, c: int, dim: int, vector: np.ndarray, weight: float) -> None:
    """``rank_one``: [n^c, s^c; s^c, A^c] += w [1, x][1, x]^T on the upper triangle of class
    ``c``'s leading ``dim x dim`` block of ``buffer`` (a ``(capacity, capacity, C)`` Fortran
    array), in place."""
    scatter = buffer[:, :, c]
    if scatter.shape[0] == dim:
        # n^c += w, s^c += w x, A^c += w x x^T. (alpha, x, lower=0: upper, incx, offx, n, a,
        # overwrite_a) by position: f2py parses keyword arguments for about as long as the
        # update itself takes at small d
        blas.dsyr(weight, vector, 0, 1, 0, dim, scatter, 1)
    else:  # spare capacity: the block in use is not contiguous for BLAS
        scatter[:dim, :dim] += np.multiply.outer(weight * vector, vector)


def outputs(weights: np.ndarray, vector: np.ndarray) -> list[float] | None:
    """``outputs``: w_k . x of every row of ``weights`` (Fortran order) as floats, or None when
    one is not finite."""
    products = blas.dgemv(1.0, weights, vector).tolist()  # cheaper than ``@`` here
    return products if all(map(math.isfinite, products)) else None


def refill(
    x: dict, keys: tuple, vector: np.ndarray, columns: np.ndarray, offset: int, fill: float
) -> np.ndarray | None:
    """``refill``: the dense vector of ``x`` when it has the keys ``keys`` (in that order) of the
    sample that was encoded last as ``vector`` at ``columns`` (one a key): ``vector`` itself
    when every value equals its entry, else a new read-only vector like it (``fill`` in the
    first ``offset`` entries, zeros elsewhere) with x's values. None when the keys differ
    (`same_keys`) or a value is not a finite plain int or float (`finite_reals`): the caller's
    validation then takes ``x``."""
    if not same_keys(tuple(x), keys):
        return None
    values = tuple(x.values())
    if not finite_reals(values):
        return None
    if values == tuple(vector[columns].tolist()):
        return vector
    refilled = np.zeros(len(vector))
    refilled[:offset] = fill
    refilled[columns] = values
    refilled.flags.writeable = False
    return refilled
