"""AutoNRRLS's defaults: its cost and G-mean against the order selectors and river's forest.

Run:  python benchmarks/auto_cost.py           (writes benchmarks/results/auto_cost.md, ~20 min)
      python benchmarks/auto_cost.py --quick   (short streams, prints only)

Per-sample cost (``predict_one`` then ``learn_one``, prequential, CPU time with one BLAS
thread, the models taking turns every ``--block`` samples so that a change in the machine's
load meets them all alike) and prequential G-mean of the timed samples, for:
``AutoNRRLS()`` (its defaults), ``AutoNRRLS(tree_paths=False)``, ``PolynomialOrderSelector()``
(orders 1..6), ``PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99))`` and river's
``ARFClassifier`` and ``HoeffdingAdaptiveTreeClassifier``. Streams: the selector benchmark's
smooth imbalanced streams of l = 8, 20 and 36 inputs in [0, 1] (``benchmarks/selector.py``),
and the drifting imbalanced Agrawal-nonlinear and SEA streams of ``benchmarks/drift.py`` (three
drifts each, features in [0, 1]). The first ``--warmup`` samples are learnt untimed (and not
scored), the next ``--samples`` timed and scored (at l = 20 and 36: a fifth and a third).

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _common import build_drift_stream, compact_table, environment_header, write_results  # noqa: E402
from river import forest, metrics, tree  # noqa: E402
from selector import speed_stream  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

from river_nrrls import AutoNRRLS, PolynomialOrderSelector  # noqa: E402

RESULTS = Path(__file__).parent / "results"
GRID = (1.0, 0.999, 0.99)


def models() -> dict:
    return {
        "AutoNRRLS()": AutoNRRLS(),
        "AutoNRRLS(tree_paths=False)": AutoNRRLS(tree_paths=False),
        "selector": PolynomialOrderSelector(),
        "selector + grid": PolynomialOrderSelector(forgetting_grid=GRID),
        "ARFClassifier": forest.ARFClassifier(seed=1),
        "HATC": tree.HoeffdingAdaptiveTreeClassifier(seed=1),
    }


def run_stream(stream: list, warmup: int, block: int) -> dict:
    """``{model: (us per sample, G-mean)}`` over the samples after ``warmup``."""
    contenders = models()
    for x, y in stream[:warmup]:
        for model in contenders.values():
            model.predict_one(x)
            model.learn_one(x, y)
    names = list(contenders)
    spent = dict.fromkeys(names, 0.0)
    scores = {name: metrics.GeometricMean() for name in names}
    timed = stream[warmup:]
    for turn, offset in enumerate(range(0, len(timed), block)):
        chunk = timed[offset : offset + block]
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            model, predictions = contenders[name], []
            start = time.process_time()
            for x, y in chunk:
                predictions.append(model.predict_one(x))
                model.learn_one(x, y)
            spent[name] += time.process_time() - start
            for (_, y), y_pred in zip(chunk, predictions):
                scores[name].update(y, y_pred)
    return {
        name: (spent[name] / len(timed) * 1e6, scores[name].get(), contenders[name])
        for name in names
    }


def streams(args) -> list[tuple[str, list, int]]:
    """(name, samples, warmup) of every stream; at l = 20 and 36 a fifth of the warm-up and
    a third of the timed samples (the selectors' order 6 falls back at every step there)."""
    result = []
    for width in (8, 20, 36):
        warmup, samples = args.warmup, args.samples
        if width > 8:
            warmup, samples = warmup // 5, samples // 3
        result.append((f"smooth l={width}", speed_stream(width, warmup + samples), warmup))
    for name in ("Agrawal-nonlinear", "SEA"):
        stream = list(build_drift_stream(name, args.warmup + args.samples, 1))
        result.append((name, stream, args.warmup))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, print only")
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--block", type=int, default=200)
    args = parser.parse_args(argv)
    if args.quick:
        args.warmup, args.samples, args.block = 100, 300, 100
    headers = ["stream", "model", "us / sample", "G-mean", "AutoNRRLS's leader (solving)"]
    print(compact_table(headers), flush=True)
    rows = []
    for stream_name, stream, warmup in streams(args):
        for name, (us, score, model) in run_stream(stream, warmup, args.block).items():
            detail = ""
            if isinstance(model, AutoNRRLS):
                leader = model.best_candidate
                solving = sum(row.solving for row in model.table)
                detail = (
                    f"{leader.features}, l={leader.forgetting:g} ({solving}/{len(model.table)})"
                )
            row = [stream_name, name, f"{us:.0f}", f"{score:.3f}", detail]
            rows.append(row)
            print(compact_table(headers, [row]).splitlines()[-1], flush=True)
    if not args.quick:
        text = "# AutoNRRLS: cost and G-mean of its defaults\n\n"
        text += f"Command: `python benchmarks/auto_cost.py`\n\n{environment_header()}\n\n"
        text += compact_table(headers, rows) + "\n"
        write_results(RESULTS / "auto_cost.md", text)


if __name__ == "__main__":
    main()
