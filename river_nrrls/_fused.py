"""NR-RLS's fused fast paths: a whole ``learn_one``, or a whole two-class prediction, in ONE
compiled call.

River's prequential loop gives a model sample after sample with the same keys. For such a
sample, where the kernels are built, `learn_remembered` does what ``NRRLS.learn_one``'s steps do
(encode, the range check's fast bound, the rank-1 update: the kernel ``learn_remembered``) and
`pair_outputs` what ``NRRLS.predict_one``'s do with two classes (encode, the direct solve, the
outputs: the kernel ``pair_outputs``), with the same floating-point operations, so the model is
the general path's bit for bit (``tests/test_kernels.py``).

Each takes the model's shared pieces and asks each, through its internal interface, for what the
kernel needs, then tells it what the kernel did: the `FeatureIndex` its remembered sample
(`FeatureIndex.remembered`, kept through `FeatureIndex.refilled`), the `ClassStatistics` its
buffer, width and range bound (`ClassStatistics.plain_update`, `ClassStatistics.updated_one`),
the `SystemSolver` its two-class parameters (`SystemSolver.pair_kernel`, then
`SystemSolver.observe` or `SystemSolver.pair_kernel_solved`). Either gives nothing (False, None)
when it does not apply: other keys, values to validate, an update or a solve that is not the
plain one, or no kernel (`river_nrrls._native` binds ``declined`` then). The caller's general
path then runs, and finds the model as it was but for the index's remembered vector, which the
general path's encoding would change as well. This module owns those paths and when they apply;
the estimator holds the model.

"""

from __future__ import annotations

import sys
import typing

import numpy as np

from . import _native
from ._checks import SMALLEST_WEIGHT, STATISTICS_LIMIT
from ._direct import TINY_RIDGE
from ._solver import Solver, SystemSolver
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

if typing.TYPE_CHECKING:
    from ._index import FeatureIndex
    from ._stats import ClassStatistics

__all__ = ["FusedPrediction", "learn_remembered", "pair_outputs"]

# A free-threaded build runs other threads during a kernel: BLAS threads are then set only by
# `one_blas_thread`, whose count of the threads inside keeps the setting consistent.
_GIL_ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()


#: A two-class prediction in one call (`pair_outputs`): w_0 and w_1 as rows (Fortran order,
#: what the model caches), x over the dense columns, and the outputs w_k . x (None: one is
#: not finite, the caller refuses it). A plain tuple: a record would add an allocation to
#: every fast prediction.
FusedPrediction = tuple[np.ndarray, np.ndarray, "list[float] | None"]


def learn_remembered(
    index: FeatureIndex,
    stats: ClassStatistics,
    solver: Solver,
    x: dict,
    label: typing.Hashable,
    weight: float,
) -> bool:
    """Learn ``x`` (of class ``label``, mass ``weight``, both checked) in one compiled call when
    ``x`` has the remembered sample's keys, its class is known, the update is a plain one
    (`ClassStatistics.plain_update`) and the solver's `observe` reads no statistics
    (`SystemSolver`: the woodbury recursion's reads them before the update). True when it did
    (the caller's cached weights are then stale); False otherwise, the general path's case."""
    slot = stats.slot.get(label)
    cache = index.remembered()
    if (
        slot is None
        or cache is None
        or weight < SMALLEST_WEIGHT
        or cache.size != stats.dim
        or type(solver) is not SystemSolver
    ):
        return False
    bound = stats.plain_update(index.offset + len(cache.keys))
    if bound is None:
        return False
    result = _native.learn_remembered(
        x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
        stats.buffer, slot, stats.dim, weight, bound, STATISTICS_LIMIT,
    )  # fmt: skip
    if result is None:  # not the remembered keys, values to validate, or not built
        return False
    vector, load = result
    index.refilled(cache, vector)
    if load is None:  # near the range limit: the exact check (nothing was updated)
        return False
    solver.observe(stats, slot, vector, weight)  # reads nothing the update changed
    stats.updated_one(load)
    return True


def pair_outputs(
    index: FeatureIndex, stats: ClassStatistics, solver: Solver, x: dict
) -> FusedPrediction | None:
    """The weights and outputs of two classes in one compiled call when ``x`` has the
    remembered sample's keys and the solver would take the two-class direct solve
    (`SystemSolver.pair_kernel`); None otherwise, the general path's case (then the solver's
    state is as it was)."""
    cache = index.remembered()
    if cache is None or type(solver) is not SystemSolver:
        return None
    parameters = solver.pair_kernel(stats)
    if parameters is None or cache.size != stats.dim:
        return None
    dim = stats.dim
    weights = np.empty((2, dim), order="F")
    arguments = (
        x, cache.keys, cache.vector, cache.layout.columns, index.offset, index.fill,
        stats.buffer, dim, parameters.first, parameters.reweight, parameters.tau, parameters.eta,
        parameters.l2, weights,
    )  # fmt: skip
    if dim < ONE_THREAD_MIN_DIM:
        result = _native.pair_outputs(*arguments)
    elif _GIL_ENABLED and dim - parameters.first < _native.NOGIL_COLUMNS:
        # one BLAS thread, set and restored in C around the solve and the outputs (the kernel
        # keeps the GIL meanwhile, so no one_blas_thread of another thread runs in between):
        # cheaper than one_blas_thread's Python context
        result = _native.pair_outputs(*arguments, True)
    else:
        with one_blas_thread(dim):  # as the general path's solve and outputs
            result = _native.pair_outputs(*arguments)
    if result is None:  # not the remembered keys, values to validate, or not built
        return None
    vector, info, outputs = result
    index.refilled(cache, vector)
    if info != 0 or (parameters.l2 <= TINY_RIDGE and not np.isfinite(weights).all()):
        return None  # the general path solves again, with solve_spd's fallbacks
    solver.pair_kernel_solved(stats)
    return weights, vector, outputs
