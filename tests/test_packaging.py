"""Packaging: lazy submodules, a single-sourced version, the typing marker and the licence, and
what the wheels hold (river-nrrls's, and the paper harness's of ``benchmarks/paper``)."""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import shutil
import subprocess
import sys
import typing
import zipfile

import pytest

import river_nrrls

ROOT = pathlib.Path(__file__).resolve().parent.parent

HEAVY = (
    "river_nrrls.datasets",
    "river_nrrls.metrics",
    "river_nrrls.dask",
    "river_nrrls.model_selection",
    "river_nrrls_bench",
    "river_nrrls.cli",
    "river.datasets",
    "river.stream",
    "sklearn",
    "dask",
    "polars",
)


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    output = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(output.splitlines()[-1]))


def _loaded(modules: set[str], prefix: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in modules)


def test_import_is_lazy():
    modules = _modules_after("import river_nrrls")
    assert "river_nrrls.nrrls" not in modules
    for heavy in HEAVY:
        assert not _loaded(modules, heavy), heavy


def test_estimator_access_loads_only_its_module():
    modules = _modules_after("import river_nrrls\nriver_nrrls.NRRLS")
    assert "river_nrrls.nrrls" in modules
    for heavy in HEAVY:
        assert not _loaded(modules, heavy), heavy


def test_lazy_attributes_resolve():
    from river_nrrls import datasets, metrics
    from river_nrrls.nrrls import NRRLS

    assert river_nrrls.NRRLS is NRRLS
    assert river_nrrls.datasets is datasets
    assert river_nrrls.metrics is metrics
    for name in river_nrrls.__all__:
        assert getattr(river_nrrls, name) is not None
        assert name in dir(river_nrrls)


def test_unknown_attribute_raises():
    try:
        river_nrrls.NotAModel  # noqa: B018
    except AttributeError as error:
        assert "NotAModel" in str(error)
    else:
        raise AssertionError("no AttributeError")


def test_version_is_single_sourced():
    assert importlib.metadata.version("river-nrrls") == river_nrrls.__version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert f'version = "{river_nrrls.__version__}"' not in pyproject


def test_typing_marker_and_licence_ship():
    assert (ROOT / "river_nrrls" / "py.typed").exists()
    assert "BSD 3-Clause" in (ROOT / "LICENSE").read_text()
    metadata = importlib.metadata.metadata("river-nrrls")
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata.get("License-Expression") == "BSD-3-Clause"
    requirements = importlib.metadata.requires("river-nrrls")
    pandas = [r.replace(" ", "") for r in requirements if r.startswith("pandas")]
    assert pandas and set(pandas[0][len("pandas") :].split(",")) == {">=2.2", "<3"}


def test_citation_file_matches_the_package():
    yaml = __import__("yaml")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == river_nrrls.__version__
    assert citation["license"] == "BSD-3-Clause"
    assert citation["preferred-citation"]["doi"] == "10.48550/arXiv.2301.09230"


def test_every_estimator_has_a_references_section():
    for name in river_nrrls.__all__:
        obj = getattr(river_nrrls, name)
        if isinstance(obj, type):
            doc = obj.__doc__ or ""
            assert "\n    References\n    ----------\n    [^1]: " in doc, name
            assert "Believed" not in doc, name


def test_changelog_starts_at_0_1_0():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "keepachangelog.com" in text
    assert "## [0.1.0]" in text


# ------------------------------------------------------------------------------- the wheels

#: What a build leaves in a tree (or a virtual environment, CI's .venv) and must not be copied:
#: a stale build/lib would end up in the wheel.
_NOT_SOURCES = (".git", ".venv", "build", "dist", "site", "*.egg-info", "__pycache__", "*.so")


class Wheel(typing.NamedTuple):
    names: list[str]  # the files it holds
    requires: list[str]  # its Requires-Dist lines


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Wheel]:
    """The file names in the wheels of river-nrrls and of the paper harness, built by pip (with
    build isolation, as users build them) from a clean copy of this tree."""
    tree = tmp_path_factory.mktemp("tree") / "river-nrrls"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
    out = tmp_path_factory.mktemp("wheels")
    for project in (tree, tree / "benchmarks" / "paper"):
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", str(project), "--no-deps", "-q", "-w", str(out)],
            check=True,
            capture_output=True,
        )
    found = {}
    for path in out.glob("*.whl"):
        with zipfile.ZipFile(path) as wheel:
            names = wheel.namelist()
            metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
            lines = wheel.read(metadata).decode().splitlines()
        requires = [line.split(": ", 1)[1] for line in lines if line.startswith("Requires-Dist:")]
        found[path.name.split("-")[0]] = Wheel(names, requires)
    return found


@pytest.mark.slow  # pip builds the wheels
def test_the_wheel_holds_the_package_and_not_the_paper_harness(wheels):
    names, requires = wheels["river_nrrls"]
    version = river_nrrls.__version__
    assert {name.split("/")[0] for name in names} == {
        "river_nrrls",
        f"river_nrrls-{version}.dist-info",
    }
    needed_files = (
        "__init__.py",
        "_threads.py",
        "py.typed",
        "_kernels.pyi",
        "cli/__init__.py",
        "cli/evaluate.py",
        "cli/_csv_stream.py",
    )
    for needed in needed_files:
        assert f"river_nrrls/{needed}" in names, needed
    assert sum(name.endswith(".csv.gz") for name in names) == len(river_nrrls.datasets.NAMES)
    assert not [name for name in names if "bench" in name or name.startswith("river_nrrls/test")]
    assert "threadpoolctl>=3.1" in requires
    assert not [r for r in requires if "extra ==" not in r and "matplotlib" in r]  # bench extra


@pytest.mark.slow  # pip builds the wheels
def test_the_harness_is_a_wheel_of_its_own(wheels):
    names, requires = wheels["river_nrrls_bench"]
    assert {name.split("/")[0] for name in names} == {
        "river_nrrls_bench",
        f"river_nrrls_bench-{river_nrrls.__version__}.dist-info",
    }
    for module in ("__init__", "command", "protocol", "report", "stats", "stream", "plots"):
        assert f"river_nrrls_bench/{module}.py" in names, module
    assert "river-nrrls" in requires and "matplotlib>=3.8" in requires
