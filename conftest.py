"""Test-session setup shared by the tests and the doctests.

BLAS threads only slow down the small matrices of this package on a 2-core machine (a
multi-threaded ``dsyr`` at d = 200 was measured 100x slower than a single-threaded one while other
processes were running), so the test session pins them to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


#: Where the reason the kernels were not built reaches the tests (``tests/kernel_paths.py``, in
#: their skip reasons): an environment variable, set by this file only when the build failed.
BUILD_ERROR_VARIABLE = "RIVER_NRRLS_KERNEL_BUILD_ERROR"
#: How much of a failed build's output is kept: its end, where the compiler's error is.
_OUTPUT_LINES = 25


def _build_kernels_in_place() -> str | None:
    """The tests import the package from this source tree (``python -m pytest`` puts it first on
    ``sys.path``), not from the installed copy, so its optional compiled kernels
    (``river_nrrls/_kernels.pyx``, see ``setup.py``) are built next to the sources when they are
    missing or older than the source. Where they cannot be built (no C compiler, no Cython or
    setuptools, a compiler error) the Python paths run, and the kernels' tests skip, saying why.

    Returns None when the kernels are built (now, or before), else the end of the build's
    output: the compiler's (or Cython's) error.
    """
    import pathlib
    import subprocess
    import sys
    import sysconfig

    root = pathlib.Path(__file__).parent
    built = root / "river_nrrls" / ("_kernels" + sysconfig.get_config_var("EXT_SUFFIX"))
    source = root / "river_nrrls" / "_kernels.pyx"

    def up_to_date() -> bool:
        return built.exists() and built.stat().st_mtime >= source.stat().st_mtime

    if up_to_date():
        return None
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
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, errors="replace"
    )
    if up_to_date():
        return None
    # The extension is optional (setup.py): a compiler error is a warning and the exit status 0,
    # so the build failed when there is no extension. Its message is on stderr (Cython's and the
    # compiler's), or on stdout.
    output = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
    tail = "\n".join(output[-_OUTPUT_LINES:]) or "(no output)"
    status = f" (exit status {result.returncode})" if result.returncode else ""
    return f"the in-place build failed{status}:\n{tail}"


def pytest_report_header(config) -> list[str]:
    """The kernels' build in the session header: the compiler's error when it failed."""
    if KERNEL_BUILD_ERROR is None:
        return ["river_nrrls._kernels: built next to the sources"]
    lines = KERNEL_BUILD_ERROR.splitlines()
    return [f"river_nrrls._kernels: NOT built, the Python paths run; {lines[0]}"] + [
        "    " + line for line in lines[1:]
    ]


KERNEL_BUILD_ERROR = _build_kernels_in_place()
if KERNEL_BUILD_ERROR is None:
    os.environ.pop(BUILD_ERROR_VARIABLE, None)
else:
    os.environ[BUILD_ERROR_VARIABLE] = KERNEL_BUILD_ERROR
