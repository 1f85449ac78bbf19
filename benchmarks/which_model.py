"""Which model? G-mean and CPU cost per sample of the models of ``river-nrrls evaluate``.

Run:  python benchmarks/which_model.py            (full run; writes
                                                 benchmarks/results/which_model.md and
                                                 which_model.png)
      python benchmarks/which_model.py --quick    (three small data sets, prints only)

Every model of the ``--models`` registry of ``river-nrrls evaluate`` (the package's:
``auto`` AutoNRRLS, ``nrrls``, ``rls``, ``poly3``, ``selector``; river's: ``lr``, ``lr-std``,
``lr-wpos``, ``hat``, ``arf``, ``gnb``; see ``river-nrrls evaluate --help``) runs the
command's progressive validation (`river_nrrls.cli.evaluate.evaluate_models`: predict, then
learn, every sample) on each of the 17 bundled data sets (`river_nrrls.datasets`, min-max
scaled to [0, 1]), shuffled with ``--seeds`` seeds (default 3: 42, 43, 44). All the models of
a run take turns on every sample, so they share the machine's load.

Reported, per model: the G-mean (the geometric mean of the recalls) averaged over the data
sets and seeds, its average rank (1 = best, per data set and seed), the number of data sets it
is within 0.01 G-mean of the best model of that data set (seed-averaged), and its CPU time per
sample (``time.process_time`` of its own steps, one BLAS thread) in microseconds and as a
ratio to ``nrrls`` timed in the same runs. Per data set: every model's seed-averaged G-mean.
The figure plots the average G-mean against the cost per sample. Needs matplotlib for the
figure (the ``bench`` extra); without it the tables are still written.

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import typing  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))  # the package of this clone

from _common import compact_table, environment_header, write_results  # noqa: E402

from river_nrrls import datasets  # noqa: E402
from river_nrrls.cli import evaluate  # noqa: E402

RESULTS = Path(__file__).parent / "results"
OURS = ("auto", "nrrls", "rls", "poly3", "selector")
#: The models of the figure and tables, ours first.
MODELS = OURS + tuple(name for name in evaluate.MODELS if name not in OURS)
QUICK = ("Monks3", "Bupa", "Pima")
NEAR_BEST = 0.01
#: The summary table of the results file sits between these markers, so that the guide's page
#: (docs/guide/which-model.md) includes it (pymdownx.snippets) and shows every new run.
SUMMARY_START = "<!-- --8<-- [start:summary] -->"
SUMMARY_END = "<!-- --8<-- [end:summary] -->"


class Score(typing.NamedTuple):
    """One model on one data set and seed."""

    g_mean: float
    seconds: float  # CPU
    n_samples: int


def run(name: str, seed: int, limit: int | None) -> dict[str, Score]:
    rows = list(datasets.load(name))
    random.Random(seed).shuffle(rows)  # as `river-nrrls evaluate` does (several are sorted)
    rows = rows[:limit]
    results = evaluate.evaluate_models(rows, MODELS, clock=time.process_time)
    return {r.model: Score(r.g_mean, r.seconds, len(rows)) for r in results}


def ranks(scores: dict[str, float]) -> dict[str, float]:
    """Average ranks (ties share the mean of their places), 1 for the highest score."""
    ordered = sorted(scores, key=scores.__getitem__, reverse=True)
    result: dict[str, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and scores[ordered[j + 1]] == scores[ordered[i]]:
            j += 1
        for name in ordered[i : j + 1]:
            result[name] = (i + j) / 2 + 1
        i = j + 1
    return result


class Summary(typing.NamedTuple):
    g_mean: float
    rank: float
    near_best: int
    us_per_sample: float
    cost_ratio: float


def summarise(runs: dict[tuple[str, int], dict[str, Score]], names: list[str]) -> dict:
    per_set = {
        name: {
            m: statistics.fmean(runs[key][m].g_mean for key in runs if key[0] == name)
            for m in MODELS
        }
        for name in names
    }
    all_ranks = [ranks({m: scores[m].g_mean for m in MODELS}) for scores in runs.values()]
    seconds = {m: sum(scores[m].seconds for scores in runs.values()) for m in MODELS}
    samples = sum(scores[MODELS[0]].n_samples for scores in runs.values())
    summary = {
        m: Summary(
            g_mean=statistics.fmean(per_set[name][m] for name in names),
            rank=statistics.fmean(r[m] for r in all_ranks),
            near_best=sum(
                per_set[name][m] >= max(per_set[name].values()) - NEAR_BEST for name in names
            ),
            us_per_sample=1e6 * seconds[m] / samples,
            cost_ratio=seconds[m] / seconds["nrrls"],
        )
        for m in MODELS
    }
    return {"per_set": per_set, "summary": summary}


def summary_table(summary: dict[str, Summary], n_sets: int) -> str:
    rows = [
        [
            f"`{m}`",
            "ours" if m in OURS else "river",
            f"{s.g_mean:.3f}",
            f"{s.rank:.2f}",
            f"{s.near_best}/{n_sets}",
            f"{s.us_per_sample:.0f}",
            f"{s.cost_ratio:.1f}",
        ]
        for m, s in sorted(summary.items(), key=lambda item: -item[1].g_mean)
    ]
    headers = ["model", "from", "G-mean", "rank", "within 0.01 of best", "CPU µs/sample", "x nrrls"]
    return compact_table(headers, rows)


def per_set_table(per_set: dict[str, dict[str, float]]) -> str:
    rows = []
    for name, scores in per_set.items():
        best = max(scores.values())
        rows.append(
            [name]
            + [f"**{scores[m]:.3f}**" if scores[m] == best else f"{scores[m]:.3f}" for m in MODELS]
        )
    return compact_table(["data set", *(f"`{m}`" for m in MODELS)], rows)


def plot(summary: dict[str, Summary], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for m, s in summary.items():
        colour = "black" if m == "auto" else ("tab:blue" if m in OURS else "tab:orange")
        axes.scatter(s.us_per_sample, s.g_mean, color=colour, s=40 if m == "auto" else 25)
        axes.annotate(m, (s.us_per_sample, s.g_mean), textcoords="offset points", xytext=(5, 3))
    axes.set_xscale("log")
    axes.set_xlabel("CPU time per sample (µs, log scale; predict + learn)")
    axes.set_ylabel("G-mean, average over the bundled data sets")
    axes.set_title("Which model? blue: river-nrrls, orange: river")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="3 small data sets, 200 samples")
    parser.add_argument("--seeds", type=int, default=3, help="shuffles per data set (default 3)")
    args = parser.parse_args()
    names = (
        list(QUICK) if args.quick else [datasets.load(n).__class__.__name__ for n in datasets.NAMES]
    )
    seeds = [42 + i for i in range(1 if args.quick else args.seeds)]
    limit = 200 if args.quick else None
    runs = {}
    for name in names:
        for seed in seeds:
            runs[name, seed] = run(name, seed, limit)
            print(f"{name} (seed {seed}) done", flush=True)
    result = summarise(runs, names)
    header = environment_header()
    summary = summary_table(result["summary"], len(names))
    per_set = per_set_table(result["per_set"])
    print(header, summary, per_set, sep="\n\n")
    if args.quick:
        return
    plotted = plot(result["summary"], RESULTS / "which_model.png")
    text = (
        "# Which model? G-mean and cost of the models of `river-nrrls evaluate`\n\n"
        f"`python benchmarks/which_model.py`: {len(names)} bundled data sets, {len(seeds)} "
        "shuffles each, progressive validation; CPU time of each model's own steps, ratios to "
        "`nrrls` timed in the same runs. G-mean: averaged over the data sets; rank: average "
        "over data sets and shuffles.\n\n"
        f"{header}\n\n## Summary\n\n{SUMMARY_START}\n{summary}\n{SUMMARY_END}\n\n"
        "## G-mean per data set (mean over the "
        f"shuffles; best in bold)\n\n{per_set}\n"
        + ("\n![G-mean against cost](which_model.png)\n" if plotted else "")
    )
    write_results(RESULTS / "which_model.md", text)


if __name__ == "__main__":
    main()
