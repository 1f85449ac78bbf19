"""PolynomialOrderSelector against independent pipelines: differing predictions, sample by sample.

Run:  python benchmarks/selector_exactness.py          (writes results/selector_exactness.md)
      python benchmarks/selector_exactness.py --quick  (two short streams, prints only)

The selector races ``PolynomialExtender(degree=r) | NRRLS()`` for r = 1..6 from one expansion.
Each of its orders must predict what that pipeline predicts on every sample. This script runs
the selector and the six pipelines side by side (prequential: every pipeline predicts a sample,
then learns it) and counts, for every order, the samples on which the selector's order predicted
another class than its pipeline (read from the selector's per-order scores: the column of the
confusion matrix that a sample increments), and the samples after which the selector's best
order differs from the best of the pipelines raced by hand on the same metric. The streams: the
first 21 inputs of the bundled wide sets (order 6 then has 238 columns: the pipelines' stale
factor solver), Spambase's first 1,109 rows among them, one set with non-dyadic sample weights
and forgetting, and a long random stream.

"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from river import metrics

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the streams of its test

from helpers import leading_inputs, nonlinear_stream  # noqa: E402

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector  # noqa: E402

RESULTS = Path(__file__).parent / "results"
ORDERS = (1, 2, 3, 4, 5, 6)


def compare(stream: list, classifier: NRRLS, weights: tuple | None = None) -> dict:
    """Side by side: per order, the samples on which the selector's order and its pipeline
    predicted differently; the samples after which the best orders differ."""
    selector = PolynomialOrderSelector(orders=ORDERS, classifier=classifier)
    pipelines = {r: PolynomialExtender(degree=r) | classifier.clone() for r in ORDERS}
    by_hand = {r: metrics.GeometricMean() for r in ORDERS}
    differing = dict.fromkeys(ORDERS, 0)
    best_differs = 0
    for i, (x, y) in enumerate(stream):
        w = 1.0 if weights is None else weights[i % len(weights)]
        theirs = {r: pipeline.predict_one(x) for r, pipeline in pipelines.items()}
        before = {r: dict(selector.scores[r].cm.sum_col) for r in ORDERS}
        selector.learn_one(x, y, w=w)
        for r in ORDERS:
            after = selector.scores[r].cm.sum_col
            moved = [c for c in after if after[c] != before[r].get(c, 0)]
            mine = moved[0] if moved else None
            if mine != theirs[r]:
                differing[r] += 1
            if theirs[r] is not None:
                by_hand[r].update(y, theirs[r], w)
            pipelines[r].learn_one(x, y, w=w)
        values = [by_hand[r].get() for r in ORDERS]
        if ORDERS[int(np.argmax(values))] != selector.best_order:  # ties: the lowest order
            best_differs += 1
    return {"differing": differing, "best": best_differs}


def streams(quick: bool) -> list:
    if quick:
        return [
            (
                "Ionosphere, 21 inputs, 120 rows",
                leading_inputs("Ionosphere", 21, 120),
                NRRLS(),
                None,
            ),
            ("random, 12 inputs", nonlinear_stream(150, 12), NRRLS(), None),
        ]
    return [
        ("Spambase, 21 inputs, 1109 rows", leading_inputs("Spambase", 21, 1109), NRRLS(), None),
        ("German, 21 inputs", leading_inputs("German", 21), NRRLS(), None),
        ("Ionosphere, 21 inputs", leading_inputs("Ionosphere", 21), NRRLS(), None),
        ("SpectfHeart, 21 inputs", leading_inputs("SpectfHeart", 21), NRRLS(), None),
        ("Wdbc, 21 inputs", leading_inputs("Wdbc", 21), NRRLS(), None),
        ("Sonar, 21 inputs", leading_inputs("Sonar", 21), NRRLS(), None),
        (
            "Ionosphere, 21 inputs, w in (1, 0.3, 2.7), forgetting 0.995",
            leading_inputs("Ionosphere", 21),
            NRRLS(forgetting=0.995),
            (1.0, 0.3, 2.7),
        ),
        ("random, 12 inputs, 3000 samples", nonlinear_stream(3000, 12), NRRLS(), None),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two short streams, prints only")
    args = parser.parse_args(argv)
    start = time.process_time()
    header = "| stream | samples | " + " | ".join(f"order {r}" for r in ORDERS)
    lines = [header + " | best order |", "|---" * (len(ORDERS) + 3) + "|"]
    for name, stream, classifier, weights in streams(args.quick):
        result = compare(stream, classifier, weights)
        counts = " | ".join(str(result["differing"][r]) for r in ORDERS)
        lines.append(f"| {name} | {len(stream)} | {counts} | {result['best']} |")
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    print(table)
    if not args.quick:
        seconds = time.process_time() - start
        text = (
            "# PolynomialOrderSelector: its orders against independent pipelines\n\n"
            f"Written by `python benchmarks/selector_exactness.py` in {seconds:.0f} CPU seconds. "
            "Samples on which each order of the selector predicted another class than its "
            "independent `PolynomialExtender(degree=r) | NRRLS()` pipeline, and samples after "
            "which the selector's best order differs from that of the pipelines raced by hand "
            "(the script's docstring describes the streams).\n\n" + table + "\n"
        )
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "selector_exactness.md").write_text(text)


if __name__ == "__main__":
    main()
