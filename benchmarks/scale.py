"""Scaling NR-RLS out: learn_one, learn_many and the Dask fit on a large parquet stream.

Run:  python benchmarks/scale.py                 (10^7 samples x 22 features, writes
                                                  benchmarks/results/scale.md)
      python benchmarks/scale.py --quick         (2 x 10^5 samples, prints only: a smoke test)
      python benchmarks/scale.py --data DIR      (keep the parquet partitions in DIR and reuse
                                                  them on the next run)

The synthetic stream has 22 features uniform in [0, 1] and a bool label (about 30 % positives)
from a noisy linear concept. It is written once as parquet partitions (``--partition-rows``
rows each), then every method learns the whole stream from those files:

* ``learn_one``: dict rows, one call per sample, on a subsample of the first partition (the
  full stream would take minutes), one BLAS thread; its rate is extrapolated to the whole
  stream, and said so.
* ``learn_many``: one process reads the partitions one after the other and learns them in
  batches of ``--batch`` rows, once with one BLAS thread and once with the BLAS threads of the
  environment (all cores unless ``OPENBLAS_NUM_THREADS`` or the like say otherwise).
* Dask: ``river_nrrls.dask.fit`` on ``dask.dataframe.read_parquet`` of the partitions, on a
  ``LocalCluster`` of 1 then 2 worker processes (one thread each; Dask's nannies start workers
  with one BLAS thread). Time from the call to the fitted model: reading, learning and merging.

Every single-process method runs in a fresh process, so that its peak resident memory (Linux
``ru_maxrss``) is its own; the Dask workers' peak and current memory come from the workers
themselves (``client.run``). The Dask model is checked against the ``learn_many`` one.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import math
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import threadpoolctl
from _common import environment_header, table, write_results

RESULTS = Path(__file__).parent / "results" / "scale.md"
N_FEATURES = 22
SEED = 0
MB = 2**20


# --------------------------------------------------------------------------------- data


def _concept() -> tuple[np.ndarray, float]:
    """Weights of the linear concept and the threshold that makes ~30 % positives."""
    rng = np.random.default_rng(SEED)
    weights = rng.normal(size=N_FEATURES)
    pilot = rng.random((100_000, N_FEATURES)) @ weights + 0.3 * rng.normal(size=100_000)
    return weights, float(np.quantile(pilot, 0.7))


def write_partitions(directory: Path, n_samples: int, partition_rows: int) -> list[Path]:
    """The stream as parquet files ``part-00000.parquet``, ... (deterministic)."""
    directory.mkdir(parents=True, exist_ok=True)
    weights, threshold = _concept()
    columns = [f"x{j:02d}" for j in range(N_FEATURES)]
    paths = []
    for i, start in enumerate(range(0, n_samples, partition_rows)):
        rows = min(partition_rows, n_samples - start)
        rng = np.random.default_rng([SEED, i])
        values = rng.random((rows, N_FEATURES))
        labels = values @ weights + 0.3 * rng.normal(size=rows) > threshold
        frame = pd.DataFrame(values, columns=columns).assign(y=labels)
        path = directory / f"part-{i:05d}.parquet"
        frame.to_parquet(path, index=False)
        paths.append(path)
    return paths


def existing_partitions(directory: Path, n_samples: int) -> list[Path] | None:
    """The parquet files of ``directory`` if they hold exactly ``n_samples`` rows."""
    import pyarrow.parquet as pq

    paths = sorted(directory.glob("part-*.parquet"))
    if not paths:
        return None
    rows = sum(pq.ParquetFile(path).metadata.num_rows for path in paths)
    return paths if rows == n_samples else None


# ------------------------------------------------------------------- one-process methods


def _peak_rss() -> int:
    """Peak resident memory of this process in bytes (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _blas_threads() -> int | None:
    return max((pool["num_threads"] for pool in threadpoolctl.threadpool_info()), default=None)


def _limit_blas_threads(threads: int | None) -> None:
    """A worker's start: BLAS on ``threads`` threads for the process's life (None: as is)."""
    if threads is not None:
        import scipy.linalg  # noqa: F401  (loads scipy's BLAS too, so that the limit holds it)

        threadpoolctl.threadpool_limits(threads)


def run_learn_one(path: Path, n_rows: int, repeats: int) -> dict:
    from river_nrrls import NRRLS

    frame = pd.read_parquet(path).iloc[:n_rows]
    rows = frame.drop(columns="y").to_dict("records")
    labels = frame["y"].tolist()
    best = math.inf
    for _ in range(repeats):
        model = NRRLS()
        learn = model.learn_one
        start = time.perf_counter()
        for x, y in zip(rows, labels):
            learn(x, y)
        best = min(best, time.perf_counter() - start)
    return {"samples": len(rows), "learn": best, "peak": _peak_rss()}


def run_learn_many(paths: list[Path], batch: int) -> dict:
    from river_nrrls import NRRLS

    model = NRRLS()
    reading = learning = 0.0
    samples = 0
    for path in paths:
        start = time.perf_counter()
        frame = pd.read_parquet(path)
        X, y = frame.drop(columns="y"), frame["y"]
        middle = time.perf_counter()
        for first in range(0, len(frame), batch):
            model.learn_many(X.iloc[first : first + batch], y.iloc[first : first + batch])
        reading += middle - start
        learning += time.perf_counter() - middle
        samples += len(frame)
    return {
        "samples": samples,
        "read": reading,
        "learn": learning,
        "peak": _peak_rss(),
        "threads": _blas_threads(),
        "model": model,
    }


def in_fresh_process(function, *args, blas_threads: int | None = None):
    """``function(*args)`` in a new (spawned) process: its memory figures are its own, and its
    BLAS library starts with ``blas_threads`` threads (None: the environment's setting)."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=1,
        mp_context=context,
        initializer=_limit_blas_threads,
        initargs=(blas_threads,),
    ) as pool:
        return pool.submit(function, *args).result()


def best_of(repeats: int, function, *args, blas_threads: int | None = None) -> dict:
    """The run of ``function`` with the shortest learning time, each in a fresh process."""
    runs = [in_fresh_process(function, *args, blas_threads=blas_threads) for _ in range(repeats)]
    return min(runs, key=lambda run: run["learn"])


# ---------------------------------------------------------------------------------- Dask


def _warm_up() -> None:
    import river_nrrls.dask  # noqa: F401  (imports river, numpy, scipy once per worker)


def run_dask(directory: Path, n_workers: int, repeats: int) -> dict:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    from river_nrrls import dask as nrrls_dask

    with (
        LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(_warm_up)
        idle = client.run(_rss)
        frame = dd.read_parquet(str(directory))
        seconds, cpu = math.inf, []
        for _ in range(repeats):
            cpu_before = client.run(_cpu_seconds)
            start = time.perf_counter()
            model = nrrls_dask.fit(frame, "y")
            elapsed = time.perf_counter() - start
            cpu_after = client.run(_cpu_seconds)
            if elapsed < seconds:
                seconds = elapsed
                cpu = [cpu_after[worker] - cpu_before[worker] for worker in cpu_before]
        return {
            "cpu": cpu,
            "samples": int(sum(model.n_samples.values())),
            "learn": seconds,
            "partitions": frame.npartitions,
            "idle": list(idle.values()),
            "peak": list(client.run(_peak_rss).values()),
            "rss": list(client.run(_rss).values()),
            "threads": sorted(set(client.run(_blas_threads).values()), key=str),
            "model": model,
        }


# ------------------------------------------------------------------------------- report


def relative_difference(model, reference) -> float:
    """||W - W_ref||_F / ||W_ref||_F over the classes and features of ``reference``."""
    labels = list(reference.weights)
    features = list(reference.weights[labels[0]])

    def matrix(m):
        return np.array([[m.intercepts[c], *(m.weights[c][f] for f in features)] for c in labels])

    expected = matrix(reference)
    return float(np.linalg.norm(matrix(model) - expected) / np.linalg.norm(expected))


def _threads(run: dict) -> str:
    count = run["threads"]
    if count is None:
        return "default BLAS threads"
    return f"{count} BLAS thread{'s' if count > 1 else ''}"


def _mb(values) -> str:
    if isinstance(values, (int, float)):
        values = [values]
    return " / ".join(f"{v / MB:,.0f}" for v in values)


def memory_projection() -> str:
    """Statistics size and solve cost as d grows (two classes)."""
    rows = []
    for d, what in (
        (22, "this benchmark"),
        (248, "reduced polynomial, r = 6, l = 22"),
        (1_000, ""),
        (10_000, ""),
        (30_000, ""),
        (376_739, "full polynomial, r = 6, l = 22"),
    ):
        per_class = 8 * (d + 1) ** 2  # bytes = 8 (d + 1)^2: one float64 augmented scatter
        rows.append(
            [
                f"{d:,}",
                what,
                _human_bytes(per_class),
                f"{2 * (d + 1) ** 2:.1e}",
                f"{(d + 1) ** 3 / 3:.1e}",
            ]
        )
    headers = [
        "d",
        "",
        "statistics per class",
        "learn flops per sample (2 (d + 1)^2)",
        "Cholesky flops per solve ((d + 1)^3 / 3)",
    ]
    return table(headers, rows)


def _human_bytes(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if count < 1000:
            return f"{count:,.1f} {unit}"
        count /= 1000
    return f"{count:,.1f} PB"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000, help="stream length")
    parser.add_argument("--quick", action="store_true", help="2e5 samples, no results file")
    parser.add_argument(
        "--data",
        type=Path,
        help="directory for the parquet partitions: kept, reused if they hold --samples rows",
    )
    parser.add_argument("--partition-rows", type=int, default=500_000)
    parser.add_argument("--batch", type=int, default=10_000, help="learn_many batch size")
    parser.add_argument(
        "--learn-one-rows", type=int, default=200_000, help="learn_one subsample size"
    )
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = 1
        args.samples = min(args.samples, 200_000)
        args.partition_rows = min(args.partition_rows, 20_000)
        args.learn_one_rows = min(args.learn_one_rows, 20_000)
    n = args.samples

    with contextlib.ExitStack() as stack:
        if args.data is None:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="scale-")))
        else:
            directory = args.data
        start = time.perf_counter()
        paths = existing_partitions(directory, n) if directory.exists() else None
        if paths is None:
            for old in directory.glob("part-*.parquet"):
                old.unlink()
            paths = write_partitions(directory, n, args.partition_rows)
            print(f"wrote {len(paths)} partitions in {time.perf_counter() - start:.0f} s")
        on_disk = sum(path.stat().st_size for path in paths)

        print("learn_one ...", file=sys.stderr)
        load_before = os.getloadavg()
        one = in_fresh_process(
            run_learn_one, paths[0], args.learn_one_rows, args.repeats, blas_threads=1
        )
        print("learn_many ...", file=sys.stderr)
        many_single = best_of(args.repeats, run_learn_many, paths, args.batch, blas_threads=1)
        many_default = best_of(args.repeats, run_learn_many, paths, args.batch)
        dask_runs = {}
        for workers in (1, 2):
            print(f"dask, {workers} worker(s) ...", file=sys.stderr)
            dask_runs[workers] = run_dask(directory, workers, args.repeats)
        load_after = os.getloadavg()

    reference = many_single["model"]
    for run in (many_default, *dask_runs.values()):
        assert run["samples"] == n
    one_rate = one["samples"] / one["learn"]
    rows = [
        [
            "learn_one (dict rows)",
            "1 process",
            f"{one['samples']:,} timed",
            f"{n / one_rate:,.1f} (extrapolated to {n:,})",
            f"{one_rate:,.0f}",
            _mb(one["peak"]),
            "-",
        ]
    ]
    for label, run in (
        (f"learn_many, {_threads(many_single)}", many_single),
        (f"learn_many, {_threads(many_default)}", many_default),
    ):
        total = run["read"] + run["learn"]
        rows.append(
            [
                f"{label} (batches of {args.batch:,})",
                "1 process",
                f"{n:,}",
                f"{total:,.1f} ({run['learn']:,.1f} learning)",
                f"{n / total:,.0f} ({n / run['learn']:,.0f} learning)",
                _mb(run["peak"]),
                f"{relative_difference(run['model'], reference):.1e}",
            ]
        )
    for workers, run in dask_runs.items():
        rows.append(
            [
                f"Dask fit, {run['partitions']} partitions",
                f"{workers} worker{'s' if workers > 1 else ''}",
                f"{n:,}",
                f"{run['learn']:,.1f}",
                f"{n / run['learn']:,.0f}",
                _mb(run["peak"]),
                f"{relative_difference(run['model'], reference):.1e}",
            ]
        )
    speedup = dask_runs[1]["learn"] / dask_runs[2]["learn"]
    headers = [
        "method",
        "processes",
        "samples",
        "wall time (s)",
        "samples/s",
        "peak RSS per process (MB)",
        "rel. diff. vs learn_many",
    ]
    worker_rows = [
        [
            workers,
            " / ".join(f"{seconds:.1f}" for seconds in run["cpu"]),
            _mb(run["idle"]),
            _mb(run["peak"]),
            _mb(run["rss"]),
            ", ".join(map(str, run["threads"])),
        ]
        for workers, run in dask_runs.items()
    ]

    import dask

    partition_mb = args.partition_rows * (N_FEATURES + 1) * 8 / MB  # float64 rows, label too
    growth = max(
        peak - idle for run in dask_runs.values() for peak, idle in zip(run["peak"], run["idle"])
    )
    threads_ratio = many_default["learn"] / many_single["learn"]
    cpu_share = max(dask_runs[2]["cpu"]) / max(sum(dask_runs[1]["cpu"]), 1e-9)
    blas_note = "."
    if threads_ratio > 1.2:
        blas_note = (
            f": in this run numpy's multithreaded OpenBLAS was slow on the small `X^T X` "
            f"products of {args.batch:,} x {N_FEATURES + 1} blocks; limit BLAS to one thread "
            "(`OPENBLAS_NUM_THREADS=1`, or `threadpoolctl.threadpool_limits(1)`) when d is small."
        )
    setting = (
        f"Command: `python benchmarks/scale.py{' --quick' if args.quick else ''}`: {n:,} samples "
        f"x {N_FEATURES} float64 features and a bool label (~30 % positives), in {len(paths)} "
        f"parquet partitions of {args.partition_rows:,} rows ({on_disk / MB:,.0f} MB on disk)."
    )
    machine = (
        f"{environment_header()} pandas {pd.__version__}, dask {dask.__version__}, "
        f"{_total_memory()}."
    )
    worker_table = table(
        [
            "workers",
            "CPU time in the fit (s)",
            "RSS idle (imports)",
            "peak RSS",
            "RSS after the fit",
            "BLAS threads",
        ],
        worker_rows,
    )
    text = f"""# NR-RLS at scale: learn_one, learn_many, Dask

{setting}
{machine}
Best of {args.repeats} run(s) of each method; wall-clock times include reading the parquet files.
One-minute load average before / after the measurements: {load_before[0]:.1f} /
{load_after[0]:.1f} ({os.cpu_count()} cores; the benchmark itself keeps one or two busy, more
means that other jobs shared the machine).

## Throughput

{table(headers, rows)}

* `learn_one` (1 BLAS thread) learnt the first {one["samples"]:,} rows as dicts (building the
  dicts is not timed); its time for the whole stream is extrapolated from that rate.
* `learn_many` times are reading + learning (learning alone in brackets). With the default
  {_threads(many_default)} its learning took {threads_ratio:.1f}x the time it took
  with one thread{blas_note}
* The Dask fits run on a `LocalCluster` of worker processes with one thread each (Dask starts
  them with one BLAS thread), on the same {os.cpu_count()} cores as the scheduler and the
  client; 2 workers are {speedup:.2f}x as fast as 1. With 2 workers the busier one used
  {cpu_share:.0%} of the CPU time of the single worker (next table); the wall-clock gain also
  depends on how many cores other jobs leave free (see the load average).
* The last column is the relative Frobenius difference of the weights from the `learn_many`
  model with one BLAS thread: every method gives the same model, up to rounding.

## The Dask workers (one figure per worker; memory in MB)

{worker_table}

The model itself is tiny here: {_human_bytes(8 * (N_FEATURES + 1) ** 2)} of statistics per
class (8 (d + 1)^2 bytes, d = {N_FEATURES}). A worker's memory is that of the partition it is
learning: reading the parquet file, the float64 matrix that `learn_many` validates and the rows
of each class it multiplies. The peak grew by at most {growth / MB:,.0f} MB over the idle
worker, {growth / MB / partition_mb:.1f}x the {partition_mb:,.0f} MB of one partition in
float64 ({args.partition_rows:,} x {N_FEATURES + 1} x 8 bytes): smaller partitions lower it.

## Where the statistics become too large (two classes)

{memory_projection()}

Each partial model of the Dask fit holds the statistics of every class its partition has, and
the reduction ships one partial model per partition: 8 (d + 1)^2 bytes per class each time.
"""
    print(text)
    if not args.quick:
        write_results(RESULTS, text)
    return 0


def _total_memory() -> str:
    try:
        import psutil
    except ImportError:
        return "memory unknown"
    return f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM"


if __name__ == "__main__":
    raise SystemExit(main())
