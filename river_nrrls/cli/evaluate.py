"""The ``evaluate`` command: progressive validation of several models on one data stream.

``river-nrrls evaluate`` compares models of the `MODELS` registry by progressive
validation (river's `river.evaluate.iter_progressive_val_score`: every sample is first
predicted, then learnt) on a bundled data set or a user's CSV file, and prints G-mean, balanced
accuracy, accuracy, time and memory per model.

Examples
--------

>>> from river_nrrls import cli
>>> cli.main(["evaluate", "--dataset", "pima", "--limit", "300", "--no-progress"])
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
import gzip
import io
import random
import sys
import time
import typing
import zlib

from river import (
    base,
    evaluate,
    linear_model,
    metrics,
    multiclass,
    naive_bayes,
    preprocessing,
    utils,
)

from .. import datasets
from .._index import check_value
from ..nrrls import NRRLS
from . import ProgressBar, UsageError, positive_int, register_command

__all__ = [
    "MODELS",
    "ModelSpec",
    "Result",
    "build_model",
    "evaluate_models",
    "format_table",
    "read_csv",
    "register_model",
]

DEFAULT_DATASET = "pima"
DEFAULT_MODELS = ("nrrls", "lr", "lr-std")

Sample = tuple[dict, typing.Hashable]


# ----------------------------------------------------------------------------- model registry


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A model of the ``--models`` registry.

    Parameters
    ----------
    description
        One line for ``--help``.
    build
        Returns a fresh, untrained classifier.
    binary_only
        The classifier only understands ``True``/``False`` labels (see `evaluate_models`
        for what it gets on other labels).

    """

    description: str
    build: typing.Callable[[], base.Classifier]
    binary_only: bool = False


#: Models of ``--models`` by name (lower case).
MODELS: dict[str, ModelSpec] = {}


def register_model(
    name: str,
    description: str,
    build: typing.Callable[[], base.Classifier],
    binary_only: bool = False,
) -> None:
    """Add (or replace) the model ``name`` of the ``--models`` registry."""
    MODELS[name.lower()] = ModelSpec(description, build, binary_only)


register_model("nrrls", "NRRLS(): NR-RLS, exact online total-error-rate least squares", NRRLS)
register_model(
    "rls",
    "NRRLS(reweight=False): plain ridge recursive least squares (the paper's RLS)",
    lambda: NRRLS(reweight=False),
)
register_model(
    "lr",
    "river linear_model.LogisticRegression() (SGD, default parameters, no scaler)",
    linear_model.LogisticRegression,
    binary_only=True,
)
register_model(
    "lr-std",
    "river preprocessing.StandardScaler() | linear_model.LogisticRegression(): the usual river "
    "recipe, standardised online",
    lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression(),
    binary_only=True,
)
register_model("gnb", "river naive_bayes.GaussianNB()", naive_bayes.GaussianNB)


class _MinMaxScaler(preprocessing.MinMaxScaler):
    """river's `river.preprocessing.MinMaxScaler`, except that a feature it has not
    learnt yet becomes 0 (like a constant feature) instead of NaN.

    river's scaler divides by ``max - min = -inf - inf`` for a feature without statistics, so
    the first prediction of a progressive validation (and the first after a new feature appears)
    would get NaN features: NR-RLS rejects them, other models silently predict from NaN.

    """

    def transform_one(self, x: dict) -> dict:
        known = self.min  # a defaultdict: only test membership, never index it for a new name
        if all(name in known for name in x):
            return super().transform_one(x)
        result = super().transform_one({name: v for name, v in x.items() if name in known})
        return {name: result.get(name, 0.0) for name in x}


def build_model(name: str, one_vs_rest: bool = False, scale: bool = False) -> base.Classifier:
    """A fresh model ``name`` of `MODELS`.

    ``one_vs_rest`` wraps a binary-only model in `river.multiclass.OneVsRestClassifier`;
    ``scale`` puts a min-max scaler in front (river's, except that a feature not seen yet is 0,
    not NaN).

    """
    spec = MODELS[name]
    model = spec.build()
    if spec.binary_only and one_vs_rest:
        model = multiclass.OneVsRestClassifier(model)
    if scale:
        model = _MinMaxScaler() | model
    return model


def _boolean_labels(samples: list[Sample]) -> list[Sample] | None:
    """The samples as a binary-only model sees them: ``None`` when there are over two classes.

    Labels other than ``True``/``False`` become ``y == positive``, the positive label being the
    less frequent one (the first seen on a tie). The scores do not depend on the names of the
    two classes, so this only lets a binary-only model learn them.

    """
    counts = collections.Counter(y for _, y in samples)
    if all(isinstance(label, bool) for label in counts):
        return samples
    if len(counts) > 2:
        return None
    positive = min(counts, key=counts.__getitem__)  # a Counter keeps the first-seen order
    return [(x, y == positive) for x, y in samples]


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


def _score(
    model: base.Classifier, samples: list[Sample], bar: ProgressBar
) -> tuple[float, float, float, float]:
    """Progressive validation of ``model``: G-mean, balanced accuracy, accuracy and seconds."""
    g_mean, balanced_accuracy, accuracy = (
        metrics.GeometricMean(),
        metrics.BalancedAccuracy(),
        metrics.Accuracy(),
    )
    metric = g_mean + balanced_accuracy + accuracy
    step = max(1, len(samples) // 100)  # about a hundred progress updates
    start = time.perf_counter()
    for state in evaluate.iter_progressive_val_score(samples, model, metric, step=step):
        bar.update(state["Step"])
    seconds = time.perf_counter() - start
    bar.close()
    return g_mean.get(), balanced_accuracy.get(), accuracy.get(), seconds


def evaluate_models(
    samples: list[Sample],
    model_names: typing.Sequence[str],
    scale: bool = False,
    progress: typing.TextIO | None = None,
) -> list[Result]:
    """Progressive validation of every model of ``model_names`` on ``samples``, one at a time.

    A binary-only model (``lr``) gets the labels as booleans: unchanged when they are already
    ``True``/``False``; for two other labels, ``True`` stands for the less frequent one (the
    first seen on a tie), which changes no score; with more classes the model is wrapped in
    `river.multiclass.OneVsRestClassifier`.

    The time of a model is the wall time of its pass (predictions, learning and metric updates);
    its memory is river's ``_raw_memory_usage`` of the trained model. A progress bar per model
    goes to ``progress`` when it is a stream.

    """
    boolean_samples = _boolean_labels(samples)
    width = max(map(len, model_names), default=0)
    results = []
    for name in model_names:
        if MODELS[name].binary_only and boolean_samples is not None:
            model, stream = build_model(name, scale=scale), boolean_samples
        else:
            model, stream = build_model(name, one_vs_rest=True, scale=scale), samples
        bar = ProgressBar(name.ljust(width), len(samples), progress)
        g_mean, balanced_accuracy, accuracy, seconds = _score(model, stream, bar)
        memory_bytes = model._raw_memory_usage  # the trained model's object graph
        results.append(
            Result(
                model=name,
                g_mean=float(g_mean),
                balanced_accuracy=float(balanced_accuracy),
                accuracy=float(accuracy),
                seconds=seconds,
                memory_bytes=memory_bytes,
                memory=utils.pretty.humanize_bytes(memory_bytes),
            )
        )
    return results


# ---------------------------------------------------------------------------------- CSV input

_BOOLEANS = {"true": True, "false": False}
#: Target cells that mean "no label" (compared in lower case), as pandas reads them.
_MISSING_LABELS = frozenset(("nan", "na", "n/a", "<na>", "nat", "null", "none", "?"))
#: The largest magnitude of a feature value read from a CSV file: its square, 1e300, is the
#: most that NR-RLS's statistics accept (river_nrrls._checks.STATISTICS_LIMIT).
_MAX_MAGNITUDE = 1e150
#: A classification target with more distinct values than this (and than half the rows) is
#: taken for a continuous one and refused.
_MAX_CLASSES = 100


def _label(cell: str) -> typing.Hashable:
    return _BOOLEANS.get(cell.lower(), cell)


def _open_text(path: str) -> typing.TextIO:
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def read_csv(path: str, target: str, limit: int | None = None) -> tuple[list[Sample], int]:
    """Read a CSV file with a header row: ``(x, y)`` pairs in file order and the feature count.

    Every column but ``target`` is a numeric feature (cells are stripped of surrounding spaces;
    an empty cell is a missing value, left out of ``x``). The target's cells are the labels as
    read (strings), except that ``true``/``false`` in any case become ``True``/``False``. Blank
    lines are skipped. A ``.gz`` file is decompressed. Any problem raises `UsageError`
    naming the data row (1-based, header excluded), its line in the file and the column.

    """
    samples: list[Sample] = []
    try:
        with _open_text(path) as file:
            reader = csv.reader(file)
            header = [name.strip() for name in next(reader, [])]
            features = _check_header(path, header, target)
            target_column = header.index(target)
            data_row = 0
            for row in reader:
                if not row:
                    continue
                if limit is not None and data_row >= limit:
                    break
                data_row += 1
                where = f"{path}: data row {data_row} (line {reader.line_num})"
                samples.append(_parse_row(row, header, features, target_column, where))
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    except (EOFError, zlib.error) as error:
        raise UsageError(f"{path} is not a valid gzip file: {error}") from None
    except csv.Error as error:
        raise UsageError(f"{path}: line {reader.line_num}: {error}") from None
    if not samples:
        raise UsageError(f"{path} has no data rows")
    return samples, len(features)


def _check_header(path: str, header: list[str], target: str) -> list[tuple[int, str]]:
    """``(position, name)`` of the feature columns, after checking the header."""
    if not header:
        raise UsageError(f"{path} is empty (a header row is expected)")
    if "" in header:
        raise UsageError(
            f"{path}: column {header.index('') + 1} of the header has no name "
            "(an index column? every column but the target must be a named feature)"
        )
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise UsageError(f"{path}: the header repeats the column(s) {', '.join(duplicated)}")
    if target not in header:
        shown = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise UsageError(f"{path}: no target column {target!r} in the header ({shown})")
    features = [(j, name) for j, name in enumerate(header) if name != target]
    if not features:
        raise UsageError(f"{path}: no feature column besides the target {target!r}")
    return features


def _parse_row(
    row: list[str],
    header: list[str],
    features: list[tuple[int, str]],
    target_column: int,
    where: str,
) -> Sample:
    if len(row) != len(header):
        raise UsageError(f"{where}: expected {len(header)} fields, got {len(row)}")
    label = row[target_column].strip()
    if not label or label.lower() in _MISSING_LABELS:
        shown = f" ({label!r})" if label else ""
        raise UsageError(f"{where}, column {header[target_column]!r}: missing target{shown}")
    x = {}
    for j, name in features:
        cell = row[j].strip()
        if not cell:
            continue  # missing value: the feature is absent from this sample
        try:
            number = float(cell)
        except ValueError:
            raise UsageError(f"{where}, column {name!r}: non-numeric value {cell!r}") from None
        try:
            x[name] = check_value(name, number)
        except ValueError as error:  # NaN and infinities
            raise UsageError(f"{where}, column {name!r}: {error}") from None
        if abs(number) > _MAX_MAGNITUDE:
            raise UsageError(
                f"{where}, column {name!r}: the value {cell} is too large (beyond "
                f"{_MAX_MAGNITUDE:.0e} in magnitude its square overflows the statistics); "
                "rescale the column"
            )
    return x, _label(label)


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
    return [
        result.model,
        f"{result.g_mean:.4f}",
        f"{result.balanced_accuracy:.4f}",
        f"{result.accuracy:.4f}",
        f"{result.seconds:.3f}",
        result.memory,
    ]


def format_table(results: list[Result], fmt: str = "text") -> str:
    """The results as an aligned text table, a Markdown table or CSV (full precision)."""
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(_CSV_COLUMNS)
        for r in results:
            writer.writerow(
                [r.model, repr(r.g_mean), repr(r.balanced_accuracy), repr(r.accuracy),
                 repr(r.seconds), r.memory_bytes]
            )
        return buffer.getvalue().rstrip("\n")
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
preprocessing.MinMaxScaler() (online, per feature) in front of every model.
A --csv file is read into memory before the models run, one after the other."""


def _model_list(text: str) -> list[str]:
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
            "order: every column but --target is a numeric feature (an empty cell is a missing "
            "value); the features are NOT scaled (see --scale)"
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
            "model; a feature the scaler has not seen yet is 0 instead of river's NaN"
        ),
    )
    parser.add_argument(
        "--limit", type=positive_int, metavar="N", help="stop after the first N samples"
    )
    parser.add_argument(
        "--shuffle",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "shuffle the samples (with --seed) before the stream starts; default: on for the "
            "bundled data sets, several of which are stored sorted by class, off for --csv"
        ),
    )
    parser.add_argument(
        "--seed", type=int, default=42, help="seed of the shuffle (default: 42)"
    )
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
        help="progress bars on stderr (default: only when stderr is a terminal)",
    )


def _check_classes(path: str, target: str, samples: list[Sample]) -> None:
    """Refuse a target that looks continuous: one class per row is no classification."""
    n_classes = len({y for _, y in samples})
    if n_classes > _MAX_CLASSES and n_classes > len(samples) / 2:
        raise UsageError(
            f"{path}: the target {target!r} has {n_classes} distinct values in {len(samples)} "
            "rows: a continuous target? evaluate needs class labels (at most "
            f"{_MAX_CLASSES} distinct values, or at most one per two rows)"
        )


def _load_samples(args: argparse.Namespace) -> tuple[str, list[Sample], int]:
    """Caption, samples and feature count of the data the user asked for."""
    if args.target is not None and args.csv is None:
        raise UsageError("--target needs --csv")
    if args.csv is not None:
        if args.target is None:
            raise UsageError("--csv needs --target COLUMN (the label column)")
        samples, n_features = read_csv(args.csv, args.target, args.limit)
        _check_classes(args.csv, args.target, samples)
        if args.shuffle:
            random.Random(args.seed).shuffle(samples)
        return args.csv, samples, n_features
    name = args.dataset if args.dataset is not None else DEFAULT_DATASET
    try:
        dataset = datasets.load(name)
    except KeyError:
        known = ", ".join(n.lower() for n in datasets.NAMES)
        raise UsageError(f"unknown data set {name!r}; choose from {known}") from None
    samples = list(dataset)
    caption = type(dataset).__name__
    if args.shuffle is not False:
        random.Random(args.seed).shuffle(samples)
        caption += f" (shuffled, seed {args.seed})"
    return caption, samples[: args.limit], dataset.n_features


def _run_evaluate(args: argparse.Namespace) -> int:
    caption, samples, n_features = _load_samples(args)
    show_progress = args.progress
    if show_progress is None:
        show_progress = sys.stderr is not None and sys.stderr.isatty()
    try:
        results = evaluate_models(
            samples, args.models, scale=args.scale, progress=sys.stderr if show_progress else None
        )
    except ValueError as error:  # a model refused the data (values too large together, ...)
        raise UsageError(f"{caption}: a model refused the data: {error}") from None
    if args.format != "csv":
        scaled = ", features min-max scaled" if args.scale else ""
        print(
            f"{caption}: {len(samples)} samples, {n_features} features "
            f"(progressive validation{scaled})"
        )
    print(format_table(results, args.format))
    return 0


register_command(
    "evaluate",
    help="progressive validation of NR-RLS next to river models on a data set",
    add_arguments=_add_evaluate_arguments,
    run=_run_evaluate,
    description=_EVALUATE_DESCRIPTION,
)
