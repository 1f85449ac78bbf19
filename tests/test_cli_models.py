"""Tests of the models of ``river-nrrls evaluate`` and of CSV files with text columns.

- The models of ``--models`` (`river_nrrls.cli._models`): AutoNRRLS in the default run, every
  registered model on binary and multiclass streams, the scores of each equal to an independent
  predict-then-learn loop of the model written by hand, and lr-wpos's weights.
- Text columns: a CSV file like ``amount,channel,country,fraud`` is evaluated by every model,
  its text columns one-hot encoded online, with the scores of the same river pipeline written
  by hand on the file read with the csv module; mixed columns and too many categories are
  refused with one line naming the column and the row.
"""

from __future__ import annotations

import csv
import numbers
import random

import pytest
from river import compose, forest, linear_model, preprocessing, tree
from test_cli import _csv_table, _pima, _reference_scores, _run

from river_nrrls import NRRLS, AutoNRRLS, PolynomialExtender, cli
from river_nrrls.cli import _csv_stream, _models

SCORES = ("g_mean", "balanced_accuracy", "accuracy")


def _printed_scores(table: dict, name: str) -> list[float]:
    return [float(table[name][column]) for column in SCORES]


# ------------------------------------------------------------------------------------ models


def test_default_run_has_an_auto_row_with_autonrrls_scores(capsys):
    code, out, _ = _run(capsys, "evaluate", "--limit", "150", "--format", "csv")
    assert code == 0
    table = _csv_table(out)
    assert list(table) == ["auto", "nrrls", "lr", "lr-std"]
    assert _printed_scores(table, "auto") == pytest.approx(
        _reference_scores(AutoNRRLS(), _pima(150)), rel=1e-12, abs=1e-15
    )


def test_the_models_of_the_issue_run_with_rivers_scores(capsys):
    code, out, err = _run(
        capsys, "evaluate", "--limit", "120", "--format", "csv", "--models", "auto,nrrls,hat,arf"
    )
    assert code == 0 and err == ""
    table = _csv_table(out)
    assert list(table) == ["auto", "nrrls", "hat", "arf"]
    by_hand = {
        "hat": tree.HoeffdingAdaptiveTreeClassifier(seed=42),
        "arf": forest.ARFClassifier(seed=42),
        "nrrls": NRRLS(),
    }
    for name, model in by_hand.items():
        expected = _reference_scores(model, _pima(120))
        assert _printed_scores(table, name) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_poly3_and_selector_are_the_package_estimators(capsys):
    code, out, _ = _run(
        capsys, "evaluate", "--limit", "80", "--format", "csv", "--models", "poly3,selector"
    )
    assert code == 0
    table = _csv_table(out)
    poly3 = PolynomialExtender(degree=3) | NRRLS()
    assert _printed_scores(table, "poly3") == pytest.approx(
        _reference_scores(poly3, _pima(80)), rel=1e-12, abs=1e-15
    )
    assert type(cli.evaluate.build_model("selector")).__name__ == "PolynomialOrderSelector"


class _WeightSpy:
    """A stand-in classifier that records the weights it learns with."""

    def __init__(self) -> None:
        self.weights: list[tuple[bool, float]] = []

    def learn_one(self, x, y, w=1.0):
        self.weights.append((y, w))

    def predict_proba_one(self, x, **kwargs):
        return {True: 0.5, False: 0.5}


def test_lr_wpos_weights_positives_by_the_running_class_ratio():
    spy = _WeightSpy()
    model = _models.PositiveWeighted(spy)  # type: ignore[arg-type]
    labels = [True, False, False, False, True, False, True]
    for y in labels:
        model.learn_one({"a": 1.0}, y)
    # a positive weighs n_negatives / n_positives so far (this one counted; 1 before a negative)
    assert spy.weights == [
        (True, 1.0),
        (False, 1.0),
        (False, 1.0),
        (False, 1.0),
        (True, 3 / 2),
        (False, 1.0),
        (True, 4 / 3),
    ]
    model.learn_one({"a": 1.0}, True, w=2.0)  # a given weight multiplies it
    assert spy.weights[-1] == (True, 2.0 * 4 / 4)


def test_lr_wpos_scores_equal_a_weighted_loop_by_hand(capsys):
    code, out, _ = _run(
        capsys, "evaluate", "--limit", "200", "--format", "csv", "--models", "lr-wpos,lr-std"
    )
    assert code == 0
    table = _csv_table(out)
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    n_positives = n_negatives = 0
    hits, predictions = [], []
    for x, y in _pima(200):
        predictions.append((y, model.predict_one(x)))
        n_positives, n_negatives = n_positives + y, n_negatives + (not y)
        model.learn_one(x, y, w=max(n_negatives, 1) / n_positives if y else 1.0)
        hits.append(predictions[-1][1] == y)
    assert float(table["lr-wpos"]["accuracy"]) == pytest.approx(sum(hits) / len(hits), rel=1e-12)
    assert table["lr-wpos"]["g_mean"] != table["lr-std"]["g_mean"]  # the weight changes it


def test_every_registered_model_runs_on_two_and_three_classes(capsys, tmp_path):
    rng = random.Random(5)
    rows = ["a,b,colour,y"]
    for _ in range(90):
        a, b = rng.random(), rng.random()
        rows.append(f"{a:.3f},{b:.3f},{rng.choice(['red', 'blue', ''])},{'xyz'[int(3 * a)]}")
    path = tmp_path / "three.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    names = ",".join(cli.MODELS)
    for argv in (["--limit", "90"], ["--csv", str(path), "--target", "y"]):
        code, out, err = _run(capsys, "evaluate", *argv, "--format", "csv", "--models", names)
        assert code == 0, err
        table = _csv_table(out)
        assert list(table) == list(cli.MODELS)
        for name in table:
            assert all(0.0 <= score <= 1.0 for score in _printed_scores(table, name)), name


def test_help_names_and_describes_every_model_and_the_text_columns(capsys):
    code, out, _ = _run(capsys, "evaluate", "--help")
    assert code == 0
    flat = " ".join(out.split())
    for name in ("auto", "poly3", "selector", "hat", "arf", "lr-wpos"):
        assert f"{name} = " in flat
    assert "default: auto,nrrls,lr,lr-" in flat  # argparse may break the line after "lr-"
    assert "n_negatives / n_positives" in flat  # how lr-wpos sets its weight
    assert "OneHotEncoder" in flat and "not numbers" in flat and "missing value" in flat


# ---------------------------------------------------------------------- CSVs with text columns


def _fraud_csv(path, n: int = 240, seed: int = 7) -> str:
    """An event log ``amount,channel,country,fraud``: two text columns, some empty cells."""
    rng = random.Random(seed)
    lines = ["amount,channel,country,fraud"]
    for _ in range(n):
        channel = rng.choice(["web", "store", "app"])
        country = rng.choice(["FR", "DE", "US", "ES", ""])
        amount = round(rng.lognormvariate(3, 1), 2)
        risk = 0.05 + 0.4 * (channel == "web") * (amount > 30) + 0.2 * (country == "US")
        fraud = "true" if rng.random() < risk else "false"
        lines.append(f"{'' if rng.random() < 0.05 else amount},{channel},{country},{fraud}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _by_hand(path: str) -> list:
    """The samples of ``_fraud_csv``, read with the csv module: an empty cell is no feature."""
    samples = []
    with open(path, newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            x: dict = {}
            if row["amount"]:
                x["amount"] = float(row["amount"])
            for column in ("channel", "country"):
                if row[column]:
                    x[column] = row[column]
            samples.append((x, row["fraud"] == "true"))
    return samples


def _one_hot_pipeline(model):
    numeric = compose.SelectType(numbers.Number)
    text = compose.SelectType(str) | preprocessing.OneHotEncoder()
    return (numeric + text) | model


def test_a_csv_with_text_columns_scores_as_the_river_pipeline_by_hand(capsys, tmp_path):
    path = _fraud_csv(tmp_path / "fraud.csv")
    models = "auto,nrrls,lr-std,hat"
    code, out, err = _run(
        capsys,
        "evaluate",
        "--csv",
        path,
        "--target",
        "fraud",
        "--models",
        models,
        "--format",
        "csv",
    )
    assert code == 0 and err == ""
    table = _csv_table(out)
    by_hand = {
        "auto": AutoNRRLS(),
        "nrrls": NRRLS(),
        "lr-std": preprocessing.StandardScaler() | linear_model.LogisticRegression(),
        "hat": tree.HoeffdingAdaptiveTreeClassifier(seed=42),
    }
    for name, model in by_hand.items():
        expected = _reference_scores(_one_hot_pipeline(model), _by_hand(path))
        assert _printed_scores(table, name) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # the text columns matter: the numbers alone score differently
    numbers_only = [({k: v for k, v in x.items() if k == "amount"}, y) for x, y in _by_hand(path)]
    assert _reference_scores(NRRLS(), numbers_only)[0] != pytest.approx(
        float(table["nrrls"]["g_mean"]), rel=1e-6
    )


def test_every_model_evaluates_a_csv_with_text_columns_also_scaled(capsys, tmp_path):
    path = _fraud_csv(tmp_path / "fraud.csv", n=60)
    names = ",".join(cli.MODELS)
    for scale in ([], ["--scale"]):
        code, out, err = _run(
            capsys, "evaluate", "--csv", path, "--target", "fraud", "--models", names, *scale
        )
        assert code == 0, err
        assert [line.split()[0] for line in out.splitlines()[2:]] == list(cli.MODELS)
    assert out.splitlines()[0] == (
        f"{path}: 60 samples, 3 features (progressive validation, text column(s) channel, "
        "country one-hot encoded, numeric features min-max scaled)"
    )


def test_text_cells_are_strings_and_an_empty_cell_stays_missing(tmp_path):
    path = _fraud_csv(tmp_path / "fraud.csv", n=50)
    samples, n_features = cli.read_csv(path, "fraud")
    assert n_features == 3
    assert [sample for sample in samples] == _by_hand(path)
    missing = next(x for x, _ in samples if "country" not in x)
    encoded = _models.feature_steps(categorical=True)
    assert encoded is not None
    for x, _ in samples:
        encoded.learn_one(x)
    features = encoded.transform_one(missing)
    assert not any(name.startswith("country_") and value for name, value in features.items())
    assert features[f"channel_{missing['channel']}"] == 1


def test_a_stream_reports_its_text_columns(tmp_path):
    stream = _csv_stream.CsvStream(_fraud_csv(tmp_path / "fraud.csv", n=30), "fraud")
    assert stream.text_columns == ["channel", "country"]
    assert list(stream) == _by_hand(str(tmp_path / "fraud.csv"))


@pytest.mark.parametrize(
    ("rows", "fragments"),
    [
        (["1.5,a", "web,b"], ["data row 2 (line 3), column 'f'", "'web' is text", "'1.5'"]),
        (["web,a", "", "2,b"], ["data row 2 (line 4), column 'f'", "'2' is a number", "'web'"]),
        (["true,a", "maybe,b"], ["data row 2 (line 3)", "'maybe' is text"]),
    ],
)
def test_a_column_of_numbers_and_text_is_one_line_naming_it(capsys, tmp_path, rows, fragments):
    path = tmp_path / "mixed.csv"
    path.write_text("f,y\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for fragment in [str(path), *fragments]:
        assert fragment in err, err


def test_too_many_categories_are_refused(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(_csv_stream, "MAX_CATEGORIES", 5)
    path = tmp_path / "ids.csv"
    path.write_text("id,y\n" + "".join(f"user{i},{i % 2}\n" for i in range(9)), encoding="utf-8")
    code, _, err = _run(capsys, "evaluate", "--csv", str(path), "--target", "y")
    assert code == 2 and "data row 6 (line 7), column 'id'" in err and "over 5 distinct" in err
    assert len(err.strip().splitlines()) == 1


def test_a_bom_and_text_columns_read_as_without(capsys, tmp_path):
    plain = tmp_path / "plain.csv"
    _fraud_csv(plain, n=40)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert cli.read_csv(str(bom), "fraud") == cli.read_csv(str(plain), "fraud")
