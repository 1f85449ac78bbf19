"""AutoNRRLS's benchmark: river's trees and the package's models on imbalanced, drifting streams.

Run:  python benchmarks/auto.py            (full run; writes benchmarks/results/auto.md)
      python benchmarks/auto.py --quick    (short streams, prints only)

A full run takes about 10 minutes of one core (``--jobs 2`` runs two models at a time). It runs
before and after ``river_nrrls.AutoNRRLS`` exists: without it, its column is left out.

**Streams** (binary, ``True`` the minority class; every seed fixed):

* ``Agrawal-drift``: river's ``synth.Agrawal`` function 1 (age bands) then function 2 (salary
  bands by age), joined by ``synth.ConceptDriftStream`` at the middle of the generated stream
  (a sigmoid 1/20 of it wide); the features mapped to [0, 1] by the generator's fixed ranges
  (`river_nrrls.datasets.synth.scale_agrawal`); every positive kept with probability 0.2 (a
  seeded ``random.Random``), so the positives' share follows the concept (about 11 % then 19 %).
  ``Agrawal-drift-mild``: the same with every positive kept (the generator's own 39 % then
  53 %): river's trees rebalance nothing, and do well on Agrawal only when the classes are
  not far apart.
* ``Agrawal-nonlinear`` and ``SEA``: the drifting streams of ``benchmarks/drift.py``
  (``_common.build_drift_stream``): Agrawal functions 1 -> 2 -> 5 -> 3 with 15 % positives and
  5000-sample gradual drifts, SEA variants 0 -> 3 -> 2 -> 1 with 10 % positives and 5 % label
  noise; three drifts each, at 1/4, 1/2 and 3/4.
* ``Hyperplane``: river's ``synth.Hyperplane`` (10 features, 2 drifting by 0.001 a sample:
  incremental drift, 5 % label noise), every positive kept with probability 0.2.
* ``Ball-then-box`` (this script's generator): 4 uniform features in [0, 1]; for the first half
  the positives are a ball of radius 0.377 (about 10 % of the cube) whose centre moves from
  (0.35, ...) to (0.65, ...) (a smooth concept drifting incrementally), then abruptly the box
  x0 > 0.7 and x1 < 0.45 (a rule, 13.5 %); 2 % of the labels flipped.
* river's ``datasets.Bananas`` (5,300 samples, 2 features, 45 % positives) and
  ``datasets.Phishing`` (1,250 samples, 9 features, 44 % positives), in their own order.

**Models**, each prequential (predict, then learn, every sample): river's
``HoeffdingAdaptiveTreeClassifier(seed=42)`` and ``ARFClassifier(seed=42)`` (10 trees), and the
package's ``NRRLS()``, ``PolynomialExtender(3) | NRRLS()``, ``PolynomialOrderSelector()``,
``PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99), window=2000)`` (as
``benchmarks/selector.py`` runs it), ``TreePathFeatures() | NRRLS()``,
``TreePathFeatures() | NRRLS(forgetting=0.999)``, the same with a tree that splits sooner
(``HoeffdingTreeClassifier(grace_period=50, delta=1e-5)``) and ``AutoNRRLS()`` when the
package has it.
Scores: the G-mean (sqrt(TPR x TNR)) of all predictions and of the last quarter of the stream
(after the last drift of the drifting streams); CPU microseconds per sample
(``time.process_time``, one BLAS thread).

**Cost**: CPU microseconds per sample (``predict_one`` then ``learn_one``) of
``PolynomialOrderSelector()``, the same with the forgetting grid, ``TreePathFeatures() |
NRRLS()`` and ``AutoNRRLS()`` at l = 8, 20 and 36 inputs, on ``benchmarks/selector.py``'s
streams and with its timing (untimed warm-up, models taking turns every ``--block`` samples;
the selector's default ``sum`` expansion is slow beyond 8 inputs, so there, as in selector.py,
300 + 200 samples).

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import concurrent.futures  # noqa: E402
import itertools  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import typing  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    build_drift_stream,
    compact_table,
    drift_positions,
    environment_header,
    gmean,
    write_results,
)
from river import datasets, forest, linear_model, tree  # noqa: E402
from river.datasets import synth  # noqa: E402
from selector import speed_stream, time_models  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

import river_nrrls  # noqa: E402
from river_nrrls import (  # noqa: E402
    NRRLS,
    PolynomialExtender,
    PolynomialOrderSelector,
    TreePathFeatures,
)
from river_nrrls.datasets.synth import scale_agrawal  # noqa: E402

RESULTS = Path(__file__).parent / "results"
GRID = (1.0, 0.999, 0.99)
WINDOW = 2000
MODEL_SEED = 42
STREAM_SEED = 1
WIDTHS = (8, 20, 36)
KEEP_POSITIVES = 0.2


class Stream(typing.NamedTuple):
    """A benchmark stream: its samples and the sample indices where its drifts are centred."""

    samples: tuple  # ((x, y), ...), y a bool
    drifts: tuple[int, ...]  # () for a stream without abrupt or gradual drifts


# ------------------------------------------------------------------- streams


def thinned(stream: typing.Iterable, keep: float, seed: int) -> typing.Iterator:
    """``(index in stream, x, y)`` of every sample of ``stream`` whose label is negative, and of
    each positive with probability ``keep`` (a seeded ``random.Random``)."""
    rng = random.Random(seed)
    for index, (x, y) in enumerate(stream):
        if not y or rng.random() < keep:
            yield index, x, bool(y)


def agrawal_drift(n: int, seed: int, keep: float) -> Stream:
    generated = int(n / (1 - 0.45 * (1 - keep))) + n // 10  # Agrawal 1 and 2: 45 % positives
    position = generated // 2
    stream = synth.ConceptDriftStream(
        stream=synth.Agrawal(classification_function=1, seed=seed),
        drift_stream=synth.Agrawal(classification_function=2, seed=seed + 1),
        position=position,
        width=generated // 20,
        seed=seed + 2,
    )
    samples, drift = [], 0
    for index, x, y in itertools.islice(thinned(stream, keep, seed + 3), n):
        if index < position:
            drift = len(samples) + 1
        samples.append((scale_agrawal(x), y))
    return Stream(tuple(samples), (drift,))


def hyperplane(n: int, seed: int) -> Stream:
    generator = synth.Hyperplane(
        seed=seed, n_features=10, n_drift_features=2, mag_change=0.001, noise_percentage=0.05
    )
    kept = thinned(generator, KEEP_POSITIVES, seed + 1)
    return Stream(tuple((x, y) for _, x, y in itertools.islice(kept, n)), ())


def ball_then_box(n: int, seed: int, d: int = 4, noise: float = 0.02) -> Stream:
    """The script's own generator (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    half = n // 2
    # the ball's centre moves from 0.35 to 0.65 on every axis over the first half
    centre = 0.35 + 0.3 * np.minimum(np.arange(n) / half, 1.0)[:, None]
    ball = ((X - centre) ** 2).sum(axis=1) <= 0.377**2
    box = (X[:, 0] > 0.7) & (X[:, 1] < 0.45)
    labels = np.where(np.arange(n) < half, ball, box) ^ (rng.random(n) < noise)
    names = [f"x{j}" for j in range(d)]
    samples = tuple((dict(zip(names, row)), bool(y)) for row, y in zip(X.tolist(), labels))
    return Stream(samples, (half,))


def river_dataset(dataset, n: int) -> Stream:
    return Stream(tuple((x, bool(y)) for x, y in itertools.islice(dataset, n)), ())


def drift_stream(name: str, n: int, seed: int) -> Stream:
    return Stream(build_drift_stream(name, n, seed), tuple(drift_positions(n)))


STREAMS: dict[str, typing.Callable[[int], Stream]] = {
    "Agrawal-drift": lambda n: agrawal_drift(n, STREAM_SEED, KEEP_POSITIVES),
    "Agrawal-drift-mild": lambda n: agrawal_drift(n, STREAM_SEED, 1.0),
    "Agrawal-nonlinear": lambda n: drift_stream("Agrawal-nonlinear", n, STREAM_SEED),
    "SEA": lambda n: drift_stream("SEA", n, STREAM_SEED),
    "Hyperplane": lambda n: hyperplane(n, STREAM_SEED),
    "Ball-then-box": lambda n: ball_then_box(n, STREAM_SEED),
    "Bananas": lambda n: river_dataset(datasets.Bananas(), n),
    "Phishing": lambda n: river_dataset(datasets.Phishing(), n),
}

_BUILT: dict[tuple[str, int], Stream] = {}


def get_stream(name: str, n: int) -> Stream:
    if (name, n) not in _BUILT:
        _BUILT[name, n] = STREAMS[name](n)
    return _BUILT[name, n]


# -------------------------------------------------------------------- models


def fast_tree() -> tree.HoeffdingTreeClassifier:
    """A Hoeffding tree that splits sooner than river's defaults (grace 200, delta 1e-7)."""
    return tree.HoeffdingTreeClassifier(grace_period=50, delta=1e-5)


def auto_class():
    """``river_nrrls.AutoNRRLS``, or None before it lands."""
    return getattr(river_nrrls, "AutoNRRLS", None)


MODELS: dict[str, typing.Callable[[], typing.Any]] = {
    "HAT": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=MODEL_SEED),
    "ARF": lambda: forest.ARFClassifier(seed=MODEL_SEED),
    "NRRLS": lambda: NRRLS(),
    "Poly(3) | NRRLS": lambda: PolynomialExtender(3) | NRRLS(),
    "Selector": lambda: PolynomialOrderSelector(),
    "Selector + grid": lambda: PolynomialOrderSelector(forgetting_grid=GRID, window=WINDOW),
    "Paths | NRRLS": lambda: TreePathFeatures() | NRRLS(),
    "Paths | NRRLS(0.999)": lambda: TreePathFeatures() | NRRLS(forgetting=0.999),
    "Paths(g50) | NRRLS": lambda: TreePathFeatures(tree=fast_tree()) | NRRLS(),
    "AutoNRRLS": lambda: auto_class()(),  # type: ignore[misc]
}
TREES = ("HAT", "ARF")

LEGEND = {
    "HAT": "river `tree.HoeffdingAdaptiveTreeClassifier(seed=42)`",
    "ARF": "river `forest.ARFClassifier(seed=42)` (10 trees)",
    "NRRLS": "`NRRLS()`",
    "Poly(3) | NRRLS": "`PolynomialExtender(3) | NRRLS()`",
    "Selector": "`PolynomialOrderSelector()`",
    "Selector + grid": f"`PolynomialOrderSelector(forgetting_grid={GRID}, window={WINDOW})`",
    "Paths | NRRLS": "`TreePathFeatures() | NRRLS()`",
    "Paths | NRRLS(0.999)": "`TreePathFeatures() | NRRLS(forgetting=0.999)`",
    "Paths(g50) | NRRLS": "`TreePathFeatures(tree=HoeffdingTreeClassifier(grace_period=50, "
    "delta=1e-5)) | NRRLS()`",
    "AutoNRRLS": "`AutoNRRLS()`",
}


def model_names() -> list[str]:
    return [name for name in MODELS if name != "AutoNRRLS" or auto_class() is not None]


def run_model(stream_name: str, n: int, model_name: str) -> dict:
    """One prequential pass: every prediction (None -> False) and the CPU time."""
    stream = get_stream(stream_name, n)
    model = MODELS[model_name]()
    predictions = np.zeros(len(stream.samples), dtype=bool)
    started = time.process_time()
    for i, (x, y) in enumerate(stream.samples):
        predictions[i] = model.predict_one(x) is True
        model.learn_one(x, y)
    seconds = time.process_time() - started
    return {"stream": stream_name, "model": model_name, "predictions": predictions, "s": seconds}


def _run_job(job: tuple) -> dict:
    return run_model(*job)


def run_streams(args) -> dict:
    """``{stream: {model: summary}}`` of every stream and model (``--jobs`` processes)."""
    lengths = {name: args.samples for name in STREAMS}
    jobs = [(stream, lengths[stream], model) for stream in STREAMS for model in model_names()]
    jobs.sort(key=lambda job: {"ARF": 0, "HAT": 1}.get(job[2], 2))  # the slowest first
    runs = []
    if args.jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(_run_job, job) for job in jobs]
            for future in concurrent.futures.as_completed(futures):
                runs.append(_progress(future.result()))
    else:
        runs = [_progress(_run_job(job)) for job in jobs]
    results: dict[str, dict] = {stream: {} for stream in STREAMS}
    for run in runs:
        stream = get_stream(run["stream"], lengths[run["stream"]])
        results[run["stream"]][run["model"]] = summarise(stream, run)
    return {stream: {m: results[stream][m] for m in model_names()} for stream in STREAMS}


def _progress(run: dict) -> dict:
    print(f"  {run['stream']:<18} {run['model']:<22} {run['s']:7.1f} s", flush=True)
    return run


def summarise(stream: Stream, run: dict) -> dict:
    labels = np.fromiter((y for _, y in stream.samples), dtype=bool)
    predictions = run["predictions"]
    last = stream.drifts[-1] if stream.drifts else 3 * len(labels) // 4
    last = max(last, 3 * len(labels) // 4)  # the last quarter, after the last drift
    return {
        "gmean": gmean(labels, predictions),
        "last": gmean(labels[last:], predictions[last:]),
        "us": run["s"] / len(labels) * 1e6,
    }


# ---------------------------------------------------------------------- cost


def cost_models() -> dict:
    models = {
        "LogisticRegression": linear_model.LogisticRegression(),
        "Selector": PolynomialOrderSelector(),
        "Selector + grid": PolynomialOrderSelector(forgetting_grid=GRID),
        "Paths | NRRLS": TreePathFeatures() | NRRLS(),
    }
    if auto_class() is not None:
        models["AutoNRRLS"] = auto_class()()
    return models


def run_cost(args) -> list[dict]:
    rows = []
    for n_features in WIDTHS:
        warmup, samples = args.warmup, args.timed
        if n_features > 8:  # the default sum expansion falls back at every step there
            warmup, samples = args.warmup // 5, args.timed // 3
        stream = speed_stream(n_features, warmup + samples)
        costs = time_models(cost_models(), stream, warmup, args.block)
        rows.append({"l": n_features, "warmup": warmup, "samples": samples, **costs})
        print(_cost_line(rows[-1]), flush=True)
    return rows


def _cost_line(row: dict) -> str:
    cells = [str(row["l"]), f"{row['warmup']} + {row['samples']}"]
    cells += [f"{row[name]:.0f}" for name in cost_models()]
    if "AutoNRRLS" in row:
        cells.append(f"**{row['AutoNRRLS'] / row['Selector']:.2f}**")
    return "| " + " | ".join(cells) + " |"


def cost_header() -> str:
    names = list(cost_models())
    headers = ["l", "samples (untimed + timed)", *(f"{name} us" for name in names)]
    if "AutoNRRLS" in names:
        headers.append("AutoNRRLS / Selector")
    return compact_table(headers)


# ------------------------------------------------------------------- reports


def _score_table(results: dict, key: str, digits: str, best=max) -> list[str]:
    names = model_names()
    lines = [compact_table(["stream", *names])]
    for stream, rows in results.items():
        top = best(rows[m][key] for m in names)
        cells = [
            f"**{rows[m][key]:{digits}}**" if rows[m][key] == top else f"{rows[m][key]:{digits}}"
            for m in names
        ]
        lines.append("| " + " | ".join([stream, *cells]) + " |")
    return lines


def _median_row(results: dict) -> str:
    names = model_names()
    medians = [statistics.median(rows[m]["us"] for rows in results.values()) for m in names]
    return "| " + " | ".join(["median", *(f"{v:.0f}" for v in medians)]) + " |"


def _summary(results: dict) -> list[str]:
    lines = []
    for stream, rows in results.items():
        ours = [m for m in rows if m not in TREES]
        best_tree = max(TREES, key=lambda m: rows[m]["gmean"])
        best_ours = max(ours, key=lambda m: rows[m]["gmean"])
        text = (
            f"* {stream}: trees HAT {rows['HAT']['gmean']:.3f}, ARF {rows['ARF']['gmean']:.3f}; "
            f"the package's best {best_ours} {rows[best_ours]['gmean']:.3f}"
        )
        others = [m for m in ours if m != "AutoNRRLS"]
        if "AutoNRRLS" in rows:
            best_other = max(others, key=lambda m: rows[m]["gmean"])
            gap = rows["AutoNRRLS"]["gmean"] - rows[best_other]["gmean"]
            text += (
                f"; AutoNRRLS {rows['AutoNRRLS']['gmean']:.3f} ({gap:+.3f} against {best_other}, "
                f"{rows['AutoNRRLS']['gmean'] - rows[best_tree]['gmean']:+.3f} against "
                f"{best_tree})"
            )
        lines.append(text + ".")
    return lines


def describe(n: int) -> list[str]:
    rows = []
    for name in STREAMS:
        stream = get_stream(name, n)
        labels = [y for _, y in stream.samples]
        drifts = ", ".join(f"{d:,}" for d in stream.drifts) or "-"
        rows.append(
            [
                name,
                f"{len(labels):,}",
                str(len(stream.samples[0][0])),
                f"{100 * sum(labels) / len(labels):.1f} %",
                drifts,
            ]
        )
    return [compact_table(["stream", "samples", "features", "positives", "drifts at"], rows)]


def markdown(results: dict, cost: list, args, seconds: float, command: str) -> str:
    auto = "present" if auto_class() is not None else "absent (its column left out)"
    lines = [
        "# AutoNRRLS: river's trees and the package's models on imbalanced, drifting streams",
        "",
        f"Written by `{command}` in {seconds:.0f} s wall-clock ({environment_header()} "
        f"{args.jobs} process{'es' if args.jobs > 1 else ''}, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}; 1-minute load average {args.load:.1f} at "
        f"the start and {os.getloadavg()[0]:.1f} at the end). **Measured on a shared machine** "
        "(two cores, other jobs running): the times are CPU time but still noisy; compare the "
        "models measured in the same run. `river_nrrls.AutoNRRLS`: "
        f"{auto}. The script's docstring describes the streams and models.",
        "",
        "Models: " + "; ".join(f"**{m}**: {LEGEND[m]}" for m in model_names()) + ".",
        "",
        "## Streams",
        "",
        *describe(args.samples),
        "",
        "## Prequential G-mean (all predictions)",
        "",
        *_score_table(results, "gmean", ".3f"),
        "",
        "## G-mean of the last quarter (after the last drift)",
        "",
        *_score_table(results, "last", ".3f"),
        "",
        "## CPU microseconds per sample (predict_one + learn_one)",
        "",
        *_score_table(results, "us", ".0f", best=min),
        _median_row(results),
        "",
        "## Per-sample cost against the selector (benchmarks/selector.py's streams)",
        "",
        cost_header(),
        *[_cost_line(row) for row in cost],
        "",
        "## Summary: trees against the package's models (G-mean)",
        "",
        *_summary(results),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, prints only")
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="samples per stream (default 20,000, 1,500 with --quick; Bananas and Phishing "
        "have 5,300 and 1,250)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--warmup", type=int, default=1500, help="cost: untimed samples")
    parser.add_argument("--timed", type=int, default=600, help="cost: timed samples")
    parser.add_argument("--block", type=int, default=50, help="cost: timed samples per turn")
    parser.add_argument("--no-cost", action="store_true", help="skip the cost table")
    args = parser.parse_args(argv)
    full = not args.quick and args.samples is None and not args.no_cost  # writes the results
    args.samples = args.samples or (1_500 if args.quick else 20_000)
    if args.quick:
        args.warmup, args.timed = 100, 60
    args.load = os.getloadavg()[0]
    started = time.perf_counter()
    for name in STREAMS:  # built once, inherited by the workers forked afterwards
        get_stream(name, args.samples)
    print("\n".join(describe(args.samples)), flush=True)
    results = run_streams(args)
    cost = []
    if not args.no_cost:
        print(cost_header(), flush=True)
        cost = run_cost(args)
    command = "python benchmarks/auto.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = markdown(results, cost, args, time.perf_counter() - started, command.strip())
    print(text)
    if full:
        write_results(RESULTS / "auto.md", text)


if __name__ == "__main__":
    main()
