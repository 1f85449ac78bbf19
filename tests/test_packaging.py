"""Packaging: lazy submodules, a single-sourced version, the typing marker and the licence."""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import subprocess
import sys

import river_nrrls

ROOT = pathlib.Path(__file__).resolve().parent.parent

HEAVY = (
    "river_nrrls.datasets",
    "river_nrrls.metrics",
    "river_nrrls.dask",
    "river_nrrls.model_selection",
    "river_nrrls.benchmark",
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
