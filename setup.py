"""The one build step that pyproject.toml cannot declare stably: the compiled kernels.

``river_nrrls/_kernels.c`` (plain C on Python's API, calling the BLAS and LAPACK that scipy
links: no build dependency beyond a C compiler) is optional. Where it cannot be built the
package installs without it, and every caller takes its Python path, the same formulas
(``river_nrrls/_native.py``). Everything else about the package is in ``pyproject.toml``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("river_nrrls._kernels", sources=["river_nrrls/_kernels.c"], optional=True)
    ]
)
