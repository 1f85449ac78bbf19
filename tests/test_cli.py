"""Tests of `river_nrrls.cli`: the ``river-nrrls`` command."""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import io
import math
import os
import pathlib
import random
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from river import base, evaluate, linear_model, metrics, preprocessing, stream

from river_nrrls import NRRLS, cli, datasets
from river_nrrls.cli import _csv_stream, _models

LIMIT = 200
ROOT = pathlib.Path(__file__).resolve().parent.parent

try:
    import resource
except ImportError:  # not on Windows: the limited subprocesses then run without a limit
    resource = None


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _csv_table(out: str) -> dict[str, dict[str, str]]:
    """``{model: {column: cell}}`` of a ``--format csv`` output."""
    return {row["model"]: row for row in csv.DictReader(io.StringIO(out))}


def _pima(limit: int, seed: int | None = 42) -> list:
    """The first ``limit`` samples of Pima as `evaluate` streams them (shuffled with ``seed``)."""
    samples = list(datasets.Pima())
    if seed is not None:
        random.Random(seed).shuffle(samples)
    return samples[:limit]


def _write_csv(path, header, rows, blank_lines_before=()) -> str:
    lines = [",".join(header)]
    for i, row in enumerate(rows, start=1):
        if i in blank_lines_before:
            lines.append("")
        lines.append(",".join(map(str, row)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _pima_csv(path, limit: int, label=str) -> str:
    """The first ``limit`` Pima samples as a CSV file (floats written exactly, by repr)."""
    samples = _pima(limit)
    names = list(samples[0][0])
    rows = [[repr(x[name]) for name in names] + [label(y)] for x, y in samples]
    return _write_csv(path, names + ["label"], rows)


def _reference_scores(model, samples) -> tuple[float, float, float]:
    """G-mean, balanced accuracy and accuracy of a plain predict-then-learn loop, in numpy."""
    y_true, y_pred = [], []
    for x, y in samples:
        prediction = model.predict_one(x)
        if prediction is not None:
            y_true.append(y)
            y_pred.append(prediction)
        model.learn_one(x, y)
    y_true_array = np.array(y_true, dtype=object)
    y_pred_array = np.array(y_pred, dtype=object)
    classes = list(dict.fromkeys(y_true))
    recalls = np.array([np.mean(y_pred_array[y_true_array == c] == c) for c in classes])
    g_mean = float(np.prod(recalls) ** (1.0 / len(recalls)))
    return g_mean, float(recalls.mean()), float(np.mean(y_true_array == y_pred_array))


# ------------------------------------------------------------------------- bundled data sets


def test_evaluate_default_prints_table_with_both_models(capsys):
    code, out, err = _run(capsys, "evaluate", "--limit", str(LIMIT))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"Pima (shuffled, seed 42): {LIMIT} samples, 8 features")
    assert lines[1].split() == [
        "model",
        "G-mean",
        "balanced",
        "acc.",
        "accuracy",
        "time",
        "(s)",
        "memory",
    ]
    assert [line.split()[0] for line in lines[2:]] == ["auto", "nrrls", "lr", "lr-std"]
    for line in lines[2:]:
        cells = line.split()
        for cell in cells[1:4]:
            assert 0.0 <= float(cell) <= 1.0
        assert float(cells[4]) >= 0.0
    # aligned: every line of the table is as wide as the header up to the last column
    assert len({line.index(line.split()[1]) for line in lines[2:]}) == 1
    assert err == ""  # capsys' stderr is not a terminal: no progress bar


def test_module_runs_as_a_subprocess():
    completed = subprocess.run(
        [sys.executable, "-m", "river_nrrls", "evaluate", "--limit", str(LIMIT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[1].startswith("model") and "G-mean" in lines[1] and "memory" in lines[1]
    assert {line.split()[0] for line in lines[2:]} == {"auto", "nrrls", "lr", "lr-std"}
    assert completed.stderr == ""  # a pipe is not a terminal: no progress bar


@pytest.mark.parametrize("limit", [57, 300])
def test_printed_scores_equal_progressive_val_score(capsys, limit):
    code, out, _ = _run(
        capsys, "evaluate", "--limit", str(limit), "--format", "csv", "--models", "nrrls,lr"
    )
    assert code == 0
    table = _csv_table(out)
    g_mean = metrics.GeometricMean()
    evaluate.progressive_val_score(_pima(limit), NRRLS(), g_mean)
    assert float(table["nrrls"]["g_mean"]) == pytest.approx(g_mean.get(), rel=1e-12)
    # every metric of every model against an independent plain loop
    for name, model in (("nrrls", NRRLS()), ("lr", linear_model.LogisticRegression())):
        expected = _reference_scores(model, _pima(limit))
        printed = [
            float(table[name][column]) for column in ("g_mean", "balanced_accuracy", "accuracy")
        ]
        assert printed == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_text_table_rounds_the_same_g_mean(capsys):
    code, out, _ = _run(capsys, "evaluate", "--limit", str(LIMIT), "--models", "nrrls")
    assert code == 0
    printed = float(out.splitlines()[2].split()[1])
    g_mean = metrics.GeometricMean()
    evaluate.progressive_val_score(_pima(LIMIT), NRRLS(), g_mean)
    assert abs(printed - g_mean.get()) <= 0.5e-4 + 1e-12


def test_memory_is_the_trained_model_size(capsys):
    code, out, _ = _run(capsys, "evaluate", "--limit", "100", "--format", "csv")
    assert code == 0
    table = _csv_table(out)
    model = NRRLS()
    evaluate.progressive_val_score(_pima(100), model, metrics.GeometricMean())
    # river's measure walks the object graph, which shares objects with the process (a few
    # bytes differ with what ran before): the same size within 1 %
    assert int(table["nrrls"]["memory_bytes"]) == pytest.approx(model._raw_memory_usage, rel=0.01)
    assert int(table["lr"]["memory_bytes"]) > 0


def test_dataset_name_is_case_insensitive(capsys):
    outputs = []
    for name in ("pima", "PIMA", "Pima-diabetes"):
        code, out, _ = _run(
            capsys,
            "evaluate",
            "--dataset",
            name,
            "--limit",
            "80",
            "--format",
            "csv",
            "--models",
            "nrrls",
        )
        assert code == 0
        outputs.append(_csv_table(out)["nrrls"]["g_mean"])
    assert len(set(outputs)) == 1
    code, out, _ = _run(capsys, "evaluate", "--dataset", "SONAR", "--limit", "50")
    assert code == 0 and out.startswith("Sonar (shuffled, seed 42): 50 samples, 60 features")


def test_shuffle_options(capsys):
    """Bundled sets are shuffled by default (several are sorted by class); --no-shuffle keeps
    the file order and --seed changes the order."""
    scores = {}
    for options in ((), ("--no-shuffle",), ("--seed", "7")):
        code, out, _ = _run(
            capsys, "evaluate", "--limit", "120", "--format", "csv", "--models", "nrrls", *options
        )
        assert code == 0
        scores[options] = float(_csv_table(out)["nrrls"]["g_mean"])
    for options, seed in (((), 42), (("--no-shuffle",), None), (("--seed", "7"), 7)):
        g_mean = metrics.GeometricMean()
        evaluate.progressive_val_score(_pima(120, seed), NRRLS(), g_mean)
        assert scores[options] == pytest.approx(g_mean.get(), rel=1e-12)
    assert len(set(scores.values())) == 3


def test_unknown_dataset_exits_2(capsys):
    code, out, err = _run(capsys, "evaluate", "--dataset", "nosuchdata")
    assert code == 2 and out == ""
    assert "unknown data set 'nosuchdata'" in err and "pima" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("models", ["nrrls,nosuchmodel", "", " , "])
def test_unknown_or_empty_models_exit_2(capsys, models):
    code, out, err = _run(capsys, "evaluate", "--models", models, "--limit", "10")
    assert code == 2 and out == ""
    assert "--models" in err and "Traceback" not in err
    if "nosuchmodel" in models:
        assert "'nosuchmodel'" in err and "nrrls" in err


@pytest.mark.parametrize("limit", ["0", "-3", "ten"])
def test_bad_limit_exits_2(capsys, limit):
    code, _, err = _run(capsys, "evaluate", "--limit", limit)
    assert code == 2 and "--limit" in err


def test_models_are_deduplicated_and_ordered(capsys):
    code, out, _ = _run(
        capsys, "evaluate", "--limit", "60", "--format", "csv", "--models", "LR, rls,gnb,lr"
    )
    assert code == 0
    assert list(_csv_table(out)) == ["lr", "rls", "gnb"]


def test_rls_model_is_nrrls_without_reweighting(capsys):
    code, out, _ = _run(capsys, "evaluate", "--limit", "150", "--format", "csv", "--models", "rls")
    assert code == 0
    g_mean = metrics.GeometricMean()
    evaluate.progressive_val_score(_pima(150), NRRLS(reweight=False), g_mean)
    assert float(_csv_table(out)["rls"]["g_mean"]) == pytest.approx(g_mean.get(), rel=1e-12)


def test_markdown_format(capsys):
    code, out, _ = _run(capsys, "evaluate", "--limit", "60", "--format", "markdown")
    assert code == 0
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert len(table) == 2 + len(cli.evaluate.DEFAULT_MODELS)
    assert [cell.strip() for cell in table[0].strip("|").split("|")][:2] == ["model", "G-mean"]
    assert set(table[1]) <= set("|-: ")
    assert len({len(line) for line in table}) == 1


def test_help_lists_datasets_models_and_scaling(capsys):
    code, out, _ = _run(capsys, "evaluate", "--help")
    assert code == 0
    flat = " ".join(out.split())
    for name in datasets.NAMES:
        assert name.lower() in flat
    for name in cli.MODELS:
        assert f"{name} =" in flat
    assert "NOT scaled" in flat and "--scale" in flat and "LogisticRegression" in flat


# ------------------------------------------------------------------------------ progress bars


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _slow_clock(monkeypatch, seconds_per_reading: float = 1.0) -> None:
    """A fake clock for the progress bars: every reading is ``seconds_per_reading`` later."""
    readings = iter(range(10**9))
    monkeypatch.setattr(cli, "_clock", lambda: next(readings) * seconds_per_reading)


def test_short_work_on_a_terminal_prints_no_progress(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _slow_clock(monkeypatch, 0.0)  # the work takes no time
    code, out, err = _run(capsys, "evaluate", "--limit", "50")
    assert code == 0 and "nrrls" in out and err == ""


def test_long_work_on_a_terminal_shows_its_progress_after_two_seconds(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _slow_clock(monkeypatch, 0.05)  # a reading per update (every 1%): 2 s at about 40%
    code, _, err = _run(capsys, "evaluate", "--models", "nrrls")
    assert code == 0
    assert "100% 768/768" in err and "  1% " not in err and " 30% " not in err
    assert err.count("\n") == 1


def test_checking_a_long_csv_file_shows_the_rows_read(capsys, monkeypatch, tmp_path):
    rng = random.Random(3)
    rows = [[f"{rng.random():.3f}", rng.choice(["a", "b"])] for _ in range(2500)]
    path = _write_csv(tmp_path / "long.csv", ["x", "y"], rows)
    argv = ["evaluate", "--csv", path, "--target", "y", "--models", "nrrls"]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _slow_clock(monkeypatch, 5.0)  # every reading is past the delay
    code, _, err = _run(capsys, *argv)
    assert code == 0
    assert f"checking {path}: 2,000 rows\n" in err and "100% 2500/2500" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)  # a pipe, CI: nothing
    code, _, err = _run(capsys, *argv)
    assert code == 0 and err == ""
    code, _, err = _run(capsys, *argv, "--progress")  # unless asked, at once
    assert code == 0 and f"checking {path}: 2,000 rows" in err and "100% 2500/2500" in err


def test_progress_bar_only_on_a_terminal_or_when_asked(capsys, monkeypatch):
    code, _, err = _run(capsys, "evaluate", "--limit", "50", "--progress")
    assert code == 0
    assert "nrrls, lr, lr-std" in err and "100% 50/50" in err
    assert err.count("\n") == 1  # one bar: the models learn the stream together

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _slow_clock(monkeypatch)
    assert cli.main(["evaluate", "--limit", "50"]) == 0
    assert "100% 50/50" in terminal.getvalue()

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["evaluate", "--limit", "50", "--no-progress"]) == 0
    assert terminal.getvalue() == ""


# ---------------------------------------------------------------------------------- CSV files


def test_csv_of_a_bundled_dataset_gives_the_same_scores(capsys, tmp_path):
    path = _pima_csv(tmp_path / "pima.csv", LIMIT)
    code, from_csv, _ = _run(
        capsys,
        "evaluate",
        "--csv",
        path,
        "--target",
        "label",
        "--format",
        "csv",
        "--models",
        "nrrls,lr,gnb",
    )
    assert code == 0
    code, bundled, _ = _run(
        capsys, "evaluate", "--limit", str(LIMIT), "--format", "csv", "--models", "nrrls,lr,gnb"
    )
    for name in ("nrrls", "lr", "gnb"):
        for column in ("g_mean", "balanced_accuracy", "accuracy", "memory_bytes"):
            assert _csv_table(from_csv)[name][column] == _csv_table(bundled)[name][column]


def test_csv_text_output_and_limit(capsys, tmp_path):
    path = _pima_csv(tmp_path / "pima.csv", LIMIT)
    code, out, err = _run(capsys, "evaluate", "--csv", path, "--target", "label")
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith(f"{path}: {LIMIT} samples, 8 features")
    code, out, _ = _run(capsys, "evaluate", "--csv", path, "--target", "label", "--limit", "30")
    assert code == 0 and f"{path}: 30 samples" in out


def test_csv_labels_other_than_booleans(capsys, tmp_path):
    as_bool = _pima_csv(tmp_path / "bool.csv", LIMIT)
    as_text = _pima_csv(tmp_path / "text.csv", LIMIT, label=lambda y: "pos" if y else "neg")
    tables = []
    for path in (as_bool, as_text):
        code, out, _ = _run(
            capsys, "evaluate", "--csv", path, "--target", "label", "--format", "csv"
        )
        assert code == 0
        tables.append(_csv_table(out))
    # NR-RLS does not care what the labels are called
    assert tables[0]["nrrls"]["g_mean"] == tables[1]["nrrls"]["g_mean"]
    # the logistic regression sees "pos" (the minority) as True: the very same stream
    assert tables[0]["lr"] == tables[1]["lr"] | {"time_s": tables[0]["lr"]["time_s"]}
    # names sorting the other way round: True is still the minority
    as_swapped = _pima_csv(tmp_path / "swap.csv", LIMIT, label=lambda y: "a" if y else "b")
    code, out, _ = _run(
        capsys,
        "evaluate",
        "--csv",
        as_swapped,
        "--target",
        "label",
        "--format",
        "csv",
        "--models",
        "lr",
    )
    assert _csv_table(out)["lr"]["g_mean"] == tables[0]["lr"]["g_mean"]


def test_binary_only_models_see_booleans():
    def positive(labels: str) -> object:
        return _models.binary_view(collections.Counter(labels))

    assert positive("baab") == "b"  # a tie: the first seen
    assert positive("bba") == "a"  # the less frequent
    assert positive("abc") is None
    assert _models.binary_view(collections.Counter([True, False])) is _models.AS_GIVEN


def test_csv_lowercase_booleans_are_booleans(capsys, tmp_path):
    upper = _pima_csv(tmp_path / "upper.csv", 100)
    lower = _pima_csv(tmp_path / "lower.csv", 100, label=lambda y: str(y).lower())
    outputs = []
    for path in (upper, lower):
        code, out, _ = _run(
            capsys,
            "evaluate",
            "--csv",
            path,
            "--target",
            "label",
            "--format",
            "csv",
            "--models",
            "lr",
        )
        assert code == 0
        outputs.append(_csv_table(out)["lr"]["memory_bytes"])
    # a plain LogisticRegression (not wrapped in one-vs-rest) in both cases
    assert outputs[0] == outputs[1]


def test_csv_multiclass(capsys, tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(150):
        label = int(rng.integers(3))
        rows.append([f"{value:.6f}" for value in rng.normal(label, 0.5, size=2)] + [f"c{label}"])
    path = _write_csv(tmp_path / "three.csv", ["a", "b", "kind"], rows)
    code, out, _ = _run(
        capsys,
        "evaluate",
        "--csv",
        path,
        "--target",
        "kind",
        "--format",
        "csv",
        "--models",
        "nrrls,lr",
    )
    assert code == 0
    table = _csv_table(out)
    assert float(table["nrrls"]["accuracy"]) > 0.6  # three well separated classes
    assert float(table["lr"]["accuracy"]) > 0.4


def test_csv_target_in_the_middle_empty_cells_and_blank_lines(capsys, tmp_path):
    rows = [[0.1, "yes", 1.0], [0.9, "no", ""], [0.2, "yes", 3.5], [0.8, "no", 0.5]]
    path = _write_csv(tmp_path / "mid.csv", ["a", "y", "b"], rows * 10, blank_lines_before={3})
    code, out, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 0, err
    assert "40 samples, 2 features" in out


def test_csv_gzip(capsys, tmp_path):
    plain = _pima_csv(tmp_path / "pima.csv", 80)
    packed = tmp_path / "pima.csv.gz"
    with open(plain, "rb") as source, gzip.open(packed, "wb") as target:
        target.write(source.read())
    results = []
    for path in (plain, str(packed)):
        code, out, _ = _run(
            capsys, "evaluate", "--csv", path, "--target", "label", "--format", "csv"
        )
        assert code == 0
        results.append({name: row["g_mean"] for name, row in _csv_table(out).items()})
    assert results[0] == results[1]


def test_scale_puts_a_min_max_scaler_in_front(capsys, tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(120):
        label = bool(rng.random() < 0.3)
        rows.append([f"{1000 * rng.normal(label, 1):.3f}", f"{rng.normal():.3f}", label])
    path = _write_csv(tmp_path / "raw.csv", ["big", "small", "y"], rows)
    code, out, _ = _run(
        capsys,
        "evaluate",
        "--csv",
        path,
        "--target",
        "y",
        "--scale",
        "--format",
        "csv",
        "--models",
        "nrrls,lr",
    )
    assert code == 0
    samples, _ = cli.read_csv(path, "y")
    for name, model in (("nrrls", NRRLS()), ("lr", linear_model.LogisticRegression())):
        expected = _reference_scores(_ReferenceMinMax(model), samples)
        printed = [
            float(_csv_table(out)[name][column])
            for column in ("g_mean", "balanced_accuracy", "accuracy")
        ]
        assert printed == pytest.approx(expected, rel=1e-9)
    code, out, _ = _run(capsys, "evaluate", "--csv", path, "--target", "y", "--scale")
    assert "min-max scaled" in out.splitlines()[0]


class _ReferenceMinMax:
    """Plain online min-max scaling in front of ``model``: predict with the bounds seen so far
    (a feature without bounds, or with equal ones, is 0), learn after widening them."""

    def __init__(self, model):
        self.model = model
        self.low: dict = {}
        self.high: dict = {}

    def _scaled(self, x: dict) -> dict:
        scaled = {}
        for name, value in x.items():
            low, high = self.low.get(name), self.high.get(name)
            width = 0.0 if low is None else high - low
            scaled[name] = (value - low) / width if width else 0.0
        return scaled

    def predict_one(self, x):
        return self.model.predict_one(self._scaled(x))

    def learn_one(self, x, y):
        for name, value in x.items():
            self.low[name] = min(self.low.get(name, value), value)
            self.high[name] = max(self.high.get(name, value), value)
        self.model.learn_one(self._scaled(x), y)


def test_scaler_gives_zero_for_a_feature_it_has_not_seen():
    model = cli.evaluate.build_model("nrrls", scale=True)
    assert model.predict_one({"a": 5.0}) is None  # no NaN reaches NR-RLS's validation
    model.learn_one({"a": 5.0}, True)
    model.learn_one({"a": 7.0}, False)
    scaler = model.steps[list(model.steps)[0]]
    assert isinstance(scaler, preprocessing.MinMaxScaler)
    assert scaler.transform_one({"a": 6.0, "b": 3.0}) == {"a": 0.5, "b": 0.0}
    assert "b" not in scaler.min  # looking a new feature up does not create statistics for it
    assert model.predict_one({"a": 6.0, "b": 3.0}) in (True, False)


def test_read_csv_values(tmp_path):
    path = _write_csv(
        tmp_path / "v.csv",
        ["x1", " x2 ", "t"],
        [[" 1.5", "", "True"], ["-2e3", "7", " cat "], ["0", "1", "FALSE"]],
    )
    samples, n_features = cli.read_csv(path, "t")
    assert n_features == 2
    assert samples == [
        ({"x1": 1.5}, True),
        ({"x1": -2000.0, "x2": 7.0}, "cat"),
        ({"x1": 0.0, "x2": 1.0}, False),
    ]
    assert type(samples[0][1]) is bool
    table = cli.read_csv(path, "t", limit=1)  # a named record that unpacks as before
    assert table == (table.samples, table.n_features) == ([({"x1": 1.5}, True)], 2)


def test_csv_boolean_feature_cells_are_one_and_zero(capsys, tmp_path):
    rows = [["True", "1.5", "yes"], ["false", "", "no"], [" TRUE ", "0", "yes"]]
    path = _write_csv(tmp_path / "b.csv", ["flag", "x", "y"], rows)
    samples, _ = cli.read_csv(path, "y")
    assert samples == [
        ({"flag": 1.0, "x": 1.5}, "yes"),
        ({"flag": 0.0}, "no"),
        ({"flag": 1.0, "x": 0.0}, "yes"),
    ]
    assert all(type(value) is float for x, _ in samples for value in x.values())
    code, out, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 0 and err == "" and "3 samples, 2 features" in out
    # booleans are numbers: a column of booleans and text is refused, saying what it may hold
    path = _write_csv(tmp_path / "c.csv", ["flag", "y"], [["true", "a"], ["yes", "b"]])
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and "'yes' is text" in err and "numbers (or true/false) or text" in err


_GOOD = ["0.5", "0.25", "True"]
_BAD_ROWS = {
    "text in a numeric column": (
        ["0.5", "abc", "True"],
        ["column 'f2'", "'abc' is text", "first value ('0.25', data row 1 (line 2))", "not both"],
    ),
    "not finite": (["nan", "0.1", "False"], ["column 'f1'", "non-finite"]),
    "infinite": (["0.2", "-inf", "False"], ["column 'f2'", "non-finite"]),
    "too many fields": (["0.5", "0.1", "True", "9"], ["expected 3 fields, got 4"]),
    "too few fields": (["0.5", "True"], ["expected 3 fields, got 2"]),
    "missing target": (["0.5", "0.1", ""], ["column 'y'", "missing target"]),
    "blank target": (["0.5", "0.1", "   "], ["column 'y'", "missing target"]),
}


@pytest.mark.parametrize("kind", list(_BAD_ROWS))
def test_csv_bad_row_names_row_and_column(capsys, tmp_path, kind):
    bad, expected = _BAD_ROWS[kind]
    rows = [_GOOD, ["0.1", "0.9", "False"], bad, _GOOD]
    path = _write_csv(tmp_path / "bad.csv", ["f1", "f2", "y"], rows, blank_lines_before={2})
    code, out, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # the third data row is on the fifth line (header, row 1, a blank line, row 2, row 3)
    assert "data row 3 (line 5)" in err and path in err
    for fragment in expected:
        assert fragment in err
    # a limit that stops before the bad row never reads it
    code, _, _ = _run(capsys, "evaluate", "--csv", path, "--target", "y", "--limit", "2")
    assert code == 0


def test_csv_bad_row_in_a_subprocess_has_no_traceback(tmp_path):
    path = _write_csv(tmp_path / "bad.csv", ["f1", "y"], [["1", "a"], ["x", "b"]])
    completed = subprocess.run(
        [sys.executable, "-m", "river_nrrls", "evaluate", "--csv", path, "--target", "y"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2 and completed.stdout == ""
    assert "Traceback" not in completed.stderr
    assert "data row 2 (line 3), column 'f1'" in completed.stderr


@pytest.mark.parametrize(
    ("content", "argv", "expected"),
    [
        (None, ["--target", "y"], "cannot read"),
        ("", ["--target", "y"], "is empty"),
        ("a,b,y\n", ["--target", "y"], "no data rows"),
        ("a,b,y\n1,2,3\n", ["--target", "label"], "no target column 'label'"),
        ("a,a,y\n1,2,3\n", ["--target", "y"], "repeats the column(s) a"),
        ("y\nTrue\n", ["--target", "y"], "no feature column"),
        (",a,y\n0,1,2\n", ["--target", "y"], "column 1 of the header has no name"),
        (b"a,y\n\xff\xfe,1\n", ["--target", "y"], "not UTF-8"),
        ('a,y\n"1,True\n', ["--target", "y"], "expected 2 fields, got 1"),
        ("a,y\n1,True\n", [], "--csv needs --target"),
        ("a,y\nweb,True\n2.5,False\n", ["--target", "y"], "column 'a': '2.5' is a number"),
        ("\ufeffa,y\n1,True\nx,False\n", ["--target", "y"], "data row 2 (line 3), column 'a'"),
    ],
)
def test_csv_file_problems_exit_2(capsys, tmp_path, content, argv, expected):
    path = tmp_path / "data.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    code, out, err = _run(capsys, "evaluate", "--csv", str(path), *argv)
    assert code == 2 and out == ""
    assert expected in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content", [b"not gzip at all", b"a,y\n1,True\n"])
def test_bad_gzip_exits_2(capsys, tmp_path, content):
    path = tmp_path / "data.csv.gz"
    path.write_bytes(content if content.startswith(b"not") else gzip.compress(content)[:-12])
    code, out, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 2 and out == ""
    assert str(path) in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_target_without_csv_and_csv_with_dataset_exit_2(capsys, tmp_path):
    code, _, err = _run(capsys, "evaluate", "--target", "y")
    assert code == 2 and "--target needs --csv" in err
    path = _pima_csv(tmp_path / "p.csv", 10)
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "label", "--dataset", "pima")
    assert code == 2 and "not allowed with" in err


# ------------------------------------------------------------ hostile files: time and memory

#: The address space of a limited subprocess: a run that keeps what it reads (a 1 GiB line,
#: every row) fails there with a MemoryError in seconds, instead of filling the machine.
_MEMORY_LIMIT = 1536 * 2**20


def _run_limited(*argv: str) -> subprocess.CompletedProcess:
    """``python -m river_nrrls evaluate ARGV`` in a subprocess of limited memory (Linux)."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))

    threads = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return subprocess.run(
        [sys.executable, "-m", "river_nrrls", "evaluate", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **threads},
        preexec_fn=limit_memory if resource is not None else None,
    )


def _assert_one_line_exit_2(completed: subprocess.CompletedProcess, *fragments: str) -> None:
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert completed.stdout == ""
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr[-2000:]
    for fragment in fragments:
        assert fragment in completed.stderr, completed.stderr


def _gzip_bomb(path, prefix: bytes, unit: bytes, size: int) -> str:
    """A gzip file of ``prefix`` then ``unit`` repeated to ``size`` bytes, as repeated gzip
    members (a 1 GiB line in about 1 MB, written in milliseconds)."""
    chunk = unit * (2**20 // len(unit))
    member = gzip.compress(chunk, compresslevel=9)
    with open(path, "wb") as file:
        file.write(gzip.compress(prefix))
        for _ in range(size // len(chunk)):
            file.write(member)
    return str(path)


@pytest.mark.parametrize(
    ("prefix", "unit", "line"),
    [(b"", b"0", 1), (b"", b",", 1), (b"a,y\n1,True\n", b"7", 3)],
    ids=["one-field", "commas", "a-data-row"],
)
def test_a_gzip_of_one_huge_line_is_refused_with_bounded_memory(tmp_path, prefix, unit, line):
    """1 GiB without a line break, in a 1 MB file: refused after the line limit, not read
    whole (which took 2.26 GB before its error, here a MemoryError traceback)."""
    path = _gzip_bomb(tmp_path / "bomb.csv.gz", prefix, unit, 2**30)
    completed = _run_limited("--csv", path, "--target", "y")
    _assert_one_line_exit_2(completed, f"line {line} is too long", "8,388,608 characters")


def test_dev_zero_is_refused_at_once():
    """A device never ends (it printed nothing and held 6.5 GB after a minute)."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    completed = _run_limited("--csv", "/dev/zero", "--target", "y")
    _assert_one_line_exit_2(completed, "/dev/zero is not a regular file")


def _wide_csv(path, n_columns: int, n_rows: int = 2) -> str:
    names = [f"f{j}" for j in range(n_columns)]
    rows = [["0.5"] * n_columns + ["True" if i % 2 else "False"] for i in range(n_rows)]
    return _write_csv(path, names + ["y"], rows)


@pytest.mark.slow
def test_a_wide_file_is_streamed_and_a_model_out_of_memory_is_one_line(capsys, tmp_path):
    """60,000 columns: river's models learn it; NR-RLS's features x features matrix does not
    fit (a MemoryError traceback with exit code 1 before: one line and exit code 2 now)."""
    path = _wide_csv(tmp_path / "wide.csv", 60_000)
    completed = _run_limited("--csv", path, "--target", "y", "--models", "nrrls")
    _assert_one_line_exit_2(completed, "'nrrls'", "60,000 features")
    code, out, err = _run(
        capsys, "evaluate", "--csv", path, "--target", "y", "--models", "lr,gnb", "--format", "csv"
    )
    assert code == 0, err
    assert list(_csv_table(out)) == ["lr", "gnb"]


class _Hog(base.Classifier):
    """A classifier that runs out of memory on its third sample."""

    def __init__(self):
        self.n = 0

    def learn_one(self, x, y):
        self.n += 1
        if self.n == 3:
            raise MemoryError

    def predict_one(self, x):
        return True


def test_a_model_out_of_memory_is_one_line_naming_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(cli.MODELS, "hog", cli.ModelSpec("hog", _Hog))
    path = _pima_csv(tmp_path / "p.csv", 20)
    code, out, err = _run(
        capsys, "evaluate", "--csv", path, "--target", "label", "--models", "nrrls,hog"
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "out of memory (model 'hog', sample 3)" in err
    code, _, err = _run(capsys, "evaluate", "--models", "hog", "--limit", "10")
    assert code == 2 and "out of memory (model 'hog', sample 3)" in err


class _Constant(base.Classifier):
    def learn_one(self, x, y):
        pass

    def predict_one(self, x):
        return True


def _peak_bytes(capsys, path) -> int:
    tracemalloc.start()
    try:
        code, _, err = _run(
            capsys, "evaluate", "--csv", path, "--target", "y", "--models", "constant"
        )
        assert code == 0, err
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_the_rows_of_a_csv_file_are_streamed_not_kept(capsys, monkeypatch, tmp_path):
    """Four times the rows, the same memory (every row was kept before: 394 bytes a row, and
    a 1.9 MB gzip of 134 M rows ran out of memory)."""
    monkeypatch.setitem(cli.MODELS, "constant", cli.ModelSpec("constant", _Constant))
    rng = random.Random(0)
    paths = []
    for n_rows in (4_000, 16_000):
        rows = [
            [f"{rng.random():.6f}", f"{rng.random():.6f}", rng.choice("ab")] for _ in range(n_rows)
        ]
        paths.append(_write_csv(tmp_path / f"rows{n_rows}.csv", ["f1", "f2", "y"], rows))
    small, large = (_peak_bytes(capsys, path) for path in paths)
    assert large < small + 12_000 * 100  # kept rows would add about 12,000 x 394 bytes


class _CountingName(str):
    """A column name that counts the comparisons made with it."""

    comparisons = 0

    def __eq__(self, other):
        _CountingName.comparisons += 1
        return str.__eq__(self, other)

    def __ne__(self, other):
        _CountingName.comparisons += 1
        return str.__ne__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize("target", ["y", "absent"])
def test_header_checks_are_linear_in_the_columns(target):
    """The duplicate check called ``header.count`` for every name: n^2 comparisons (5,000
    columns 0.95 s, 40,000 columns 44 s, 100,000 columns over 5 minutes)."""
    n = 3_000
    header = [_CountingName(f"f{j}") for j in range(n)] + [_CountingName("y")]
    _CountingName.comparisons = 0
    try:
        _csv_stream._check_header("h.csv", header, target)
    except cli.UsageError as error:
        assert target == "absent" and "no target column 'absent'" in str(error)
    assert _CountingName.comparisons <= 10 * n


def test_wide_headers(capsys, tmp_path):
    names = [f"f{j}" for j in range(_csv_stream.MAX_COLUMNS)]
    path = _write_csv(tmp_path / "wide.csv", names, [["1"] * len(names)])
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and "no target column 'y' in the header (f0, f1," in err
    path = _write_csv(tmp_path / "wider.csv", names + ["y"], [["1"] * len(names) + ["a"]])
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and "100,001 columns, more than the 100,000" in err
    repeated = names[:30] * 2 + ["y"]
    path = _write_csv(tmp_path / "repeated.csv", repeated, [["1"] * 61])
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and "repeats the column(s) f0, f1, f10," in err and ", ..." in err


def test_records_are_read_with_a_limit(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(_csv_stream, "MAX_RECORD_CHARS", 1000)
    header = "a,y\n"
    cell = "0." + "0" * (1000 - len("0.,True\n") - 1) + "1"
    path = tmp_path / "edge.csv"
    path.write_text(header + f"{cell},True\n" + "0.5,False\n", encoding="utf-8")
    assert len(f"{cell},True\n") == 1000
    code, _, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 0, err  # a record of exactly the limit
    path.write_text(header + f"{cell}2,True\n" + "0.5,False\n", encoding="utf-8")
    code, _, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 2 and "line 2 is too long" in err
    # a record whose quoted fields spread it over many short lines is one record
    spread = ",".join('"x\n"' for _ in range(400))
    path.write_text(f"{spread},y\n", encoding="utf-8")
    code, _, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 2 and "is too long: a record" in err and len(err.strip().splitlines()) == 1


def test_too_many_distinct_labels(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(_csv_stream, "MAX_LABELS", 5)
    path = _write_csv(tmp_path / "labels.csv", ["a", "y"], [[i, f"c{i}"] for i in range(8)])
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y")
    assert code == 2 and "over 5 distinct values" in err
    code, _, err = _run(capsys, "evaluate", "--csv", path, "--target", "y", "--limit", "5")
    assert code == 0, err


def test_a_directory_is_refused(capsys, tmp_path):
    code, out, err = _run(capsys, "evaluate", "--csv", str(tmp_path), "--target", "y")
    assert code == 2 and out == "" and "is a directory" in err


def test_csv_shuffle_is_rivers_buffered_shuffle(capsys, tmp_path):
    path = _pima_csv(tmp_path / "p.csv", LIMIT)
    code, out, _ = _run(
        capsys,
        "evaluate",
        "--csv",
        path,
        "--target",
        "label",
        "--shuffle",
        "--models",
        "nrrls",
        "--format",
        "csv",
    )
    assert code == 0
    samples, _ = cli.read_csv(path, "label")
    g_mean = metrics.GeometricMean()
    shuffled = stream.shuffle(iter(samples), buffer_size=LIMIT, seed=42)
    evaluate.progressive_val_score(shuffled, NRRLS(), g_mean)
    assert float(_csv_table(out)["nrrls"]["g_mean"]) == pytest.approx(g_mean.get(), rel=1e-12)
    code, out, _ = _run(capsys, "evaluate", "--csv", path, "--target", "label", "--shuffle")
    assert f"(shuffled in a buffer of {LIMIT} rows, seed 42): {LIMIT} samples" in out


# ---------------------------------------------------------------------------------- registries


def test_a_registered_model_can_be_chosen(capsys, monkeypatch):
    monkeypatch.setitem(cli.MODELS, "ridge", cli.ModelSpec("ridge", lambda: NRRLS(l2=1.0)))
    code, out, _ = _run(capsys, "evaluate", "--limit", "90", "--format", "csv", "--models", "ridge")
    assert code == 0
    g_mean = metrics.GeometricMean()
    evaluate.progressive_val_score(_pima(90), NRRLS(l2=1.0), g_mean)
    assert float(_csv_table(out)["ridge"]["g_mean"]) == pytest.approx(g_mean.get(), rel=1e-12)


def test_a_registered_command_runs(capsys, monkeypatch):
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--fail", action="store_true")

    def run(args: argparse.Namespace) -> int:
        if args.fail:
            raise cli.UsageError("asked to fail")
        print("hello")
        return 0

    monkeypatch.setitem(cli.COMMANDS, "hello", cli.Command("say hello", add_arguments, run))
    assert _run(capsys, "hello")[:2] == (0, "hello\n")
    code, out, err = _run(capsys, "hello", "--fail")
    assert (code, out) == (2, "")
    assert err.strip() == "river-nrrls hello: error: asked to fail"
    code, out, _ = _run(capsys, "--help")
    assert code == 0 and "hello" in out and "evaluate" in out


def test_no_command_exits_2(capsys):
    code, _, err = _run(capsys)
    assert code == 2 and "COMMAND" in err


def test_reference_scores_helper_is_not_trivial():
    """The plain-loop reference sees a difference between two models."""
    first = _reference_scores(NRRLS(), _pima(120))
    second = _reference_scores(linear_model.LogisticRegression(), _pima(120))
    assert not math.isclose(first[0], second[0])


def test_standardised_logistic_regression_is_available(capsys):
    code, out, _ = _run(
        capsys, "evaluate", "--limit", "150", "--format", "csv", "--models", "lr-std"
    )
    assert code == 0
    g_mean = metrics.GeometricMean()
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    evaluate.progressive_val_score(_pima(150), model, g_mean)
    assert float(_csv_table(out)["lr-std"]["g_mean"]) == pytest.approx(g_mean.get(), rel=1e-12)
