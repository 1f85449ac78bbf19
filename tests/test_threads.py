"""BLAS threads (``river_nrrls._threads``): the setters are found through threadpoolctl, and
`one_blas_thread` runs BLAS on one thread and gives the caller its setting back.

The number of threads is read independently of the setters, through threadpoolctl's
``threadpool_info`` (OpenBLAS's ``openblas_get_num_threads`` sees the thread-local setting).
"""

from __future__ import annotations

import contextlib
import ctypes.util
import threading

import numpy as np
import pytest
import threadpoolctl

from river_nrrls import NRRLS, _native, _stats, _threads


def _openblas_threads() -> list[int]:
    """The number of threads of every OpenBLAS library loaded, as threadpoolctl reads it."""
    return [
        library["num_threads"]
        for library in threadpoolctl.threadpool_info()
        if library["internal_api"] == "openblas"
    ]


@contextlib.contextmanager
def _local_threads(n: int):
    """The calling thread's BLAS on ``n`` threads, with the setters themselves."""
    setters = _threads.THREAD_SETTERS
    previous = [setter(n) for setter in setters]
    try:
        yield
    finally:
        for setter, value in zip(setters, previous):
            setter(value)


def test_it_finds_the_openblas_that_numpy_uses():
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    assert "openblas" in blas["name"]  # the wheels this project is tested with bundle OpenBLAS
    numpys = [
        library
        for library in threadpoolctl.threadpool_info()
        if library["internal_api"] == "openblas" and library["version"] == blas["version"]
    ]
    assert len(numpys) == 1
    setters = _threads.find_thread_setters(numpys)
    assert len(setters) == 1
    # it is the library numpy calls: one thread there is one thread for numpy's BLAS
    with _local_threads(2):
        previous = setters[0](1)
        try:
            assert 1 in _openblas_threads()
        finally:
            setters[0](previous)
    # every OpenBLAS loaded (numpy's and scipy's) has one
    assert len(_threads.THREAD_SETTERS) == len(_openblas_threads()) >= 1


def test_the_context_runs_one_thread_and_restores_the_callers_setting():
    with _local_threads(2):
        assert set(_openblas_threads()) == {2}
        with _threads.one_blas_thread(_threads.ONE_THREAD_MIN_DIM):
            assert set(_openblas_threads()) == {1}
        assert set(_openblas_threads()) == {2}
        with _threads.one_blas_thread():  # no width: always one thread
            assert set(_openblas_threads()) == {1}
            with _threads.one_blas_thread(10**6):  # nested: restores the outer one thread
                assert set(_openblas_threads()) == {1}
            assert set(_openblas_threads()) == {1}
        assert set(_openblas_threads()) == {2}


def test_the_context_restores_the_setting_when_the_body_raises():
    with _local_threads(2):
        with pytest.raises(ZeroDivisionError):
            with _threads.one_blas_thread():
                1 / 0  # noqa: B018
        assert set(_openblas_threads()) == {2}


def test_a_narrow_system_keeps_the_threads():
    with _local_threads(2):
        context = _threads.one_blas_thread(_threads.ONE_THREAD_MIN_DIM - 1)
        assert isinstance(context, contextlib.nullcontext)
        with context:
            assert set(_openblas_threads()) == {2}


def test_without_a_setter_the_context_changes_nothing(monkeypatch):
    with _local_threads(2):
        monkeypatch.setattr(_threads, "THREAD_SETTERS", ())
        for dim in (None, _threads.ONE_THREAD_MIN_DIM, 10**6):
            context = _threads.one_blas_thread(dim)
            assert isinstance(context, contextlib.nullcontext)
            with context:
                assert set(_openblas_threads()) == {2}


def _in_thread(function) -> list:
    """``function()``'s result, called in another thread."""
    result = []
    worker = threading.Thread(target=lambda: result.append(function()))
    worker.start()
    worker.join(10)
    return result[0]


def test_the_setter_is_process_wide():
    """OpenBLAS's ``_local`` setter sets the count of the whole process (what `_threads`
    assumes): another thread sees one thread while this one is inside."""
    with _local_threads(2):
        assert set(_in_thread(_openblas_threads)) == {2}
        with _threads.one_blas_thread():
            assert set(_in_thread(_openblas_threads)) == {1}
        assert set(_in_thread(_openblas_threads)) == {2}


def test_overlapping_contexts_of_two_threads_restore_the_setting():
    """Thread A enters, B enters, A leaves, B leaves: one thread until B leaves, then the
    setting from before A entered (a context per call, each restoring what it found, would
    leave the process on one thread)."""
    a_inside, b_inside, a_left, b_may_leave = (threading.Event() for _ in range(4))
    seen = {}

    def thread_b():
        a_inside.wait(10)
        with _threads.one_blas_thread():
            b_inside.set()
            b_may_leave.wait(10)
        seen["after both"] = _openblas_threads()

    with _local_threads(2):
        worker = threading.Thread(target=thread_b)
        worker.start()
        with _threads.one_blas_thread():
            a_inside.set()
            b_inside.wait(10)
        a_left.set()
        seen["b still inside"] = _openblas_threads()
        b_may_leave.set()
        worker.join(10)
        assert set(seen["b still inside"]) == {1}
        assert set(seen["after both"]) == {2}
        assert set(_openblas_threads()) == {2}


@pytest.mark.parametrize(
    "library",
    [
        {"user_api": "openmp", "internal_api": "openmp", "filepath": "libgomp.so.1"},
        {"user_api": "blas", "internal_api": "blis", "filepath": "libblis.so.4"},
        {"user_api": "blas", "internal_api": "mkl", "filepath": "libmkl_rt.so.2"},
        {"user_api": "blas", "internal_api": "openblas", "filepath": "/no/such/libopenblas.so"},
        {"user_api": "blas", "internal_api": "openblas", "filepath": None},
    ],
)
def test_libraries_without_a_setter_are_left_out(library):
    assert _threads.find_thread_setters([library]) == ()


def test_a_library_without_the_symbol_is_left_out():
    """A loaded library that is not OpenBLAS, described as OpenBLAS: no setter in its file."""
    path = next(
        library["filepath"]
        for library in threadpoolctl.threadpool_info()
        if library["internal_api"] == "openblas"
    )
    openblas = {"user_api": "blas", "internal_api": "openblas", "filepath": path}
    assert len(_threads.find_thread_setters([openblas, openblas])) == 1  # once per file
    libc = ctypes.util.find_library("c")
    assert libc is not None
    assert _threads.find_thread_setters([{**openblas, "filepath": libc}]) == ()


@pytest.mark.parametrize("dim", [_stats._THREADED_DSYR_MIN_DIM, _stats._THREADED_DSYR_MIN_DIM + 20])
def test_a_wide_model_learns_and_predicts_on_one_thread(monkeypatch, dim):
    """learn_one's rank-1 update (dsyr) and predict's outputs (dgemv) of a wide model see one
    BLAS thread, and the caller's setting is back after each call."""
    seen = {"rank one": [], "outputs": []}
    rank_one, products = _native.rank_one, NRRLS._products

    def spy_rank_one(*args):
        seen["rank one"].append(set(_openblas_threads()))
        return rank_one(*args)

    def spy_products(self, *args):
        seen["outputs"].append(set(_openblas_threads()))
        return products(self, *args)

    monkeypatch.setattr(_native, "rank_one", spy_rank_one)
    monkeypatch.setattr(NRRLS, "_products", spy_products)
    rng = np.random.default_rng(dim)
    model = NRRLS()
    with _local_threads(2):
        for step in range(6):
            x = {f"x{j}": float(v) for j, v in enumerate(rng.random(dim - 1))}  # + intercept
            model.predict_one(x)
            assert set(_openblas_threads()) == {2}
            model.learn_one(x, step % 2 == 0)
            assert set(_openblas_threads()) == {2}
    assert model.statistics.dim == dim
    assert seen["rank one"] and all(threads == {1} for threads in seen["rank one"])
    assert seen["outputs"] and all(threads == {1} for threads in seen["outputs"])
