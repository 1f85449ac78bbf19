"""Common machinery of the vendored KEEL/UCI data sets."""

from __future__ import annotations

import csv
import functools
import gzip
import pathlib
import typing
from collections.abc import Iterator

from river.base.typing import FeatureName
from river.datasets import base

__all__ = ["KeelDataset", "DIRECTORY"]

#: The folder holding the vendored ``*.csv.gz`` files.
DIRECTORY = pathlib.Path(__file__).resolve().parent

_LABELS = {"True": True, "False": False}


class KeelDataset(base.FileDataset):
    """Base class of the data sets of the NR-RLS paper that are vendored with this package.

    Each data set is one gzip-compressed CSV file next to this module, written by the
    repository's ``data/prepare.py``:
    a header with the feature names then ``label``, one row per sample, every feature already
    scaled to [0, 1] and the label written as ``True`` (minority class) or ``False``. Iterating
    yields ``(x, y)`` pairs with ``x`` a dict of ``{feature name: float}`` in header order and
    ``y`` a ``bool``, in file order, so that every pass over a data set is identical. The
    annotation is ``dict[FeatureName, float]`` (river's ``FeatureName`` is ``Hashable``), so that
    a data set fits river's stream types (``dict[FeatureName, Any]``) under a type checker:
    ``dict`` is invariant in its keys, and a ``dict[str, float]`` would not.

    Subclasses describe their data set with the class attributes below.

    Parameters
    ----------
    filename
        Name of the vendored file.
    n_samples
        Number of rows.
    n_features
        Number of features.
    n_true
        Number of rows labelled ``True`` (the minority class).

    """

    #: Number of the data set in the paper's Tables 2 and 3.
    paper_number: typing.ClassVar[int]
    #: Name of the data set in the paper.
    paper_name: typing.ClassVar[str]
    #: Size as printed in the paper's Table 2 (rows x features).
    paper_shape: typing.ClassVar[tuple[int, int]]
    #: Class ratio n+/n- as printed in the paper's Table 2.
    paper_ratio: typing.ClassVar[float]
    #: Raw file this data set was built from (``data/keel/`` in the repository, not installed).
    source: typing.ClassVar[str]
    #: Original class label (as written in the raw file) that is ``True`` here.
    true_class: typing.ClassVar[str]
    #: Original class label that is ``False`` here.
    false_class: typing.ClassVar[str]

    def __init__(self, filename: str, n_samples: int, n_features: int, n_true: int) -> None:
        super().__init__(
            filename=filename,
            directory=DIRECTORY,
            task=base.BINARY_CLF,
            n_samples=n_samples,
            n_features=n_features,
        )
        self.n_true = n_true

    @property
    def n_false(self) -> int:
        """Number of rows labelled ``False`` (the majority class)."""
        return self.n_samples - self.n_true

    @property
    def ratio(self) -> float:
        """Class ratio ``n_true / n_false`` (at most 1, since ``True`` is the minority)."""
        return self.n_true / self.n_false

    @property
    def _repr_content(self) -> dict[str, str]:
        content = super()._repr_content
        content["True"] = f"{self.n_true:,} (class {self.true_class!r}, minority)"
        content["False"] = f"{self.n_false:,} (class {self.false_class!r})"
        content["Paper"] = f"no. {self.paper_number} ({self.paper_name})"
        return content

    @functools.cached_property
    def feature_names(self) -> tuple[str, ...]:
        """Feature names, in column order (read from the file's header)."""
        with gzip.open(self.path, "rt", encoding="utf-8", newline="") as f:
            header = next(csv.reader(f))
        if header[-1] != "label":
            raise ValueError(f"{self.path}: the last column is {header[-1]!r}, not 'label'")
        return tuple(header[:-1])

    def __iter__(self) -> Iterator[tuple[dict[FeatureName, float], bool]]:
        names = self.feature_names
        with gzip.open(self.path, "rt", encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            next(reader)  # header
            for row in reader:
                *values, label = row
                yield dict(zip(names, map(float, values), strict=True)), _LABELS[label]
