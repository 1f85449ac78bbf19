"""Test-session setup shared by the tests and the doctests.

BLAS threads only slow down the small matrices of this package on a 2-core machine (a
multi-threaded ``dsyr`` at d = 200 was measured 100x slower than a single-threaded one while other
processes were running), so the test session pins them to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


def _build_kernels_in_place() -> None:
    """The tests import the package from this source tree (``python -m pytest`` puts it first on
    ``sys.path``), not from the installed copy, so its optional compiled kernels
    (``river_nrrls/_kernels.pyx``, see ``setup.py``) are built next to the sources when they are
    missing or older than the source. Where they cannot be built (no C compiler, no Cython or
    setuptools) the Python paths run, and ``tests/test_kernels.py`` skips the kernels' tests,
    saying why."""
    import pathlib
    import subprocess
    import sys
    import sysconfig

    root = pathlib.Path(__file__).parent
    built = root / "river_nrrls" / ("_kernels" + sysconfig.get_config_var("EXT_SUFFIX"))
    source = root / "river_nrrls" / "_kernels.pyx"
    if built.exists() and built.stat().st_mtime >= source.stat().st_mtime:
        return
    # A bare build_ext of setup.py's extension: the project's metadata is not read (the
    # environment's setuptools may be older than the one the package build asks for).
    script = (
        "import runpy\n"
        "from setuptools import Distribution\n"
        "extensions = runpy.run_path('setup.py', run_name='conftest')['kernel_extensions']()\n"
        "dist = Distribution({'script_name': 'setup.py', 'ext_modules': extensions})\n"
        "command = dist.get_command_obj('build_ext')\n"
        "command.inplace = True\n"
        "dist.run_command('build_ext')\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True)


_build_kernels_in_place()
