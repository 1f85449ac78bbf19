"""The one build step that pyproject.toml cannot declare stably: the compiled kernels.

``river_nrrls/_kernels.pyx`` (Cython, calling the BLAS and LAPACK that scipy links through
``scipy.linalg.cython_blas`` and ``cython_lapack``) is optional. Where it cannot be built (no C
compiler, or no Cython, numpy or scipy at build time) the package installs without it, and every
caller takes its Python path, the same formulas (``river_nrrls/_native.py``). Everything else
about the package is in ``pyproject.toml``.

``kernel_extensions()`` is also what ``conftest.py`` and ``.ci/sanitize`` build in place.
"""

from __future__ import annotations

import sys

KERNELS = "river_nrrls/_kernels.pyx"


def kernel_extensions() -> list:
    """The compiled kernels as an optional extension, [] where they cannot be generated."""
    from setuptools import Extension

    try:
        import numpy
        import scipy.linalg  # noqa: F401  (its .pxd files declare the BLAS and LAPACK)
        from Cython.Build import cythonize
    except ImportError as error:
        print(f"river_nrrls: the compiled kernels are not built ({error})", file=sys.stderr)
        return []
    extension = Extension(
        "river_nrrls._kernels",
        sources=[KERNELS],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        optional=True,
    )
    try:
        extensions = cythonize([extension], quiet=True)  # directives: the .pyx's header
    except Exception as error:  # a Cython too old for the .pyx, for one: the Python paths
        print(f"river_nrrls: the compiled kernels are not built ({error})", file=sys.stderr)
        return []
    for built in extensions:
        built.optional = True  # cythonize's copies drop it: no compiler, no extension
    return extensions


if __name__ == "__main__":
    from setuptools import setup

    setup(ext_modules=kernel_extensions())
