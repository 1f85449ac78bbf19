"""Drifting, imbalanced streams: NR-RLS with forgetting or drift detectors against river models.

Run:  python benchmarks/drift.py            (full run; writes benchmarks/results/drift.md and
                                            benchmarks/results/drift_gmean.png)
      python benchmarks/drift.py --quick    (tiny streams, prints only)

A full run takes about 5 minutes on two idle cores (``--jobs``, default 2 processes). Needs
matplotlib for the plot (the ``bench`` extra); without it the table is still written.

Streams (river's generators; every concept resampled to a fixed share of positives by rejection
sampling, then chained with ``ConceptDriftStream``; three drifts, at 1/4, 1/2 and 3/4 of the
stream; features mapped to [0, 1] by the generators' fixed ranges, so no scaler has to adapt):

* ``SEA``: SEA thresholds 8 -> 9.5 -> 7 -> 9 (variants 0, 3, 2, 1), 5 % label noise, 10 %
  positives, abrupt drifts (a 500-sample sigmoid: ConceptDriftStream overflows for widths
  below position / 177).
* ``Agrawal-linear``: Agrawal functions 6 -> 7 -> 8 -> 6 (the "disposable income" rules, linear
  in the features), 15 % positives, gradual drifts over 5000 samples.
* ``Agrawal-nonlinear``: Agrawal functions 1 -> 2 -> 5 -> 3 (salary / education bands by age
  group: rules a linear model cannot express), 15 % positives, gradual drifts over 5000 samples.

Models, each evaluated prequentially (predict, then learn, every sample):

* ``NRRLS l=1``: ``NRRLS()``, no forgetting (the paper).
* ``NRRLS l=tuned``: ``NRRLS(forgetting=l)``, l chosen on a separate tuning stream (the same
  generators with other seeds), never on the evaluation stream: the l of the best prequential
  G-mean on the tuning stream.
* ``NRRLS+ADWIN``: ``DriftRetrainingClassifier(NRRLS(), ADWIN(), train_in_background=False)``
  (ADWIN gives no warnings, so a detection restarts the model).
* ``NRRLS+DDM``: ``DriftRetrainingClassifier(NRRLS(), binary.DDM())`` (a background model
  learns during warnings and replaces the model on a detection).
* ``LogReg``: river ``LogisticRegression()`` with its defaults (SGD 0.01, no class weights).
* ``HAT``: ``HoeffdingAdaptiveTreeClassifier(seed=42)``.
* ``ARF``: ``ARFClassifier(seed=42)`` with river's defaults (10 trees, ADWIN warnings and
  drifts). It is by far the slowest model (about 0.5 ms per sample), but the full run fits the
  time budget without limiting it; ``--arf-models`` lowers the number of trees.

Reported per model: the G-mean (sqrt(TPR * TNR)) of all prequential predictions, the mean
G-mean over windows of 2000 samples, the G-mean in the 5000 samples that follow each drift
(mean over the drifts), the number of model replacements of the DriftRetrainingClassifier
wrappers, and the time to predict and learn the stream. A model that cannot predict yet (no
sample learnt, or just replaced by an empty model) counts as predicting the negative class.

"""

from __future__ import annotations

import _common

_common.limit_blas_threads(force=True)  # before numpy: small matrices, threads only hurt

import argparse  # noqa: E402
import concurrent.futures  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    DRIFT_STREAMS,
    build_drift_stream,
    drift_positions,
    drift_width,
    environment_header,
    gmean,
    write_results,
)
from river import drift, forest, linear_model, metrics, tree  # noqa: E402

from river_nrrls import NRRLS  # noqa: E402

RESULTS = Path(__file__).parent / "results"

EVALUATION_SEED = 1
TUNING_SEED = 2  # the tuning streams: same generators, other seeds
MODEL_SEED = 42
FORGETTING_GRID = (0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 1.0)
MODELS = ("NRRLS l=1", "NRRLS l=tuned", "NRRLS+ADWIN", "NRRLS+DDM", "LogReg", "HAT", "ARF")
WRAPPED = ("NRRLS+ADWIN", "NRRLS+DDM")

# ------------------------------------------------------------------ streams

#: (name, n, seed) -> samples. Filled by the parent before it forks the workers that run the
#: models, so they inherit the streams (a worker that does not find one builds it).
_BUILT: dict[tuple, tuple] = {}


def get_stream(name: str, n: int, seed: int) -> tuple:
    key = (name, n, seed)
    if key not in _BUILT:
        _BUILT[key] = build_drift_stream(name, n, seed)
    return _BUILT[key]


# ------------------------------------------------------------------- models


def make_model(name: str, forgetting: float = 1.0, arf_models: int = 10):
    if name in ("NRRLS l=1", "NRRLS l=tuned"):
        return NRRLS(forgetting=forgetting)
    if name == "NRRLS+ADWIN":
        return drift.DriftRetrainingClassifier(NRRLS(), drift.ADWIN(), train_in_background=False)
    if name == "NRRLS+DDM":
        return drift.DriftRetrainingClassifier(NRRLS(), drift.binary.DDM())
    if name == "LogReg":
        return linear_model.LogisticRegression()
    if name == "HAT":
        return tree.HoeffdingAdaptiveTreeClassifier(seed=MODEL_SEED)
    if name == "ARF":
        return forest.ARFClassifier(n_models=arf_models, seed=MODEL_SEED)
    raise ValueError(f"unknown model {name!r}")


def run_model(
    stream: str, n: int, seed: int, model_name: str, forgetting: float = 1.0, arf_models: int = 10
) -> dict:
    """Prequential run: the predictions (``None`` -> False), time and model replacements."""
    data = get_stream(stream, n, seed)
    model = make_model(model_name, forgetting, arf_models)
    predictions = np.zeros(len(data), dtype=bool)
    replacements = 0
    wrapped = getattr(model, "model", None) if model_name in WRAPPED else None
    started = time.perf_counter()
    for i, (x, y) in enumerate(data):
        predictions[i] = model.predict_one(x) is True
        model.learn_one(x, y)
        if wrapped is not None and model.model is not wrapped:
            replacements += 1
            wrapped = model.model
    seconds = time.perf_counter() - started
    return {
        "stream": stream,
        "seed": seed,
        "model": model_name,
        "forgetting": forgetting,
        "predictions": predictions,
        "seconds": seconds,
        "replacements": replacements,
    }


# ------------------------------------------------------------------ metrics


def labels_of(stream: str, n: int, seed: int) -> np.ndarray:
    return np.fromiter((y for _, y in get_stream(stream, n, seed)), dtype=bool)


def rolling_gmean(
    labels: np.ndarray, predictions: np.ndarray, window: int, step: int
) -> tuple[np.ndarray, np.ndarray]:
    """G-mean over the windows [t - window, t), t = window, window + step, ..."""

    def window_sums(values: np.ndarray) -> np.ndarray:
        total = np.concatenate([[0], np.cumsum(values)])
        return total[ends] - total[ends - window]

    ends = np.arange(window, len(labels) + 1, step)
    positives, negatives = window_sums(labels), window_sums(~labels)
    tp, tn = window_sums(predictions & labels), window_sums(~predictions & ~labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.sqrt((tp / positives) * (tn / negatives))
    return ends, np.nan_to_num(values)


def summarise(run: dict, labels: np.ndarray, window: int, after: int) -> dict:
    predictions = run["predictions"]
    overall = metrics.GeometricMean()
    for y, p in zip(labels.tolist(), predictions.tolist()):
        overall.update(y, p)
    assert abs(overall.get() - gmean(labels, predictions)) < 1e-12  # river's metric agrees
    _, blocks = rolling_gmean(labels, predictions, window, window)
    post = [
        gmean(labels[d : d + after], predictions[d : d + after])
        for d in drift_positions(len(labels))
    ]
    return {
        "overall": overall.get(),
        "windows": float(np.mean(blocks)),
        "after_drift": float(np.mean(post)),
        "seconds": run["seconds"],
        "us_per_sample": 1e6 * run["seconds"] / len(labels),
        "replacements": run["replacements"],
        "forgetting": run["forgetting"],
    }


# ----------------------------------------------------------------- reports


def markdown(
    summaries: dict, tuning: dict, chosen: dict, args, n: int, seconds: float, command: str
) -> str:
    lines = [
        "# NR-RLS on drifting, imbalanced streams",
        "",
        f"Written by `{command}` in {seconds:.0f} s ({environment_header()} "
        f"{args.jobs} processes, OPENBLAS_NUM_THREADS=1; 1-minute load average "
        f"{args.load[0]:.1f} at the start and {os.getloadavg()[0]:.1f} at the end: times are "
        "wall-clock and grow with other load). The streams and models are described in the "
        "script's docstring.",
        "",
        f"* Every stream: {n:,} samples, drifts at "
        f"{', '.join(f'{d:,}' for d in drift_positions(n))}; evaluation seed "
        f"{EVALUATION_SEED}, tuning seed {TUNING_SEED}, model seed {MODEL_SEED}.",
        f"* Prequential (test-then-train) predictions. **G-mean** = sqrt(TPR x TNR) of all "
        f"predictions; **windows**: mean G-mean over consecutive windows of {args.window:,} "
        f"samples; **after drifts**: G-mean of the {args.after:,} samples that follow each drift "
        "(its centre for gradual drifts), averaged over the three drifts; **replaced**: model "
        "replacements by DriftRetrainingClassifier; **time**: predicting and learning the stream, "
        "one process.",
        f"* l (the forgetting factor of `NRRLS l=tuned`) was chosen on the tuning stream (seed "
        f"{TUNING_SEED}) from {list(FORGETTING_GRID)} by the best prequential G-mean there.",
        f"* ARF: {args.arf_models} trees.",
        "",
    ]
    for stream, rows in summaries.items():
        kind, concepts, pos_rate, _, noise = DRIFT_STREAMS[stream]
        what = "variants" if kind == "sea" else "functions"
        lines += [
            f"## {stream}",
            "",
            f"{kind.upper() if kind == 'sea' else 'Agrawal'} {what} "
            f"{' -> '.join(map(str, concepts))}, {100 * pos_rate:.0f} % positives, drift width "
            f"{drift_width(stream, n):,} samples"
            + (f", {100 * noise:.0f} % label noise" if noise else "")
            + f"; l tuned: {chosen[stream]:g}.",
            "",
            "| Model | G-mean | windows | after drifts | replaced | time (s) | us/sample |",
            "|---|---|---|---|---|---|---|",
        ]
        best = {
            key: max(r[key] for r in rows.values()) for key in ("overall", "windows", "after_drift")
        }
        for model, row in rows.items():
            cells = []
            for key in ("overall", "windows", "after_drift"):
                text = f"{row[key]:.3f}"
                cells.append(f"**{text}**" if row[key] == best[key] else text)
            name = f"NRRLS l={row['forgetting']:g}" if model == "NRRLS l=tuned" else model
            if model == "NRRLS l=tuned":
                name += " (tuned)"
            replaced = str(row["replacements"]) if model in WRAPPED else "-"
            lines.append(
                f"| {name} | "
                + " | ".join(cells)
                + f" | {replaced} | {row['seconds']:.1f} | {row['us_per_sample']:.0f} |"
            )
        lines.append("")
    lines += [
        "## Tuning of l (prequential G-mean on the tuning streams)",
        "",
        "| l | " + " | ".join(summaries) + " |",
        "|---|" + "---|" * len(summaries),
    ]
    for lam in FORGETTING_GRID:
        cells = []
        for stream in summaries:
            text = f"{tuning[stream][lam]:.3f}"
            cells.append(f"**{text}**" if lam == chosen[stream] else text)
        lines.append(f"| {lam:g} | " + " | ".join(cells) + " |")
    lines += ["", "## Summary", ""]
    for stream, rows in summaries.items():
        plain, tuned = rows["NRRLS l=1"], rows["NRRLS l=tuned"]
        best = max(rows, key=lambda m: rows[m]["overall"])
        river_best = max(("LogReg", "HAT", "ARF"), key=lambda m: rows[m]["overall"])
        lines.append(
            f"* {stream}: forgetting (l = {chosen[stream]:g}) against l = 1: G-mean "
            f"{tuned['overall']:.3f} vs {plain['overall']:.3f}, after drifts "
            f"{tuned['after_drift']:.3f} vs {plain['after_drift']:.3f}. Best G-mean: {best} "
            f"({rows[best]['overall']:.3f}); best of river's models: {river_best} "
            f"({rows[river_best]['overall']:.3f})."
        )
    lines += [
        "",
        "NR-RLS weighs its classes by design (TER); river's models are used with their defaults, "
        "without class weights, so the minority class costs them more on these streams.",
        "",
        "![G-mean over time](drift_gmean.png)",
        "",
    ]
    return "\n".join(lines)


def plot(curves: dict, chosen: dict, n: int, args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {
        "NRRLS l=1": ("tab:gray", "-"),
        "NRRLS l=tuned": ("tab:blue", "-"),
        "NRRLS+ADWIN": ("tab:green", "-"),
        "NRRLS+DDM": ("tab:olive", "-"),
        "LogReg": ("tab:purple", "--"),
        "HAT": ("tab:orange", "--"),
        "ARF": ("tab:red", "--"),
    }
    figure, axes = plt.subplots(len(curves), 1, figsize=(11, 3.4 * len(curves)), squeeze=False)
    for ax, (stream, models) in zip(axes[:, 0], curves.items()):
        width = drift_width(stream, n)
        for position in drift_positions(n):
            ax.axvspan(position - width / 2, position + width / 2, color="0.9", zorder=0)
            ax.axvline(position, color="0.6", linestyle=":", zorder=0)
        for model, (label, ends, values) in models.items():
            color, style = styles[model]
            ax.plot(ends, values, color=color, linestyle=style, linewidth=1.2, label=label)
        ax.set_title(
            f"{stream}: G-mean over the last {args.window:,} samples (tuned l = "
            f"{chosen[stream]:g})",
            fontsize=10,
        )
        ax.set_ylim(0, 1.02)
        ax.set_xlim(0, n)
        ax.set_ylabel("G-mean")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("samples (drifts: dotted lines; gradual transitions shaded)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    figure.savefig(path, dpi=90)
    plt.close(figure)


# --------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6,000-sample streams, prints only")
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="samples per stream (default 100,000; 6,000 with --quick)",
    )
    parser.add_argument("--arf-models", type=int, default=10, help="trees of ARF (default 10)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"folder of the results (default: {RESULTS} for a full run; "
        "--quick only prints unless --output is given)",
    )
    args = parser.parse_args(argv)
    n = args.samples or (6_000 if args.quick else 100_000)
    args.window = 500 if args.quick else 2_000
    args.after = 1_000 if args.quick else 5_000
    step = args.window // 4
    args.load = os.getloadavg()
    started = time.perf_counter()

    # 1. Streams, built once (in parallel) and inherited by the workers forked afterwards.
    specs = [(s, n, seed) for s in DRIFT_STREAMS for seed in (EVALUATION_SEED, TUNING_SEED)]
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        built = list(pool.map(build_drift_stream, *zip(*specs)))
    _BUILT.update(zip(specs, built))
    print(f"streams built in {time.perf_counter() - started:.0f} s", flush=True)

    # 2. Tuning runs and the models that need no tuning; the slowest first.
    jobs = [
        (s, n, TUNING_SEED, "NRRLS l=tuned", lam) for s in DRIFT_STREAMS for lam in FORGETTING_GRID
    ]
    jobs += [
        (s, n, EVALUATION_SEED, m, 1.0)
        for s in DRIFT_STREAMS
        for m in MODELS
        if m != "NRRLS l=tuned"
    ]
    jobs.sort(key=lambda job: {"ARF": 0, "HAT": 1}.get(job[3], 2))
    runs = _run_all(jobs, args)
    tuning = {s: {} for s in DRIFT_STREAMS}
    for run in runs:
        if run["seed"] == TUNING_SEED:
            labels = labels_of(run["stream"], n, TUNING_SEED)
            tuning[run["stream"]][run["forgetting"]] = gmean(labels, run["predictions"])
    chosen = {
        s: max(FORGETTING_GRID, key=lambda lam, s=s: (tuning[s][lam], lam)) for s in DRIFT_STREAMS
    }
    print("chosen l: " + ", ".join(f"{s} {lam:g}" for s, lam in chosen.items()), flush=True)

    # 3. The tuned NR-RLS on the evaluation streams.
    runs += _run_all(
        [(s, n, EVALUATION_SEED, "NRRLS l=tuned", chosen[s]) for s in DRIFT_STREAMS], args
    )

    summaries, curves = {}, {}
    for stream in DRIFT_STREAMS:
        labels = labels_of(stream, n, EVALUATION_SEED)
        by_model = {
            r["model"]: r for r in runs if r["stream"] == stream and r["seed"] == EVALUATION_SEED
        }
        summaries[stream] = {
            m: summarise(by_model[m], labels, args.window, args.after) for m in MODELS
        }
        curves[stream] = {}
        for m in MODELS:
            ends, values = rolling_gmean(labels, by_model[m]["predictions"], args.window, step)
            curves[stream][m] = (m, ends, values)
    seconds = time.perf_counter() - started

    command = "python benchmarks/drift.py " + " ".join(argv if argv is not None else sys.argv[1:])
    report = markdown(summaries, tuning, chosen, args, n, seconds, command.strip())
    output = args.output
    if output is None and not args.quick and args.samples is None:
        output = RESULTS
    if output is None:
        print(report)
        return
    print(report)
    write_results(output / "drift.md", report)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    plot(curves, chosen, n, args, output / "drift_gmean.png")
    print(f"wrote {output / 'drift_gmean.png'}")


def _run_all(jobs: list[tuple], args) -> list[dict]:
    runs = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_run_job, job, args.arf_models) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            run = future.result()
            print(
                f"  {run['stream']:<18} seed {run['seed']} {run['model']:<14} "
                f"l={run['forgetting']:<7g} {run['seconds']:6.1f} s",
                flush=True,
            )
            runs.append(run)
    return runs


def _run_job(job: tuple, arf_models: int) -> dict:
    stream, n, seed, model, forgetting = job
    return run_model(stream, n, seed, model, forgetting, arf_models)


if __name__ == "__main__":
    main()
