"""The notebooks of ``notebooks/`` are committed without outputs and run top to bottom.

Every notebook is executed with nbclient in a fresh ``python3`` kernel whose working directory
is ``notebooks/`` (the notebooks read ``../benchmarks`` from there), one test per notebook; any
error in any cell fails the test with the cell's traceback. The kernel inherits this process's
environment, so the BLAS thread pinning of the root ``conftest.py`` applies to it.

The committed files must have no outputs and no execution counts, so that no stale output can
be committed: the outputs exist only when the notebook is run. To strip a notebook after working
on it in Jupyter::

    python tests/test_notebooks.py            # strips every notebook of notebooks/ in place

"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

pytestmark = pytest.mark.slow  # runs every notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
EXPECTED = ("01_quick_start", "02_exactness", "03_paper_results", "04_ocsca", "05_drift")

#: Seconds allowed to one cell, and to a whole notebook: each one runs in about 3 to 10 s on
#: two cores, and the whole test suite has to stay within a few minutes.
CELL_TIMEOUT = 60
NOTEBOOK_BUDGET = 60.0

_ANSI_CODES = re.compile(r"\x1b\[[0-9;]*m")  # the colours of IPython's tracebacks


def _code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def strip_outputs(path: Path) -> bool:
    """Remove the outputs, execution counts and execution metadata; True if it changed."""
    notebook = nbformat.read(path, as_version=4)
    changed = False
    for cell in _code_cells(notebook):
        if cell.outputs or cell.execution_count is not None or "execution" in cell.metadata:
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
            changed = True
    if changed:
        nbformat.write(notebook, path)
    return changed


def test_every_expected_notebook_is_there():
    missing = set(EXPECTED) - {path.stem for path in PATHS}
    assert not missing, f"missing notebooks in {NOTEBOOKS}: {sorted(missing)}"


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path.stem)
def test_committed_without_outputs_and_with_a_title(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    stale = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not stale, (
        f"{path.name}: cells {stale} have outputs or execution counts; strip them with "
        "`python tests/test_notebooks.py` before committing"
    )
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), (
        f"{path.name} must start with a markdown title cell"
    )
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path.stem)
def test_runs_top_to_bottom_without_error(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # the kernel's working directory
    )
    started = time.perf_counter()
    failure = None
    try:
        client.execute()
    except CellExecutionError as error:
        failure = _ANSI_CODES.sub("", str(error))
    if failure is not None:
        pytest.fail(f"{path.name} failed:\n{failure}", pytrace=False)
    seconds = time.perf_counter() - started
    print(f"{path.name}: executed in {seconds:.1f} s")

    errors = [
        output
        for cell in _code_cells(notebook)
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors, f"{path.name}: error outputs {errors}"
    assert all(cell.execution_count is not None for cell in _code_cells(notebook))
    assert seconds < NOTEBOOK_BUDGET, (
        f"{path.name} took {seconds:.0f} s, more than the {NOTEBOOK_BUDGET:.0f} s budget of a "
        "notebook in the test suite: make it smaller"
    )


if __name__ == "__main__":
    targets = [Path(argument) for argument in sys.argv[1:]] or PATHS
    for target in targets:
        print(f"{target}: {'stripped' if strip_outputs(target) else 'already clean'}")
