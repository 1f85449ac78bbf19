"""What the benchmark scripts share: their synthetic streams, timing loops, environment header and
results tables.

A script of ``benchmarks/`` runs as ``python benchmarks/<name>.py``, so this module is imported
as ``_common`` (the script's folder is first on ``sys.path``). It imports numpy only inside its
functions: a script calls `limit_blas_threads` before anything imports numpy.

* Threads: `limit_blas_threads`, `THREAD_VARIABLES`.
* Streams: `make_stream` (the imbalanced linear concept of the speed benchmarks),
  `uniform_classes_stream` (its inputs with uniform random labels), and the drifting
  imbalanced streams of river's generators (`DRIFT_STREAMS`, `build_drift_stream`,
  `drift_positions`, `drift_width`) with their metric `gmean`.
* Timing: `timed_pass` (one prequential pass, a wall or CPU clock) and `interleaved` (the best
  repeat of models warmed once and taking turns).
* NR-RLS's internals the benchmarks read or set: `force_direct`, `solver_counters`,
  `weight_matrix`, `factor_precision`.
* Reports: `environment` / `environment_header` (Python, numpy, river, BLAS and its threads as
  threadpoolctl sees them, CPU, date), `table` (aligned Markdown), `compact_table` (``|---|``
  rules) and `write_results`.

"""

from __future__ import annotations

import copy
import datetime
import itertools
import os
import platform
import sys
import time
import typing
from pathlib import Path

#: The variables that set the BLAS libraries' thread counts when numpy loads them.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads(force: bool = False) -> None:
    """One BLAS thread for the whole process: call before numpy is imported.

    The benchmarks' matrices are small, and on a shared machine extra threads only slow them
    down; every model of a run gets the same. ``force`` overrides a setting of the
    environment, else it is kept.

    """
    for variable in THREAD_VARIABLES:
        if force:
            os.environ[variable] = "1"
        else:
            os.environ.setdefault(variable, "1")


# ----------------------------------------------------------------------------- streams


def make_stream(n: int, d: int, seed: int = 0, positives: float = 0.1, n_classes: int = 2):
    """``n`` samples of ``d`` uniform features (river's dict form) and their labels.

    Two classes: ``positives`` of the samples positive, the top of a noisy linear score.
    More: the arg-max of ``n_classes`` linear scores.

    """
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    if n_classes == 2:
        score = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
        labels = [bool(v) for v in score > np.quantile(score, 1 - positives)]
    else:
        labels = [int(v) for v in (X @ rng.normal(size=(d, n_classes))).argmax(axis=1)]
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    return rows, labels


def uniform_classes_stream(n: int, d: int, n_classes: int, seed: int, label_seed: int):
    """The inputs of `make_stream` (``seed``) with uniform random labels of ``n_classes``
    classes (``label_seed``): every class present, independently of the inputs."""
    import numpy as np

    rows, _ = make_stream(n, d, seed=seed)
    labels = np.random.default_rng(label_seed).integers(n_classes, size=n).tolist()
    return rows, labels


class DriftStream(typing.NamedTuple):
    """A drifting imbalanced stream: its generator, concepts and shape."""

    generator: str  # "sea" or "agrawal"
    concepts: tuple[int, ...]  # SEA variants or Agrawal functions, one per segment
    positives: float  # share of positives of every concept
    width: int  # samples over which a drift happens
    noise: float  # label noise (SEA)


#: The drifting streams of ``drift.py`` and ``selector.py`` (described in drift.py).
DRIFT_STREAMS = {
    "SEA": DriftStream("sea", (0, 3, 2, 1), 0.10, 500, 0.05),
    "Agrawal-linear": DriftStream("agrawal", (6, 7, 8, 6), 0.15, 5000, 0.0),
    "Agrawal-nonlinear": DriftStream("agrawal", (1, 2, 5, 3), 0.15, 5000, 0.0),
}


def drift_positions(n: int) -> list[int]:
    """Where the three drifts of an ``n``-sample stream are centred."""
    return [n // 4, n // 2, 3 * n // 4]


def drift_width(name: str, n: int) -> int:
    """The stream's width, shrunk for short (--quick) streams, and never so narrow that
    ConceptDriftStream's sigmoid overflows (exp(4 * position / width) needs width > pos / 177)."""
    width = min(DRIFT_STREAMS[name].width, max(1, n // 20))
    return max(width, drift_positions(n)[-1] // 170 + 1)


def build_drift_stream(name: str, n: int, seed: int) -> tuple:
    """The first ``n`` samples of stream ``name`` (a tuple of ``(x, y)``, y a bool): every
    concept resampled to its share of positives, chained with ``ConceptDriftStream``, the
    features mapped to [0, 1] by the generators' fixed ranges."""
    from river.datasets import synth

    from river_nrrls.datasets.synth import Imbalanced, scale_agrawal

    stream_spec = DRIFT_STREAMS[name]
    width = drift_width(name, n)
    parts = []
    for k, concept in enumerate(stream_spec.concepts):
        base_seed = 1000 * seed + 10 * k
        if stream_spec.generator == "sea":
            generator = synth.SEA(variant=concept, noise=stream_spec.noise, seed=base_seed)
        else:
            generator = synth.Agrawal(classification_function=concept, seed=base_seed)
        parts.append(Imbalanced(generator, stream_spec.positives, base_seed + 1))
    stream = parts[0]
    for k, (part, position) in enumerate(zip(parts[1:], drift_positions(n))):
        stream = synth.ConceptDriftStream(
            stream=stream,
            drift_stream=part,
            position=position,
            width=width,
            seed=1000 * seed + 100 + k,
        )
    if stream_spec.generator == "sea":
        scale = lambda x: {f"x{k}": v / 10.0 for k, v in x.items()}  # noqa: E731
    else:
        scale = scale_agrawal
    return tuple((scale(x), bool(y)) for x, y in itertools.islice(stream, n))


def gmean(labels, predictions) -> float:
    """sqrt(TPR * TNR) of two boolean arrays (0 when a class is absent)."""
    import numpy as np

    positives, negatives = labels.sum(), (~labels).sum()
    if positives == 0 or negatives == 0:
        return 0.0
    tpr = (predictions & labels).sum() / positives
    tnr = (~predictions & ~labels).sum() / negatives
    return float(np.sqrt(tpr * tnr))


# ----------------------------------------------------------------------------- timing


def timed_pass(model, samples, predict: bool = True, clock=time.perf_counter) -> float:
    """Seconds (of ``clock``: wall by default, ``time.process_time`` for CPU time) for one pass
    of ``model`` over the ``(x, y)`` pairs of ``samples``: ``predict_one`` then ``learn_one``
    on every sample (what ``evaluate.progressive_val_score`` does), or ``learn_one`` alone."""
    learn = model.learn_one
    if predict:
        infer = model.predict_one
        start = clock()
        for x, y in samples:
            infer(x)
            learn(x, y)
        return clock() - start
    start = clock()
    for x, y in samples:
        learn(x, y)
    return clock() - start


def interleaved(models: dict, warm, timed, predict: bool, repeats: int) -> dict:
    """Best microseconds per timed step of every model; models take turns in every repeat.

    ``models`` maps names to factories; ``warm`` and ``timed`` are ``(rows, labels)``. Each model
    learns the ``warm`` prefix once (untimed); every repeat times a deep copy of the warmed
    model on the ``timed`` steps (`timed_pass`). Returns ``{name: (us, model after the run)}``.

    """
    warmed = {}
    for name, make in models.items():
        model = make()
        for x, y in zip(*warm):
            model.learn_one(x, y)
        warmed[name] = model
    best = {name: (float("inf"), None) for name in models}
    for _ in range(repeats):
        for name, model in warmed.items():
            run = copy.deepcopy(model)
            us = timed_pass(run, zip(*timed), predict) / len(timed[0]) * 1e6
            if us < best[name][0]:
                best[name] = (us, run)
    return best


# ----------------------------------------------------------------------------- NR-RLS


def force_direct(model):
    """``model`` (an NRRLS) held to its direct Cholesky paths at every width, shared and batched
    per class: the benchmarks' "NRRLS direct". The one place they set the solver's private
    thresholds."""
    model.weight_solver.stale_min_dim = model.weight_solver.class_stale_min_dim = 10**9
    return model


def solver_counters(model) -> dict:
    """The solver's counters of an NRRLS: ``stale`` solves, CG ``iterations``, ``refactor``
    (factorisations) and the rest."""
    return dict(model.weight_solver.counters)


def weight_matrix(model):
    """An NRRLS's weights as one array (a row per class, the intercept first)."""
    return model._weight_matrix()


def factor_precision(model) -> str:
    """The precision of P^-1 in an NRRLS's last stale factor(s): "single", "double", both, or
    "-" (none)."""
    solver = model.weight_solver
    factors = [solver.stale] if solver.class_factors is None else solver.class_factors
    names = {"f": "single", "d": "double"}
    kinds = {names[f.inverse.dtype.char] for f in factors if f is not None}
    return " and ".join(sorted(kinds)) or "-"


# ----------------------------------------------------------------------------- reports


class Environment(typing.NamedTuple):
    """What a run was measured on."""

    python: str
    numpy: str
    river: str
    blas: str  # each BLAS library threadpoolctl finds: its name, version and threads
    cpu: str  # the architecture, the processor's name where the platform gives it, the cores
    date: str  # UTC, to the minute


def _blas() -> str:
    import threadpoolctl

    pools = [pool for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    if not pools:
        return "BLAS not found"
    return ", ".join(
        f"{pool['internal_api']} {pool.get('version') or ''} "
        f"({pool['num_threads']} thread{'s' if pool['num_threads'] > 1 else ''})".replace("  ", " ")
        for pool in pools
    )


def environment() -> Environment:
    """The versions, BLAS threads and machine of this process (numpy and scipy's BLAS
    loaded first, so that threadpoolctl sees them)."""
    import numpy as np
    import river
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS too)

    processor = platform.processor()
    cpu = platform.machine() + (f" ({processor})" if processor else "")
    return Environment(
        python=platform.python_version(),
        numpy=np.__version__,
        river=river.__version__,
        blas=_blas(),
        cpu=f"{cpu}, {os.cpu_count()} cores",
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def environment_header() -> str:
    """One line: `environment` for a results file and the terminal."""
    env = environment()
    return (
        f"Python {env.python}, numpy {env.numpy}, river {env.river}; BLAS: {env.blas}; "
        f"{env.cpu}; {env.date}."
    )


def _cells(cells) -> list[str]:
    # A "|" inside a cell (a pipeline's name) would end the cell: escape it.
    return [str(cell).replace("|", "\\|") for cell in cells]


def table(headers, rows) -> str:
    """A Markdown table with its columns padded to a common width."""
    headers = _cells(headers)
    rows = [_cells(row) for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, rule, *body])


def table_row(cells) -> str:
    """One row of a `compact_table` (to print rows as they are measured)."""
    return "| " + " | ".join(_cells(cells)) + " |"


def compact_table(headers, rows=(), rule: str = "---") -> str:
    """A Markdown table with unpadded cells and ``|---|`` rules (``rule`` sets the dashes,
    ``---:`` to right-align)."""
    lines = [table_row(headers), "|" + "|".join(rule for _ in headers) + "|"]
    return "\n".join(lines + [table_row(row) for row in rows])


def write_results(path: Path, text: str) -> None:
    """Write a results file (its folder made if needed) and say so on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"written to {path}", file=sys.stderr)
