"""The one mapping between river's feature dicts and dense numpy vectors.

Every estimator of this package goes through `FeatureIndex`: it validates values
(non-finite or non-numeric values raise an error naming the feature), treats ``None`` or
``pd.NA`` in a dict and ``NaN`` in a DataFrame as *missing* (that is, zero, the value the
statistics already assume for an absent feature), and gives every feature a stable dense column.

New features never change the index by themselves: `FeatureIndex.encode_one` and
`FeatureIndex.encode_many` only *report* the new features (with the columns they would
get), so that an estimator can validate a whole call first and commit with `FeatureIndex.add`
only once nothing can fail any more. This is how a bad call leaves a model exactly as it was.

New features of one call are ordered by a deterministic sort of their names, so the column a
feature gets does not depend on the order of the keys of ``x``.

"""

from __future__ import annotations

import dataclasses
import decimal
import itertools
import math
import numbers
import typing

import numpy as np
import pandas as pd

from . import _native
from ._checks import short_repr
from ._frames import as_frame

__all__ = [
    "DenseSample",
    "FeatureIndex",
    "check_value",
    "is_missing_value",
    "validate_one",
    "validate_frame",
    "sort_features",
]

_FAST_TYPES = frozenset((float, int))


def sort_features(features: typing.Iterable[typing.Hashable]) -> list:
    """Sort feature names deterministically, even when they are of mixed types (or names whose
    comparisons raise: they are then sorted by type name and ``repr``)."""
    features = list(features)
    try:
        return sorted(features)
    except Exception:  # mixed types (TypeError), or a name's own comparison raising anything
        return sorted(features, key=lambda name: (type(name).__name__, repr(name)))


def is_missing_value(value: typing.Any) -> bool:
    """Whether a feature value of a dict sample is missing (zero): ``None`` or ``pd.NA``."""
    return value is None or value is pd.NA


def check_value(name: typing.Hashable, value: typing.Any) -> float | None:
    """Return ``value`` as a finite float, ``None`` for a missing value, or raise naming ``name``.

    ``None`` and ``pd.NA`` are missing. Booleans count as 0/1; ``Fraction`` and ``Decimal`` are
    numbers like ints and floats. Strings, containers and other non-numbers raise ``TypeError``;
    NaN, infinities and numbers too large for a float raise ``ValueError``.

    """
    if is_missing_value(value):
        return None
    if isinstance(value, (str, bytes)) or not isinstance(
        value, (numbers.Real, np.bool_, decimal.Decimal)
    ):
        raise TypeError(
            f"feature {name!r} has a non-numeric value {short_repr(value)} "
            f"of type {type(value).__name__}"
        )
    try:
        number = float(value)
    except Exception as error:  # OverflowError, or anything a number's own __float__ raises
        raise ValueError(
            f"feature {name!r} has a value {short_repr(value)} that is not a float"
        ) from error
    if not math.isfinite(number):
        raise ValueError(f"feature {name!r} has a non-finite value {short_repr(value)}")
    return number


def _placement(columns: list[int]) -> slice | list[int]:
    """Where values go in a dense vector: the slice that ``columns`` span when they are
    consecutive (the usual dense stream, whose keys come in index order: a slice assignment is
    faster), else the columns themselves."""
    if (
        columns
        and columns[-1] - columns[0] == len(columns) - 1
        and columns == list(range(columns[0], columns[-1] + 1))
    ):
        return slice(columns[0], columns[-1] + 1)
    return columns


def _finite_reals(values: typing.Collection) -> bool:
    """True when every value is a plain ``int`` or ``float`` (its exact type: no subclass, no
    bool) and their sum is a finite float: every value is then finite, as `check_value` would
    find it.

    The exact types come first: a subclass of float may answer the sum with what it likes (its
    ``__radd__`` is tried before float's own addition, and may say 0.0 for an infinity), so only
    plain numbers are trusted to add up honestly. ``sum(values, 0.0)`` then adds in floats: an int
    beyond float range raises ``OverflowError`` (even when ints that cancel exactly would sum to
    0), and a non-finite value (or a sum that overflows) gives inf or NaN. Those go the slow way,
    value by value (where the valid ones are accepted all the same).

    """
    if not _FAST_TYPES.issuperset(map(type, values)):
        return False
    try:
        total = sum(values, 0.0)
    except OverflowError:  # an int beyond float range
        return False
    return math.isfinite(total)


def _snapshot(x: dict) -> tuple[tuple, tuple]:
    """The keys and the values of a feature dict, to recognise the sample at the next call."""
    if not isinstance(x, dict):
        raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
    return tuple(x), tuple(x.values())


def _same_keys(keys: tuple, known_keys: tuple) -> bool:
    """Whether two tuples of feature names name the same features as dict look-ups would see
    them: equal names of equal hashes (a name equal to another but hashing differently is
    another dict key). The tuples' own hashes combine their names' hashes, so comparing them
    first checks the names' hashes in one C loop (two names of different hashes give tuples of
    the same hash with a chance of 2**-64), and skips the comparison of different tuples. A
    name whose ``__hash__`` or ``__eq__`` raises gives False: the validation then meets it."""
    try:
        return hash(keys) == hash(known_keys) and keys == known_keys
    except Exception:  # a name's own __eq__ or __hash__ raising
        return False


def _same_sample(keys: tuple, values: tuple, known_keys: tuple, known_values: tuple) -> bool:
    """Whether a `_snapshot` is a remembered (validated) one: the same keys (`_same_keys`), all
    values plain ints and floats (a complex or a ``Decimal`` equal to a remembered float must
    still be validated), and equal values. The types are checked before the values are compared:
    a ``pd.NA`` (missing) cannot be compared, its ``==`` is NA and has no truth value."""
    return (
        _same_keys(keys, known_keys)
        and _FAST_TYPES.issuperset(map(type, values))
        and values == known_values
    )


def validate_one(x: dict) -> dict:
    """Validate a feature dict and return ``{feature: number}`` without the missing (None) values.

    A dict that is already clean (only finite ints and floats) is returned as it is, not copied:
    callers only read it.

    """
    if not isinstance(x, dict):
        raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
    if _finite_reals(x.values()):
        return x
    clean = {}
    for name, value in x.items():
        number = check_value(name, value)
        if number is not None:
            clean[name] = number
    return clean


def validate_frame(X: typing.Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a dataframe: its values as a float matrix (NaN, missing, as 0) and a mask of the
    columns that hold at least one observed (non-missing) value. ``X`` is any dataframe
    `as_frame` accepts."""
    X = as_frame(X)
    if X.columns.has_duplicates:
        duplicated = X.columns[X.columns.duplicated()].tolist()
        raise ValueError(f"X has duplicated columns: {duplicated}")
    dtypes = X.dtypes
    for name, dtype in zip(X.columns, dtypes):
        if pd.api.types.is_complex_dtype(dtype):
            raise TypeError(f"feature {name!r} has complex values (dtype {dtype})")
    if all(pd.api.types.is_numeric_dtype(dtype) for dtype in dtypes):
        # Fast path: one conversion of the whole frame (bools count as 0/1, NA as NaN).
        try:
            matrix = X.to_numpy(dtype=float, na_value=np.nan, copy=True)
        except (TypeError, ValueError):
            pass
        else:
            if np.isfinite(matrix).all():  # no missing cell: every column observed if any row
                return matrix, np.full(matrix.shape[1], len(matrix) > 0)
            if not np.isinf(matrix).any():
                missing = np.isnan(matrix)
                matrix[missing] = 0.0
                return matrix, ~missing.all(axis=0)
    matrix = np.empty(X.shape, dtype=float)
    for j, name in enumerate(X.columns):
        column = X.iloc[:, j]
        if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
            try:
                values = column.to_numpy(dtype=float, na_value=np.nan)
            except (TypeError, ValueError):
                values = _object_column(name, column)
        else:
            values = _object_column(name, column)
        bad = np.isinf(values)
        if bad.any():
            row = X.index[int(np.argmax(bad))]
            raise ValueError(f"feature {name!r} has a non-finite value at row {row!r}")
        matrix[:, j] = values
    observed = ~np.isnan(matrix).all(axis=0)
    np.nan_to_num(matrix, copy=False, nan=0.0)
    return matrix, observed


def _object_column(name: typing.Hashable, column: pd.Series) -> np.ndarray:
    values = np.empty(len(column), dtype=float)
    for i, (row, value) in enumerate(column.items()):
        if is_missing_value(value) or (isinstance(value, float) and math.isnan(value)):
            values[i] = np.nan
            continue
        try:
            number = check_value(name, value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{error} at row {row!r}") from error
        values[i] = number
    return values


class DenseSample(typing.NamedTuple):
    """A feature dict as `FeatureIndex.dense_one` encodes it."""

    vector: np.ndarray  # read-only, ``size + len(new)`` entries
    new: list  # features not in the index yet, in the order of their provisional columns
    support: np.ndarray | None  # columns that may be non-zero, reserved first (when asked for)


@dataclasses.dataclass(slots=True)
class _Layout:
    """Where a sample's values go: its feature columns and, once asked for, its support."""

    columns: list | np.ndarray
    support: np.ndarray | None = None


@dataclasses.dataclass(slots=True)
class _Remembered:
    """The last sample `FeatureIndex.dense_one` encoded with every feature known and present:
    river's prequential loop encodes every sample twice (``predict_one``, then ``learn_one``)."""

    keys: tuple
    values: tuple | None  # None: the compiled refill built the vector (no tuple kept)
    size: int  # the index's size then (a grown index encodes afresh)
    vector: np.ndarray
    layout: _Layout
    placement: slice | np.ndarray  # the columns, or the slice they span


class SparseSample(typing.NamedTuple):
    """A sample as `FeatureIndex.encode_sparse` remembers it: read-only columns and values."""

    columns: np.ndarray
    numbers: np.ndarray
    new: tuple  # new features (their provisional columns are in ``columns``)


class _SparseMemo(typing.NamedTuple):
    """The last sample `FeatureIndex.encode_sparse` encoded, to recognise it at the next call."""

    size: int  # the index's size then
    keys: tuple
    values: tuple
    zeros: tuple  # positions of zero values (a zero must be the very same object: -0.0 == 0.0)
    grown: SparseSample  # with the provisional columns of its new features (grow=True)
    known: SparseSample  # without them (grow=False)


# A record without the NamedTuple's Python-level __new__ (a third of its cost, per sample)
_new_sample = tuple.__new__


def _refuse_reentry() -> typing.NoReturn:
    raise RuntimeError(
        "the model changed while x was being encoded (a key's __eq__/__hash__ or a value's "
        "__float__ called it and added features): the call is refused and changes nothing"
    )


def _snapshot_of(x: dict) -> dict:
    """A copy of a feature dict, read once: what is encoded and remembered, whatever another
    thread (or a key's ``__eq__``) does to ``x`` meanwhile. A dict subclass is read through
    dict's own items (its storage, whatever its overridden views say); a copy that raises (a
    key's ``__hash__``) is refused with a ``TypeError``."""
    if x.__class__ is dict:
        return x.copy()
    try:
        return dict(dict.items(x))
    except Exception as error:
        raise TypeError(
            f"x could not be read as a dict of features: {type(error).__name__}: {error}"
        ) from error


def _columns_of(position: dict, names: typing.Iterable) -> list[int]:
    """The column of every name (-1: unknown). A name whose ``__hash__`` or ``__eq__`` raises
    during the look-up (it is compared with a known name of the same hash) is refused with a
    ``TypeError`` naming it."""
    names = list(names)
    try:
        return [position.get(name, -1) for name in names]
    except Exception:
        for name in names:
            try:
                position.get(name)
            except Exception as error:
                raise TypeError(
                    f"feature {short_repr(name)} cannot be looked up: its __hash__ or __eq__ "
                    f"raised {type(error).__name__}: {error}"
                ) from error
        raise


class FeatureIndex:
    """Feature name -> dense column, the shared dict <-> numpy mapping.

    Parameters
    ----------
    offset
        Columns reserved before the first feature (for instance 1 for an intercept column).
    fill
        Value of the reserved columns in the dense vectors and matrices (1.0 for a constant).

    Notes
    -----
    `dense_one` (NR-RLS and the least-squares baselines) and `encode_sparse` (the first-order
    models) remember the last sample they encoded (its keys, values and encoding), since river's
    prequential loop encodes every sample twice (``predict_one`` then ``learn_one``). A sample
    is taken as the same only when its keys and values are equal, its values plain ints and
    floats, and the index unchanged; what they return is read-only for that reason. The caches
    are not pickled.

    """

    _encoded: _SparseMemo | None = None  # the last cacheable encode_sparse (not pickled)

    def __init__(self, offset: int = 0, fill: float = 0.0):
        self.offset = offset
        self.fill = fill
        self.position: dict[typing.Hashable, int] = {}
        self.features: list[typing.Hashable] = []
        self._cache: _Remembered | None = None  # dense_one's last reusable sample
        self._template: np.ndarray | None = None  # fill, then zeros: the start of a vector

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_cache"] = None
        state["_template"] = None
        state.pop("_encoded", None)
        state.pop("_last", None)  # a pickle of an earlier version
        return state

    def __setstate__(self, state: dict) -> None:
        state.pop("_last", None)  # a pickle of an earlier version
        self.__dict__.update(state)
        self.__dict__.setdefault("_template", None)

    def __len__(self) -> int:
        return len(self.features)

    def __contains__(self, feature) -> bool:
        return feature in self.position

    @property
    def size(self) -> int:
        """Number of dense columns, the reserved ones included."""
        return self.offset + len(self.features)

    def add(self, features: typing.Iterable[typing.Hashable]) -> None:
        """Append new features, in the given order, after the existing ones."""
        for feature in features:
            if feature not in self.position:
                self.position[feature] = self.offset + len(self.features)
                self.features.append(feature)

    def reorder(self, features: typing.Sequence[typing.Hashable]) -> None:
        """Renumber the features: ``features``, a permutation of the index's, get the columns
        from ``offset`` on in that order. The remembered encodings (of the old columns) are let
        go."""
        if sorted(map(self.position.__getitem__, features)) != list(range(self.offset, self.size)):
            raise ValueError("reorder needs a permutation of the index's features")
        self.features = list(features)
        self.position = {feature: self.offset + j for j, feature in enumerate(self.features)}
        self._cache = None
        self._template = None
        self._encoded = None

    def provisional(self, new: list) -> dict[typing.Hashable, int]:
        """The columns that ``new`` features would get if added now, in that order."""
        return dict(zip(new, range(self.size, self.size + len(new))))

    def feature_at(self, column: int, new: typing.Sequence = ()) -> typing.Hashable:
        """The feature of a dense column (>= ``offset``); columns beyond ``size`` are those of
        the not yet added ``new`` features."""
        j = column - self.offset
        features = self.features
        return features[j] if j < len(features) else new[j - len(features)]

    def encode_one(self, x: dict, grow: bool = True) -> tuple[list[int], np.ndarray, list]:
        """Validate ``x`` and return its columns, values and the new features.

        With ``grow=True`` new features get the columns ``size, size + 1, ...`` in the order of
        the returned list (which the caller passes to `add` once it commits); with
        ``grow=False`` unknown features are validated and dropped.

        """
        return self._encode_clean(validate_one(x), grow)

    def _encode_clean(self, clean: dict, grow: bool) -> tuple[list[int], np.ndarray, list]:
        """`encode_one` of a dict that `validate_one` returned. It reads the dict once (a
        snapshot of its items): another thread changing it meanwhile cannot pair a name with
        another name's value, nor make a name vanish between two reads."""
        names, numbers = zip(*clean.items()) if clean else ((), ())
        values = np.fromiter(numbers, dtype=float, count=len(numbers))
        position = self.position
        try:
            return [position[name] for name in names], values, []
        except Exception:  # KeyError: unknown features; anything else: named below
            pass
        # Some features are unknown: one look-up a feature (-1: unknown), then the new ones.
        columns = _columns_of(position, names)
        if not grow:
            known = [i for i, column in enumerate(columns) if column >= 0]
            return [columns[i] for i in known], values[known], []
        new = sort_features(name for name, column in zip(names, columns) if column < 0)
        provisional = self.provisional(new)
        columns = [
            column if column >= 0 else provisional[name] for name, column in zip(names, columns)
        ]
        return columns, values, new

    def encode_sparse(
        self, x: dict, grow: bool = True
    ) -> tuple[np.ndarray, np.ndarray, list, bool]:
        """`encode_one` for the sparse first-order models: columns, values, new features, and
        whether ``x`` is clean as given (only ints and floats: no missing value to drop).

        The columns come as a ``np.intp`` array (fast fancy indexing); both arrays are
        read-only, since the last encoding is remembered: river's prequential loop encodes every
        sample twice (``predict_one`` then ``learn_one``), and a sample with the keys and the
        values of the last one, while the index has not grown, reuses its arrays without being
        validated or looked up again. O(non-zeros), with a small constant, either way. Values
        must be the same ints and floats (same types: a ``Decimal`` or a complex equal to a
        remembered float is validated again), and a zero the very same object (``-0.0 == 0.0``).
        Only a sample whose values are all ints and floats is remembered (with the provisional
        columns of its new features, dropped for ``grow=False``). The cache is not pickled.

        """
        keys, values = _snapshot(x)
        last = self._encoded
        if (
            last is not None
            and last.size == self.size
            and _same_sample(keys, values, last.keys, last.values)
            and all(values[i] is last.values[i] for i in last.zeros)
        ):
            encoding = last.grown if grow else last.known
            return encoding.columns, encoding.numbers, list(encoding.new), True
        clean = validate_one(x)
        columns, numbers, new = self._encode_clean(clean, grow=True)
        columns = np.asarray(columns, dtype=np.intp)
        if new:  # grow=False drops the provisional columns
            known = columns < self.size
            known_columns, known_numbers = columns[known], numbers[known]
        else:
            known_columns, known_numbers = columns, numbers
        for array in (columns, numbers, known_columns, known_numbers):
            array.flags.writeable = False
        as_given = clean is x
        if as_given:  # only ints and floats, validated: reusable
            zeros = () if numbers.all() else tuple(np.flatnonzero(numbers == 0.0).tolist())
            self._encoded = _SparseMemo(
                self.size,
                keys,
                values,
                zeros,
                SparseSample(columns, numbers, tuple(new)),
                SparseSample(known_columns, known_numbers, ()),
            )
        if grow:
            return columns, numbers, new, as_given
        return known_columns, known_numbers, [], as_given

    def dense_one(self, x: dict, grow: bool = True, with_support: bool = False) -> DenseSample:
        """``x`` as a read-only dense vector of ``size + len(new)`` entries, with its new features
        and (``with_support=True``) the columns where it may be non-zero.

        The reserved columns hold ``fill``; with ``grow=False`` unknown features are dropped. The
        support comes from the encoding (no O(size) scan): the reserved columns, then the
        sample's feature columns. An encoding during which the index grew (a key's ``__eq__``
        that called the model back) would no longer fit it: it raises ``RuntimeError``.

        """
        if x.__class__ is not dict and not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        size = self.offset + len(self.features)
        cache = self.remembered()
        if cache is not None:
            if _native.refill is not None:
                # One compiled call: x's keys are the remembered ones and its values finite
                # floats or ints (else None): the remembered vector if the values are the same,
                # else a new one at the same columns.
                layout = cache.layout
                vector = _native.refill(
                    x, cache.keys, cache.vector, layout.columns, self.offset, self.fill
                )
                if vector is not None:
                    self.refilled(cache, vector)
            else:
                vector = self._reuse(x, cache)
            if vector is not None:
                if self.offset + len(self.features) != size:
                    _refuse_reentry()
                support = self._support(cache.layout) if with_support else None
                return _new_sample(DenseSample, (vector, [], support))
        x = _snapshot_of(x)  # one read of a dict that another thread may change
        columns, numbers, new = self.encode_one(x, grow=grow)
        if self.offset + len(self.features) != size:
            _refuse_reentry()
        placement = _placement(columns)
        layout = _Layout(columns)
        vector = self._frozen_vector(self.size + len(new), placement, numbers)
        if not new and len(columns) == len(x):  # every feature known and present: reusable
            self._remember(tuple(x), tuple(x.values()), vector, layout, placement)
        support = self._support(layout) if with_support else None
        return _new_sample(DenseSample, (vector, new, support))

    def remembered(self) -> _Remembered | None:
        """The remembered sample, when no feature was added since (its vectors still fit)."""
        cache = self._cache
        if cache is not None and cache.size == self.offset + len(self.features):
            return cache
        return None

    @staticmethod
    def refilled(cache: _Remembered, vector: np.ndarray) -> None:
        """Remember ``vector``, the compiled refill's vector of a sample with ``cache``'s keys."""
        if vector is not cache.vector:
            cache.vector, cache.values = vector, None  # no values tuple kept

    def _reuse(self, x: dict, cache: _Remembered) -> np.ndarray | None:
        """The vector of ``x`` from the remembered sample's layout when ``x`` has its keys (the
        same objects, or equal ``str``/``int`` keys, whose equality implies an equal hash) and
        finite real values; None otherwise (then ``x`` is encoded and validated afresh). The
        Python twin of the compiled ``refill``."""
        keys = tuple(x)
        if not _same_keys(keys, cache.keys):
            return None
        # Finite real values (`_finite_reals`) equal to the remembered ones: the same vector (a
        # complex equal to a remembered float is not real, and goes to the validation).
        values = tuple(x.values())
        if not _finite_reals(values):
            return None
        if values == cache.values:
            return cache.vector
        vector = self._frozen_vector(self.size, cache.placement, values)
        cache.vector, cache.values = vector, values
        return vector

    def _remember(self, keys: tuple, values: tuple, vector, layout: _Layout, placement) -> None:
        """Keep a sample whose features are all known and present, for `_reuse`."""
        layout.columns = np.asarray(layout.columns, dtype=np.intp)
        if not isinstance(placement, slice):
            placement = layout.columns  # an index array is faster than a list for numpy
        self._cache = _Remembered(keys, values, self.size, vector, layout, placement)

    def _support(self, layout: _Layout) -> np.ndarray:
        """The reserved columns, then the sample's feature columns (computed once per layout:
        samples with the same keys share it)."""
        if layout.support is None:
            layout.support = np.concatenate(
                (np.arange(self.offset, dtype=np.intp), np.asarray(layout.columns, dtype=np.intp))
            )
        return layout.support

    def _frozen_vector(self, size: int, placement, values) -> np.ndarray:
        """A read-only vector of ``size`` entries: ``fill`` in the reserved columns, ``values``
        at ``placement`` (the sample's columns, or the slice they span) and zeros elsewhere."""
        offset = self.offset
        if placement.__class__ is slice and placement.start == offset and placement.stop == size:
            # Every column, in index order (a dense stream): one pass, no template copy.
            vector = np.fromiter(itertools.chain((self.fill,) * offset, values), float, size)
        else:
            template = self._template
            if template is None or len(template) != size:
                template = np.zeros(size)
                template[:offset] = self.fill
                self._template = template
            vector = template.copy()
            vector[placement] = values
        vector.flags.writeable = False
        return vector

    def encode_many(self, X: typing.Any, grow: bool = True) -> tuple[np.ndarray, list]:
        """Validate a dataframe and return it as a dense matrix in index order, and new features.

        ``X`` is any dataframe `as_frame` accepts. The matrix has ``size + len(new)`` columns
        (reserved ones hold ``fill``). NaN cells are missing (zero); a column that is entirely
        missing does not create a feature.

        """
        X = as_frame(X)
        values, observed = validate_frame(X)
        names = list(X.columns)
        position = self.position
        unknown = [j for j, column in enumerate(_columns_of(position, names)) if column < 0]
        if grow:
            new = sort_features(names[j] for j in unknown if observed[j])
        else:
            new = []
        provisional = self.provisional(new)
        keep_columns, targets = [], []
        for j, name in enumerate(names):
            column = position.get(name, provisional.get(name))
            if column is not None:
                keep_columns.append(j)
                targets.append(column)
        matrix = np.zeros((len(X), self.size + len(new)))
        matrix[:, : self.offset] = self.fill
        if keep_columns:
            matrix[:, targets] = values[:, keep_columns]
        return matrix, new

    def to_dict(self, vector: np.ndarray) -> dict:
        """Map a dense vector of ``size`` entries back to ``{feature: float}``."""
        return {
            feature: float(value)
            for feature, value in zip(self.features, vector[self.offset : self.size])
        }
