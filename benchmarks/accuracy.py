"""How exact the fast solver paths are: the stale factor against a direct solve and against the
plain-numpy batch TER reference of the tests.

Run:  python benchmarks/accuracy.py          (a minute or two: benchmarks/results/accuracy.md)
      python benchmarks/accuracy.py --quick  (small widths, prints only: a smoke test)

Two measurements on the imbalanced streams of ``speed.py`` (10 % positives, dict input, every
step ``predict_one`` then ``learn_one``), and on multiclass streams (the same inputs, uniform
random labels of C classes: every class's system has its own stale factor):

1. Stale factor against a direct Cholesky solve of the same statistics: two models fed the same
   stream, one on the automatic path (the stale factor from ``STALE_MIN_DIM`` columns), one
   forced onto the direct path; after a warm-up of 2d samples, the largest relative difference
   of their weight matrices (Frobenius norm, relative to the direct one) over the timed steps.
2. Both paths against the batch reference of ``tests/reference.py`` (``TERReference``: the TER
   system of all the samples so far, assembled from the raw rows and solved by
   ``np.linalg.solve``, no code shared with the package) with the tests' relative error, from
   the first sample on: every prefix of the first 20 samples, where n < d makes M
   ill-conditioned for any solver, then every 20th prefix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import (
    environment_header,
    factor_precision,
    force_direct,
    make_stream,
    solver_counters,
    table,
    uniform_classes_stream,
    weight_matrix,
    write_results,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

RESULTS = Path(__file__).parent / "results" / "accuracy.md"


def _pair():
    from river_nrrls import NRRLS

    return NRRLS(), force_direct(NRRLS())


def _stream(n: int, d: int, seed: int, n_classes: int):
    if n_classes > 2:
        return uniform_classes_stream(n, d, n_classes, seed, seed)
    return make_stream(n, d, seed=seed)


def stale_against_direct(d: int, steps: int, n_classes: int = 2) -> list:
    import numpy as np

    rows, labels = _stream(2 * d + steps, d, d, n_classes)
    automatic, direct = _pair()
    worst = 0.0
    start = {}
    for i, (x, y) in enumerate(zip(rows, labels)):
        if i == 2 * d:
            start = solver_counters(automatic)
        for model in (automatic, direct):
            model.predict_one(x)
        if i >= 2 * d:
            reference = weight_matrix(direct)
            gap = np.linalg.norm(weight_matrix(automatic) - reference) / np.linalg.norm(reference)
            worst = max(worst, float(gap))
        for model in (automatic, direct):
            model.learn_one(x, y)
    counters = {k: v - start[k] for k, v in solver_counters(automatic).items()}
    precision = factor_precision(automatic)
    row = [d, n_classes, steps, f"{worst:.1e}", counters["stale"], counters["refactor"]]
    return row + [precision]


def against_batch(d: int, n: int, n_classes: int = 2) -> list:
    from reference import TERReference, model_matrix, relative_error

    rows, labels = _stream(n, d, d + 1, n_classes)
    automatic, direct = _pair()
    early = {"stale": 0.0, "direct": 0.0}
    late = {"stale": 0.0, "direct": 0.0}
    for i, (x, y) in enumerate(zip(rows, labels)):
        for model in (automatic, direct):
            model.predict_one(x)
            model.learn_one(x, y)
        prefix = i + 1
        if prefix > 20 and prefix % 20 and prefix != n:
            continue
        ref = TERReference(rows[:prefix], labels[:prefix])
        worst = early if prefix <= 20 else late
        for name, model in (("stale", automatic), ("direct", direct)):
            error = relative_error(model_matrix(model.weights, model.intercepts, ref), ref)
            worst[name] = max(worst[name], error)
    return [
        [d, n_classes, "1 to 20", f"{early['stale']:.1e}", f"{early['direct']:.1e}"],
        [d, n_classes, f"21 to {n} (every 20th)", f"{late['stale']:.1e}", f"{late['direct']:.1e}"],
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small widths, no results file")
    quick = parser.parse_args(argv).quick
    if quick:
        widths, steps, batches = ((128, 2), (128, 4)), 40, ((128, 60, 2), (128, 60, 4))
    else:
        widths, steps = ((256, 2), (512, 2), (256, 5)), 400
        batches = ((512, 700, 2), (256, 600, 5))

    header = (
        "# Accuracy of the solver paths\n\nCommand: `python benchmarks/accuracy.py`. "
        f"{environment_header()} Relative errors of the weights "
        "(see the script's docstring); the tests hold every path to 1e-9 after every prefix."
    )
    parts = [header]
    parts.append(
        "## Stale factor against a direct solve of the same statistics\n\n"
        + table(
            [
                "d",
                "classes",
                "steps after 2d warm-up",
                "largest relative difference",
                "stale solves (one per class's system)",
                "factorisations",
                "P^-1 precision (last factors)",
            ],
            [stale_against_direct(d, steps, n_classes) for d, n_classes in widths],
        )
    )
    parts.append(
        "## Against the batch TER reference of the tests, from the first sample\n\n"
        + table(
            ["d", "classes", "prefixes", "stale factor (automatic path)", "direct solve"],
            [row for batch in batches for row in against_batch(*batch)],
        )
    )
    report = "\n\n".join(parts) + "\n"
    print(report)
    if not quick:
        write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
