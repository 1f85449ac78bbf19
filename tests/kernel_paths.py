"""The two paths of every narrow step, for the tests: the compiled kernels and the Python paths.

``river_nrrls._kernels`` is optional (``setup.py``): where it is not built the compiled path's
tests are skipped, saying why (the end of the failed build's output, which the root
``conftest.py`` keeps), and ``test_kernels.py``'s one test of the build asserts it exists only
where a C compiler, Cython and setuptools are there to build it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import tempfile

import pytest

from river_nrrls import _native

KERNELS = list(_native.STAND_INS)  # the operations that have a kernel
BUILT = all(_native.compiled(name) for name in KERNELS)
#: The end of the failed in-place build's output (the compiler's error), None when it did not fail
#: (conftest.py's BUILD_ERROR_VARIABLE).
BUILD_ERROR = os.environ.get("RIVER_NRRLS_KERNEL_BUILD_ERROR")
NOT_BUILT = (
    "river_nrrls._kernels is not built here (no C compiler, or no Cython at build time): "
    "the Python paths run, and the compiled path is not tested"
    + ("" if BUILD_ERROR is None else f"; {BUILD_ERROR}")
)
needs_kernels = pytest.mark.skipif(not BUILT, reason=NOT_BUILT)


def without_kernels(monkeypatch) -> None:
    """Switch the compiled kernels off for one test: `without_kernel` for every operation."""
    for name in KERNELS:
        without_kernel(monkeypatch, name)


def without_kernel(monkeypatch, name: str) -> None:
    """Switch the compiled kernel ``name`` off for one test: the one place that chooses
    (``_native``) binds its stand-in, the Python twin or ``declined`` (the general path)."""
    monkeypatch.setattr(_native, name, _native.STAND_INS[name])


@pytest.fixture(params=["compiled", "python"])
def kernel_path(request, monkeypatch) -> str:
    """Run the test on the compiled kernels, then on the Python paths."""
    if request.param == "compiled":
        if not BUILT:
            pytest.skip(NOT_BUILT)
    else:
        without_kernels(monkeypatch)
    return request.param


@functools.cache
def why_the_kernels_cannot_be_built() -> str | None:
    """None where the kernels can be built in place (Cython, setuptools and a working C
    compiler), else the reason."""
    for module in ("Cython", "setuptools"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as folder:
        source = f"{folder}/probe.c"
        with open(source, "w") as file:
            file.write("int main(void) { return 0; }\n")
        try:
            compiler.compile([source], output_dir=folder)
        except Exception as error:  # CompileError, or a missing executable
            return f"no working C compiler ({type(error).__name__}: {error})"
    return None
