"""Speed of prequential NR-RLS against river's linear classifiers, in one run, as ratios.

Run:  python benchmarks/speed.py            (full: writes benchmarks/results/speed.md and .png)
      python benchmarks/speed.py --quick    (tiny streams, prints only: a smoke test)
      python benchmarks/speed.py --widths 22,64,256,512
                                            (only the predict + learn table at those widths,
                                            full streams, prints only: a short run to repeat)
      python benchmarks/speed.py --busy --widths 64,256,512
                                            (the same table on a quiet machine and beside one
                                            busy process, one BLAS thread against the default
                                            threading: writes benchmarks/results/
                                            speed_threads.md and .json)

Every figure is measured twice, in two worker processes: with one BLAS thread
(``OPENBLAS_NUM_THREADS=1`` and friends) and with the default threading. Within a worker the
models take turns in every repeat (a slow phase of a shared machine then hits them all) and the
best repeat counts. Streams are imbalanced (10 % positives, a noisy linear concept on uniform
features), in river's dict form, and every step is ``predict_one`` then ``learn_one`` (what
``evaluate.progressive_val_score`` does) unless said otherwise. Models first learn a warm-up
prefix (not timed), so the timed steps see a model that has seen more samples than it has
columns, as on a real stream.

"NRRLS" is the default model (the solver strategy picks the direct Cholesky path below
``STALE_MIN_DIM`` columns and the stale-factor conjugate gradients above); "NRRLS direct" is the
same model forced onto the direct path (one Cholesky solve per step), the pre-issue-10 method.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    THREAD_VARIABLES,
    environment_header,
    force_direct,
    interleaved,
    make_stream,
    solver_counters,
    table,
    uniform_classes_stream,
    write_results,
)

RESULTS = Path(__file__).parent / "results" / "speed.md"
THREAD_RESULTS = Path(__file__).parent / "results" / "speed_threads.md"
FIGURE = Path(__file__).parent / "results" / "speed.png"
#: Upper bound on the life of the busy process of ``--busy`` (it is stopped when the run ends).
BUSY_SECONDS = 1800
#: The busy process: a pure-Python loop on one core until its deadline.
_BUSY_LOOP = (
    "import sys, time\n"
    "deadline = time.monotonic() + float(sys.argv[1])\n"
    "while time.monotonic() < deadline:\n"
    "    sum(range(1000))\n"
)


# ----------------------------------------------------------------------------- streams


def one_hot_stream(n: int, n_features: int, k: int = 20, seed: int = 0):
    """k categorical variables with n_features / k levels each, one-hot (river's OneHotEncoder
    output): k non-zeros out of n_features."""
    import numpy as np

    rng = np.random.default_rng(seed)
    levels = n_features // k
    codes = rng.integers(levels, size=(n, k))
    rows = [{f"c{j}_{code}": 1.0 for j, code in enumerate(row)} for row in codes]
    labels = [bool(v) for v in (codes[:, 0] < levels // 10) | (rng.random(n) < 0.02)]
    return rows, labels


# ----------------------------------------------------------------------------- timing


def _nrrls(direct: bool = False, **params):
    from river_nrrls import NRRLS

    def make():
        model = NRRLS(**params)
        return force_direct(model) if direct else model

    return make


def _river_models() -> dict:
    from river import linear_model

    return {
        "LogisticRegression": linear_model.LogisticRegression,
        "ALMA": linear_model.ALMAClassifier,
        "PA": linear_model.PAClassifier,
    }


def _stale_stats(model, steps: int) -> dict:
    counters = solver_counters(model)
    return {
        "cg_iterations_per_step": counters["iterations"] / max(1, counters["stale"]),
        "refactors_per_step": counters["refactor"] / steps,
        "stale_share": counters["stale"] / steps,
    }


def section_width(dims, quick: bool, repeats: int) -> list:
    results = []
    for d in dims:
        n_timed = 100 if quick else (400 if d <= 256 else 300)
        n_warm = 50 if quick else max(1000, 2 * d)
        rows, labels = make_stream(n_warm + n_timed, d, seed=d)
        warm = (rows[:n_warm], labels[:n_warm])
        timed = (rows[n_warm:], labels[n_warm:])
        models = {"NRRLS": _nrrls(), "NRRLS direct": _nrrls(direct=True), **_river_models()}
        # Cheap widths get more repeats: spread over more seconds, a slow phase of the shared
        # machine is less likely to cover all of them.
        best = interleaved(models, warm, timed, True, repeats * (5 if d <= 128 else 1))
        entry = {"d": d, "us": {name: us for name, (us, _) in best.items()}}
        entry.update(_stale_stats(best["NRRLS"][1], n_timed))
        results.append(entry)
        print(f"  d={d}: " + ", ".join(f"{k} {v:.1f}" for k, v in entry["us"].items()), flush=True)
    return results


def section_sparse(quick: bool, repeats: int) -> dict:
    from river import linear_model

    from river_nrrls import NRRLS

    out = {}
    n = 300 if quick else 3000
    for n_features in (200, 5000):
        rows, labels = one_hot_stream(2 * n, n_features, seed=n_features)
        warm, timed = (rows[:n], labels[:n]), (rows[n:], labels[n:])
        models = {"NRRLS": NRRLS, "LogisticRegression": linear_model.LogisticRegression}
        best = interleaved(models, warm, timed, False, repeats * 5)  # cheap: see section_width
        out[n_features] = {name: us for name, (us, _) in best.items()}
    n_emerging = 500 if quick else 5000
    model = NRRLS()
    start = time.perf_counter()
    for i in range(n_emerging):  # one new feature per sample (and one seen before)
        model.learn_one({f"f{i}": 1.0, f"f{i // 2}": 0.5}, i % 10 == 0)
    out["emerging_seconds"] = time.perf_counter() - start
    out["emerging_features"] = n_emerging
    return out


def section_classes(quick: bool, repeats: int) -> list:
    out = []
    for n_classes in (2, 20, 100) if quick else (2, 20, 100, 500):
        n_timed = 50 if quick else (300 if n_classes <= 20 else 100)
        rows, labels = uniform_classes_stream(2000 + n_timed, 20, n_classes, n_classes, n_classes)
        warm, timed = (rows[:2000], labels[:2000]), (rows[2000:], labels[2000:])
        from river import linear_model, multiclass

        models = {
            "NRRLS": _nrrls(),
            "OneVsRest(LogisticRegression)": lambda: multiclass.OneVsRestClassifier(
                linear_model.LogisticRegression()
            ),
        }
        best = interleaved(models, warm, timed, True, repeats * (3 if n_classes <= 20 else 1))
        seen = len(set(labels[:2000]))
        out.append({"classes": seen, "us": {name: us for name, (us, _) in best.items()}})
    return out


def section_five_classes(quick: bool, repeats: int) -> list:
    """Five classes (uniform random labels: reweighted multiclass, one system per class) at the
    issue's widths, against river's multiclass linear models: OneVsRest(LogisticRegression),
    five LRs, the counterpart of the two-class LR, and SoftmaxRegression."""
    from river import linear_model, multiclass

    out = []
    for d in (22,) if quick else (22, 128):
        n_warm, n_timed = max(1000, 2 * d), 100 if quick else 300
        rows, labels = uniform_classes_stream(n_warm + n_timed, d, 5, 5, 5)
        warm, timed = (rows[:n_warm], labels[:n_warm]), (rows[n_warm:], labels[n_warm:])
        models = {
            "NRRLS": _nrrls(),
            "OneVsRest(LogisticRegression)": lambda: multiclass.OneVsRestClassifier(
                linear_model.LogisticRegression()
            ),
            "SoftmaxRegression": linear_model.SoftmaxRegression,
        }
        best = interleaved(models, warm, timed, True, repeats * 3)
        entry = {"d": d, "classes": 5, "warm": n_warm, "timed": n_timed}
        entry["us"] = {name: us for name, (us, _) in best.items()}
        entry.update(_stale_stats(best["NRRLS"][1], n_timed))
        out.append(entry)
        print(f"  5 classes at d={d}: {entry['us']}", flush=True)
    return out


def section_wide_classes(quick: bool, repeats: int) -> list:
    """Reweighted multiclass at a width where every class's system has its own stale factor,
    against the direct solve of all C systems and river's one-vs-rest LR."""
    from river import linear_model, multiclass

    d = 130 if quick else 256  # beyond COMPILED_CLASS_STALE_MIN_DIM (120)
    n_warm, n_timed = (300, 30) if quick else (1500, 150)
    out = []
    for n_classes in (3,) if quick else (3, 5, 10):
        rows, labels = uniform_classes_stream(n_warm + n_timed, d, n_classes, n_classes, n_classes)
        warm, timed = (rows[:n_warm], labels[:n_warm]), (rows[n_warm:], labels[n_warm:])
        models = {
            "NRRLS": _nrrls(),
            "NRRLS direct": _nrrls(direct=True),
            "OneVsRest(LogisticRegression)": lambda: multiclass.OneVsRestClassifier(
                linear_model.LogisticRegression()
            ),
        }
        best = interleaved(models, warm, timed, True, repeats)
        entry = {"d": d, "classes": n_classes, "warm": n_warm, "timed": n_timed}
        entry["us"] = {name: us for name, (us, _) in best.items()}
        entry.update(_stale_stats(best["NRRLS"][1], n_timed))
        out.append(entry)
        print(f"  {n_classes} classes at d={d}: {entry['us']}", flush=True)
    return out


def section_polynomial(quick: bool, repeats: int) -> dict:
    from river import linear_model, preprocessing, stream

    from river_nrrls import NRRLS, PolynomialExtender, datasets

    # The file is sorted by class: a seeded shuffle, as the data set's docstring advises.
    dataset = datasets.Spambase()
    samples = list(stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42))
    split, end = (150, 300) if quick else (1500, 2000)  # warm-up, then timed steps
    warm = ([x for x, _ in samples[:split]], [y for _, y in samples[:split]])
    timed = ([x for x, _ in samples[split:end]], [y for _, y in samples[split:end]])

    def pipeline(make):
        return lambda: PolynomialExtender(3) | make()

    models = {
        "PolynomialExtender(3) | NRRLS": pipeline(NRRLS),
        "PolynomialExtender(3) | NRRLS direct": pipeline(_nrrls(direct=True)),
        "PolynomialExtender(3) | StandardScaler | LogisticRegression": pipeline(
            lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression()
        ),
    }
    best = interleaved(models, warm, timed, True, repeats)
    d = PolynomialExtender(3).transform_one(samples[0][0])
    auto = best["PolynomialExtender(3) | NRRLS"][1]
    stats = _stale_stats(list(auto.steps.values())[-1], len(timed[0]))
    return {
        "dataset": "Spambase",
        "d": len(d) + 1,
        "timed_steps": len(timed[0]),
        "us": {name: us for name, (us, _) in best.items()},
        **stats,
    }


def worker(quick: bool, widths: tuple[int, ...] | None = None) -> dict:
    import platform

    import numpy as np
    import river

    repeats = 1 if quick else 5
    dims = (22, 64) if quick else (22, 64, 128, 256, 512, 1024)
    print(f"threads={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}", flush=True)
    if widths is not None:  # the width table alone
        return {"repeats": repeats, "width": section_width(widths, quick, repeats)}
    return {
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "river": river.__version__,
        },
        "repeats": repeats,
        "width": section_width(dims, quick, repeats),
        "sparse": section_sparse(quick, repeats),
        "classes": section_classes(quick, repeats),
        "five_classes": section_five_classes(quick, repeats),
        "wide_classes": section_wide_classes(quick, repeats),
        "polynomial": section_polynomial(quick, repeats),
    }


# ----------------------------------------------------------------------------- report


def width_report(runs: dict) -> str:
    """The predict + learn step at each width, both thread settings, as ratios to river's LR."""
    rows = []
    for setting, data in runs.items():
        for entry in data["width"]:
            us = entry["us"]
            lr = us["LogisticRegression"]
            rows.append(
                [setting, entry["d"], f"{us['NRRLS']:.1f}", f"{lr:.1f}", f"{us['NRRLS'] / lr:.2f}x"]
                + [f"{us[name] / lr:.2f}x" for name in ("NRRLS direct", "ALMA", "PA")]
            )
    headers = ["BLAS", "d", "NRRLS (us)", "LR (us)", "NRRLS / LR", "direct / LR"]
    return table(headers + ["ALMA / LR", "PA / LR"], rows)


def report(runs: dict) -> str:
    parts = []
    for setting, data in runs.items():
        lr = "LogisticRegression"
        rows = []
        for entry in data["width"]:
            us = entry["us"]
            rows.append(
                [
                    entry["d"],
                    f"{us['NRRLS']:.1f}",
                    f"{us['NRRLS direct']:.1f}",
                    f"{us[lr]:.1f}",
                    f"{us['ALMA']:.1f}",
                    f"{us['PA']:.1f}",
                    f"{us['NRRLS'] / us[lr]:.2f}x",
                    f"{us['NRRLS direct'] / us['NRRLS']:.2f}x",
                    f"{entry['cg_iterations_per_step']:.2f}" if entry["stale_share"] else "-",
                    f"{entry['refactors_per_step']:.3f}" if entry["stale_share"] else "-",
                ]
            )
        parts.append(
            f"## Predict + learn per step, {setting}\n\n"
            + table(
                [
                    "d",
                    "NRRLS (us)",
                    "NRRLS direct (us)",
                    "LogisticRegression (us)",
                    "ALMA (us)",
                    "PA (us)",
                    "NRRLS / LR",
                    "direct / NRRLS",
                    "CG iterations / step",
                    "refactors / step",
                ],
                rows,
            )
        )
        sparse = data["sparse"]
        rows = [
            [
                n_features,
                f"{sparse[key]['NRRLS']:.1f}",
                f"{sparse[key]['LogisticRegression']:.1f}",
                f"{sparse[key]['NRRLS'] / sparse['200']['NRRLS']:.2f}x",
            ]
            for n_features, key in ((200, "200"), (5000, "5000"))
        ]
        parts.append(
            f"## Sparse learn_one (one-hot, k = 20 non-zeros), {setting}\n\n"
            + table(["D", "NRRLS learn_one (us)", "LR learn_one (us)", "NRRLS vs D = 200"], rows)
            + f"\n\n{sparse['emerging_features']:,} emerging features, one new feature per "
            f"sample (learn_one only): {sparse['emerging_seconds']:.2f} s."
        )
        rows = [
            [
                entry["classes"],
                f"{entry['us']['NRRLS']:.1f}",
                f"{entry['us']['OneVsRest(LogisticRegression)']:.1f}",
            ]
            for entry in data["classes"]
        ]
        parts.append(
            f"## Many classes (d = 20, predict + learn), {setting}\n\n"
            + table(["classes", "NRRLS (us)", "OneVsRest(LogisticRegression) (us)"], rows)
        )
        ovr = "OneVsRest(LogisticRegression)"
        binary = {entry["d"]: entry["us"] for entry in data["width"]}
        rows = []
        for entry in data["five_classes"]:
            us, d = entry["us"], entry["d"]
            two = binary.get(d)
            rows.append(
                [
                    d,
                    f"{us['NRRLS']:.1f}",
                    f"{us[ovr]:.1f}",
                    f"{us['SoftmaxRegression']:.1f}",
                    f"**{us['NRRLS'] / us[ovr]:.2f}x**",
                    f"{us['NRRLS'] / us['SoftmaxRegression']:.2f}x",
                    "-" if two is None else f"{two['NRRLS'] / two[lr]:.2f}x",
                ]
            )
        parts.append(
            f"## Five classes (predict + learn), {setting}\n\n"
            + table(
                [
                    "d",
                    "NRRLS (us)",
                    f"{ovr} (us)",
                    "SoftmaxRegression (us)",
                    "NRRLS / OvR(LR)",
                    "NRRLS / Softmax",
                    "two classes: NRRLS / LR (above)",
                ],
                rows,
            )
            + "\n\nUniform random labels: every class has its own TER system (reweighted "
            "multiclass), solved directly at d = 22 and with a stale factor per class at "
            "d = 128. OneVsRest(LogisticRegression) runs five LRs, the five-class "
            "counterpart of the two-class LR; warm-up max(1000, 2d) samples, "
            f"{data['five_classes'][0]['timed']} timed steps."
        )
        wide = data["wide_classes"][0]
        rows = [
            [
                entry["classes"],
                f"{entry['us']['NRRLS']:,.0f}",
                f"{entry['us']['NRRLS direct']:,.0f}",
                f"{entry['us'][ovr]:,.0f}",
                f"{entry['us']['NRRLS'] / entry['us'][ovr]:.2f}x",
                f"{entry['us']['NRRLS direct'] / entry['us']['NRRLS']:.1f}x",
                f"{entry['cg_iterations_per_step']:.2f}",
                f"{entry['refactors_per_step']:.3f}",
            ]
            for entry in data["wide_classes"]
        ]
        parts.append(
            f"## Reweighted multiclass at d = {wide['d']} (a stale factor "
            f"per class; predict + learn), {setting}\n\n"
            + table(
                [
                    "classes",
                    "NRRLS (us)",
                    "NRRLS direct (us)",
                    f"{ovr} (us)",
                    "NRRLS / OvR",
                    "direct / NRRLS",
                    "CG iterations / class solve",
                    "factorisations / step (all classes)",
                ],
                rows,
            )
            + f"\n\nUniform random labels (every class present), {wide['warm']:,} warm-up "
            f"samples, {wide['timed']} timed steps."
        )
        poly = data["polynomial"]
        base = poly["us"]["PolynomialExtender(3) | StandardScaler | LogisticRegression"]
        rows = [[name, f"{us:.1f}", f"{us / base:.2f}x"] for name, us in poly["us"].items()]
        parts.append(
            f"## PolynomialExtender(3) on {poly['dataset']} (d = {poly['d']}, shuffled with seed "
            f"42, {poly['timed_steps']} timed predict + learn steps after 1,500 warm-up samples), "
            f"{setting}\n\n"
            + table(["pipeline", "us / step", "vs LR pipeline"], rows)
            + f"\n\nNRRLS: {poly['cg_iterations_per_step']:.2f} CG iterations per stale step, "
            f"{poly['refactors_per_step']:.3f} refactorisations per step, "
            f"{100 * poly['stale_share']:.0f} % of the steps on the stale factor."
        )
    return "\n\n".join(parts) + "\n"


def plot(runs: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.5), sharey=True)
    for ax, (setting, data) in zip(axes, runs.items()):
        dims = [entry["d"] for entry in data["width"]]
        for name, style in (
            ("NRRLS", "o-"),
            ("NRRLS direct", "o--"),
            ("LogisticRegression", "s-"),
            ("ALMA", "^-"),
            ("PA", "v-"),
        ):
            ax.plot(dims, [entry["us"][name] for entry in data["width"]], style, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("d (features)")
        ax.set_title(setting)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("predict_one + learn_one (us / sample)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def run_workers(widths: str | None, quick: bool) -> dict:
    """The worker's results with one BLAS thread and with the default threading, by setting."""
    runs = {}
    for setting, threads in (("one BLAS thread", "1"), ("default BLAS threading", None)):
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
        if threads is not None:
            env.update(dict.fromkeys(THREAD_VARIABLES, threads))
        command = [sys.executable, __file__, "--worker"] + (["--quick"] if quick else [])
        command += ["--widths", widths] if widths else []
        output = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        print(output.stdout.rsplit("RESULT ", 1)[0], end="", file=sys.stderr)
        runs[setting] = json.loads(output.stdout.rsplit("RESULT ", 1)[1])
    return runs


def run_beside_busy(widths: str, quick: bool) -> dict:
    """`run_workers` while one busy process (`_BUSY_LOOP`, at most `BUSY_SECONDS`) runs."""
    busy = subprocess.Popen([sys.executable, "-c", _BUSY_LOOP, str(BUSY_SECONDS)])
    try:
        return run_workers(widths, quick)
    finally:
        busy.terminate()
        busy.wait()


def threads_report(machines: dict) -> str:
    """NRRLS at each width: one BLAS thread against the default threading, quiet and busy."""
    rows = []
    for machine, runs in machines.items():
        one, default = runs["one BLAS thread"]["width"], runs["default BLAS threading"]["width"]
        for single, threaded in zip(one, default):
            us_1, us_d = single["us"]["NRRLS"], threaded["us"]["NRRLS"]
            lr_1 = single["us"]["LogisticRegression"]
            lr_d = threaded["us"]["LogisticRegression"]
            rows.append(
                [machine, single["d"], f"{us_1:.1f}", f"{us_d:.1f}", f"{us_d / us_1:.2f}x"]
                + [f"{us_1 / lr_1:.2f}x", f"{us_d / lr_d:.2f}x"]
            )
    headers = ["machine", "d", "one thread (us)", "default (us)", "default / one"]
    return table(headers + ["NRRLS / LR, one", "NRRLS / LR, default"], rows)


def busy_main(widths: str, quick: bool) -> int:
    """The --busy run: the width table quiet, then beside one busy process; writes
    `THREAD_RESULTS` (and its .json) unless ``quick``."""
    machines = {"quiet": run_workers(widths, quick), "busy": run_beside_busy(widths, quick)}
    text = (
        "# NR-RLS speed: BLAS threads, quiet and beside one busy process\n\n"
        f"Command: `python benchmarks/speed.py --busy --widths {widths}`. NRRLS's predict + "
        "learn step (the width table of speed.md, best of its repeats), in a worker process "
        "with one BLAS thread and in one with the default threading; first alone ('quiet'), "
        "then beside a second process spinning a pure-Python loop ('busy', started and "
        "stopped by the script). The machine was shared with other jobs: ratios "
        f"within a run are the figures to read. {environment_header()}\n\n"
        + threads_report(machines)
        + "\n"
    )
    print(text)
    if not quick:
        write_results(THREAD_RESULTS, text)
        write_results(THREAD_RESULTS.with_suffix(".json"), json.dumps(machines, indent=1))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny streams, no results file")
    parser.add_argument(
        "--widths",
        help="comma-separated widths: only the predict + learn table there (no results file)",
    )
    parser.add_argument(
        "--busy",
        action="store_true",
        help="with --widths: quiet and beside one busy process, one thread against default",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    widths = tuple(int(d) for d in args.widths.split(",")) if args.widths else None
    if args.worker:
        print("RESULT " + json.dumps(worker(args.quick, widths)))
        return 0
    if args.busy:
        if widths is None:
            parser.error("--busy needs --widths")
        return busy_main(args.widths, args.quick)
    runs = run_workers(args.widths, args.quick)
    if widths is not None:
        print(width_report(runs))
        return 0
    header = (
        "# NR-RLS speed\n\nCommand: `python benchmarks/speed.py` (2 to 10 minutes). "
        f"{environment_header()} The machine was shared with other jobs: ratios within "
        f"a run are the figures to read. Best of {next(iter(runs.values()))['repeats']} "
        "repeats (five times as many for d <= 128 and sparse learning, three times for up to "
        "20 classes: cheap sections are spread over more time), models taking turns; "
        "microseconds per sample. Every step is predict_one then learn_one unless said "
        "otherwise; 10 % positives; models warmed up (untimed) on "
        "max(1000, 2d) samples first. `NRRLS direct` is the same model forced onto one "
        "Cholesky solve per step (the method before the stale-factor solver).\n\n"
        "![us per sample against d](speed.png)\n\n"
    )
    text = header + report(runs)
    print(text)
    if not args.quick:
        write_results(RESULTS, text)
        write_results(RESULTS.with_suffix(".json"), json.dumps(runs, indent=1))
        plot(runs, FIGURE)
        print(f"written to {FIGURE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
