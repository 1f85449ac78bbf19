"""RLSRegressor's fused fast paths: a whole ``learn_one``, or a whole prediction, in ONE call.

River's prequential loop gives a model sample after sample with the same keys. For such a
sample (the index's `FeatureIndex.remembered` sample, refilled with the new values),
`learn_remembered` does what ``RLSRegressor.learn_one``'s steps do (encode, the range bound's
fast check, the rank-1 update of the scatter of [1, x, y], the QR update of its square-root
factor R, the weights' triangular solve: the operation ``rls_learn``) and `predict_remembered`
what ``predict_one``'s do (encode, the dot product with the weights: ``rls_predict``). Where the
kernels are built, `river_nrrls._native` binds the compiled ones (``_kernels.pyx``: R's update
is one Householder reflection a column, in C, many times cheaper than LAPACK's dtpqrt for one
row); elsewhere their Python twins (``_twins.py``). Either runs R's update and the weights'
solve as the general path's `SquareRootFactor.add_row` does (``rls_add_row``, compiled or
twin), so a sample gives the same model bit for bit whichever path takes it; the twins give
the compiled results to rounding (``tests/test_rls.py`` runs every path).

Either gives nothing (None) when it does not apply: other keys, values to validate, a sample
near the range limit, or rows waiting in the factor or that would wait (its delayed updates,
the faster Python path at large widths, which the compiled QR update makes useless: the
general path adds them, `SquareRootFactor.in_place`). The caller's general path then runs
and finds the model as it was but for the index's remembered vector, which the general path's
encoding would change as well. This module owns those paths and when they apply; the
estimator holds the model and commits what a fused step did (its scale, arrivals and range
bound).

"""

from __future__ import annotations

import math
import typing

import numpy as np

from . import _native
from ._checks import STATISTICS_LIMIT

if typing.TYPE_CHECKING:
    from ._index import FeatureIndex
    from ._sqrt_factor import SquareRootFactor

__all__ = ["learn_remembered", "predict_remembered"]


def learn_remembered(
    index: FeatureIndex,
    scatter: np.ndarray,
    factor: SquareRootFactor,
    solution: np.ndarray,
    first: int,
    x: dict,
    target: float,
    weight: float,
    mass: float,
    bound: float,
) -> float | None:
    """Learn ``x`` (target and weight checked, ``weight`` > 0) in one call when it has the
    remembered sample's keys: ``scatter``, R and ``solution`` (the weights) updated in place,
    the row entering with the stored-scale ``mass``. The new range bound (before forgetting)
    when it did, None otherwise (the general path's case: nothing was changed)."""
    cache = index.remembered()
    upper = factor.in_place()
    if cache is None or upper is None:
        return None
    result = _native.rls_learn(
        x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
        scatter, upper, solution, first, weight, mass, target, bound, STATISTICS_LIMIT,
    )  # fmt: skip
    if result is None:  # not the remembered keys, or values to validate
        return None
    vector, grown, solved = result
    index.refilled(cache, vector)
    if grown is None:  # near the range limit: the exact check (nothing was updated)
        return None
    if not solved:  # a zero pivot, or weights beyond the float range: the solve's fallbacks
        solution[:] = factor.solve()
    return grown


def predict_remembered(
    index: FeatureIndex, solution: np.ndarray, first: int, x: dict
) -> float | None:
    """The prediction ``w . x + b`` of ``x`` in one call when it has the remembered sample's
    keys and the prediction is finite; None otherwise (the general path's case)."""
    cache = index.remembered()
    if cache is None:
        return None
    result = _native.rls_predict(
        x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
        solution, first,
    )  # fmt: skip
    if result is None:
        return None
    vector, prediction = result
    index.refilled(cache, vector)
    return prediction if math.isfinite(prediction) else None
