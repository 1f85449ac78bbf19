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
    (``river_nrrls/_kernels.c``, see ``setup.py``) are built next to the sources when they are
    not there yet. A machine without a C compiler is left without them: the Python paths run,
    and ``tests/test_kernels.py`` says the kernels are missing."""
    import pathlib
    import subprocess
    import sys
    import sysconfig

    package = pathlib.Path(__file__).parent / "river_nrrls"
    built = package / ("_kernels" + sysconfig.get_config_var("EXT_SUFFIX"))
    if built.exists() and built.stat().st_mtime >= (package / "_kernels.c").stat().st_mtime:
        return
    # A bare build_ext from the Extension alone: the project's metadata is not read (the
    # environment's setuptools may be older than the one the package build asks for).
    script = (
        "from setuptools import Distribution, Extension\n"
        "dist = Distribution({'script_name': 'setup.py', 'ext_modules': "
        "[Extension('river_nrrls._kernels', ['river_nrrls/_kernels.c'])]})\n"
        "command = dist.get_command_obj('build_ext')\n"
        "command.inplace = True\n"
        "dist.run_command('build_ext')\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=package.parent, capture_output=True)


_build_kernels_in_place()
