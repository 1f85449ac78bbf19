"""Speed of NR-RLS against river's LogisticRegression, in one run, as ratios.

Run:  python benchmarks/speed.py            (full, writes benchmarks/results/speed.md)
      python benchmarks/speed.py --quick    (tiny streams, prints only: a smoke test)

BLAS is pinned to one thread (set ``OPENBLAS_NUM_THREADS`` to override). Every figure is the best
of several repeats of a loop over the same synthetic stream (features
uniform in [0, 1], about 30 % positives from a noisy linear concept), in microseconds per sample
unless said otherwise. Ratios compare models measured in this same run on this same machine.
"""

from __future__ import annotations

import os

# One BLAS thread: the matrices are small, and threads only oversubscribe a 2-core machine.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import river
from river import linear_model

from river_nrrls import NRRLS

RESULTS = Path(__file__).parent / "results" / "speed.md"


def make_stream(n: int, d: int, n_classes: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    if n_classes == 2:
        score = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
        y = score > np.quantile(score, 0.7)
        labels = [bool(v) for v in y]
    else:
        labels = [int(v) for v in (X @ rng.normal(size=(d, n_classes))).argmax(axis=1)]
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    return rows, labels


def best_time(run, repeats: int) -> float:
    """Best wall time of ``run()`` over ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _loop(make_model, rows, labels, predict: bool) -> float:
    """Wall seconds of one pass of a fresh model over the stream."""
    model = make_model()
    learn = model.learn_one
    start = time.perf_counter()
    if predict:
        infer = model.predict_one
        for x, y in zip(rows, labels):
            infer(x)
            learn(x, y)
    else:
        for x, y in zip(rows, labels):
            learn(x, y)
    return time.perf_counter() - start


def per_sample_us(make_model, rows, labels, predict: bool, repeats: int) -> float:
    best = min(_loop(make_model, rows, labels, predict) for _ in range(repeats))
    return best / len(rows) * 1e6


def interleaved_us(models: dict, rows, labels, predict: bool, repeats: int) -> dict:
    """Best microseconds per sample of every model, the models taking turns in every repeat.

    Turns keep a slow phase of a shared machine from landing on one model only, so the ratios
    of a run compare like with like.

    """
    best = dict.fromkeys(models, float("inf"))
    for _ in range(repeats):
        for name, (make, cut) in models.items():
            seconds = _loop(make, rows[:cut], labels[:cut], predict)
            best[name] = min(best[name], seconds / cut * 1e6)
    return best


MODELS = {
    "LogisticRegression (river)": linear_model.LogisticRegression,
    "NRRLS cholesky": NRRLS,
    "NRRLS woodbury": lambda: NRRLS(solver="woodbury"),
}


def table(headers, rows) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, rule, *body])


def section_dimensions(dims, n, repeats):
    rows = []
    for d in dims:
        stream, labels = make_stream(n, d)
        models = {
            # Theta(d^3) per sample: the woodbury solver is timed on 1000 samples, up to d = 64.
            name: (make, min(n, 1000) if name.endswith("woodbury") else n)
            for name, make in MODELS.items()
            if not (name.endswith("woodbury") and d > 64)
        }
        learn = interleaved_us(models, stream, labels, False, repeats)
        both = interleaved_us(models, stream, labels, True, repeats)
        base = "LogisticRegression (river)"
        for name in models:
            rows.append(
                [
                    d,
                    name,
                    f"{learn[name]:.2f}",
                    f"{learn[name] / learn[base]:.2f}x",
                    f"{both[name]:.2f}",
                    f"{both[name] / both[base]:.2f}x",
                ]
            )
    headers = ["d", "model", "learn_one (us)", "vs LR", "predict+learn (us)", "vs LR"]
    return table(headers, rows)


def section_growth(dims, n, repeats):
    rows, first = [], None
    for d in dims:
        stream, labels = make_stream(n, d)
        learn = per_sample_us(NRRLS, stream, labels, False, repeats)
        first = first or (d, learn)
        ratio = learn / first[1]
        rows.append(
            [
                d,
                f"{learn:.2f}",
                f"{ratio:.1f}x",
                f"{(d / first[0]) ** 2:.0f}x",
                f"{(d / first[0]) ** 3:.0f}x",
            ]
        )
    headers = ["d", "NRRLS learn_one (us)", "vs first d", "d^2 ratio", "d^3 ratio"]
    return table(headers, rows)


def section_classes(d, n, repeats):
    rows = []
    for n_classes in (2, 20):
        stream, labels = make_stream(n, d, n_classes=n_classes)
        learn = per_sample_us(NRRLS, stream, labels, False, repeats)
        rows.append([n_classes, f"{learn:.2f}"])
    two = float(rows[0][1])
    for row in rows:
        row.append(f"{float(row[1]) / two:.2f}x")
    return table(["classes", "NRRLS learn_one (us)", "vs 2 classes"], rows)


def section_learn_many(d, n, batch, repeats):
    stream, labels = make_stream(n, d)
    X = pd.DataFrame(stream)
    y = pd.Series(labels)
    batches = [(X.iloc[s : s + batch], y.iloc[s : s + batch]) for s in range(0, n, batch)]
    rows = []
    for name, make in (
        ("NRRLS cholesky", NRRLS),
        ("LogisticRegression (river)", linear_model.LogisticRegression),
    ):

        def run(make=make):
            model = make()
            for X_batch, y_batch in batches:
                model.learn_many(X_batch, y_batch)

        seconds = best_time(run, repeats)
        rows.append([name, batch, f"{n / seconds:,.0f}"])
    return table(["model", "batch size", "learn_many samples/s"], rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny streams, no results file")
    args = parser.parse_args(argv)
    quick = args.quick
    n, repeats = (300, 1) if quick else (4000, 5)
    dims = (8, 22) if quick else (8, 22, 64, 128)
    growth = (16, 32) if quick else (128, 256, 512)
    sections = [
        (
            "Per-sample time against river's LogisticRegression",
            section_dimensions(dims, n, repeats),
        ),
        (
            "learn_one time as d grows (expect d^2)",
            section_growth(growth, n // 4 if not quick else n, 3 if not quick else 1),
        ),
        ("learn_one cost and the number of classes (d = 22)", section_classes(22, n, repeats)),
        (
            "learn_many throughput (d = 22)",
            section_learn_many(22, 20 * n if not quick else n, 1000, repeats),
        ),
    ]
    header = (
        f"# NR-RLS speed\n\nCommand: `python benchmarks/speed.py`. Python "
        f"{platform.python_version()}, numpy {np.__version__}, river {river.__version__}, "
        f"{platform.machine()}, {__import__('os').cpu_count()} cores. Best of {repeats} runs; "
        "microseconds per sample; the models take turns within every repeat; ratios within "
        "this run.\n"
    )
    text = header + "".join(f"\n## {title}\n\n{body}\n" for title, body in sections)
    print(text)
    if not quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)
        print(f"written to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
