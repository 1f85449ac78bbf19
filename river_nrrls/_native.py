"""The compiled kernels of ``_kernels.pyx``, each None where the extension is not built.

The extension is optional at install time (``setup.py``): without a C compiler or Cython the
package installs without it, and every caller takes its Python path, the same formulas. The
callers read the kernels from this module at call time (``_native.pair_weights``), so that the
tests can switch them off and check the Python paths too.

An extension that is built but cannot run here (Cython checks, at import, the C signatures of the
BLAS and LAPACK routines that scipy exports; numpy's C API version) warns and leaves the Python
paths too.

"""

from __future__ import annotations

import ctypes
import warnings

from ._threads import THREAD_SETTERS

NOGIL_COLUMNS = 0  # the kernels' NOGIL_MIN_DIM (pair_outputs's one_thread takes fewer columns)

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
        stale_append,
        use_thread_setters,
    )
except ImportError as error:  # not built: the Python paths
    missing = isinstance(error, ModuleNotFoundError) and error.name == f"{__package__}._kernels"
    if not missing:  # built, but cannot load here
        warnings.warn(
            f"river_nrrls's compiled kernels cannot load ({error}): the Python paths run",
            RuntimeWarning,
            stacklevel=2,
        )
    # None where the kernels do not load (mypy types the names from _kernels.pyi, the built
    # extension, and has no notion of an optional one: every caller tests `is not None`)
    outputs = pair_matrix = pair_outputs = pair_weights = rank_one = refill = None  # type: ignore[assignment]
    conjugate_gradients = each_weights = learn_remembered = stale_append = None  # type: ignore[assignment]
except TypeError as error:  # a scipy whose BLAS or LAPACK signatures differ from the build's
    warnings.warn(
        f"river_nrrls's compiled kernels cannot run with this scipy ({error}): "
        "the Python paths run",
        RuntimeWarning,
        stacklevel=2,
    )
    outputs = pair_matrix = pair_outputs = pair_weights = rank_one = refill = None  # type: ignore[assignment]
    conjugate_gradients = each_weights = learn_remembered = stale_append = None  # type: ignore[assignment]

if pair_outputs is not None:  # BLAS on one thread from C (`use_thread_setters`)
    # a function's address is never NULL (c_void_p's None); 0 would be refused as None would
    use_thread_setters(
        tuple(ctypes.cast(setter, ctypes.c_void_p).value or 0 for setter in THREAD_SETTERS)
    )

__all__ = [
    "NOGIL_COLUMNS",
    "conjugate_gradients",
    "each_weights",
    "learn_remembered",
    "outputs",
    "pair_matrix",
    "pair_outputs",
    "pair_weights",
    "rank_one",
    "refill",
    "stale_append",
]
