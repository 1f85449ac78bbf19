"""``river-nrrls benchmark``: the NR-RLS paper's comparison, reproduced with one command.

The protocol of the paper (Jang, section 4.1; algorithms page, "Metrics and the evaluation
protocol") on the bundled data
sets (inputs in [0, 1]): 10 runs of 2-fold stratified cross-validation; each learner is trained
online through the training half in a shuffled order and its G-mean measured on the test half;
b = 1e-4. Every learner runs on the inputs ("linear") and on Toh's reduced polynomial model
(RM) of an order r chosen on each training half, online, by
`river_nrrls.PolynomialOrderSelector` (it never sees the test half).

The learners are the paper's (NR-RLS, AR-RLS, RLS, CW, AROW, ACOG, PE, PA; TER and IR-RLS as
the exact references) and river's usual choices (LogisticRegression, alone and behind river's
``imblearn.RandomOverSampler``/``RandomUnderSampler``, and ``HoeffdingTreeClassifier``).

Outputs (``--out DIR``): ``README.md`` (the tables: G-mean mean +- std and rank per data set
with the paper's NR-RLS figure beside ours, average G-mean and rank, Friedman test and Nemenyi
critical difference, NR-RLS == TER on every fold, CPU times like the paper's Table 4, the orders
chosen), CSV files of every number (``folds.csv`` holds every fold of every learner) and PNG
figures: G-mean per data set, critical-difference diagrams, the L2 norm of the weights along a
stream (the paper's Fig. 2(a)) and the time per sample against samples seen (Fig. 2(c)).

``--long-stream`` runs a synthetic imbalanced stream (200,000 samples by default) instead:
throughput and prequential G-mean over time of NR-RLS, RLS, AR-RLS and river's learners.

The figures need matplotlib (a dependency of this package); it is imported only when a figure
is drawn, so ``river-nrrls --help`` and the other commands work without it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import importlib.util
import multiprocessing
import os
import pathlib
import sys
import time
import typing

import pandas as pd

from river_nrrls import cli, datasets

from .protocol import Settings, Task
from .report import (
    TIME_DATASET,
    WEIGHT_NORM_DATASET,
    Outcome,
    write_long_stream_outputs,
    write_protocol_outputs,
)

__all__ = ["QUICK_DATASETS", "blas_environment"]

#: The data sets of ``--quick``.
QUICK_DATASETS: tuple[str, ...] = ("Bupa", "Heart", "Sonar")
DEFAULT_OUT = "benchmark-results"

_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ------------------------------------------------------------------------------ arguments


def _dataset_list(text: str) -> list[str]:
    names = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            names.append(type(datasets.load(name)).__name__)
        except KeyError:
            known = ", ".join(n.lower() for n in datasets.NAMES)
            raise argparse.ArgumentTypeError(
                f"unknown data set {name!r}; choose from {known}"
            ) from None
    if not names:
        raise argparse.ArgumentTypeError("no data set given")
    return list(dict.fromkeys(names))


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        help=f"folder for the tables, CSV files and figures (default: ./{DEFAULT_OUT})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=(
            f"a smoke run in well under a minute: {', '.join(QUICK_DATASETS)}, 2 runs, RM "
            "orders 1-2, Fig. 2(c) on 300 samples; with --long-stream, 20,000 samples"
        ),
    )
    parser.add_argument(
        "--jobs",
        type=cli.positive_int,
        default=1,
        metavar="N",
        help="worker processes, one (data set, run) task at a time each (default: 1)",
    )
    parser.add_argument(
        "--datasets",
        type=_dataset_list,
        metavar="A,B",
        help="comma-separated bundled data sets (default: all 17; --quick: the 3 above)",
    )
    parser.add_argument(
        "--runs",
        type=cli.positive_int,
        metavar="N",
        help="runs of 2-fold cross-validation (default: 10, the paper's; --quick: 2)",
    )
    parser.add_argument(
        "--seed", type=int, default=42, help="seed of the splits, shuffles and samplers"
    )
    parser.add_argument(
        "--long-stream",
        action="store_true",
        help="run the long synthetic imbalanced stream instead of the paper's protocol",
    )
    parser.add_argument(
        "--samples",
        type=cli.positive_int,
        metavar="N",
        help="length of the long stream (default: 200,000; --quick: 20,000)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: only when stderr is a terminal)",
    )


# ----------------------------------------------------------------------------- execution


@contextlib.contextmanager
def blas_environment(threads: int | None) -> typing.Iterator[None]:
    """Environment for the processes started inside: ``threads`` BLAS threads (None: as is).

    The parent's numpy is already loaded, so the variables only matter to fresh (spawned) worker
    processes. The benchmarks give their workers one thread: the systems are small, and several
    threads per worker on a shared machine only slow them down.

    """
    saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    if threads is not None:
        os.environ.update({name: str(threads) for name in _THREAD_VARIABLES})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_jobs(
    jobs: list[tuple[typing.Callable, tuple]],
    n_workers: int,
    bar: cli.ProgressBar,
) -> list:
    """Run ``function(*args)`` for every job in worker processes; results in job order."""
    results: list = [None] * len(jobs)
    context = multiprocessing.get_context("spawn")
    with blas_environment(1):
        with concurrent.futures.ProcessPoolExecutor(n_workers, mp_context=context) as pool:
            futures = {pool.submit(function, *args): i for i, (function, args) in enumerate(jobs)}
            bar.update(0)
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                results[futures[future]] = future.result()
                bar.update(done)
    bar.close()
    return results


def _progress_stream(args: argparse.Namespace) -> typing.TextIO | None:
    show = args.progress
    if show is None:
        show = sys.stderr is not None and sys.stderr.isatty()
    return sys.stderr if show else None


def _check_matplotlib() -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise cli.UsageError(
            "the benchmark draws its figures with matplotlib, which is not installed: "
            "pip install matplotlib"
        )


def _run_benchmark(args: argparse.Namespace) -> int:
    _check_matplotlib()
    out = pathlib.Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise cli.UsageError(f"cannot create {out}: {error.strerror or error}") from None
    if args.long_stream:
        return _long_stream(args, out)
    return _run_protocol(args, out)


# -------------------------------------------------------------------------- the protocol


def _task_cost(task: Task) -> float:
    dataset = datasets.load(task.dataset)
    return dataset.n_samples * dataset.n_features * (3.0 if task.run == 0 else 1.0)


def _run_protocol(args: argparse.Namespace, out: pathlib.Path) -> int:
    """The paper's protocol: run, then write the tables and figures to ``out``."""
    from . import curves, protocol

    quick = args.quick
    names = args.datasets or list(QUICK_DATASETS if quick else datasets.NAMES)
    settings = Settings(
        runs=args.runs or (2 if quick else 10),
        orders=(1, 2) if quick else (1, 2, 3, 4, 5, 6),
        irrls_timing=() if quick else Settings().irrls_timing,
        seed=args.seed,
    )
    tasks = [Task(name, run, settings) for name in names for run in range(settings.runs)]
    tasks.sort(key=_task_cost, reverse=True)  # the long tasks first, for a balanced finish
    time_samples = 300 if quick else 3000
    jobs: list[tuple[typing.Callable, tuple]] = [
        (curves.time_per_sample, (TIME_DATASET, settings.seed, time_samples)),
        (curves.weight_norms, (WEIGHT_NORM_DATASET, settings.seed)),
    ] + [(protocol.run_task, (task,)) for task in tasks]
    bar = cli.ProgressBar("benchmark", len(jobs), _progress_stream(args))
    start = time.perf_counter()
    times, norms, *task_results = _run_jobs(jobs, args.jobs, bar)
    wall = time.perf_counter() - start
    outcome = Outcome(
        records=pd.DataFrame([r for records, _, _ in task_results for r in records]),
        checks=pd.DataFrame([c for _, checks, _ in task_results for c in checks]),
        selections=pd.DataFrame([s for _, _, selections in task_results for s in selections]),
        weight_norms=norms,
        times=times,
    )
    report = write_protocol_outputs(outcome, names, settings, args, out, wall)
    print(report)
    return 0


def _long_stream(args: argparse.Namespace, out: pathlib.Path) -> int:
    from . import stream

    n_samples = args.samples or (20_000 if args.quick else 200_000)
    window = max(1, n_samples // 40)
    jobs = [
        (stream.run_stream, (learner, n_samples, args.seed, window))
        for learner in stream.LONG_STREAM_LEARNERS
    ]
    bar = cli.ProgressBar("long stream", len(jobs), _progress_stream(args))
    start = time.perf_counter()
    results = _run_jobs(jobs, args.jobs, bar)
    wall = time.perf_counter() - start
    table = write_long_stream_outputs(results, args, out, n_samples, window, wall)
    print(table)
    print(f"written to {out} in {wall:.0f} s")
    return 0


cli.register_command(
    "benchmark",
    help="reproduce the NR-RLS paper's comparison (tables, statistics and figures)",
    add_arguments=_add_arguments,
    run=_run_benchmark,
    description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
)
