"""PolynomialOrderSelector at 20 inputs: its cost against its order-6 pipeline, and what bounds it.

Run:  python benchmarks/selector_speed.py           (writes results/selector_speed.md, ~10 min)
      python benchmarks/selector_speed.py --quick   (short streams, prints only)

**Cost.** Per-sample cost (``predict_one`` then ``learn_one``, prequential, CPU time
``time.process_time``, one BLAS thread) of ``PolynomialOrderSelector()`` (orders 1..6) and of
``PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99))`` against the selector's order-6
pipeline ``PolynomialExtender(degree=6) | NRRLS()``, on river's ``Hyperplane`` stream with 20
inputs in [0, 1], with both aggregates of the expansion (``sum``, the default, and ``mean``).
The first ``--warmup`` samples are learnt untimed, the next ``--samples`` timed, the models
taking turns every ``--block`` samples (a change in the machine's load meets them all alike).

**What bounds it.** Every order of the selector predicts what its independent pipeline predicts
to the bit (``river_nrrls/_orders.py``): each order is solved by its pipeline's own solver on
its pipeline's statistics, which no shared solve reproduces on badly conditioned orders. The
"orders' solves" column is the CPU time of those six solves alone (every order's
``SystemSolver.solve`` per sample, timed on the selector after the same warm-up): the part of
the selector's cost that exactness fixes, against the whole order-6 pipeline.

**Over a long stream.** A 50,000-sample run of the selector and the order-6 pipeline (the
``mean`` aggregate, models in turns every 1,000 samples): the cost of the first 10,000 samples
after a 1,000-sample warm-up against the last 10,000 (no cost may grow with the samples seen);
the last column divides the selector's ratio by the pipeline's, taken in the same turns, which
takes out a change in the machine's load between the two windows.

**Mini-batches.** ``learn_many`` of 100-row pandas batches (the ``mean`` aggregate): the
selector (every candidate scores a batch with its weights before it, then every order's NRRLS
learns the batch in one update, as its pipeline's ``predict_many`` then ``learn_many``) against
its ``learn_one`` loop over the same rows and the order-6 pipeline's ``predict_many`` +
``learn_many``, per row.

**Threads.** The ratio at 20 inputs (``mean``) again in a child process with the BLAS
libraries' default threading (no thread variable set).

"""

from __future__ import annotations

import os

import _common

if not os.environ.get("SELECTOR_SPEED_DEFAULT_THREADS"):  # (the child of `threaded_ratio`)
    _common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _common import THREAD_VARIABLES, compact_table, environment_header, write_results  # noqa: E402
from river.datasets import synth  # noqa: E402
from selector import time_models  # noqa: E402  (models in turns)

sys.path.insert(0, str(Path(__file__).parent.parent))

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector  # noqa: E402

RESULTS = Path(__file__).parent / "results"
N_FEATURES = 20
ORDERS = (1, 2, 3, 4, 5, 6)
GRID = (1.0, 0.999, 0.99)
PIPELINE = "order-6 pipeline"


def hyperplane(n_samples: int, seed: int = 1) -> list:
    """river's Hyperplane stream with 20 inputs in [0, 1] (its labels as bools)."""
    stream = synth.Hyperplane(seed=seed, n_features=N_FEATURES)
    return [(x, bool(y)) for x, y in itertools.islice(stream, n_samples)]


def extender_of(aggregate: str) -> PolynomialExtender:
    if aggregate == "sum":
        return PolynomialExtender()
    return PolynomialExtender(aggregate="mean", n_features=N_FEATURES)


def models(aggregate: str) -> dict:
    extender = extender_of(aggregate)
    return {
        PIPELINE: extender.clone({"degree": 6}) | NRRLS(),
        "selector": PolynomialOrderSelector(orders=ORDERS, extender=extender),
        "selector + grid": PolynomialOrderSelector(
            orders=ORDERS, extender=extender, forgetting_grid=GRID
        ),
    }


def learn(model, samples) -> float:
    """CPU seconds of a prequential pass (predict_one, then learn_one)."""
    start = time.process_time()
    for x, y in samples:
        model.predict_one(x)
        model.learn_one(x, y)
    return time.process_time() - start


def solves_alone(aggregate: str, stream: list, warmup: int) -> list[float]:
    """Microseconds per sample of every order's solve in a selector (``stream[warmup:]``):
    each order's solver run on its statistics before the sample is predicted and learnt (the
    selector then reads the cached solution, as it does after its own solve)."""
    selector = PolynomialOrderSelector(orders=ORDERS, extender=extender_of(aggregate))
    learn(selector, stream[:warmup])
    nested = selector._nested[None]  # (the benchmark reads the selector's layer)
    spent = [0.0] * len(ORDERS)
    for x, y in stream[warmup:]:
        if nested.solution is None:
            for q, order in enumerate(ORDERS):
                start = time.process_time()
                nested._solver_of(q).solve(nested.models[order].statistics)
                spent[q] += time.process_time() - start
        nested.solution = None  # the selector's own solve follows (the same, cached solvers)
        selector.predict_one(x)
        selector.learn_one(x, y)
    return [seconds / (len(stream) - warmup) * 1e6 for seconds in spent]


def long_run(n_samples: int, warmup: int, window: int, block: int) -> dict:
    """CPU microseconds per sample of the selector and the order-6 pipeline (``mean``) over
    the first ``window`` samples after ``warmup`` and over the last ``window``."""
    stream = hyperplane(n_samples, seed=2)
    extender = extender_of("mean")
    contenders = {
        PIPELINE: extender.clone({"degree": 6}) | NRRLS(),
        "selector": PolynomialOrderSelector(orders=ORDERS, extender=extender),
    }
    for model in contenders.values():
        learn(model, stream[:warmup])
    first = range(warmup, warmup + window)
    last = range(n_samples - window, n_samples)
    spent = {name: {"first": 0.0, "last": 0.0} for name in contenders}
    names = list(contenders)
    for turn, offset in enumerate(range(warmup, n_samples, block)):
        chunk = stream[offset : offset + block]
        for name in names[turn % 2 :] + names[: turn % 2]:
            seconds = learn(contenders[name], chunk)
            if offset in first:
                spent[name]["first"] += seconds
            elif offset in last:
                spent[name]["last"] += seconds
    return {
        name: {part: seconds / window * 1e6 for part, seconds in parts.items()}
        for name, parts in spent.items()
    }


def batches(n_batches: int, size: int, seed: int = 3) -> list:
    """``n_batches`` pandas batches of ``size`` Hyperplane rows (X, y)."""
    import pandas as pd

    stream = hyperplane(n_batches * size, seed=seed)
    cut = []
    for start in range(0, len(stream), size):
        rows = stream[start : start + size]
        index = range(start, start + size)
        X = pd.DataFrame([x for x, _ in rows], index=index)
        cut.append((X, pd.Series([y for _, y in rows], index=index)))
    return cut


def batch_costs(n_batches: int, size: int) -> dict:
    """Microseconds per row of the selector's learn_many, of its learn_one loop over the same
    rows, and of the order-6 pipeline's predict_many + learn_many (``mean``), in turns."""
    extender = extender_of("mean")
    contenders = {
        "selector learn_many": PolynomialOrderSelector(orders=ORDERS, extender=extender),
        "selector learn_one loop": PolynomialOrderSelector(orders=ORDERS, extender=extender),
        "order-6 pipeline predict_many + learn_many": extender.clone({"degree": 6}) | NRRLS(),
    }
    steps = {
        "selector learn_many": lambda model, X, y: model.learn_many(X, y),
        "selector learn_one loop": _learn_one_loop,
        "order-6 pipeline predict_many + learn_many": _pipeline_batch,
    }
    spent = dict.fromkeys(contenders, 0.0)
    names = list(contenders)
    for turn, (X, y) in enumerate(batches(n_batches, size)):
        for name in names[turn % 3 :] + names[: turn % 3]:
            start = time.process_time()
            steps[name](contenders[name], X, y)
            if turn:  # the first batch untimed
                spent[name] += time.process_time() - start
    rows = (n_batches - 1) * size
    return {name: seconds / rows * 1e6 for name, seconds in spent.items()}


def _learn_one_loop(model, X, y) -> None:
    for x, label in zip(X.to_dict(orient="records"), y.tolist()):
        model.learn_one(x, label)


def _pipeline_batch(model, X, y) -> None:
    model.predict_many(X)
    model.learn_many(X, y)


def threaded_ratio(args) -> dict:
    """The ``mean`` cost in a child process with the BLAS libraries' default threading."""
    environment = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    environment["SELECTOR_SPEED_DEFAULT_THREADS"] = "1"  # the child keeps the default threads
    command = [sys.executable, __file__, "--child", f"--warmup={args.warmup}"]
    command += [f"--samples={args.samples}", f"--block={args.block}"]
    completed = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


COST_HEADERS = [
    "aggregate",
    "samples (untimed + timed)",
    "order-6 pipeline us",
    "selector us",
    "selector + grid us",
    "selector / order-6",
    "selector + grid / order-6",
    "orders' solves us (1..6)",
    "orders' solves / order-6",
]


def cost_row(aggregate: str, args) -> list:
    stream = hyperplane(args.warmup + args.samples)
    costs = time_models(models(aggregate), stream, args.warmup, args.block)
    solves = solves_alone(aggregate, stream, args.warmup)
    single = costs[PIPELINE]
    return [
        aggregate,
        f"{args.warmup} + {args.samples}",
        f"{single:.0f}",
        f"{costs['selector']:.0f}",
        f"{costs['selector + grid']:.0f}",
        f"**{costs['selector'] / single:.2f}**",
        f"{costs['selector + grid'] / single:.2f}",
        " + ".join(f"{s:.0f}" for s in solves) + f" = {sum(solves):.0f}",
        f"{sum(solves) / single:.2f}",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, print only")
    parser.add_argument("--warmup", type=int, default=1500, help="untimed samples")
    parser.add_argument("--samples", type=int, default=1500, help="timed samples")
    parser.add_argument("--block", type=int, default=50, help="timed samples per turn")
    parser.add_argument("--long", type=int, default=50_000, help="samples of the long run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # the default-threading measurement: one JSON line
        stream = hyperplane(args.warmup + args.samples)
        costs = time_models(models("mean"), stream, args.warmup, args.block)
        print(json.dumps(costs))
        return
    if args.quick:
        args.warmup, args.samples, args.block, args.long = 60, 40, 20, 600
    start = time.process_time()
    rows = []
    print(compact_table(COST_HEADERS))
    for aggregate in ("mean", "sum"):
        rows.append(cost_row(aggregate, args))
        print(_common.table_row(rows[-1]), flush=True)
    window = args.long // 5
    warmup = args.long // 50
    long = long_run(args.long, warmup, window, block=max(1, window // 10))
    long_rows = [
        [
            name,
            f"{parts['first']:.0f}",
            f"{parts['last']:.0f}",
            f"**{parts['last'] / parts['first']:.2f}**",
            f"{parts['last'] / parts['first'] / (pipeline['last'] / pipeline['first']):.2f}",
        ]
        for pipeline in [long[PIPELINE]]
        for name, parts in long.items()
    ]
    long_headers = [
        "model (mean)",
        f"first {window} after {warmup} us",
        f"last {window} us",
        "last / first",
        "last / first, over the pipeline's",
    ]
    print(compact_table(long_headers, long_rows), flush=True)
    n_batches = 4 if args.quick else 16
    batch = batch_costs(n_batches, 100)
    batch_rows = [[name, f"{us:.0f}"] for name, us in batch.items()]
    batch_headers = [f"model ({n_batches - 1} timed batches of 100 rows, mean)", "us per row"]
    print(compact_table(batch_headers, batch_rows), flush=True)
    threads = None if args.quick else threaded_ratio(args)
    seconds = time.process_time() - start
    lines = [
        "# PolynomialOrderSelector at 20 inputs: cost against its order-6 pipeline",
        "",
        f"Written by `python benchmarks/selector_speed.py` in {seconds:.0f} CPU seconds of this "
        f"process ({environment_header()} OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}; 1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end: the machine was shared, so compare the ratios, "
        "measured in the same run, rather than the times). The script's docstring describes the "
        "streams and models. Every time is CPU time (``time.process_time``) per sample "
        "(predict_one + learn_one), river's Hyperplane with 20 inputs.",
        "",
        "## Per-sample cost, one BLAS thread",
        "",
        compact_table(COST_HEADERS, rows),
        "",
        f"## A {args.long}-sample run, one BLAS thread",
        "",
        compact_table(long_headers, long_rows),
        "",
        "## Mini-batches, one BLAS thread",
        "",
        compact_table(batch_headers, batch_rows),
        "",
    ]
    if threads is not None:
        single = threads[PIPELINE]
        lines += [
            "## The BLAS libraries' default threading (mean)",
            "",
            compact_table(
                ["order-6 pipeline us", "selector us", "selector + grid us", "selector / order-6"],
                [
                    [
                        f"{single:.0f}",
                        f"{threads['selector']:.0f}",
                        f"{threads['selector + grid']:.0f}",
                        f"**{threads['selector'] / single:.2f}**",
                    ]
                ],
            ),
            "",
        ]
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        write_results(RESULTS / "selector_speed.md", text)


if __name__ == "__main__":
    main()
