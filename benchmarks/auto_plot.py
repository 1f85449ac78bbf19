"""AutoNRRLS over time: windowed G-mean against river's trees, and which candidate leads.

Run:  python benchmarks/auto_plot.py            (full run; writes benchmarks/results/auto_plot.md,
                                                auto_drift.png and auto_rules.png)
      python benchmarks/auto_plot.py --quick    (short streams, prints only)

A full run takes a few minutes of one core (``ARFClassifier`` is the slow model). Needs
matplotlib for the plots (the ``bench`` extra); without it the table is still written.

The streams and models are ``benchmarks/auto.py``'s (imported from it, described in its
docstring), two stories of the guide page ``docs/guide/auto.md``:

* **the drift story**: ``Agrawal-drift`` (Agrawal function 1 then 2, imbalanced);
* **the rule-based story**: ``Ball-then-box`` (a drifting ball, then abruptly a box rule) and
  river's ``Bananas`` (a smooth 2-D concept, no drift).

Models, each prequential (predict, then learn, every sample): ``AutoNRRLS()``, river's
``HoeffdingAdaptiveTreeClassifier(seed=42)`` and ``ARFClassifier(seed=42)``,
``PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99), window=2000)`` and ``NRRLS()``.

Recorded: every model's G-mean over the last ``--window`` samples (default 1,000) every
``--step`` samples (default 100), and at the same points ``AutoNRRLS.best_candidate`` (its
leading feature map and forgetting factor). Reported: the G-mean of all predictions, after the
drift, and of the last window; the leader's share of the points before and after the drift.

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import collections  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import typing  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import compact_table, environment_header, gmean, write_results  # noqa: E402
from auto import LEGEND, MODELS, Stream, get_stream  # noqa: E402
from drift import rolling_gmean  # noqa: E402

RESULTS = Path(__file__).parent / "results"

#: The figures: their file, title and streams.
STORIES = {
    "drift": ("auto_drift.png", "The drift story", ("Agrawal-drift",)),
    "rules": ("auto_rules.png", "The rule-based story", ("Ball-then-box", "Bananas")),
}
SOON = 2_000  # the "first samples after the drift"
PLOTTED = ("AutoNRRLS", "HAT", "ARF", "Selector + grid", "NRRLS")
STYLES = {
    "AutoNRRLS": ("black", "-", 1.8),
    "HAT": ("tab:orange", "--", 1.1),
    "ARF": ("tab:red", "--", 1.1),
    "Selector + grid": ("tab:blue", "-", 1.1),
    "NRRLS": ("tab:gray", "-", 1.0),
}


class Run(typing.NamedTuple):
    """One model's prequential pass over one stream."""

    predictions: np.ndarray  # bool, one per sample (None -> False)
    seconds: float  # CPU time
    leaders: tuple  # AutoNRRLS: its best candidate after every ``step``-th sample; else ()


def run_model(stream: Stream, model_name: str, step: int) -> Run:
    model = MODELS[model_name]()
    predictions = np.zeros(len(stream.samples), dtype=bool)
    leaders = []
    record = hasattr(model, "best_candidate")
    started = time.process_time()
    for i, (x, y) in enumerate(stream.samples):
        predictions[i] = model.predict_one(x) is True
        model.learn_one(x, y)
        if record and (i + 1) % step == 0:
            leaders.append(model.best_candidate)
    return Run(predictions, time.process_time() - started, tuple(leaders))


def labels_of(stream: Stream) -> np.ndarray:
    return np.fromiter((y for _, y in stream.samples), dtype=bool)


def after_drift(stream: Stream) -> int:
    """Where the "after the drift" figures start: the drift, or the second half without one."""
    return stream.drifts[-1] if stream.drifts else len(stream.samples) // 2


def summarise(stream: Stream, run: Run, window: int) -> dict:
    labels, predictions = labels_of(stream), run.predictions
    start = after_drift(stream)
    return {
        "gmean": gmean(labels, predictions),
        "after": gmean(labels[start:], predictions[start:]),
        "soon": gmean(labels[start : start + SOON], predictions[start : start + SOON]),
        "final": gmean(labels[-window:], predictions[-window:]),
        "us": run.seconds / len(labels) * 1e6,
    }


def race_order(features: str) -> int:
    """The race's order of the feature maps: raw, poly2, poly3, ..., tree."""
    if features == "raw":
        return 1
    return int(features[4:]) if features.startswith("poly") else 1000


def leader_name(candidate) -> str:
    return "-" if candidate is None else f"{candidate.features} λ={candidate.forgetting:g}"


def leader_shares(stream: Stream, leaders: tuple, step: int) -> list[list[str]]:
    """Rows (candidate, share before, share after the drift) of the recorded points."""
    start = after_drift(stream)
    ends = step * np.arange(1, len(leaders) + 1)
    before = collections.Counter(leader_name(c) for c, e in zip(leaders, ends) if e <= start)
    after = collections.Counter(leader_name(c) for c, e in zip(leaders, ends) if e > start)
    names = sorted(set(before) | set(after), key=lambda name: -(before[name] + after[name]))
    total_before, total_after = max(1, sum(before.values())), max(1, sum(after.values()))
    return [
        [
            name,
            f"{100 * before[name] / total_before:.0f} %",
            f"{100 * after[name] / total_after:.0f} %",
        ]
        for name in names
    ]


def longest_leads(leaders: tuple, step: int, start: int, count: int = 4) -> str:
    """The ``count`` longest unbroken leads after ``start``, in the stream's order."""
    runs: list[list] = []  # [candidate, first point, last point]
    for k, candidate in enumerate(leaders):
        end = step * (k + 1)
        if end <= start:
            continue
        if runs and runs[-1][0] == candidate:
            runs[-1][2] = end
        else:
            runs.append([candidate, end, end])
    longest = sorted(sorted(runs, key=lambda run: run[1] - run[2])[:count], key=lambda run: run[1])
    return "; ".join(f"{leader_name(c)} from {a:,} to {b:,}" for c, a, b in longest)


# ------------------------------------------------------------------- reports


def markdown(streams: dict, runs: dict, args, seconds: float, command: str) -> str:
    lines = [
        "# AutoNRRLS over time: the drift and rule-based stories",
        "",
        f"Written by `{command}` in {seconds:.0f} s wall-clock ({environment_header()} "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; 1-minute load average "
        f"{args.load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end). The streams "
        "and models are `benchmarks/auto.py`'s (its docstring describes them); the guide page "
        "[AutoNRRLS](../guide/auto.md) tells the stories.",
        "",
        "Models: " + "; ".join(f"**{m}**: {LEGEND[m]}" for m in PLOTTED) + ".",
        "",
        f"Prequential G-mean of all predictions, **after the drift** (from the drift's centre to "
        f"the end; the second half without a drift), in the **first {SOON:,}** samples after "
        f"it, and **final** (the last {args.window:,} samples); CPU microseconds per sample "
        "(noisy: a shared machine).",
        "",
    ]
    for name, stream in streams.items():
        rows = {m: summarise(stream, runs[name][m], args.window) for m in PLOTTED}
        drift = f"drift at {stream.drifts[-1]:,}" if stream.drifts else "no drift"
        lines += [
            f"## {name} ({len(stream.samples):,} samples, {drift})",
            "",
            compact_table(
                [
                    "model",
                    "G-mean",
                    "after the drift",
                    f"first {SOON:,} after",
                    "final",
                    "us/sample",
                ],
                [
                    [
                        m,
                        f"{r['gmean']:.3f}",
                        f"{r['after']:.3f}",
                        f"{r['soon']:.3f}",
                        f"{r['final']:.3f}",
                        f"{r['us']:.0f}",
                    ]
                    for m, r in rows.items()
                ],
            ),
            "",
            f"AutoNRRLS's leader (`best_candidate`, every {args.step} samples): share of the "
            "points before and after the drift.",
            "",
            compact_table(
                ["leader", "before", "after"],
                leader_shares(stream, runs[name]["AutoNRRLS"].leaders, args.step),
            ),
            "",
            "The four longest leads after the drift: "
            + longest_leads(runs[name]["AutoNRRLS"].leaders, args.step, after_drift(stream))
            + ".",
            "",
        ]
    for file, title, _ in STORIES.values():
        lines += [f"![{title}]({file})", ""]
    return "\n".join(lines)


def plot(title: str, streams: dict, runs: dict, args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [r for _ in streams for r in (4, 1.6, 0.9)]
    figure, axes = plt.subplots(
        len(ratios),
        1,
        figsize=(11, 5.2 * len(streams)),
        gridspec_kw={"height_ratios": ratios},
        layout="constrained",
    )
    for k, (name, stream) in enumerate(streams.items()):
        curves, features, forgetting = axes[3 * k : 3 * k + 3]
        n, labels = len(stream.samples), labels_of(stream)
        for model in PLOTTED:
            ends, values = rolling_gmean(
                labels, runs[name][model].predictions, args.window, args.step
            )
            color, style, width = STYLES[model]
            curves.plot(ends, values, color=color, linestyle=style, linewidth=width, label=model)
        leaders = runs[name]["AutoNRRLS"].leaders
        points = args.step * np.arange(1, len(leaders) + 1)
        known = [c for c in leaders if c is not None]
        maps = sorted({c.features for c in known} | {"raw", "tree"}, key=race_order)
        factors = sorted({c.forgetting for c in known} | {1.0, 0.999, 0.99}, reverse=True)
        rows = [np.nan if c is None else maps.index(c.features) for c in leaders]
        features.step(points, rows, where="post", color="black", linewidth=1.2)
        features.set_yticks(range(len(maps)), maps, fontsize=6)
        features.set_ylim(-0.5, len(maps) - 0.5)
        features.set_ylabel("feature\nmap", fontsize=8)
        rows = [np.nan if c is None else factors.index(c.forgetting) for c in leaders]
        forgetting.step(points, rows, where="post", color="black", linewidth=1.2)
        forgetting.set_yticks(range(len(factors)), [f"{f:g}" for f in factors], fontsize=7)
        forgetting.set_ylim(-0.5, len(factors) - 0.5)
        forgetting.set_ylabel("λ", fontsize=8)
        for ax in (curves, features, forgetting):
            for position in stream.drifts:
                ax.axvline(position, color="0.5", linestyle=":", zorder=0)
            ax.set_xlim(0, n)
            ax.grid(alpha=0.3)
        drift = f", drift at {stream.drifts[-1]:,} (dotted)" if stream.drifts else ""
        curves.set_title(
            f"{title}: {name}, G-mean over the last {args.window:,} samples{drift}; below, "
            "AutoNRRLS's leading candidate",
            fontsize=10,
        )
        curves.set_ylim(0, 1.02)
        curves.set_ylabel("G-mean")
        curves.tick_params(labelbottom=False)
        features.tick_params(labelbottom=False)
        forgetting.set_xlabel("samples")
        curves.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=8, frameon=False)
    figure.savefig(path, dpi=90)
    plt.close(figure)


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, prints only")
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="samples per stream (default 20,000, 1,500 with --quick; Bananas has 5,300)",
    )
    parser.add_argument("--window", type=int, default=None, help="G-mean window (1,000)")
    parser.add_argument("--step", type=int, default=None, help="samples between points (100)")
    args = parser.parse_args(argv)
    full = not args.quick and args.samples is None  # writes the results
    args.samples = args.samples or (1_500 if args.quick else 20_000)
    args.window = args.window or (300 if args.quick else 1_000)
    args.step = args.step or (50 if args.quick else 100)
    args.load = os.getloadavg()[0]
    started = time.perf_counter()
    print(environment_header(), flush=True)
    names = [name for _, _, story in STORIES.values() for name in story]
    streams = {name: get_stream(name, args.samples) for name in names}
    runs: dict = {name: {} for name in names}
    for name, stream in streams.items():
        for model in PLOTTED:
            runs[name][model] = run_model(stream, model, args.step)
            print(f"  {name:<14} {model:<16} {runs[name][model].seconds:6.1f} s", flush=True)
    command = "python benchmarks/auto_plot.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = markdown(streams, runs, args, time.perf_counter() - started, command.strip())
    print(text)
    with tempfile.TemporaryDirectory() as scratch:  # --quick draws too, into a scratch folder
        folder = RESULTS if full else Path(scratch)
        try:
            for file, title, story in STORIES.values():
                plot(title, {name: streams[name] for name in story}, runs, args, folder / file)
        except ImportError:
            print("matplotlib is missing (the bench extra): no plots", file=sys.stderr)
    if full:
        write_results(RESULTS / "auto_plot.md", text)


if __name__ == "__main__":
    main()
