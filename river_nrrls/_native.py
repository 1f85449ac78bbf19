"""The one place that chooses, per operation, the compiled kernel of ``_kernels.pyx`` or what
runs without it.

The extension is optional at install time (``setup.py``): without a C compiler or Cython the
package installs without it. Every operation of the kernels is bound here, once, under its
name: to the kernel where it is built, else to its stand-in (`STAND_INS`), which is either its
Python twin (``_twins.py``: the same arguments and results) or `declined` (None: "not taken
here", for the kernels whose twin is their caller's general path, which the caller then runs).
So a caller calls ``_native.pair_weights(...)`` without asking which one runs. The callers read
the operations from this module at call time, so that the tests can switch the kernels off by
rebinding these names to their stand-ins (``tests/kernel_paths.py``) and check the Python paths
too. A caller that must choose a whole route before calling (assemble M in the kernel or in
numpy; a threshold tuned for the compiled solve) asks `compiled`.

An extension that is built but cannot run here (Cython checks, at import, the C signatures of the
BLAS and LAPACK routines that scipy exports; numpy's C API version) warns and leaves the Python
paths too.

"""

from __future__ import annotations

import ctypes
import warnings

from . import _twins
from ._threads import THREAD_SETTERS

NOGIL_COLUMNS = 0  # the kernels' NOGIL_MIN_DIM (pair_outputs's one_thread takes fewer columns)


def declined(*arguments: object) -> None:
    """The stand-in of a kernel without a Python twin: None, "not taken here" (the caller's
    general path runs, as after a kernel that declines its arguments)."""
    return None


#: What runs under each kernel's name where the kernel is not built or switched off.
STAND_INS = {
    "conjugate_gradients": declined,
    "each_weights": declined,
    "learn_remembered": declined,
    "outputs": _twins.outputs,
    "pair_matrix": declined,
    "pair_outputs": declined,
    "pair_weights": declined,
    "rank_one": _twins.rank_one,
    "refill": _twins.refill,
    "rls_add_row": _twins.rls_add_row,
    "rls_learn": _twins.rls_learn,
    "rls_predict": _twins.rls_predict,
    "stale_append": declined,
}

try:
    from ._kernels import (
        NOGIL_COLUMNS,
        conjugate_gradients,
        each_weights,
        learn_remembered,
        outputs,
        pair_matrix,
        pair_outputs,
        pair_weights,
        rank_one,
        refill,
        rls_add_row,
        rls_learn,
        rls_predict,
        stale_append,
        use_thread_setters,
    )
except ImportError as error:  # not built: the stand-ins
    missing = isinstance(error, ModuleNotFoundError) and error.name == f"{__package__}._kernels"
    if not missing:  # built, but cannot load here
        warnings.warn(
            f"river_nrrls's compiled kernels cannot load ({error}): the Python paths run",
            RuntimeWarning,
            stacklevel=2,
        )
    _built = False
except TypeError as error:  # a scipy whose BLAS or LAPACK signatures differ from the build's
    warnings.warn(
        f"river_nrrls's compiled kernels cannot run with this scipy ({error}): "
        "the Python paths run",
        RuntimeWarning,
        stacklevel=2,
    )
    _built = False
else:
    _built = True

if _built:  # BLAS on one thread from C (`use_thread_setters`)
    # a function's address is never NULL (c_void_p's None); 0 would be refused as None would
    use_thread_setters(
        tuple(ctypes.cast(setter, ctypes.c_void_p).value or 0 for setter in THREAD_SETTERS)
    )
else:  # (mypy types these names from _kernels.pyi: the stand-ins take the same arguments, and a
    # declined call returns None, which every caller of a declinable kernel handles)
    outputs, rank_one, refill = _twins.outputs, _twins.rank_one, _twins.refill  # type: ignore[assignment]
    rls_learn, rls_predict = _twins.rls_learn, _twins.rls_predict  # type: ignore[assignment]
    rls_add_row = _twins.rls_add_row
    conjugate_gradients = each_weights = learn_remembered = pair_matrix = declined  # type: ignore[assignment]
    pair_outputs = pair_weights = stale_append = declined  # type: ignore[assignment]


def compiled(name: str) -> bool:
    """Whether the operation ``name`` (a key of `STAND_INS`) runs its compiled kernel now."""
    return globals()[name] is not STAND_INS[name]


__all__ = [
    "NOGIL_COLUMNS",
    "STAND_INS",
    "compiled",
    "conjugate_gradients",
    "declined",
    "each_weights",
    "learn_remembered",
    "outputs",
    "pair_matrix",
    "pair_outputs",
    "pair_weights",
    "rank_one",
    "refill",
    "rls_add_row",
    "rls_learn",
    "rls_predict",
    "stale_append",
]
