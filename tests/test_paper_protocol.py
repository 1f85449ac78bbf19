"""The NR-RLS paper's protocol, ``river-nrrls benchmark`` (the harness ``river_nrrls_bench`` of
``benchmarks/paper``): one ``--quick`` run checked end to end, its pieces, and the command
without the harness installed.

The quick run (3 small data sets, 2 runs of 2-fold CV) is executed once per module, as from a
clone (``python benchmarks/paper/run.py --quick``); the tests
then check that every output exists and parses, that NR-RLS predicted exactly like the batch
TER on every fold, that the ranks follow the G-means and that the statistics are finite. The
pieces are checked against independent references: the TER solution against an augmented
least-squares formulation and against NRRLS, the G-mean against river's metric, the Nemenyi
critical values against Demsar's (2006) table, the Friedman statistic against its formula.
"""

from __future__ import annotations

import itertools
import math
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import metrics

from river_nrrls import NRRLS, PolynomialExtender, cli, datasets
from river_nrrls_bench import protocol
from river_nrrls_bench import stats as bstats
from river_nrrls_bench import stream as bstream

ROOT = pathlib.Path(__file__).resolve().parents[1]
HARNESS = ROOT / "benchmarks" / "paper"

QUICK_FILES = (
    "README.md",
    "folds.csv",
    "gmean.csv",
    "ranks.csv",
    "checks.csv",
    "orders.csv",
    "cpu_time.csv",
    "weight_norm.csv",
    "time_per_sample.csv",
    "gmean_per_dataset.png",
    "cd_diagram_rm.png",
    "cd_diagram_linear.png",
    "weight_norm.png",
    "time_per_sample.png",
)


# ------------------------------------------------------------------------ the quick run


def _clone_environment(*paths: pathlib.Path) -> dict[str, str]:
    """The environment with ``paths`` first on PYTHONPATH (river_nrrls from this clone, whether
    it is installed or not)."""
    pythonpath = [str(path) for path in paths] + [os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, pythonpath))}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The harness's quick run, once for the module's tests (each marked slow)."""
    out = tmp_path_factory.mktemp("quick")
    completed = subprocess.run(
        [sys.executable, str(HARNESS / "run.py"), "--quick", "--jobs", "2", "--no-progress"]
        + ["--out", str(out)],
        env=_clone_environment(ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.stderr == "", completed.stderr
    return completed.returncode, out, completed.stdout


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of a document, as rows of cells (header first, rule dropped)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    for table in tables:
        assert all(re.fullmatch(r":?-+:?", cell) for cell in table[1]), table[1]
        del table[1]
    return tables


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_run_succeeds_and_writes_every_output(quick):
    code, out, stdout = quick
    assert code == 0
    for name in QUICK_FILES:
        path = out / name
        assert path.is_file() and path.stat().st_size > 0, name
        if name.endswith(".png"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert "NR-RLS == TER predictions: 24/24 folds" in stdout


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_tables_parse(quick):
    _, out, _ = quick
    tables = _markdown_tables((out / "README.md").read_text(encoding="utf-8"))
    assert len(tables) >= 7
    for table in tables:
        widths = {len(row) for row in table}
        assert len(widths) == 1, table[0]  # every row as wide as its header
    for name in ("folds.csv", "gmean.csv", "ranks.csv", "checks.csv", "orders.csv"):
        frame = pd.read_csv(out / name)
        assert len(frame) > 0, name


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_nrrls_equals_ter_on_every_fold(quick):
    _, out, _ = quick
    checks = pd.read_csv(out / "checks.csv")
    # 3 data sets x 2 runs x 2 folds x 2 feature sets
    assert len(checks) == 24
    assert checks["nrrls_equals_ter"].all()
    assert (checks["nrrls_ter_mismatches"] == 0).all()
    assert (checks["nrrls_ter_weight_rel_diff"] < 1e-8).all()
    irrls = checks.dropna(subset=["irrls_equals_ter"])
    assert len(irrls) == 12 and irrls["irrls_equals_ter"].astype(bool).all()
    folds = pd.read_csv(out / "folds.csv")
    keys = ["dataset", "run", "fold", "features"]
    by_model = folds.pivot_table(index=keys, columns="model", values="g_mean")
    assert len(by_model) == 24
    np.testing.assert_array_equal(by_model["NR-RLS"], by_model["TER"])
    assert "**24/24 folds**" in (out / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_gmean_table_is_the_mean_over_the_folds(quick):
    _, out, _ = quick
    folds = pd.read_csv(out / "folds.csv")
    gmean = pd.read_csv(out / "gmean.csv")
    assert set(gmean["dataset"]) == {"Bupa", "Heart", "Sonar"}
    for _, row in gmean.iterrows():
        features = "linear" if row["model"] == "HT" else row["features"]  # HT: inputs only
        values = folds[
            (folds["dataset"] == row["dataset"])
            & (folds["features"] == features)
            & (folds["model"] == row["model"])
        ]["g_mean"]
        assert len(values) == row["count"] == 4
        # folds.csv keeps 6 significant digits
        assert math.isclose(values.mean(), row["mean"], abs_tol=2e-6)
        assert math.isclose(values.std(), row["std"], abs_tol=2e-6)


def _cell_rank(cell: str) -> float:
    return float(re.fullmatch(r"[\d.]+ ± [\d.]+ \(([\d.]+)\)", cell).group(1))


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_ranks_follow_the_gmeans(quick):
    _, out, _ = quick
    gmean = pd.read_csv(out / "gmean.csv")
    ranks = pd.read_csv(out / "ranks.csv")
    text = (out / "README.md").read_text(encoding="utf-8")
    per_dataset = [t for t in _markdown_tables(text) if t[0][0] == "data set" and "NR-RLS" in t[0]]
    assert len(per_dataset) >= 2
    for features, table in zip(("rm", "linear"), per_dataset):
        header = [cell.rstrip("†") for cell in table[0]]
        means = gmean[gmean["features"] == features].pivot(
            index="dataset", columns="model", values="mean"
        )
        collected = []
        for row in table[1:]:
            if row[0] not in means.index:
                continue
            values = {m: means.loc[row[0], m] for m in protocol.ONLINE_LEARNERS}
            cell_ranks = {m: _cell_rank(row[header.index(m)]) for m in protocol.ONLINE_LEARNERS}
            for a, b in itertools.combinations(protocol.ONLINE_LEARNERS, 2):
                if values[a] > values[b]:
                    assert cell_ranks[a] < cell_ranks[b], (row[0], a, b)
                elif values[a] == values[b]:
                    assert cell_ranks[a] == cell_ranks[b], (row[0], a, b)
            assert math.isclose(sum(cell_ranks.values()), 12 * 13 / 2)
            collected.append([cell_ranks[m] for m in protocol.ONLINE_LEARNERS])
        assert len(collected) == 3
        expected = np.mean(collected, axis=0)
        got = ranks[ranks["features"] == features].set_index("learner")["average_rank"]
        np.testing.assert_allclose(got[list(protocol.ONLINE_LEARNERS)], expected)


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_statistics_are_finite_and_consistent(quick):
    _, out, stdout = quick
    ranks = pd.read_csv(out / "ranks.csv")
    for column in ("friedman_chi2", "friedman_p", "q_alpha", "cd", "average_rank"):
        assert np.isfinite(ranks[column]).all(), column
    assert ((ranks["friedman_p"] >= 0) & (ranks["friedman_p"] <= 1)).all()
    np.testing.assert_allclose(ranks["cd"], bstats.nemenyi_cd(12, 3))
    assert f"CD = {bstats.nemenyi_cd(12, 3):.2f}" in stdout


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_orders_were_chosen_on_the_training_half_only(quick):
    """Re-run the split and the order race of one fold: the same order, from training data."""
    _, out, _ = quick
    orders = pd.read_csv(out / "orders.csv")
    row = orders[(orders["dataset"] == "Bupa") & (orders["run"] == 1) & (orders["fold"] == 1)]
    X, y, names = protocol.load_matrix("Bupa")
    rng = np.random.default_rng([42, 1])
    folds = protocol.stratified_halves(y, rng)
    rng.permutation(np.flatnonzero(folds == 0))  # fold 0's shuffle comes first
    train = rng.permutation(np.flatnonzero(folds == 1))
    quick_settings = protocol.Settings(runs=2, orders=(1, 2), irrls_timing=())
    order, scores, _ = protocol.choose_order(
        protocol.as_dicts(X[train], names), y[train].tolist(), len(names), quick_settings
    )
    assert order == int(row["order"].iloc[0])
    assert math.isclose(scores[2], float(row["selector_gmean_r2"].iloc[0]), rel_tol=1e-5)


@pytest.mark.slow  # the quick run of the harness (a minute)
def test_quick_figure_data(quick):
    _, out, _ = quick
    norms = pd.read_csv(out / "weight_norm.csv")
    np.testing.assert_allclose(norms["NR-RLS"], norms["TER"], rtol=1e-8)
    assert (norms["AR-RLS"] - norms["TER"]).abs().max() > 0.1  # AR-RLS is not TER
    times = pd.read_csv(out / "time_per_sample.csv")
    assert len(times) == 300 and (times[["IR-RLS", "NR-RLS"]] > 0).all().all()


# ------------------------------------------------------------------------ the long stream


@pytest.mark.slow
def test_long_stream_quick(tmp_path):
    code = cli.main(
        ["benchmark", "--long-stream", "--samples", "3000", "--no-progress", "--out", str(tmp_path)]
    )
    assert code == 0
    for name in ("README.md", "throughput.csv", "gmean_over_time.csv", "gmean_over_time.png"):
        assert (tmp_path / name).stat().st_size > 0
    throughput = pd.read_csv(tmp_path / "throughput.csv")
    assert list(throughput["learner"]) == list(bstream.LONG_STREAM_LEARNERS)
    assert (throughput["samples"] == 3000).all()
    assert (throughput["samples_per_second"] > 0).all()
    assert 0.04 < throughput["positives"].iloc[0] / 3000 < 0.11
    over_time = pd.read_csv(tmp_path / "gmean_over_time.csv")
    assert over_time.groupby("learner")["samples_seen"].max().eq(3000).all()


def test_imbalanced_agrawal_is_deterministic_scaled_and_imbalanced():
    first = list(bstream.imbalanced_agrawal(4000, seed=7))
    assert first == list(bstream.imbalanced_agrawal(4000, seed=7))
    assert first != list(bstream.imbalanced_agrawal(4000, seed=8))
    values = np.array([list(x.values()) for x, _ in first])
    assert values.min() >= 0.0 and values.max() <= 1.0
    positives = sum(y for _, y in first) / len(first)
    assert 0.04 < positives < 0.11


def test_stream_gmean_matches_river():
    result = bstream.run_stream("NR-RLS", 1500, seed=3, window=500)
    metric, model = metrics.GeometricMean(), NRRLS()
    for x, y in bstream.imbalanced_agrawal(1500, seed=3):
        y_pred = model.predict_one(x)
        if y_pred is not None:
            metric.update(y, y_pred)
        model.learn_one(x, y)
    assert math.isclose(result.final_gmean, metric.get(), rel_tol=1e-12)
    assert list(result.samples) == [500, 1000, 1500]


# ------------------------------------------------------------------------- the CLI edges


def test_missing_matplotlib_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    from river_nrrls_bench import command

    real = command.importlib.util.find_spec
    monkeypatch.setattr(
        command.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    assert cli.main(["benchmark", "--quick", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install matplotlib" in err
    assert not (tmp_path / "x").exists()


def test_import_does_not_need_matplotlib():
    code = textwrap.dedent(
        """
        import sys
        import river_nrrls, river_nrrls_bench, river_nrrls.cli
        import river_nrrls_bench.plots, river_nrrls_bench.curves
        river_nrrls.cli.build_parser()
        assert "matplotlib" not in sys.modules, "matplotlib imported eagerly"
        assert "imblearn" not in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_clone_environment(ROOT, HARNESS))


def _without_the_harness(monkeypatch) -> None:
    """This process as if river_nrrls_bench were not installed (and its command not registered)."""
    monkeypatch.setitem(sys.modules, "river_nrrls_bench", None)  # find_spec: None
    others = {name: command for name, command in cli.COMMANDS.items() if name != "benchmark"}
    monkeypatch.setattr(cli, "COMMANDS", others)


def test_without_the_harness_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    _without_the_harness(monkeypatch)
    argv = ["benchmark", "--quick", "--jobs", "2", "--out", str(tmp_path / "x")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("river-nrrls benchmark: error: ")
    assert "river-nrrls-bench" in err and "pip install ./benchmarks/paper" in err
    assert not (tmp_path / "x").exists()
    assert cli.main(["--help"]) == 0
    assert "not installed" in capsys.readouterr().out
    assert cli.main(["evaluate", "--no-such-option"]) == 2  # other commands: no such leniency
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_without_the_harness_from_a_fresh_interpreter():
    """``python -m river_nrrls benchmark --quick`` where river_nrrls_bench cannot be imported."""
    code = textwrap.dedent(
        """
        import runpy, sys
        sys.modules["river_nrrls_bench"] = None
        sys.argv = ["river_nrrls", "benchmark", "--quick"]
        runpy.run_module("river_nrrls", run_name="__main__")
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], env=_clone_environment(ROOT), capture_output=True, text=True
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1
    assert "pip install ./benchmarks/paper" in completed.stderr


def test_unknown_dataset_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["benchmark", "--datasets", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown data set 'nope'" in capsys.readouterr().err


def test_benchmark_is_listed_in_the_help(capsys):
    assert cli.main(["--help"]) == 0
    assert "benchmark" in capsys.readouterr().out


# ------------------------------------------------------------------------------ the pieces


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(1, 40), min_size=2, max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_stratified_halves(counts, seed):
    labels = np.concatenate([np.full(n, c) for c, n in enumerate(counts)])
    labels = np.random.default_rng(seed).permutation(labels)
    folds = protocol.stratified_halves(labels, np.random.default_rng(seed))
    assert set(folds.tolist()) <= {0, 1}
    assert abs(int((folds == 0).sum()) - int((folds == 1).sum())) <= 1
    for c in range(len(counts)):
        in_class = folds[labels == c]
        assert abs(int((in_class == 0).sum()) - int((in_class == 1).sum())) <= 1
    again = protocol.stratified_halves(labels, np.random.default_rng(seed))
    np.testing.assert_array_equal(folds, again)


def test_stratified_halves_depend_on_the_seed():
    _, y, _ = protocol.load_matrix("Pima")
    a = protocol.stratified_halves(y, np.random.default_rng(1))
    b = protocol.stratified_halves(y, np.random.default_rng(2))
    assert not np.array_equal(a, b)


def _ter_by_augmented_lstsq(X, y, b):
    """TER as an ordinary least-squares problem: rows sqrt(1/n^c) [1, x] with targets
    sqrt(1/n^c) (+-1), stacked over sqrt(b) I with targets 0."""
    X1 = np.hstack([np.ones((len(X), 1)), X])
    n_pos, n_neg = y.sum(), (~y).sum()
    root = np.sqrt(np.where(y, 1.0 / n_pos, 1.0 / n_neg))
    A = np.vstack([X1 * root[:, None], math.sqrt(b) * np.eye(X1.shape[1])])
    t = np.concatenate([root * np.where(y, 1.0, -1.0), np.zeros(X1.shape[1])])
    return np.linalg.lstsq(A, t, rcond=None)[0]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(8, 60), d=st.integers(1, 6))
def test_fit_ter_is_the_weighted_ridge(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = rng.random(n) < 0.3
    y[:2] = [True, False]
    np.testing.assert_allclose(
        protocol.fit_ter(X, y), _ter_by_augmented_lstsq(X, y, protocol.B), rtol=1e-6, atol=1e-8
    )


def test_fit_ter_equals_nrrls_on_rm_features():
    X, y, names = protocol.load_matrix("Heart")
    Z, rm_names = protocol.rm_matrix(X, names, 3)
    model = NRRLS()
    for x, label in zip(protocol.as_dicts(Z[:150], rm_names), y[:150].tolist()):
        model.learn_one(x, label)
    weights = protocol.fit_ter(Z[:150], y[:150])
    ours = np.array([model.intercepts[True]] + [model.weights[True][f] for f in rm_names])
    np.testing.assert_allclose(ours, weights, rtol=1e-7, atol=1e-9)
    predicted = [model.predict_one(x) for x in protocol.as_dicts(Z[150:], rm_names)]
    np.testing.assert_array_equal(predicted, protocol.predict_ter(weights, Z[150:]))


def test_rm_matrix_and_column_count_follow_the_extender():
    X, _, names = protocol.load_matrix("Bupa")
    for order in (1, 2, 4):
        Z, columns = protocol.rm_matrix(X[:5], names, order)
        assert Z.shape == (5, protocol.rm_columns(len(names), order)) == (5, len(columns))
        extender = PolynomialExtender(order, aggregate="mean", n_features=len(names))
        expected = extender.transform_one(dict(zip(names, X[3].tolist())))
        np.testing.assert_allclose(Z[3], [expected[c] for c in columns])


def test_raced_orders_are_capped_by_the_column_count():
    capped = protocol.Settings(max_columns=90)
    assert protocol.raced_orders(capped, 8) == (1, 2, 3, 4, 5)  # K(5) = 77, K(6) = 94
    assert protocol.raced_orders(capped, 30) == (1,)  # K(2) = 2 + 30 * 3 = 92
    assert protocol.raced_orders(protocol.Settings(), 60) == (1, 2, 3, 4, 5, 6)  # 666 <= 700


def test_g_mean_matches_river():
    rng = np.random.default_rng(0)
    y_true = rng.random(300) < 0.3
    y_pred = rng.random(300) < 0.4
    metric = metrics.GeometricMean()
    for t, p in zip(y_true.tolist(), y_pred.tolist()):
        metric.update(t, p)
    gm, tpr, tnr = protocol.g_mean(y_true, y_pred)
    assert math.isclose(gm, metric.get(), rel_tol=1e-12)
    assert math.isclose(tpr, (y_pred & y_true).sum() / y_true.sum())
    assert math.isclose(tnr, (~y_pred & ~y_true).sum() / (~y_true).sum())


def test_every_learner_builds_and_learns():
    stream = list(itertools.islice(datasets.Heart(), 40))
    for name in protocol.ONLINE_LEARNERS + ("IR-RLS",):
        model = protocol.build_learner(name, seed=1)
        for x, y in stream:
            model.learn_one(x, y)
        assert model.predict_one(stream[0][0]) in (True, False), name
    with pytest.raises(KeyError):
        protocol.build_learner("SVM", seed=1)


# Demsar (2006), Table 5(a): q_0.05 of the two-tailed Nemenyi test for k = 2..10.
DEMSAR_Q05 = (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164)


def test_nemenyi_q_matches_demsar_table():
    for k, q in zip(range(2, 11), DEMSAR_Q05):
        assert abs(bstats.nemenyi_q(k) - q) <= 1e-3, k  # the table has three decimals


def test_nemenyi_cd_matches_demsar_example():
    # Demsar's section 3.2.2 example: k = 4 algorithms on N = 14 data sets, CD = 1.25.
    assert math.isclose(bstats.nemenyi_cd(4, 14), 2.569 * math.sqrt(4 * 5 / (6 * 14)), rel_tol=1e-3)
    assert round(bstats.nemenyi_cd(4, 14), 2) == 1.25
    with pytest.raises(ValueError):
        bstats.nemenyi_q(1)


def test_friedman_statistic_matches_its_formula():
    rng = np.random.default_rng(5)
    scores = rng.random((9, 5))  # no ties
    result = bstats.compare(scores, ("a", "b", "c", "d", "e"))
    n, k = scores.shape
    mean_ranks = np.array([[sorted(-row).index(-v) + 1 for v in row] for row in scores]).mean(0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(mean_ranks**2) - k * (k + 1) ** 2 / 4)
    np.testing.assert_allclose(result.average_ranks, mean_ranks)
    assert math.isclose(result.friedman_chi2, chi2, rel_tol=1e-9)
    f_f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert math.isclose(result.iman_davenport_f, f_f, rel_tol=1e-9)
    assert 0.0 <= result.friedman_p <= 1.0


def test_rank_rows_averages_ties():
    ranks = bstats.rank_rows(np.array([[0.9, 0.5, 0.9, 0.1]]))
    np.testing.assert_array_equal(ranks, [[1.5, 3.0, 1.5, 4.0]])
