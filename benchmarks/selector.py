"""PolynomialOrderSelector: its cost against one pipeline, and its drift handling.

Run:  python benchmarks/selector.py           (writes benchmarks/results/selector.md, ~5 min)
      python benchmarks/selector.py --quick   (short streams, prints only)

**Speed.** Per-sample cost (``predict_one`` then ``learn_one``, prequential) of
``PolynomialOrderSelector(orders=(1, ..., 6))`` (one expansion, every order's model and solver
its pipeline's) against the single pipeline ``PolynomialExtender(degree=6) | NRRLS()``, the
order-3 pipeline, the same selector over independent pipelines (one expansion per order and
pipeline: forced here with a subclass of NRRLS, which the selector does not race from one
expansion) and river's ``LogisticRegression`` (the reference measured in the
same run: the machine may be shared). Synthetic imbalanced streams of l = 8, 20 and 36 inputs in
[0, 1] (20 % positives, a nonlinear boundary); the first ``--warmup`` samples are learnt
untimed (the pipelines' stale factor refactors often early in a stream: the timed part is its
steady state), the next ``--samples`` timed, in CPU time (``time.process_time``, one BLAS
thread), the models taking turns every ``--block`` samples (a change in the machine's load
meets them all alike). Both aggregates of the expansion: ``sum`` (the default)
and ``mean``. Order 6 has 6 + 11 l columns (and the intercept): 95 at l = 8, 227 at l = 20, 403
at l = 36; from 112 on the pipeline solves with its stale factor (O(d^2) a step), and so does
the selector for each of its orders that wide (``river_nrrls/_orders.py``).

**Drift.** Prequential G-mean on the drifting imbalanced streams of ``benchmarks/drift.py``
(Agrawal-nonlinear and SEA, three drifts each) of: the selector without drift handling, the
selector with ``forgetting_grid=(1.0, 0.999, 0.99)`` and ``window=2000`` (every order and factor
raced on the last 2000 scored samples), the order-3 pipeline, and ``NRRLS(forgetting=0.999)``
on the inputs. "after drifts" is the G-mean of the 5 % of the stream that follows each drift,
averaged over the drifts.

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    build_drift_stream,
    compact_table,
    drift_positions,
    environment_header,
    gmean,
    timed_pass,
    write_results,
)
from river import linear_model  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector  # noqa: E402

RESULTS = Path(__file__).parent / "results"
WIDTHS = (8, 20, 36)
DRIFT_STREAMS = ("Agrawal-nonlinear", "SEA")
GRID = (1.0, 0.999, 0.99)
WINDOW = 2000


class IndependentNRRLS(NRRLS):
    """NRRLS under another name: the selector keeps one independent pipeline per order for
    any classifier but NRRLS itself, as it did for every classifier before."""


def speed_stream(n_features: int, n_samples: int, seed: int = 0) -> list[tuple[dict, bool]]:
    """[0, 1] inputs, 20 % positives: the top fifth of a smooth nonlinear score."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=n_features) / np.sqrt(n_features)
    X = rng.random((n_samples, n_features))
    score = np.sin(3.0 * X @ direction) + X[:, 0] * X[:, -1] + 0.2 * rng.normal(size=n_samples)
    labels = score > np.quantile(score, 0.8)
    names = [f"x{j:02d}" for j in range(n_features)]
    return [(dict(zip(names, row)), bool(y)) for row, y in zip(X.tolist(), labels.tolist())]


def speed_models(n_features: int, aggregate: str) -> dict:
    extender = (
        PolynomialExtender()
        if aggregate == "sum"
        else PolynomialExtender(aggregate="mean", n_features=n_features)
    )
    orders = (1, 2, 3, 4, 5, 6)
    return {
        "LogisticRegression": linear_model.LogisticRegression(),
        "order-3 pipeline": extender.clone({"degree": 3}) | NRRLS(),
        "order-6 pipeline": extender.clone({"degree": 6}) | NRRLS(),
        "selector (shared)": PolynomialOrderSelector(orders=orders, extender=extender),
        "selector (independent)": PolynomialOrderSelector(
            orders=orders, extender=extender, classifier=IndependentNRRLS()
        ),
    }


def time_models(models: dict, stream: list, warmup: int, block: int) -> dict:
    """Microseconds per sample (predict_one + learn_one) of every model after ``warmup``
    untimed samples, timed in turns: every model learns the next ``block`` samples before the
    next model does (starting with a different model at every block), so that a change in the
    machine's load meets every model alike."""
    for x, y in stream[:warmup]:
        for model in models.values():
            model.predict_one(x)
            model.learn_one(x, y)
    names = list(models)
    spent = dict.fromkeys(names, 0.0)
    timed = stream[warmup:]
    for turn, offset in enumerate(range(0, len(timed), block)):
        chunk = timed[offset : offset + block]
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            spent[name] += timed_pass(models[name], chunk, clock=time.process_time)
    return {name: seconds / len(timed) * 1e6 for name, seconds in spent.items()}


def run_speed(args) -> list[dict]:
    rows = []
    for aggregate in ("mean", "sum"):
        for n_features in WIDTHS:
            # the sum at l >= 20: every solver falls back at every step (slow), fewer samples
            warmup, samples = (args.warmup, args.samples)
            if aggregate == "sum" and n_features > 8:
                warmup, samples = args.warmup // 5, args.samples // 3
            stream = speed_stream(n_features, warmup + samples)
            costs = time_models(speed_models(n_features, aggregate), stream, warmup, args.block)
            row = {"aggregate": aggregate, "l": n_features, "columns": 6 + 11 * n_features + 1}
            row.update(warmup=warmup, samples=samples)
            row.update(costs)
            rows.append(row)
            print(_speed_line(row), flush=True)
    return rows


def _speed_line(row: dict) -> str:
    single = row["order-6 pipeline"]
    return (
        f"| {row['aggregate']} | {row['l']} | {row['columns']} "
        f"| {row['warmup']} + {row['samples']} "
        f"| {row['LogisticRegression']:.0f} | {row['order-3 pipeline']:.0f} | {single:.0f} "
        f"| {row['selector (shared)']:.0f} | {row['selector (independent)']:.0f} "
        f"| **{row['selector (shared)'] / single:.2f}** "
        f"| {row['selector (independent)'] / single:.2f} "
        f"| {row['selector (independent)'] / row['selector (shared)']:.2f} |"
    )


SPEED_HEADER = compact_table(
    [
        "aggregate",
        "l",
        "columns (order 6)",
        "samples (untimed + timed)",
        "LogReg us",
        "order-3 us",
        "order-6 us",
        "selector us",
        "independent us",
        "selector / order-6",
        "independent / order-6",
        "independent / selector",
    ]
)


def drift_models(n_features: int) -> dict:
    extender = PolynomialExtender(aggregate="mean", n_features=n_features)
    return {
        "selector": PolynomialOrderSelector(extender=extender),
        f"selector + grid {GRID} + window {WINDOW}": PolynomialOrderSelector(
            extender=extender, forgetting_grid=GRID, window=WINDOW
        ),
        "order-3 pipeline": extender.clone({"degree": 3}) | NRRLS(),
        "NRRLS(forgetting=0.999) on the inputs": NRRLS(forgetting=0.999),
    }


def run_drift(args) -> dict:
    results = {}
    for name in DRIFT_STREAMS:
        stream = build_drift_stream(name, args.drift_samples, 1)
        labels = np.array([y for _, y in stream])
        n_features = len(stream[0][0])
        after = max(1, args.drift_samples // 20)
        rows = []
        for model_name, model in drift_models(n_features).items():
            predictions = np.zeros(len(stream), dtype=bool)
            start = time.process_time()
            for i, (x, y) in enumerate(stream):
                predictions[i] = model.predict_one(x) is True
                model.learn_one(x, y)
            seconds = time.process_time() - start
            after_drifts = np.mean(
                [
                    gmean(labels[p : p + after], predictions[p : p + after])
                    for p in drift_positions(len(stream))
                ]
            )
            last = drift_positions(len(stream))[-1]
            row = {
                "model": model_name,
                "gmean": gmean(labels, predictions),
                "after": after_drifts,
                "last": gmean(labels[last:], predictions[last:]),
                "us": seconds / len(stream) * 1e6,
                "chosen": _chosen(model),
            }
            rows.append(row)
            print(f"{name}: {_drift_line(row)}", flush=True)
        results[name] = rows
    return results


def _chosen(model) -> str:
    if not isinstance(model, PolynomialOrderSelector):
        return "-"
    if model.forgetting_grid is None:
        return f"r = {model.best_order}"
    return f"r = {model.best_order}, lambda = {model.best_forgetting}"


def _drift_line(row: dict) -> str:
    return (
        f"| {row['model']} | {row['gmean']:.3f} | {row['after']:.3f} | {row['last']:.3f} "
        f"| {row['us']:.0f} | {row['chosen']} |"
    )


DRIFT_HEADER = compact_table(
    ["model", "G-mean", "after drifts", "after the last drift", "us/sample", "chosen at the end"]
)


def markdown(speed: list, drifting: dict, args, seconds: float) -> str:
    load = os.getloadavg()[0]
    lines = [
        "# PolynomialOrderSelector: cost and drift",
        "",
        f"Written by `python benchmarks/selector.py` in {seconds:.0f} CPU seconds "
        f"({environment_header()} "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
        f"1-minute load average {load:.1f} at the end: the machine was shared, so compare the "
        "ratios, measured in the same run, rather than the times). The script's docstring "
        "describes the streams and models. Every time is CPU time (``time.process_time``).",
        "",
        "## Per-sample cost (CPU microseconds per predict_one + learn_one)",
        "",
        SPEED_HEADER,
        *[_speed_line(row) for row in speed],
        "",
        f"## Prequential G-mean on drifting imbalanced streams ({args.drift_samples} samples, "
        "three drifts)",
        "",
    ]
    for name, rows in drifting.items():
        lines += [f"### {name}", "", DRIFT_HEADER, *[_drift_line(row) for row in rows], ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, print only")
    parser.add_argument("--warmup", type=int, default=1500, help="untimed samples")
    parser.add_argument("--samples", type=int, default=600, help="timed samples")
    parser.add_argument("--block", type=int, default=50, help="timed samples per turn")
    parser.add_argument("--drift-samples", type=int, default=20_000)
    args = parser.parse_args(argv)
    if args.quick:
        args.warmup, args.samples, args.drift_samples = 100, 60, 2000
    start = time.process_time()
    print(SPEED_HEADER)
    speed = run_speed(args)
    print(DRIFT_HEADER)
    drifting = run_drift(args)
    text = markdown(speed, drifting, args, time.process_time() - start)
    print(text)
    if not args.quick:
        write_results(RESULTS / "selector.md", text)


if __name__ == "__main__":
    main()
