"""Where NR-RLS's time goes: the narrow step's parts, the threading of the rank-1 update, the
stale factor's drift threshold and precision, and the width from which classes get factors.

Run:  python benchmarks/overhead.py            (seconds; writes benchmarks/results/overhead.md)
      python benchmarks/overhead.py --quick    (fewer repeats, prints only: a smoke test)

Three measurements behind the cost model of the speed guide, with the default BLAS threading
of the process (one thread is forced where said, with threadpoolctl's ``threadpool_limits(1)``;
in 2, with the context the solver itself uses, ``river_nrrls._threads.one_blas_thread``):

1. The parts of a two-class step at d = 22 (one BLAS thread): a whole solve of the weights,
   the LAPACK call at its heart alone, ``predict_one`` including that solve, ``learn_one``, and
   river's ``LogisticRegression`` step (predict_one then learn_one) on the same stream.
2. The rank-1 update of ``learn_one`` (OpenBLAS ``dsyr``) with the default threading against
   the same update inside the one-thread context the solves use (its setter calls included).
3. The stale factor's drift threshold (``MAX_DRIFT``) at d = 512, one BLAS thread: time per
   prequential step, CG iterations per stale step and factorisations, for thresholds around
   the default. Each threshold times a copy of the same warmed model on the same steps.
4. P^-1 in double or single precision, one BLAS thread: its two kernels (applying it, with
   the conversions of the vector in and out of single precision; the Sherman-Morrison update)
   across the widths around ``SINGLE_MIN_DIM``, and whole prequential steps with single
   precision allowed (the default) or not, taking turns as in 3.
5. Reweighted multiclass, one BLAS thread: a stale factor per class against the batched
   direct solve of the C systems, prequential steps by width around ``CLASS_STALE_MIN_DIM``
   (uniform random labels, 2,000 warm-up samples), taking turns as in 3.

Best of several repeats, microseconds; the machine is shared, so read the comparisons within
a table.
"""

from __future__ import annotations

import argparse
import copy
import platform
import sys
import time
import timeit
from pathlib import Path

from speed import make_stream, table, uniform_classes_stream
from threadpoolctl import threadpool_limits

RESULTS = Path(__file__).parent / "results" / "overhead.md"


REPEATS = 7  # timeit repeats (--quick: 2)
_PRECISIONS = {"f": "single", "d": "double"}  # P^-1's dtype character


def _best_us(call, number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=REPEATS)) / number * 1e6


def _warmed(d: int, n_warm: int, seed: int):
    from river_nrrls import NRRLS

    rows, labels = make_stream(n_warm + 600, d, seed=seed)
    model = NRRLS()
    for x, y in zip(rows[:n_warm], labels[:n_warm]):
        model.learn_one(x, y)
    return model, rows[n_warm:], labels[n_warm:]


def narrow_step() -> list:
    import numpy as np
    from river import linear_model
    from scipy.linalg import lapack

    from river_nrrls._systems import system

    model, rows, labels = _warmed(22, 1000, seed=22)
    solver, stats, x, y = model._solver, model._stats, rows[0], labels[0]

    def predict():
        model.__dict__["_solution"] = None  # as after a learn_one: the weights are re-solved
        model.predict_one(x)

    lr = linear_model.LogisticRegression()
    for row, label in zip(rows, labels):
        lr.learn_one(row, label)

    def lr_step():
        lr.predict_one(x)
        lr.learn_one(x, y)

    matrix, rhs = system(stats, np.array(((0.01, 0.1), (0.01, -0.1))), 1.0, 0)
    matrix, rhs = np.array(matrix, order="F"), np.array(rhs, order="F")
    parts = {
        "solve of the weights (M, r, dposv)": lambda: solver.solve(stats),
        "LAPACK dposv alone (scipy's wrapper, d = 23, one right-hand side)": lambda: lapack.dposv(
            matrix, rhs, 0, 0
        ),
        "predict_one, the solve included": predict,
        "learn_one": lambda: model.learn_one(x, y),
        "river LogisticRegression, predict_one + learn_one": lr_step,
    }
    with threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread
        return [[name, f"{_best_us(call, 2000):.1f}"] for name, call in parts.items()]


def rank_one_threads() -> list:
    import numpy as np

    from river_nrrls._threads import one_blas_thread

    out = []
    for d in (150, 512):
        model, rows, _ = _warmed(d, 2 * d, seed=d)
        stats = copy.deepcopy(model._stats)
        vector = model._index.dense_one(rows[0], grow=False).vector
        vector = np.array(vector)

        def threaded(stats=stats, vector=vector):
            stats.update_one(0, vector, 1.0)

        def one_thread(stats=stats, vector=vector):
            with one_blas_thread(stats.dim):
                stats.update_one(0, vector, 1.0)

        out.append([d, f"{_best_us(threaded, 500):.1f}", f"{_best_us(one_thread, 500):.1f}"])
    return out


def _prequential(model, rows, labels) -> tuple:
    """us per predict + learn step of a copy of ``model`` on one BLAS thread, and the copy."""
    run = copy.deepcopy(model)
    with threadpool_limits(limits=1, user_api="blas"):
        start = time.perf_counter()
        for x, y in zip(rows, labels):
            run.predict_one(x)
            run.learn_one(x, y)
        us = (time.perf_counter() - start) / len(rows) * 1e6
    return us, run


def drift_threshold(thresholds=(0.01, 0.02, 0.05, 0.1), repeats: int = 3) -> list:
    from river_nrrls import _stale

    model, rows, labels = _warmed(512, 1024, seed=512)
    default = _stale.MAX_DRIFT
    best = {v: (float("inf"), None) for v in thresholds}
    try:
        for _ in range(repeats):
            for threshold in thresholds:  # thresholds take turns in every repeat
                _stale.MAX_DRIFT = threshold
                us, run = _prequential(model, rows, labels)
                if us < best[threshold][0]:
                    best[threshold] = (us, run._solver.counters)
    finally:
        _stale.MAX_DRIFT = default
    out = []
    for threshold, (us, counters) in best.items():
        iterations = counters["iterations"] / max(1, counters["stale"])
        mark = " (default)" if threshold == default else ""
        out.append(
            [f"{threshold}{mark}", f"{us:.0f}", f"{iterations:.2f}"] + [counters["refactor"]]
        )
    return out


def precision_kernels(widths=(128, 160, 192, 224, 256, 512)) -> list:
    import numpy as np

    from river_nrrls import _stale

    out = []
    with threadpool_limits(limits=1, user_api="blas"):
        for d in widths:
            rng = np.random.default_rng(d)
            samples = rng.random((2 * d, d))
            inverse = np.asfortranarray(np.linalg.inv(samples.T @ samples / (2 * d)))
            vector = rng.random(d)
            row = [d]
            for dtype in (np.float64, np.float32):
                factor = _stale.StaleFactor(inverse.astype(dtype, order="F"), np.ones(2))
                call = lambda f=factor, v=vector: f.apply(v, 0.5)  # noqa: E731
                row.append(f"{_best_us(call, 2000):.1f}")
            for dtype in (np.float64, np.float32):
                factor = _stale.StaleFactor(inverse.astype(dtype, order="F"), np.ones(2))
                # a tiny mass: thousands of updates leave P^-1 about where it was
                call = lambda f=factor, v=vector: f.append(v, 1e-12)  # noqa: E731
                row.append(f"{_best_us(call, 2000):.1f}")
            out.append(row)
    return out


def precision_steps(widths=(256, 512), repeats: int = 3) -> list:
    from river_nrrls import _stale

    default = _stale.SINGLE_MIN_DIM
    out = []
    try:
        for d in widths:
            model, rows, labels = _warmed(d, max(1000, 2 * d), seed=d)
            best = {}
            for _ in range(repeats):
                for name, min_dim in (("double", 10**9), ("single allowed", default)):
                    _stale.SINGLE_MIN_DIM = min_dim
                    us, run = _prequential(model, rows, labels)
                    if us < best.get(name, (float("inf"),))[0]:
                        best[name] = (us, run._solver.counters, run._solver.stale)
            row = [d]
            for name in ("double", "single allowed"):
                us, counters, stale = best[name]
                kind = "-" if stale is None else _PRECISIONS[stale.inverse.dtype.char]
                iterations = counters["iterations"] / max(1, counters["stale"])
                row += [f"{us:.0f}", f"{iterations:.2f}", kind]
            row.append(f"{float(row[1]) / float(row[4]):.2f}x")
            out.append(row)
    finally:
        _stale.SINGLE_MIN_DIM = default
    return out


def class_threshold(widths=(32, 48, 64, 96), classes=(5, 20), repeats: int = 3) -> list:
    from river_nrrls import NRRLS

    out = []
    for n_classes in classes:
        for d in widths:
            rows, labels = uniform_classes_stream(2150, d, n_classes, d + n_classes, n_classes)
            models = {}
            for name, min_dim in (("per class", 1), ("batched", 10**9)):
                model = NRRLS()
                model._solver.class_stale_min_dim = min_dim
                for x, y in zip(rows[:2000], labels[:2000]):
                    model.learn_one(x, y)
                models[name] = model
            best = {}
            for _ in range(repeats):
                for name, model in models.items():
                    us, _ = _prequential(model, rows[2000:], labels[2000:])
                    best[name] = min(us, best.get(name, float("inf")))
            per_class, batched = best["per class"], best["batched"]
            out.append(
                [n_classes, d, f"{per_class:.0f}", f"{batched:.0f}", f"{batched / per_class:.2f}x"]
            )
    return out


def publish(parts: list, quick: bool, path: Path) -> int:
    """Print the report made of ``parts``; write it to ``path`` unless ``quick``."""
    report = "\n\n".join(parts) + "\n"
    print(report)
    if not quick:
        path.write_text(report)
        print(f"written to {path}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    global REPEATS
    import numpy as np
    import river

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no results file")
    quick = parser.parse_args(argv).quick
    if quick:
        REPEATS = 2

    header = (
        "# Where the time goes\n\nCommand: `python benchmarks/overhead.py`. "
        f"Python {platform.python_version()}, numpy {np.__version__}, river {river.__version__}, "
        f"{platform.machine()}, shared machine: compare within a table. Best of several repeats, "
        "microseconds."
    )
    parts = [header]
    parts.append(
        "## A two-class step at d = 22, one BLAS thread\n\n" + table(["part", "us"], narrow_step())
    )
    parts.append(
        "## learn_one's rank-1 update (dsyr): default threading against the solves' one-thread "
        "context (setter calls included)\n\n"
        + table(["d", "default threading (us)", "one-thread context (us)"], rank_one_threads())
    )
    parts.append(
        "## Stale factor drift threshold, d = 512, 600 prequential steps, one BLAS thread\n\n"
        + table(
            ["MAX_DRIFT", "us / step", "CG iterations / stale step", "factorisations"],
            drift_threshold(repeats=1) if quick else drift_threshold(),
        )
    )
    parts.append(
        "## P^-1 kernels in double and single precision, one BLAS thread (apply: the vector "
        "converted in and out included; update: Sherman-Morrison, a product and a rank-1 "
        "update)\n\n"
        + table(
            [
                "d",
                "apply double (us)",
                "apply single (us)",
                "update double (us)",
                "update single (us)",
            ],
            precision_kernels((128, 256)) if quick else precision_kernels(),
        )
    )
    parts.append(
        "## Whole prequential steps with P^-1 kept double or single where accurate (the "
        "default), 600 steps, one BLAS thread\n\n"
        + table(
            [
                "d",
                "double: us / step",
                "CG iterations",
                "P^-1",
                "single allowed: us / step",
                "CG iterations",
                "P^-1",
                "speed-up",
            ],
            precision_steps((256,), repeats=1) if quick else precision_steps(),
        )
    )
    parts.append(
        "## Reweighted multiclass: a stale factor per class against the batched direct solve, "
        "150 prequential steps after 2,000 samples, one BLAS thread\n\n"
        + table(
            ["classes", "d", "per class: us / step", "batched: us / step", "batched / per class"],
            class_threshold((48, 64), (5,), repeats=1) if quick else class_threshold(),
        )
    )
    return publish(parts, quick, RESULTS)


if __name__ == "__main__":
    sys.exit(main())
