"""The ``evaluate`` command: progressive validation of several models on one data stream.

``river-nrrls evaluate`` compares models of the `MODELS` registry by progressive
validation (river's `river.evaluate.iter_progressive_val_score`: every sample is first
predicted, then learnt) on a bundled data set or a user's CSV file, and prints G-mean, balanced
accuracy, accuracy, time and memory per model.

This module owns the command: its options, the progressive-validation loop (`evaluate_models`)
and the printed table (`format_table`). The model registry and the models it builds belong to
`river_nrrls.cli._models`, reading a CSV file to `river_nrrls.cli._csv_stream`; their public
names are re-exported here.

Examples
--------

>>> from river_nrrls import cli
>>> cli.main(["evaluate", "--limit", "300", "--models", "nrrls,lr,lr-std", "--no-progress"])
... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
Pima (shuffled, seed 42): 300 samples, 8 features (progressive validation)
model  G-mean  balanced acc.  accuracy  time (s)  memory
nrrls  0.7419  0.7434  0.7559  ...
lr     0.2246  0.4856  0.6033  ...
lr-std 0.7693  0.7721  0.7900  ...
0

The same scores, as numbers:

>>> import itertools
>>> from river_nrrls import datasets
>>> samples = list(itertools.islice(datasets.Pima(), 300))
>>> [(r.model, round(r.g_mean, 4)) for r in cli.evaluate_models(samples, ["nrrls", "rls"])]
[('nrrls', 0.7743), ('rls', 0.7737)]

"""

from __future__ import annotations

import argparse
import collections
import csv
import dataclasses
import io
import random
import sys
import time
import typing

from river import base, metrics, stream, utils

from .. import datasets
from . import ProgressBar, UsageError, positive_int, register_command
from ._csv_stream import CsvStream, CsvTable, Sample, read_csv
from ._models import (
    AS_GIVEN,
    DEFAULT_MODELS,
    MODELS,
    Model,
    ModelSpec,
    binary_view,
    build_model,
    register_model,
)

__all__ = [
    "DEFAULT_MODELS",
    "MODELS",
    "CsvStream",
    "CsvTable",
    "Model",
    "ModelSpec",
    "Result",
    "build_model",
    "evaluate_models",
    "format_table",
    "read_csv",
    "register_model",
]

DEFAULT_DATASET = "pima"
#: A clock of `evaluate_models`: seconds, read before and after every step of a model.
Clock = typing.Callable[[], float]

# ------------------------------------------------------------------------------- evaluation


@dataclasses.dataclass(frozen=True)
class Result:
    """Scores of one model after a progressive validation."""

    model: str
    g_mean: float
    balanced_accuracy: float
    accuracy: float
    seconds: float
    memory_bytes: int
    memory: str


@dataclasses.dataclass
class _Run:
    """One model's progressive validation, advanced one sample at a time."""

    name: str
    model: Model
    positive: typing.Any  # the label that is True for a binary-only model, or AS_GIVEN
    g_mean: metrics.GeometricMean = dataclasses.field(default_factory=metrics.GeometricMean)
    balanced_accuracy: metrics.BalancedAccuracy = dataclasses.field(
        default_factory=metrics.BalancedAccuracy
    )
    accuracy: metrics.Accuracy = dataclasses.field(default_factory=metrics.Accuracy)
    clock: Clock = time.perf_counter
    seconds: float = 0.0

    def step(self, x: dict, y: base.typing.ClfTarget) -> None:
        """Predict ``x``, score the prediction, then learn ``(x, y)``: river's progressive
        validation (``evaluate.progressive_val_score``) of one sample."""
        if self.positive is not AS_GIVEN:
            y = y == self.positive
        start = self.clock()
        y_pred = self.model.predict_one(x)
        if y_pred is not None and y_pred != {}:
            self.g_mean.update(y, y_pred)
            self.balanced_accuracy.update(y, y_pred)
            self.accuracy.update(y, y_pred)
        self.model.learn_one(x, y)
        self.seconds += self.clock() - start

    def result(self) -> Result:
        """The scores so far."""
        memory_bytes = self.model._raw_memory_usage  # the trained model's object graph
        return Result(
            model=self.name,
            g_mean=float(self.g_mean.get()),
            balanced_accuracy=float(self.balanced_accuracy.get()),
            accuracy=float(self.accuracy.get()),
            seconds=self.seconds,
            memory_bytes=memory_bytes,
            memory=utils.pretty.humanize_bytes(memory_bytes),
        )


def _start_runs(
    model_names: typing.Sequence[str],
    positive: typing.Any,
    scale: bool,
    categorical: bool,
    clock: Clock,
) -> list[_Run]:
    """A fresh run of every model; ``positive`` is `binary_view`'s answer for the labels."""
    runs = []
    for name in model_names:
        binary = MODELS[name].binary_only and positive is not None
        model = build_model(name, one_vs_rest=not binary, scale=scale, categorical=categorical)
        runs.append(_Run(name, model, positive if binary else AS_GIVEN, clock=clock))
    return runs


def evaluate_models(
    samples: typing.Iterable[Sample],
    model_names: typing.Sequence[str],
    scale: bool = False,
    progress: typing.TextIO | None = None,
    *,
    labels: collections.Counter | None = None,
    progress_delay: float = 0.0,
    categorical: bool = False,
    clock: Clock = time.perf_counter,
) -> list[Result]:
    """Progressive validation of every model of ``model_names`` on ``samples``, in one pass.

    Every sample is predicted, scored and then learnt by each model in turn (river's
    `river.evaluate.progressive_val_score`, for all the models at once), so that ``samples``
    can be a stream read once: nothing is kept but the models. ``labels``, the count of every
    label of the stream in first-seen order, tells binary-only models what to expect; when it
    is not given, ``samples`` is read into a list to count them.

    A binary-only model (``lr``) gets the labels as booleans: unchanged when they are already
    ``True``/``False``; for two other labels, ``True`` stands for the less frequent one (the
    first seen on a tie), which changes no score; with more classes the model is wrapped in
    `river.multiclass.OneVsRestClassifier`.

    The time of a model is the time of its own steps (predictions, learning and metric
    updates) on ``clock`` (wall time by default); its memory is river's ``_raw_memory_usage`` of
    the trained model. One progress bar goes to ``progress`` when it is a stream. An error of a
    model (``ValueError``, ``MemoryError``, ...) gets a note naming the model and the sample.

    Parameters
    ----------
    samples
        ``(x, y)`` pairs, iterated once.
    model_names
        Names of `MODELS`, in the order of the results.
    scale
        Put a min-max scaler in front of every model (see `build_model`).
    progress
        The stream of the progress bar (``None``: no bar).
    labels
        The count of every label of ``samples``, in first-seen order (``None``: counted here).
    progress_delay
        Seconds of work before the progress bar appears (0: at once).
    categorical
        The samples have string (categorical) values: every model gets them one-hot encoded by
        river's `river.preprocessing.OneHotEncoder` in its pipeline (see `build_model`).
    clock
        The clock of the models' times: `time.perf_counter` (wall) or `time.process_time`
        (CPU, as the benchmarks time).

    Returns
    -------
    list[Result]
        The scores of every model, in the order of ``model_names``.

    """
    if labels is None:
        samples = list(samples)
        labels = collections.Counter(y for _, y in samples)
    runs = _start_runs(model_names, binary_view(labels), scale, categorical, clock)
    total = sum(labels.values())
    bar = ProgressBar(", ".join(model_names), total, progress, delay=progress_delay)
    every = max(1, min(total // 100, _PROGRESS_EVERY))  # a hundred updates or more
    done = 0
    try:
        for x, y in samples:
            for run in runs:
                try:
                    run.step(x, y)
                except Exception as error:  # ValueError, MemoryError, ...: say where
                    error.add_note(f"model {run.name!r}, sample {done + 1}")
                    raise
            done += 1
            if done % every == 0:
                bar.update(done)
    finally:
        if done % every:
            bar.update(done)
        bar.close()
    return [run.result() for run in runs]


# -------------------------------------------------------------------------------- the tables

_COLUMNS = ("model", "G-mean", "balanced acc.", "accuracy", "time (s)", "memory")
_CSV_COLUMNS = (
    "model",
    "g_mean",
    "balanced_accuracy",
    "accuracy",
    "time_s",
    "memory_bytes",
)


def _cells(result: Result) -> list[str]:
    """The cells of a result in the text and Markdown tables (rounded)."""
    return [
        result.model,
        f"{result.g_mean:.4f}",
        f"{result.balanced_accuracy:.4f}",
        f"{result.accuracy:.4f}",
        f"{result.seconds:.3f}",
        result.memory,
    ]


def _csv_table(results: list[Result]) -> str:
    """The results as CSV: full precision, memory in bytes."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_CSV_COLUMNS)
    for r in results:
        writer.writerow(
            [
                r.model,
                repr(r.g_mean),
                repr(r.balanced_accuracy),
                repr(r.accuracy),
                repr(r.seconds),
                r.memory_bytes,
            ]
        )
    return buffer.getvalue().rstrip("\n")


def format_table(results: list[Result], fmt: str = "text") -> str:
    """The results as an aligned text table, a Markdown table or CSV (full precision).

    Parameters
    ----------
    results
        The results of `evaluate_models`, one row each.
    fmt
        ``"text"``, ``"markdown"`` or ``"csv"``.

    """
    if fmt == "csv":
        return _csv_table(results)
    rows = [list(_COLUMNS)] + [_cells(r) for r in results]
    widths = [max(len(row[j]) for row in rows) for j in range(len(_COLUMNS))]

    def line(row: list[str], separator: str) -> str:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:])
        ]
        return separator.join(cells)

    if fmt == "markdown":
        rule = ["-" * widths[0]] + ["-" * (width - 1) + ":" for width in widths[1:]]
        body = [rows[0], rule] + rows[1:]
        return "\n".join("| " + line(row, " | ") + " |" for row in body)
    return "\n".join(line(row, "  ").rstrip() for row in rows)


# ----------------------------------------------------------------------- the evaluate command

_EVALUATE_DESCRIPTION = """\
Progressive validation (river's evaluate.progressive_val_score: every sample is first
predicted, then learnt, in order) of several models on one data stream, printing G-mean,
balanced accuracy, accuracy, wall time and the memory of the trained model per model.

The bundled data sets are already min-max scaled to [0, 1], so every model gets the features
as they are; in particular 'lr' is a plain LogisticRegression, not a StandardScaler pipeline.
The features of a --csv file are NOT scaled: add --scale to put a river
preprocessing.MinMaxScaler() (online, per feature) in front of every model. A --csv column
whose values are not numbers (say channel=web, country=FR) is categorical: every model gets
it one-hot encoded online, compose.SelectType(str) | preprocessing.OneHotEncoder() beside
the numeric columns in its pipeline, so that all the models see the same features.
A --csv file is streamed: it is read once to check every row and count the labels, then
once more while all the models learn it together, sample by sample; no row is kept in memory."""


def _model_list(text: str) -> list[str]:
    """The argparse ``type`` of ``--models``: known names, without repetitions."""
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no model given")
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown model(s) {', '.join(map(repr, unknown))}; choose from {', '.join(MODELS)}"
        )
    return list(dict.fromkeys(names))  # without repetitions, in the given order


def _add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``evaluate``, in the order of its ``--help``."""
    _add_data_arguments(parser)
    _add_model_arguments(parser)
    _add_stream_arguments(parser)
    _add_output_arguments(parser)


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` or ``--csv`` (with its ``--target``)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--dataset",
        metavar="NAME",
        help=(
            f"bundled data set, case-insensitive (default: {DEFAULT_DATASET}); one of: "
            f"{', '.join(name.lower() for name in datasets.NAMES)} (the paper's names work too)"
        ),
    )
    source.add_argument(
        "--csv",
        metavar="PATH",
        help=(
            "a CSV file with a header row (or .csv.gz) to evaluate on instead, rows in file "
            "order: every column but --target is a feature, numeric (numbers; true/false, any "
            "case, are 1 and 0) or categorical (a column whose values are not numbers, "
            "one-hot encoded online by river's preprocessing.OneHotEncoder in every model's "
            "pipeline: value v of column c is the feature c_v); a column of both numbers and "
            "text is refused; an empty cell is a missing value. The numeric features are NOT "
            "scaled (see --scale). A regular file, streamed: read once to check it, once more "
            "for the models"
        ),
    )
    parser.add_argument(
        "--target",
        metavar="COLUMN",
        help=(
            "the label column of --csv; labels are taken as read (strings), except that "
            "true/false (any case) become the booleans True/False"
        ),
    )


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--models`` and ``--scale``."""
    parser.add_argument(
        "--models",
        type=_model_list,
        default=list(DEFAULT_MODELS),
        metavar="M1,M2",
        help=(
            f"comma-separated models (default: {','.join(DEFAULT_MODELS)}): "
            + "; ".join(f"{name} = {spec.description}" for name, spec in MODELS.items())
            + ". A binary-only model (lr) sees two labels other than True/False as booleans "
            "(True = the less frequent label, which changes no score) and is wrapped in river's "
            "multiclass.OneVsRestClassifier for more classes"
        ),
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help=(
            "put a river preprocessing.MinMaxScaler() (online, per feature) in front of every "
            "model (of the numeric columns; the one-hot features of text columns are 0 or 1); a "
            "feature the scaler has not seen yet is 0 instead of river's NaN"
        ),
    )


def _add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    """``--limit``, ``--shuffle`` and ``--seed``."""
    parser.add_argument(
        "--limit", type=positive_int, metavar="N", help="stop after the first N samples"
    )
    parser.add_argument(
        "--shuffle",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "shuffle the samples (with --seed) before the stream starts; default: on for the "
            "bundled data sets, several of which are stored sorted by class, off for --csv "
            "(shuffled with river's stream.shuffle in a buffer of about a million cells)"
        ),
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the shuffle (default: 42)")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format`` and ``--progress``."""
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "csv"),
        default="text",
        help="output table format (default: text; csv prints full precision and bytes)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "progress bars on stderr from the start, wherever stderr goes (default: only when "
            f"stderr is a terminal, once the work has taken {PROGRESS_DELAY:g} s)"
        ),
    )


#: Without ``--progress``, a terminal shows the progress once the work has taken this long (s).
PROGRESS_DELAY = 2.0
#: The progress bar of the evaluation is updated every this many samples at least.
_PROGRESS_EVERY = 1000

#: A classification target with more distinct values than this (and than half the rows) is
#: taken for a continuous one and refused.
_MAX_CLASSES = 100
#: ``--shuffle`` of a CSV file shuffles in a buffer of about this many cells (rows x features).
SHUFFLE_CELLS = 10**6


def _check_classes(path: str, target: str, labels: collections.Counter) -> None:
    """Refuse a target that looks continuous: one class per row is no classification."""
    n_classes, n_rows = len(labels), sum(labels.values())
    if n_classes > _MAX_CLASSES and n_classes > n_rows / 2:
        raise UsageError(
            f"{path}: the target {target!r} has {n_classes} distinct values in {n_rows} "
            "rows: a continuous target? evaluate needs class labels (at most "
            f"{_MAX_CLASSES} distinct values, or at most one per two rows)"
        )


class _Source(typing.NamedTuple):
    """The data the user asked for: its caption, samples (a list, or a `CsvStream`), number
    of samples and of features, label counts (``None``: `evaluate_models` counts them) and text
    (categorical) columns."""

    caption: str
    samples: typing.Iterable[Sample]
    n_samples: int
    n_features: int
    labels: collections.Counter | None
    text_columns: tuple[str, ...] = ()


def _load_samples(args: argparse.Namespace, progress: ProgressBar) -> _Source:
    """The data the user asked for (``progress``: the bar of the check of a CSV file)."""
    if args.target is not None and args.csv is None:
        raise UsageError("--target needs --csv")
    if args.csv is not None:
        if args.target is None:
            raise UsageError("--csv needs --target COLUMN (the label column)")
        return _csv_source(args, progress)
    return _dataset_source(args)


def _csv_source(args: argparse.Namespace, progress: ProgressBar) -> _Source:
    """The samples of ``--csv``, streamed (shuffled in a buffer with ``--shuffle``)."""
    csv_stream = CsvStream(args.csv, args.target, args.limit, progress=progress)
    _check_classes(args.csv, args.target, csv_stream.labels)
    samples: typing.Iterable[Sample] = csv_stream
    caption = args.csv
    if args.shuffle:
        buffer = max(1, min(csv_stream.n_samples, SHUFFLE_CELLS // csv_stream.n_features))
        samples = _Reiterable(
            lambda: stream.shuffle(iter(csv_stream), buffer_size=buffer, seed=args.seed)
        )
        caption += f" (shuffled in a buffer of {buffer:,} rows, seed {args.seed})"
    return _Source(
        caption,
        samples,
        csv_stream.n_samples,
        csv_stream.n_features,
        csv_stream.labels,
        tuple(csv_stream.text_columns),
    )


def _dataset_source(args: argparse.Namespace) -> _Source:
    """The samples of a bundled data set, in memory (shuffled unless ``--no-shuffle``)."""
    name = args.dataset if args.dataset is not None else DEFAULT_DATASET
    try:
        dataset = datasets.load(name)
    except KeyError:
        known = ", ".join(n.lower() for n in datasets.NAMES)
        raise UsageError(f"unknown data set {name!r}; choose from {known}") from None
    rows = list(dataset)
    caption = type(dataset).__name__
    if args.shuffle is not False:
        random.Random(args.seed).shuffle(rows)
        caption += f" (shuffled, seed {args.seed})"
    rows = rows[: args.limit]
    return _Source(caption, rows, len(rows), dataset.n_features, None)


class _Reiterable:
    """An iterable whose every iteration calls ``start()`` for a fresh iterator."""

    def __init__(self, start: typing.Callable[[], typing.Iterator[Sample]]):
        self.start = start

    def __iter__(self) -> typing.Iterator[Sample]:
        return self.start()


def _where(error: BaseException) -> str:
    """The notes `evaluate_models` adds to an error (the model and the sample), in brackets."""
    notes = getattr(error, "__notes__", None)
    return f" ({'; '.join(notes)})" if notes else ""


def _caption_line(source: _Source, scale: bool) -> str:
    """The line above the table: the data, its size and how the models see it."""
    how = ["progressive validation"]
    if source.text_columns:
        shown = ", ".join(source.text_columns[:10]) + (
            ", ..." if len(source.text_columns) > 10 else ""
        )
        how.append(f"text column(s) {shown} one-hot encoded")
    if scale:
        how.append(
            "numeric features min-max scaled" if source.text_columns else "features min-max scaled"
        )
    return (
        f"{source.caption}: {source.n_samples} samples, {source.n_features} features "
        f"({', '.join(how)})"
    )


def _run_evaluate(args: argparse.Namespace) -> int:
    """Evaluate the models on the data and print the table: the ``run`` of ``evaluate``."""
    show_progress, delay = args.progress, 0.0
    if show_progress is None:  # the default: on a terminal, once the work takes a while
        show_progress = sys.stderr is not None and sys.stderr.isatty()
        delay = PROGRESS_DELAY
    stream = sys.stderr if show_progress else None
    check = ProgressBar(f"checking {args.csv}", None, stream, delay=delay, unit="rows")
    source = _load_samples(args, check)
    try:
        results = evaluate_models(
            source.samples,
            args.models,
            scale=args.scale,
            progress=stream,
            labels=source.labels,
            progress_delay=0.0 if check.shown else delay,
            categorical=bool(source.text_columns),
        )
    except ValueError as error:  # a model refused the data (values too large together, ...)
        raise UsageError(
            f"{source.caption}: a model refused the data{_where(error)}: {error}"
        ) from None
    except MemoryError as error:
        raise UsageError(
            f"{source.caption}: out of memory{_where(error)}: {source.n_features:,} features "
            "may be too many for a model (NR-RLS keeps a features x features matrix); try "
            "--models without it, or fewer columns"
        ) from None
    if args.format != "csv":
        print(_caption_line(source, args.scale))
    print(format_table(results, args.format))
    return 0


register_command(
    "evaluate",
    help="progressive validation of NR-RLS next to river models on a data set",
    add_arguments=_add_evaluate_arguments,
    run=_run_evaluate,
    description=_EVALUATE_DESCRIPTION,
)
