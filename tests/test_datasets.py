"""Tests of `river_nrrls.datasets`: the vendored data sets of the NR-RLS paper."""

from __future__ import annotations

import functools
import gzip
import importlib.util
import math
import pathlib
import re
import sys

import pytest
from river import stream
from river.datasets import base

from river_nrrls import datasets
from river_nrrls.datasets import _base

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
KEEL = DATA / "keel"


def _load_prepare():
    """The maintainer script ``data/prepare.py`` (outside the installed package) as a module."""
    spec = importlib.util.spec_from_file_location("_river_nrrls_prepare", DATA / "prepare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_prepare = _load_prepare()

# The table of data/README.md: paper number, rows and features here, paper's n+/n-.
README_TABLE: dict[str, tuple[int, int, int, float]] = {
    "Monks3": (1, 432, 6, 0.98),
    "Sonar": (6, 208, 60, 1.16),
    "SpectfHeart": (7, 267, 44, 3.89),
    "Heart": (8, 270, 13, 0.80),
    "Bupa": (9, 345, 6, 1.39),
    "Ionosphere": (10, 351, 33, 0.56),
    "Votes": (11, 232, 16, 1.60),
    "Wdbc": (13, 569, 30, 1.69),
    "CreditApproval": (14, 653, 15, 1.21),
    "BreastCancerWisconsin": (15, 683, 9, 0.54),
    "Australian": (16, 690, 14, 0.81),
    "Pima": (18, 768, 8, 0.54),
    "Mammographic": (19, 830, 5, 0.95),
    "TicTacToe": (20, 958, 9, 0.53),
    "German": (21, 1000, 24, 2.34),
    "Spambase": (27, 4597, 57, 0.65),
    "Mushroom": (28, 5644, 22, 1.62),
}

# The README says these two differ from the paper: Monks-3 is the whole problem rather than the
# paper's training split, and Votes lost the rows with missing values that the paper kept.
RATIO_DIFFERS = {"Monks3", "Votes"}
RATIO_TOLERANCE = 0.03  # relative

MAX_VENDORED_BYTES = 2_000_000


@functools.cache
def rows(name: str) -> tuple[tuple[dict[str, float], bool], ...]:
    return tuple(datasets.DATASETS[name]())


def columns(name: str) -> dict[str, list[float]]:
    data = rows(name)
    return {feature: [x[feature] for x, _ in data] for feature in data[0][0]}


by_name = pytest.mark.parametrize("name", list(README_TABLE))


def test_registry() -> None:
    assert datasets.NAMES == tuple(README_TABLE)
    assert set(datasets.NAMES) <= set(datasets.__all__)
    assert all(hasattr(datasets, name) for name in datasets.__all__)
    assert datasets.PAPER_TABLE_NUMBER == {n: row[0] for n, row in README_TABLE.items()}
    assert set(datasets.PAPER_GMEAN) == set(datasets.NAMES)
    assert set(datasets.PAPER_TABLE3) == set(datasets.NAMES)
    for name, gmean in datasets.PAPER_GMEAN.items():
        assert 0 < gmean < 1
        assert datasets.PAPER_TABLE3[name]["NR-RLS"] == gmean
        assert list(datasets.PAPER_TABLE3[name]) == list(datasets.PAPER_METHODS)


@by_name
def test_load(name: str) -> None:
    cls = datasets.DATASETS[name]
    for spelling in (name, name.lower(), name.upper(), cls.paper_name, cls.paper_name.upper()):
        dataset = datasets.load(spelling)
        assert type(dataset) is cls
    assert datasets.load(name) is not datasets.load(name)  # a new instance each time


def test_load_aliases_and_unknown() -> None:
    assert type(datasets.load("breast_cancer_wisconsin")) is datasets.BreastCancerWisconsin
    assert type(datasets.load("wisconsin")) is datasets.BreastCancerWisconsin
    assert type(datasets.load("tic-tac-toe")) is datasets.TicTacToe
    assert type(datasets.load("Statlog-german")) is datasets.German
    assert type(datasets.load("spectf")) is datasets.SpectfHeart
    assert type(datasets.load("Monks-3")) is datasets.Monks3
    for unknown in ("monk-2", "iris", ""):
        with pytest.raises(KeyError, match="unknown data set"):
            datasets.load(unknown)


@by_name
def test_metadata(name: str) -> None:
    number, n_rows, n_features, paper_ratio = README_TABLE[name]
    dataset = datasets.DATASETS[name]()
    assert isinstance(dataset, base.FileDataset)
    assert dataset.task == base.BINARY_CLF
    assert dataset.n_samples == n_rows
    assert dataset.n_features == n_features
    assert dataset.paper_number == number
    assert dataset.paper_ratio == paper_ratio
    assert dataset.path.is_file()
    assert dataset.path.parent == pathlib.Path(datasets.__file__).resolve().parent


@by_name
def test_shape(name: str) -> None:
    dataset = datasets.DATASETS[name]()
    data = rows(name)
    assert len(data) == dataset.n_samples
    names = dataset.feature_names
    assert len(names) == dataset.n_features == len(set(names))
    for x, _ in data:
        assert tuple(x) == names
        assert all(type(v) is float for v in x.values())


@by_name
def test_feature_names(name: str) -> None:
    dataset = datasets.DATASETS[name]()
    assert dataset.feature_names == _prepare.SPECS_BY_NAME[name].features
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", feature) for feature in dataset.feature_names)
    assert "label" not in dataset.feature_names


@by_name
def test_scaled_to_unit_interval(name: str) -> None:
    for feature, values in columns(name).items():
        assert all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values), feature
        if len(set(values)) == 1:
            assert values[0] == 0.0, f"constant column {feature} should be 0"
        else:
            assert min(values) == 0.0, feature
            assert max(values) == 1.0, feature


def test_constant_columns() -> None:
    constant = {
        (name, feature)
        for name in datasets.NAMES
        for feature, values in columns(name).items()
        if len(set(values)) == 1
    }
    assert constant == {("Mushroom", "veil_type")}


@by_name
def test_labels_are_bool_with_true_the_minority(name: str) -> None:
    dataset = datasets.DATASETS[name]()
    labels = [y for _, y in rows(name)]
    assert all(type(y) is bool for y in labels)
    n_true = sum(labels)
    n_false = len(labels) - n_true
    assert n_true == dataset.n_true
    assert n_false == dataset.n_false
    assert 0 < n_true < n_false  # no data set is exactly balanced, so "minority" is well defined
    assert dataset.ratio == n_true / n_false


@by_name
def test_class_ratio_against_paper(name: str) -> None:
    dataset = datasets.DATASETS[name]()
    paper = README_TABLE[name][3]
    # The paper's n+ is sometimes the majority (ratio > 1): compare minority / majority.
    paper_minority_ratio = min(paper, 1 / paper)
    relative_gap = abs(dataset.ratio / paper_minority_ratio - 1)
    if name in RATIO_DIFFERS:
        assert relative_gap > RATIO_TOLERANCE  # documented as different
        assert "Known differences from the paper" in type(dataset).__doc__
    else:
        assert relative_gap <= RATIO_TOLERANCE


@by_name
def test_iteration_is_deterministic(name: str) -> None:
    cls = datasets.DATASETS[name]
    dataset = cls()
    first = list(dataset)
    assert list(dataset) == first  # the same instance twice
    assert list(cls()) == first  # a new instance
    assert tuple(first) == rows(name)
    assert list(dataset.take(3)) == first[:3]


@by_name
def test_river_iter_csv_reads_the_same(name: str) -> None:
    """The vendored files are tidy CSV files that river's own reader understands."""
    dataset = datasets.DATASETS[name]()
    converters = {feature: float for feature in dataset.feature_names}
    converters["label"] = lambda value: value == "True"
    via_river = stream.iter_csv(dataset.path, target="label", converters=converters)
    assert tuple(via_river) == rows(name)


def test_partial_iteration_closes_the_file(monkeypatch) -> None:
    opened = []
    real_open = gzip.open

    def recording_open(*args, **kwargs):
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(_base.gzip, "open", recording_open)
    dataset = datasets.Pima()
    assert dataset.feature_names[0] == "pregnancies"  # cached: read and closed before
    assert len(opened) == 1 and opened[0].closed
    iterator = iter(dataset)
    next(iterator)
    assert len(opened) == 2 and not opened[1].closed  # the generator holds it open
    iterator.close()
    assert opened[1].closed  # closing the half-read generator closes the file


@by_name
def test_repr_and_docstring(name: str) -> None:
    cls = datasets.DATASETS[name]
    dataset = cls()
    text = repr(dataset)
    assert text.startswith(dataset.desc)
    assert name in text
    assert "Binary classification" in text
    assert f"{dataset.n_samples:,}" in text
    doc = cls.__doc__
    assert doc is not None
    flat = " ".join(doc.split())  # phrases may wrap across lines
    for needle in (
        "**Source**",
        "**Size**",
        "**Classes**",
        "**Encoding and scaling**",
        "min-max scaled to [0, 1]",
        "**Paper**",
        "**Known differences from the paper**",
        f"row {dataset.paper_number} ",
        f"{dataset.n_true} ``True`` (original",
        f"NR-RLS G-mean is {datasets.PAPER_GMEAN[name]:.3f}",
        "Examples\n    --------",
        f"datasets.{name}()",
    ):
        assert needle in doc or " ".join(needle.split()) in flat, needle
    assert repr(dataset.true_class) in text
    assert dataset.true_class in doc


@by_name
def test_spec_matches_class(name: str) -> None:
    spec = _prepare.SPECS_BY_NAME[name]
    dataset = datasets.DATASETS[name]()
    assert spec.source == dataset.source
    assert spec.filename == dataset.filename
    assert spec.true_label == dataset.true_class
    assert spec.n_samples == dataset.n_samples
    assert len(spec.features) == dataset.n_features
    assert set(spec.nominal) <= set(spec.features)


def test_nominal_codes() -> None:
    tic_tac_toe = {v for values in columns("TicTacToe").values() for v in values}
    assert tic_tac_toe == {0.0, 0.5, 1.0}  # b, o, x
    votes = {v for values in columns("Votes").values() for v in values}
    assert votes == {0.0, 1.0}  # n, y
    # Mushroom: every column holds k equally spaced codes i / (k - 1).
    for feature, values in columns("Mushroom").items():
        levels = sorted(set(values))
        k = len(levels)
        if k > 1:
            expected = [float(format(i / (k - 1), ".10g")) for i in range(k)]
            assert levels == expected, feature


def test_monks3_follows_the_monk3_rule() -> None:
    """True (minority) is exactly "the MONK-3 rule does not hold"."""
    for x, y in rows("Monks3"):
        jacket_color = round(x["jacket_color"] * 3) + 1  # 1 red, 2 yellow, 3 green, 4 blue
        holding = round(x["holding"] * 2) + 1  # 1 sword, 2 balloon, 3 flag
        body_shape = round(x["body_shape"] * 2) + 1  # 1 round, 2 square, 3 octagon
        rule = (jacket_color == 3 and holding == 1) or (jacket_color != 4 and body_shape != 3)
        assert y is (not rule)


def test_vendored_folder_is_small_and_tidy() -> None:
    folder = pathlib.Path(datasets.__file__).resolve().parent
    vendored = {path.name for path in folder.glob("*.csv.gz")}
    assert vendored == {spec.filename for spec in _prepare.SPECS}
    total = sum(path.stat().st_size for path in folder.iterdir() if path.is_file())
    assert total < MAX_VENDORED_BYTES
    for spec in _prepare.SPECS:
        text = _prepare.read_vendored(spec)
        lines = text.split("\n")
        assert lines[0] == ",".join((*spec.features, "label"))
        assert lines[-1] == ""  # ends with a newline
        assert len(lines) == spec.n_samples + 2
        assert "\r" not in text


@pytest.mark.parametrize("spec", _prepare.SPECS, ids=lambda spec: spec.name)
def test_vendored_files_are_what_prepare_builds(spec) -> None:
    """data/prepare.py rebuilds every vendored file byte for byte from data/keel."""
    assert _prepare.DEFAULT_SOURCE == KEEL
    text = _prepare.build_csv(spec)
    assert _prepare.read_vendored(spec) == text
    vendored = pathlib.Path(datasets.__file__).resolve().parent / spec.filename
    assert _prepare.compress(text) == vendored.read_bytes()


def test_raw_folder_holds_exactly_the_sources() -> None:
    assert {path.name for path in KEEL.glob("*.csv.gz")} == {s.source for s in _prepare.SPECS}
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for spec in _prepare.SPECS:
        assert f"`{spec.source}`" in readme, spec.source


def test_prepare_check_mode_reports_a_changed_file(tmp_path, capsys) -> None:
    folder = pathlib.Path(datasets.__file__).resolve().parent
    for spec in _prepare.SPECS[:2]:
        (tmp_path / spec.filename).write_bytes((folder / spec.filename).read_bytes())
    assert _prepare.main(["--check", "--dest", str(tmp_path)]) == 1  # the others are missing
    out = capsys.readouterr().out
    assert f"{_prepare.SPECS[0].filename}: ok" in out
    assert f"{_prepare.SPECS[2].filename}: DIFFERS" in out


def test_prepare_compress_is_reproducible() -> None:
    text = "a,label\n0,True\n1,False\n"
    assert _prepare.compress(text) == _prepare.compress(text)


def test_readme_tables_agree() -> None:
    """The numbers copied into this test and into the package match data/README.md's tables."""
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    table2 = {}
    table3 = {}
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].isdigit():
            table2[int(cells[0])] = (int(cells[3]), int(cells[4]), float(cells[6]))
        elif len(cells) == 9 and cells[0].isdigit():
            table3[int(cells[0])] = tuple(float(cell) for cell in cells[1:])
    assert len(table2) == len(table3) == len(README_TABLE)
    for name, (number, n_rows, n_features, ratio) in README_TABLE.items():
        assert table2[number] == (n_rows, n_features, ratio), name
        assert tuple(datasets.PAPER_TABLE3[name].values()) == table3[number], name
        assert datasets.PAPER_GMEAN[name] == table3[number][-1], name
