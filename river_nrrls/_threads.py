"""BLAS threads of the solver: one thread for the BLAS calls of a wide solve.

A prediction step works on one small matrix; with the default threading the BLAS library wakes
its threads for it, which costs more than it saves (and much more on a busy machine). OpenBLAS
(>= 0.3.27) has a cheap setter that returns the previous setting,
``openblas_set_num_threads_local(n)``: a microsecond or two, where threadpoolctl's
``threadpool_limits`` takes a millisecond (it looks the libraries up again on every call).
Despite its name the setter is not thread-local: it sets the library's thread count for the
whole process (``openblas_set_num_threads``) and only names the count that OpenBLAS uses inside
an OpenMP parallel region. So `one_blas_thread` counts the contexts open in all threads: the
first one sets one thread, the last one to close restores the setting it found. While any
thread of the process is inside a wide solve, every OpenBLAS call of the process runs on one
thread.

The libraries are found by threadpoolctl (`threadpoolctl.threadpool_info`), which knows where
numpy's and scipy's BLAS live on every platform (a wheel's bundled OpenBLAS, conda's, a system
library); the setter is then looked up in each OpenBLAS file with ctypes. Where none has it
(MKL, Apple's Accelerate, BLIS, an OpenBLAS older than 0.3.27) `one_blas_thread` changes
nothing.

`THREAD_SETTERS` is found once, at import: numpy's BLAS is loaded by then, and so is scipy's
(this module imports `scipy.linalg`, the BLAS the solver and the compiled kernels call).

To run BLAS on one thread for a whole script (the benchmarks do), use threadpoolctl's own
``threadpool_limits(1)``: it works with every library, with or without such a setter.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import typing

import numpy  # noqa: F401  (loads numpy's BLAS, so that threadpoolctl sees it)
import scipy.linalg  # noqa: F401  (loads scipy's BLAS, the one the solver calls)
import threadpoolctl

__all__ = ["ONE_THREAD_MIN_DIM", "THREAD_SETTERS", "find_thread_setters", "one_blas_thread"]

#: Width of a system from which `one_blas_thread` runs BLAS on one thread; below it the setter
#: calls (~1-3 us) cost more than the threads do.
ONE_THREAD_MIN_DIM = 64

#: ``int setter(int n)``: sets n threads, returns the previous number (OpenBLAS >= 0.3.27).
SETTER_NAME = "openblas_set_num_threads_local"
# Builds that rename their symbols (scipy-openblas: ``scipy_`` before the name, ``64_`` after
# it in the 64-bit integer build; threadpoolctl tries the same) keep the plain name of this
# setter so far, but may not always.
_SYMBOL_PREFIXES = ("", "scipy_")
_SYMBOL_SUFFIXES = ("", "64_", "_64")

if typing.TYPE_CHECKING:
    from _ctypes import CFuncPtr

#: A ctypes function of the library, ``int setter(int n)``.
ThreadSetter: typing.TypeAlias = "CFuncPtr"


def _setter_in(path: str) -> ThreadSetter | None:
    """`SETTER_NAME` (or a renamed build's version of it) in the shared library at ``path``."""
    try:
        library = ctypes.CDLL(path)
    except OSError:
        return None
    for prefix in _SYMBOL_PREFIXES:
        for suffix in _SYMBOL_SUFFIXES:
            setter = getattr(library, prefix + SETTER_NAME + suffix, None)
            if setter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
                return setter
    return None


def find_thread_setters(
    libraries: typing.Iterable[dict] | None = None,
) -> tuple[ThreadSetter, ...]:
    """The thread setters of the OpenBLAS libraries, one per library file that has one.

    Parameters
    ----------
    libraries
        Library descriptions as `threadpoolctl.threadpool_info` gives them (``user_api``,
        ``internal_api``, ``filepath``); default: the libraries loaded in this process now.

    """
    if libraries is None:
        libraries = threadpoolctl.threadpool_info()
    setters, seen = [], set()
    for library in libraries:
        path = library.get("filepath")
        if library.get("internal_api") != "openblas" or not path or path in seen:
            continue
        seen.add(path)
        setter = _setter_in(path)
        if setter is not None:
            setters.append(setter)
    return tuple(setters)


#: The setters of the OpenBLAS libraries loaded at import (empty: none has one).
THREAD_SETTERS: tuple[ThreadSetter, ...] = find_thread_setters()


class _OneThread:
    """Context: BLAS on one thread while any thread is inside; the last one out restores the
    setting that the first one in found (the setters are process-wide)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0  # contexts open, in all threads
        self.setters: tuple[ThreadSetter, ...] = ()
        self.previous: list[int] = []

    def __enter__(self) -> None:
        with self.lock:
            if self.inside == 0:
                self.setters = THREAD_SETTERS
                self.previous = [setter(1) for setter in self.setters]
            self.inside += 1

    def __exit__(self, *exc) -> None:
        with self.lock:
            self.inside -= 1
            if self.inside == 0:
                for setter, previous in zip(self.setters, self.previous):
                    setter(previous)


_ONE_THREAD = _OneThread()


def one_blas_thread(dim: int | None = None) -> typing.ContextManager[None]:
    """A context running BLAS on one thread for a ``dim``-wide system (None: any width).

    One thread when ``dim`` is None or at least `ONE_THREAD_MIN_DIM` and an OpenBLAS library
    has a setter (`THREAD_SETTERS`); otherwise nothing changes (a null context). The setting
    found on entry is restored on exit (when several threads are inside at once, when the
    last of them leaves).

    Examples
    --------

    >>> from river_nrrls import _threads
    >>> with _threads.one_blas_thread(_threads.ONE_THREAD_MIN_DIM):
    ...     pass  # BLAS calls here run on one thread where a setter exists

    """
    if not THREAD_SETTERS or (dim is not None and dim < ONE_THREAD_MIN_DIM):
        return contextlib.nullcontext()
    return _ONE_THREAD
