"""The CSV input of ``evaluate``: a user's CSV file read as a stream of ``(x, y)`` samples.

This module owns everything between a path and the samples: opening the file (decompressed
when it ends in ``.gz``; only a regular file, since it is read twice), reading its records with
a bounded length, checking the header, typing the cells (every column but the target a numeric
feature, booleans included, or a text one, its cells categories; the target's cells labels) and
naming the data row, line and column of any
bad value in a `UsageError`. `CsvStream` streams the file (the ``evaluate`` command's way),
`read_csv` reads it into memory. Internal to `river_nrrls.cli`: its public names are re-exported by
`river_nrrls.cli.evaluate`.

"""

from __future__ import annotations

import collections
import contextlib
import csv
import gzip
import io
import os
import stat
import typing
import zlib

from river import base

from .._checks import VALUE_LIMIT, short_repr
from .._validation import check_value
from . import ProgressBar, UsageError

__all__ = [
    "MAX_COLUMNS",
    "MAX_LABELS",
    "MAX_CATEGORIES",
    "MAX_CATEGORY_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_RECORD_CHARS",
    "CsvStream",
    "CsvTable",
    "Sample",
    "read_csv",
]

#: One sample: the features ``{name: value}`` and the label.
Sample = tuple[dict, base.typing.ClfTarget]

_BOOLEANS = {"true": True, "false": False}
#: Feature cells read as booleans (compared in lower case), as the estimators take bools.
_BOOLEAN_FEATURES = {"true": 1.0, "false": 0.0}
#: Target cells that mean "no label" (compared in lower case), as pandas reads them.
_MISSING_LABELS = frozenset(("nan", "na", "n/a", "<na>", "nat", "null", "none", "?"))
#: The largest magnitude of a feature value read from a CSV file: its square is the most that
#: NR-RLS's statistics accept (river_nrrls._checks.STATISTICS_LIMIT).
_MAX_MAGNITUDE = VALUE_LIMIT
#: The most characters of one record of a CSV file (a line, or the lines that a quoted field
#: spans): lines are read with this limit before the csv module sees them, so that a file
#: without line breaks (``/dev/zero`` behind a link, a gzip bomb) costs this much at most.
MAX_RECORD_CHARS = 8 * 2**20
#: The most columns of a CSV file.
MAX_COLUMNS = 100_000
#: The most distinct labels of a CSV file's target, and the most characters they hold together.
MAX_LABELS = 1_000
MAX_LABEL_CHARS = 2**20
#: The most distinct values of the text (categorical) columns of a CSV file together, each a
#: one-hot feature, and the most characters they (and their column names) hold together.
MAX_CATEGORIES = 1_000
MAX_CATEGORY_CHARS = 2**20
#: The check of a CSV file counts its rows on the progress bar every this many rows.
_PROGRESS_EVERY = 1000


# ------------------------------------------------------------------------------ the records


def _open_text(path: str) -> typing.TextIO:
    """``path`` as text (``.gz``: decompressed), once it is known to be a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except ValueError as error:  # a NUL byte in the path
        raise UsageError(f"cannot read {path!r}: {error}") from None
    if stat.S_ISDIR(mode):
        raise UsageError(f"{path} is a directory, not a CSV file")
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"{path} is not a regular file (a device, a pipe or a socket): evaluate reads a CSV "
            "file twice (its rows are checked and its labels counted before the models run)"
        )
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


class _Lines:
    """The lines of a text file for ``csv.reader``, each record at most `MAX_RECORD_CHARS`
    characters long: a line is read with a limit, never whole, and `new_record` starts the
    count of the next record (which a quoted field may spread over several lines)."""

    def __init__(self, file: typing.TextIO, path: str):
        self.file = file
        self.path = path
        self.record_chars = 0
        self.line_number = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        room = MAX_RECORD_CHARS - self.record_chars
        line = self.file.readline(room + 1)
        if not line:
            raise StopIteration
        self.line_number += 1
        self.record_chars += len(line)
        if self.record_chars > MAX_RECORD_CHARS:
            raise UsageError(
                f"{self.path}: line {self.line_number} is too long: a record (a line, or the "
                f"lines of a quoted field) of more than {MAX_RECORD_CHARS:,} characters; "
                "is it a CSV file?"
            )
        return line

    def new_record(self) -> None:
        self.record_chars = 0


class _DataRow(typing.NamedTuple):
    """A non-blank data row of a CSV file: its cells, and where it is (for messages)."""

    cells: list[str]
    path: str
    place: str  # "data row N (line L)"

    @property
    def where(self) -> str:
        """``PATH: data row N (line L)``."""
        return f"{self.path}: {self.place}"


class _Records:
    """The records of an open CSV file: the header row, then the data rows."""

    def __init__(self, file: typing.TextIO, path: str):
        self.path = path
        self.lines = _Lines(file, path)
        self.reader = csv.reader(self.lines)

    def header(self) -> list[str]:
        """The names of the first record, stripped (empty when the file is)."""
        header = [name.strip() for name in next(self.reader, [])]
        self.lines.new_record()
        return header

    def data_rows(self, limit: int | None) -> typing.Iterator[_DataRow]:
        """The data rows after the header, blank lines skipped, the first ``limit`` at most."""
        data_row = 0
        for cells in self.reader:
            self.lines.new_record()
            if not cells:
                continue
            if limit is not None and data_row >= limit:
                break
            data_row += 1
            yield _DataRow(cells, self.path, f"data row {data_row} (line {self.reader.line_num})")


@contextlib.contextmanager
def _open_records(path: str) -> typing.Iterator[_Records]:
    """The records of the CSV file ``path``, open for the ``with`` block: every problem of
    reading it (not a regular file, unreadable, not gzip, not UTF-8, bad CSV) raises
    `UsageError`."""
    records = None
    try:
        with _open_text(path) as file:
            records = _Records(file, path)
            yield records
    except OSError as error:  # gzip.BadGzipFile included
        if isinstance(error, gzip.BadGzipFile):
            raise UsageError(f"{path} is not a valid gzip file: {error}") from None
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    except (EOFError, zlib.error) as error:
        raise UsageError(f"{path} is not a valid gzip file: {error}") from None
    except csv.Error as error:
        line = records.reader.line_num if records is not None else 0
        raise UsageError(f"{path}: line {line}: {error}") from None


# ------------------------------------------------------------------------ the typed columns


class _Column(typing.NamedTuple):
    """A feature column of a CSV file."""

    position: int
    name: str


class _Layout(typing.NamedTuple):
    """The columns of a CSV file, from its header."""

    header: list[str]
    features: list[_Column]
    target_column: int


def _check_header(path: str, header: list[str], target: str) -> list[_Column]:
    """The feature columns, after checking the header (in time linear in the number of
    columns)."""
    if not header:
        raise UsageError(f"{path} is empty (a header row is expected)")
    if len(header) > MAX_COLUMNS:
        raise UsageError(
            f"{path}: the header has {len(header):,} columns, more than the {MAX_COLUMNS:,} "
            "that evaluate accepts"
        )
    unnamed = next((j for j, name in enumerate(header) if not name), None)
    if unnamed is not None:
        raise UsageError(
            f"{path}: column {unnamed + 1} of the header has no name "
            "(an index column? every column but the target must be a named feature)"
        )
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in header:
        if name in seen:
            repeated[name] = None
        seen.add(name)
    if repeated:
        names = sorted(repeated)
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise UsageError(f"{path}: the header repeats the column(s) {shown}")
    if target not in seen:
        shown = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise UsageError(f"{path}: no target column {target!r} in the header ({shown})")
    features = [_Column(j, name) for j, name in enumerate(header) if name != target]
    if not features:
        raise UsageError(f"{path}: no feature column besides the target {target!r}")
    return features


def _read_layout(records: _Records, target: str) -> _Layout:
    """The columns of the file, from its header (the first record)."""
    header = records.header()
    features = _check_header(records.path, header, target)
    return _Layout(header, features, header.index(target))


def _label(cell: str, column: str, where: str) -> base.typing.ClfTarget:
    """The label of a stripped target cell: ``true``/``false`` (any case) as booleans, any
    other cell as read; a missing label raises."""
    if not cell or cell.lower() in _MISSING_LABELS:
        shown = f" ({cell!r})" if cell else ""
        raise UsageError(f"{where}, column {column!r}: missing target{shown}")
    return _BOOLEANS.get(cell.lower(), cell)


def _number(cell: str) -> float | None:
    """The number of a stripped feature cell (``true``/``false`` in any case: 1.0 and 0.0), or
    ``None`` for text."""
    boolean = _BOOLEAN_FEATURES.get(cell.lower())
    if boolean is not None:
        return boolean
    try:
        return float(cell)
    except ValueError:
        return None


def _checked_number(number: float, cell: str, column: str, where: str) -> float:
    """``number``, the value of a numeric cell, once checked: NaN, an infinity or a value whose
    square overflows the statistics raises."""
    try:
        check_value(column, number)
    except ValueError as error:  # NaN and infinities
        raise UsageError(f"{where}, column {column!r}: {error}") from None
    if abs(number) > _MAX_MAGNITUDE:
        raise UsageError(
            f"{where}, column {column!r}: the value {cell} is too large (beyond "
            f"{_MAX_MAGNITUDE:.0e} in magnitude its square overflows the statistics); "
            "rescale the column"
        )
    return number


class _FirstCell(typing.NamedTuple):
    """The first non-empty cell of a feature column, which sets its kind."""

    text: bool  # a text (categorical) column, else a numeric one
    cell: str
    place: str  # "data row N (line L)"


class _ColumnKinds:
    """The kind of every feature column, set by its first non-empty cell: numeric (numbers;
    ``true``/``false`` in any case are 1.0 and 0.0) or text (categorical: the stripped cell is
    the value). A column with cells of both kinds raises, naming the column and the first cell
    of the other kind; so do over `MAX_CATEGORIES` distinct text values (or
    `MAX_CATEGORY_CHARS` characters in them) in the whole file. A stream keeps its kinds from
    one read of the file to the next."""

    def __init__(self) -> None:
        self.first: dict[str, _FirstCell] = {}
        self.categories: set[tuple[str, str]] = set()
        self.category_chars = 0

    @property
    def text_columns(self) -> list[str]:
        """The names of the text columns, in the order in which their kind was set."""
        return [column for column, first in self.first.items() if first.text]

    def value(self, cell: str, column: str, row: _DataRow) -> float | str:
        """The value of a non-empty, stripped cell of ``column`` in ``row``."""
        number = _number(cell)
        first = self.first.setdefault(column, _FirstCell(number is None, cell, row.place))
        if first.text != (number is None):
            raise UsageError(
                f"{row.where}, column {column!r}: {short_repr(cell)} is "
                f"{'text' if number is None else 'a number'}, but the column's first value "
                f"({short_repr(first.cell)}, {first.place}) is "
                f"{'text' if first.text else 'a number'}: a column holds numbers (or true/false) "
                "or text (a categorical column, one-hot encoded), not both"
            )
        if number is not None:
            return _checked_number(number, cell, column, row.where)
        if (column, cell) not in self.categories:
            chars = self.category_chars + len(column) + len(cell)
            if len(self.categories) >= MAX_CATEGORIES or chars > MAX_CATEGORY_CHARS:
                raise UsageError(
                    f"{row.where}, column {column!r}: over {MAX_CATEGORIES:,} distinct text "
                    "values in the text columns (or values too long together): an identifier "
                    "or free-text column? each distinct value is a one-hot feature; drop it"
                )
            self.categories.add((column, cell))
            self.category_chars = chars
        return cell


def _sample(row: _DataRow, layout: _Layout, kinds: _ColumnKinds) -> Sample:
    """The sample of a data row: its label first, then its features (an empty cell is a
    missing value, left out of ``x``)."""
    if len(row.cells) != len(layout.header):
        raise UsageError(f"{row.where}: expected {len(layout.header)} fields, got {len(row.cells)}")
    target = layout.header[layout.target_column]
    y = _label(row.cells[layout.target_column].strip(), target, row.where)
    x = {}
    for column in layout.features:
        cell = row.cells[column.position].strip()
        if cell:
            x[column.name] = kinds.value(cell, column.name, row)
    return x, y


def _samples(
    records: _Records, layout: _Layout, limit: int | None, kinds: _ColumnKinds
) -> typing.Iterator[Sample]:
    """The samples of the data rows, in file order (at most ``limit``)."""
    for row in records.data_rows(limit):
        yield _sample(row, layout, kinds)


# ------------------------------------------------------------------------------ the readers


def _stream_samples(
    path: str, target: str, limit: int | None, kinds: _ColumnKinds
) -> typing.Iterator[Sample]:
    """One read of a CSV file: its samples in file order (at most ``limit``)."""
    with _open_records(path) as records:
        layout = _read_layout(records, target)
        yield from _samples(records, layout, limit, kinds)


def _count_labels(
    samples: typing.Iterable[Sample], path: str, target: str, progress: ProgressBar | None = None
) -> collections.Counter:
    """The count of every label of ``samples``, in first-seen order: over `MAX_LABELS`
    distinct labels, or `MAX_LABEL_CHARS` characters in them, raises. ``progress`` counts the
    samples read."""
    labels: collections.Counter = collections.Counter()
    label_chars = 0
    for n_read, (_, y) in enumerate(samples, start=1):
        if progress is not None and n_read % _PROGRESS_EVERY == 0:
            progress.update(n_read)
        if y not in labels:
            label_chars += len(y) if isinstance(y, str) else 1
            if len(labels) >= MAX_LABELS or label_chars > MAX_LABEL_CHARS:
                raise UsageError(
                    f"{path}: the target {target!r} has over {len(labels):,} distinct "
                    "values (or labels too long together): a continuous target? "
                    f"evaluate needs class labels (at most {MAX_LABELS:,})"
                )
        labels[y] += 1
    return labels


class CsvStream:
    """The samples of a CSV file with a header row, streamed: no row is kept in memory.

    Every column but ``target`` is a feature, numeric or text (cells are stripped of surrounding
    spaces; an empty cell is a missing value, left out of ``x``). A column is numeric when its
    cells are numbers (``true``/``false`` in any case are 1.0 and 0.0), text (categorical: the
    cell is the value, a string, for a one-hot encoder) when they are not; its first non-empty
    cell sets its kind, and a cell of the other kind raises. The target's cells are the labels as
    read (strings), except that ``true``/``false`` in any case become ``True``/``False``. Blank
    lines are skipped. A ``.gz`` file is decompressed. Any problem raises `UsageError`
    naming the data row (1-based, header excluded), its line in the file and the column.

    Creating the stream reads the file once: every row is checked (so that a bad row is
    reported before any model runs) and the labels are counted (`labels`, in first-seen order:
    what a binary-only model needs to know). Each iteration then reads the file again, in file
    order. Memory stays bounded whatever the file: a record (a line, or the lines of a quoted
    field) is read with a limit of `MAX_RECORD_CHARS` characters, a cell with csv's field limit,
    and at most `MAX_COLUMNS` columns and `MAX_LABELS` distinct labels are accepted. The file
    must be a regular file (``.gz`` or not), not a pipe or a device, since it is read twice.

    Parameters
    ----------
    path
        The file (``.gz``: gzip-compressed).
    target
        The label column.
    limit
        Read only the first ``limit`` data rows.
    progress
        The bar that counts the rows of the first read (the check), closed after it.

    Attributes
    ----------
    n_features
        The number of feature columns.
    labels
        The count of every label, in first-seen order.
    n_samples
        The number of samples (data rows read).
    text_columns
        The names of the text (categorical) columns.

    """

    def __init__(
        self,
        path: str,
        target: str,
        limit: int | None = None,
        *,
        progress: ProgressBar | None = None,
    ):
        self.path = path
        self.target = target
        self.limit = limit
        self._kinds = _ColumnKinds()
        try:
            with _open_records(path) as records:
                layout = _read_layout(records, target)
                self.n_features = len(layout.features)
                samples = _samples(records, layout, limit, self._kinds)
                self.labels = _count_labels(samples, path, target, progress)
        finally:
            if progress is not None:
                progress.close()
        self.n_samples = sum(self.labels.values())
        if not self.n_samples:
            raise UsageError(f"{path} has no data rows")
        self.text_columns = self._kinds.text_columns

    def __iter__(self) -> typing.Iterator[Sample]:
        return _stream_samples(self.path, self.target, self.limit, self._kinds)


class CsvTable(typing.NamedTuple):
    """A CSV file read into memory by `read_csv`."""

    samples: list[Sample]
    """The ``(x, y)`` pairs, in file order."""
    n_features: int
    """The number of feature columns."""


def read_csv(path: str, target: str, limit: int | None = None) -> CsvTable:
    """Read a CSV file with a header row into memory: ``(x, y)`` pairs in file order and the
    feature count.

    The file is read as `CsvStream` reads it (same rules, same errors), but once and into a
    list; the ``evaluate`` command streams it instead.

    Parameters
    ----------
    path
        The file (``.gz``: gzip-compressed).
    target
        The label column.
    limit
        Read only the first ``limit`` data rows.

    Returns
    -------
    CsvTable
        The samples and the number of features: ``samples, n_features = read_csv(...)``.

    """
    with _open_records(path) as records:
        layout = _read_layout(records, target)
        samples = list(_samples(records, layout, limit, _ColumnKinds()))
    if not samples:
        raise UsageError(f"{path} has no data rows")
    return CsvTable(samples, len(layout.features))
