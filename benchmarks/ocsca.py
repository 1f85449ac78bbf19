"""The OCSCA paper's protocol on the bundled data sets: f0, OCSCA, CSOGD and a weighted LR.

Run:  python benchmarks/ocsca.py                    (all data sets; writes benchmarks/results/)
      python benchmarks/ocsca.py --quick            (four small data sets, prints only)
      python benchmarks/ocsca.py --datasets pima,wdbc --scenarios 2to5   (prints only)
      python benchmarks/ocsca.py --datasets pima --output /tmp/ocsca     (writes there)

A full run takes about 4 minutes on two idle cores (``--jobs``, default 2 processes).

Needs matplotlib for the box plots (the ``bench`` extra); without it the table is still written.

Protocol (section 3.2 of the OCSCA paper, on the NR-RLS paper's data sets; the minority class is
the positive one):

* 10-fold cross-validation (stratified; fold assignment seeded). Test fold ``k``; of the other
  nine folds, the two that follow ``k`` (cyclically) train the base model f0 and the remaining
  seven are the stream, in a seeded random order.
* f0 is a river ``LogisticRegression`` trained on its two folds with cost weights C+0 on the
  positives and 1 on the negatives (several shuffled passes: f0 is a model trained offline).
  Scenario ``2to5``: C+0 = 2, the stream's costs C+ = 5 (the paper's face detection setting);
  ``3to8``: C+0 = 3, C+ = 8 (its car detection setting); C- = 1 throughout.
* Online methods make one pass over the stream, every sample with its cost C_t (``w=C_t``).
  OCSCA adapts f0 (score: f0's log-odds, the linear decision value of a logistic regression,
  the analogue of the paper's SVM decision value). CSOGD and the weighted online logistic
  regression ignore f0 and its two folds, as in the paper's comparison.
* Hyper-parameters (OCSCA's alpha, the learning rates of CSOGD and of the logistic regression)
  are chosen by an inner 3-fold cross-validation on the stream only: for every candidate, a
  model streams two inner folds and is scored (average misclassification cost) on the third.
  The candidate of lowest mean cost (the first on ties) is then streamed over all seven folds.
* Reported, on the test fold: accuracy and average misclassification cost (C+ FN + C- FP) / n
  with the stream's costs.

"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _common import compact_table, environment_header, table_row, write_results
from river import linear_model, optim

from river_nrrls import OCSCA, CSOGDClassifier, datasets
from river_nrrls.metrics import MisclassificationCost

RESULTS = Path(__file__).parent / "results"

#: scenario -> (C+ used to train f0, C+ of the stream); C- = 1.
SCENARIOS = {"2to5": (2.0, 5.0), "3to8": (3.0, 8.0)}
COST_NEG = 1.0
N_FOLDS = 10
INNER_FOLDS = 3
F0_EPOCHS = 20
QUICK_DATASETS = ("Heart", "Pima", "Wdbc", "Australian")

ALPHAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
CSOGD_RATES = (1e-3, 1e-2, 1e-1, 1.0)
LOGISTIC_RATES = (1e-2, 1e-1, 1.0)

METHODS = ("f0", "OCSCA", "OCSCA+b", "CSOGD", "CSOGD+b", "LR", "All+")
TUNED = ("OCSCA", "OCSCA+b", "CSOGD", "CSOGD+b", "LR")
PLOTTED = METHODS[:-1]  # the trivial reference is left out of the box plots
DESCRIPTIONS = {
    "f0": "the base model alone (logistic regression, trained with C+0 on 2 folds)",
    "OCSCA": "OCSCA as in the paper (no bias), f0 = the base model's log-odds",
    "OCSCA+b": "OCSCA with `intercept=True` (a bias in w: a deviation from the paper)",
    "CSOGD": "CSOGD type II, cost objective, no bias (the paper's online baseline)",
    "CSOGD+b": "CSOGD type II with `intercept=True`",
    "LR": "river LogisticRegression trained online with sample weights C_t",
    "All+": "always predict the positive class, a trivial reference (its cost is the share of "
    "negatives, its accuracy the share of positives)",
}


# ------------------------------------------------------------------ pieces


def stratified_folds(labels: list[bool], n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold number of every sample: each class shuffled, then dealt round-robin."""
    folds = np.empty(len(labels), dtype=int)
    labels = np.asarray(labels)
    offset = 0
    for value in (True, False):
        members = rng.permutation(np.flatnonzero(labels == value))
        folds[members] = (np.arange(len(members)) + offset) % n_folds
        offset += len(members)
    return folds


def train_f0(samples: list, cost_pos: float, seed: int) -> linear_model.LogisticRegression:
    """The base model, trained offline (shuffled passes) with cost weights."""
    model = linear_model.LogisticRegression(optimizer=optim.SGD(0.1), intercept_lr=0.1)
    rng = random.Random(seed)
    order = list(samples)
    for _ in range(F0_EPOCHS):
        rng.shuffle(order)
        for x, y in order:
            model.learn_one(x, y, w=cost_pos if y else COST_NEG)
    return model


def make_factories(f0):
    """method -> (hyper-parameter grid, factory(parameter) -> fresh online model)."""
    return {
        "OCSCA": (ALPHAS, lambda a: OCSCA(f0, alpha=a, score="logit")),
        "OCSCA+b": (ALPHAS, lambda a: OCSCA(f0, alpha=a, score="logit", intercept=True)),
        "CSOGD": (CSOGD_RATES, lambda r: CSOGDClassifier(learning_rate=r)),
        "CSOGD+b": (CSOGD_RATES, lambda r: CSOGDClassifier(learning_rate=r, intercept=True)),
        "LR": (
            LOGISTIC_RATES,
            lambda r: linear_model.LogisticRegression(optimizer=optim.SGD(r), intercept_lr=r),
        ),
    }


class AlwaysPositive:
    def predict_one(self, x: dict) -> bool:
        return True


def stream_through(model, samples: list, cost_pos: float):
    for x, y in samples:
        model.learn_one(x, y, w=cost_pos if y else COST_NEG)  # the sample's cost C_t
    return model


def score(model, samples: list, cost_pos: float) -> tuple[float, float]:
    """(accuracy, average misclassification cost) of ``model`` on ``samples``."""
    cost = MisclassificationCost(cost_pos=cost_pos, cost_neg=COST_NEG)
    correct = 0
    for x, y in samples:
        prediction = model.predict_one(x)
        cost.update(y, prediction)
        correct += prediction == y
    return correct / len(samples), cost.get()


def select(grid, factory, stream: list, cost_pos: float):
    """The grid value of lowest mean inner-validation cost (the first one on ties)."""
    inner = np.arange(len(stream)) % INNER_FOLDS
    best, best_cost = grid[0], float("inf")
    for value in grid:
        costs = []
        for j in range(INNER_FOLDS):
            train = [s for s, fold in zip(stream, inner) if fold != j]
            valid = [s for s, fold in zip(stream, inner) if fold == j]
            costs.append(score(stream_through(factory(value), train, cost_pos), valid, cost_pos)[1])
        if statistics.fmean(costs) < best_cost:
            best, best_cost = value, statistics.fmean(costs)
    return best


def run_dataset(name: str, scenario: str, seed: int) -> dict:
    """All outer folds of one data set in one scenario."""
    cost_pos_f0, cost_pos = SCENARIOS[scenario]
    data = list(datasets.load(name))
    rng = np.random.default_rng(seed)
    folds = stratified_folds([y for _, y in data], N_FOLDS, rng)
    results = {method: [] for method in METHODS}
    chosen = {method: [] for method in TUNED}
    started = time.perf_counter()
    for k in range(N_FOLDS):
        f0_folds = {(k + 1) % N_FOLDS, (k + 2) % N_FOLDS}
        test = [s for s, fold in zip(data, folds) if fold == k]
        f0_part = [s for s, fold in zip(data, folds) if fold in f0_folds]
        stream = [s for s, fold in zip(data, folds) if fold != k and fold not in f0_folds]
        random.Random(seed * 1000 + k).shuffle(stream)

        f0 = train_f0(f0_part, cost_pos_f0, seed=seed * 1000 + k)
        results["f0"].append(score(f0, test, cost_pos))
        results["All+"].append(score(AlwaysPositive(), test, cost_pos))
        for method, (grid, factory) in make_factories(f0).items():
            value = select(grid, factory, stream, cost_pos)
            chosen[method].append(value)
            model = stream_through(factory(value), stream, cost_pos)
            results[method].append(score(model, test, cost_pos))
    return {
        "name": name,
        "scenario": scenario,
        "n": len(data),
        "n_true": sum(y for _, y in data),
        "results": results,
        "chosen": chosen,
        "seconds": time.perf_counter() - started,
    }


# ----------------------------------------------------------------- reports


def _mean(pairs, index):
    return statistics.fmean(p[index] for p in pairs)


def markdown(runs: list[dict], scenarios: list[str], seconds: float, command: str) -> str:
    lines = [
        "# OCSCA: online cost-sensitive adaptation against CSOGD and a weighted LR",
        "",
        f"Written by `{command}` in {seconds:.0f} s ({environment_header()}) The protocol is "
        "in the script's "
        "docstring: 10-fold CV; in each training part 2 folds train f0 with C+0 and 7 folds are "
        "the stream, with costs C+ and C- = 1; hyper-parameters by an inner 3-fold CV on the "
        "stream; accuracy and average misclassification cost on the test fold.",
        "",
        "Methods:",
        "",
    ]
    lines += [f"* **{m}**: {DESCRIPTIONS[m]}." for m in METHODS]
    lines += [
        "",
        f"Grids: alpha in {list(ALPHAS)}; CSOGD learning rate in {list(CSOGD_RATES)}; "
        f"LR learning rate in {list(LOGISTIC_RATES)}.",
    ]
    for scenario in scenarios:
        cost_pos_f0, cost_pos = SCENARIOS[scenario]
        chunk = [r for r in runs if r["scenario"] == scenario]
        lines += [
            "",
            f"## Scenario {scenario}: f0 trained with C+0 = {cost_pos_f0:g}, stream costs "
            f"C+ = {cost_pos:g}, C- = {COST_NEG:g}",
            "",
            "Mean over the 10 test folds: average misclassification cost (lower is better) / "
            "accuracy. Bold: the lowest cost of the row.",
            "",
            compact_table(["Data set", "n (n+)", *METHODS]),
        ]
        for run in chunk:
            costs = {m: _mean(run["results"][m], 1) for m in METHODS}
            best = min(costs.values())
            cells = []
            for m in METHODS:
                text = f"{costs[m]:.3f} / {100 * _mean(run['results'][m], 0):.1f}%"
                cells.append(f"**{text}**" if costs[m] == best else text)
            lines.append(table_row([run["name"], f"{run['n']} ({run['n_true']})", *cells]))
        averages = {
            m: (
                statistics.fmean(_mean(r["results"][m], 1) for r in chunk),
                statistics.fmean(_mean(r["results"][m], 0) for r in chunk),
            )
            for m in METHODS
        }
        lines.append(
            "| **Average** | | "
            + " | ".join(f"{averages[m][0]:.3f} / {100 * averages[m][1]:.1f}%" for m in METHODS)
            + " |"
        )
        lines += [
            "",
            "Data sets on which the row method has a lower mean cost than the column "
            "method (of " + str(len(chunk)) + "):",
            "",
            "| | " + " | ".join(METHODS) + " |",
            "|---|" + "---|" * len(METHODS),
        ]
        for a in METHODS:
            wins = [
                sum(_mean(r["results"][a], 1) < _mean(r["results"][b], 1) for r in chunk)
                if a != b
                else ""
                for b in METHODS
            ]
            lines.append(f"| {a} | " + " | ".join(map(str, wins)) + " |")
        choices = []
        for method in TUNED:
            counter = collections.Counter(v for r in chunk for v in r["chosen"][method])
            choices.append(
                f"{method}: " + ", ".join(f"{v:g} x{c}" for v, c in sorted(counter.items()))
            )
        lines += [
            "",
            "Hyper-parameters chosen by the inner validation (value x number of folds): "
            + "; ".join(choices)
            + ".",
            "",
        ]
        lines.append(f"![costs and accuracies, scenario {scenario}](ocsca_{scenario}.png)")
    lines += ["", "## Summary", ""]
    for scenario in scenarios:
        chunk = [r for r in runs if r["scenario"] == scenario]
        averages = ", ".join(
            f"{m} {statistics.fmean(_mean(r['results'][m], 1) for r in chunk):.3f}" for m in METHODS
        )
        ocsca_wins = sum(
            _mean(r["results"]["OCSCA"], 1) < _mean(r["results"]["CSOGD"], 1) for r in chunk
        )
        f0_wins = sum(_mean(r["results"]["OCSCA"], 1) < _mean(r["results"]["f0"], 1) for r in chunk)
        lines.append(
            f"* Scenario {scenario}, average cost over the {len(chunk)} data sets: {averages}. "
            f"OCSCA costs less than CSOGD on {ocsca_wins} and less than f0 alone on {f0_wins}."
        )
    return "\n".join(lines) + "\n"


def box_plots(runs: list[dict], scenario: str, path: Path) -> None:
    """Fig. 1 of the paper, one panel pair per data set: accuracy and cost over the folds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chunk = [r for r in runs if r["scenario"] == scenario]
    n_columns = 4
    n_rows = -(-len(chunk) // n_columns)
    figure, axes = plt.subplots(
        2 * n_rows, n_columns, figsize=(4.2 * n_columns, 2.6 * 2 * n_rows), squeeze=False
    )
    for i, run in enumerate(chunk):
        row, column = 2 * (i // n_columns), i % n_columns
        for offset, (index, label) in enumerate(((0, "accuracy"), (1, "cost"))):
            ax = axes[row + offset][column]
            ax.boxplot([[p[index] for p in run["results"][m]] for m in PLOTTED])
            ax.set_xticks(range(1, len(PLOTTED) + 1), PLOTTED, fontsize=7, rotation=30)
            ax.set_title(f"{run['name']}: {label}", fontsize=9)
            ax.tick_params(axis="y", labelsize=7)
    for j in range(len(chunk), n_rows * n_columns):
        row, column = 2 * (j // n_columns), j % n_columns
        axes[row][column].axis("off")
        axes[row + 1][column].axis("off")
    cost_pos_f0, cost_pos = SCENARIOS[scenario]
    figure.suptitle(
        f"Test-fold accuracy and average misclassification cost over 10 folds "
        f"(f0 trained with C+ = {cost_pos_f0:g}; stream C+ = {cost_pos:g}, C- = 1)",
        fontsize=11,
    )
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    figure.savefig(path, dpi=90)
    plt.close(figure)


# -------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", help="comma-separated names (default: all)")
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help=f"comma-separated, among {', '.join(SCENARIOS)}",
    )
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_DATASETS)}")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"folder of the results (default: {RESULTS} for a full run; a "
        "partial run only prints unless --output is given)",
    )
    args = parser.parse_args(argv)

    if args.datasets:
        names = [type(datasets.load(n)).__name__ for n in args.datasets.split(",") if n.strip()]
    elif args.quick:
        names = list(QUICK_DATASETS)
    else:
        names = list(datasets.NAMES)
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            parser.error(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")

    jobs = [(name, scenario) for scenario in scenarios for name in names]
    # The largest data sets first, so that the workers finish together.
    jobs.sort(key=lambda job: -datasets.load(job[0]).n_samples)
    started = time.perf_counter()
    runs = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_dataset, name, scenario, args.seed) for name, scenario in jobs]
        for future in concurrent.futures.as_completed(futures):
            run = future.result()
            costs = "  ".join(f"{m} {_mean(run['results'][m], 1):.3f}" for m in METHODS)
            print(
                f"[{run['scenario']}] {run['name']:<22} {run['seconds']:6.1f} s   cost: {costs}",
                flush=True,
            )
            runs.append(run)
    seconds = time.perf_counter() - started
    order = {name: i for i, name in enumerate(names)}
    runs.sort(key=lambda r: (scenarios.index(r["scenario"]), order[r["name"]]))

    command = "python benchmarks/ocsca.py " + " ".join(argv if argv is not None else sys.argv[1:])
    report = markdown(runs, scenarios, seconds, command.strip())
    output = args.output
    if output is None and not (args.quick or args.datasets or set(scenarios) != set(SCENARIOS)):
        output = RESULTS
    if output is None:
        print(report)
        return
    args.output = output
    write_results(args.output / "ocsca.md", report)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: no box plots (pip install matplotlib)")
        return
    for scenario in scenarios:
        path = args.output / f"ocsca_{scenario}.png"
        box_plots(runs, scenario, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
