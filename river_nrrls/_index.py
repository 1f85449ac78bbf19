"""The one mapping between river's feature dicts and dense numpy vectors.

Every estimator of this package goes through `FeatureIndex`: it gives every feature a stable
dense column, and encodes a sample (a dict, or a dataframe's rows) in those columns, dense or
sparse. Every encoding validates the values first (`river_nrrls._validation`: what is missing,
what is refused, with an error naming the feature), so an estimator that encodes through the
index never meets an unvalidated value. The encodings of the last sample are remembered
(`river_nrrls._encoding_cache`): river's prequential loop encodes every sample twice.

New features never change the index by themselves: `FeatureIndex.encode_one` and
`FeatureIndex.encode_many` only *report* the new features (with the columns they would
get), so that an estimator can validate a whole call first and commit with `FeatureIndex.add`
only once nothing can fail any more. This is how a bad call leaves a model exactly as it was.

New features of one call are ordered by a deterministic sort of their names, so the column a
feature gets does not depend on the order of the keys of ``x``.

"""

from __future__ import annotations

import itertools
import typing

import numpy as np

from . import _native
from ._checks import short_repr
from ._encoding_cache import (
    RememberedSample,
    SampleLayout,
    SparseMemo,
    frozen_encodings,
    snapshot,
)
from ._frames import as_frame
from ._validation import not_a_dict, validate_frame, validate_one

__all__ = ["DenseSample", "FeatureIndex", "sort_features"]


def sort_features(features: typing.Iterable[typing.Hashable]) -> list:
    """Sort feature names deterministically, even when they are of mixed types (or names whose
    comparisons raise: they are then sorted by type name and ``repr``)."""
    features = list(features)
    try:
        return sorted(features)
    except Exception:  # mixed types (TypeError), or a name's own comparison raising anything
        return sorted(features, key=lambda name: (type(name).__name__, repr(name)))


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


class MergedColumns(typing.NamedTuple):
    """Where another index's dense columns go in this one (`FeatureIndex.merged_columns`)."""

    new: list  # its features that are new here, in the order they would be added
    columns: np.ndarray  # where each of its dense columns (the reserved ones first) goes here


class DenseSample(typing.NamedTuple):
    """A feature dict as `FeatureIndex.dense_one` encodes it."""

    vector: np.ndarray  # read-only, ``size + len(new)`` entries
    new: list  # features not in the index yet, in the order of their provisional columns
    support: np.ndarray | None  # columns that may be non-zero, reserved first (when asked for)


# A record without the NamedTuple's Python-level __new__ (which costs more than the tuple's own)
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
    models) remember the last sample they encoded (its keys, values and encoding: the records of
    `river_nrrls._encoding_cache`), since river's prequential loop encodes every sample twice
    (``predict_one`` then ``learn_one``). A sample is taken as the same only when its keys and
    values are equal, its values plain ints and floats, and the index unchanged; what they
    return is read-only for that reason. The caches are not pickled; `forget_encodings` lets
    them go.

    """

    _encoded: SparseMemo | None = None  # the last cacheable encode_sparse (not pickled)

    def __init__(self, offset: int = 0, fill: float = 0.0):
        self.offset = offset
        self.fill = fill
        self.position: dict[typing.Hashable, int] = {}
        self.features: list[typing.Hashable] = []
        self._cache: RememberedSample | None = None  # dense_one's last reusable sample
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
        self.forget_encodings()

    def forget_encodings(self) -> None:
        """Let go of the remembered encodings (the next calls encode afresh, with the same
        results): after a `reorder`, or for a reference that never reuses one."""
        self._cache = None
        self._template = None
        self._encoded = None

    def provisional(self, new: list) -> dict[typing.Hashable, int]:
        """The columns that ``new`` features would get if added now, in that order."""
        return dict(zip(new, range(self.size, self.size + len(new))))

    def merged_columns(self, other: FeatureIndex) -> MergedColumns:
        """Where ``other``'s dense columns go in this index once its new features are added
        (after this index's, in ``other``'s order): what a merge of two models' statistics
        needs, committing nothing. Both indexes reserve the same ``offset`` columns."""
        new = [feature for feature in other.features if feature not in self]
        position = {**self.position, **self.provisional(new)}
        reserved = list(range(self.offset))
        columns = np.array(reserved + [position[f] for f in other.features], dtype=np.intp)
        return MergedColumns(new, columns)

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
        keys, values = snapshot(x)
        last = self._encoded
        if last is not None and last.repeats(keys, values, self.size):
            encoding = last.grown if grow else last.known
            return encoding.columns, encoding.numbers, list(encoding.new), True
        clean = validate_one(x)
        columns, numbers, new = self._encode_clean(clean, grow=True)
        grown, known = frozen_encodings(self.size, columns, numbers, new)  # known: grow=False
        as_given = clean is x
        if as_given:  # only ints and floats, validated: reusable
            self._encoded = SparseMemo.of(self.size, keys, values, grown, known)
        if grow:
            return grown.columns, grown.numbers, new, as_given
        return known.columns, known.numbers, [], as_given

    def dense_one(self, x: dict, grow: bool = True, with_support: bool = False) -> DenseSample:
        """``x`` as a read-only dense vector of ``size + len(new)`` entries, with its new features
        and (``with_support=True``) the columns where it may be non-zero.

        The reserved columns hold ``fill``; with ``grow=False`` unknown features are dropped. The
        support comes from the encoding (no O(size) scan): the reserved columns, then the
        sample's feature columns. An encoding during which the index grew (a key's ``__eq__``
        that called the model back) would no longer fit it: it raises ``RuntimeError``.

        """
        if x.__class__ is not dict and not isinstance(x, dict):
            raise not_a_dict(x)
        size = self.offset + len(self.features)
        cache = self.remembered()
        if cache is not None:
            # x's keys are the remembered ones and its values finite floats or ints (else
            # None): the remembered vector if the values are the same, else a new one at the
            # same columns (one compiled call, or its twin)
            vector = _native.refill(
                x, cache.keys, cache.vector, cache.layout.columns, self.offset, self.fill
            )
            if vector is not None:
                cache.refilled(vector)
                if self.offset + len(self.features) != size:
                    _refuse_reentry()
                support = cache.layout.support_after(self.offset) if with_support else None
                return _new_sample(DenseSample, (vector, [], support))
        x = _snapshot_of(x)  # one read of a dict that another thread may change
        columns, numbers, new = self.encode_one(x, grow=grow)
        if self.offset + len(self.features) != size:
            _refuse_reentry()
        placement = _placement(columns)
        layout = SampleLayout(np.asarray(columns, dtype=np.intp))
        vector = self._frozen_vector(self.size + len(new), placement, numbers)
        if not new and len(columns) == len(x):  # every feature known and present: reusable
            self._cache = RememberedSample.of(tuple(x), self.size, vector, layout)
        support = layout.support_after(self.offset) if with_support else None
        return _new_sample(DenseSample, (vector, new, support))

    def remembered(self) -> RememberedSample | None:
        """The remembered sample of `dense_one`, when no feature was added since (its vectors
        still fit): what ``_native.refill`` refills with ``x``'s values (its ``keys``, ``vector``
        and ``layout.columns``, with this index's ``offset`` and ``fill``), keeping the vector
        it built through `refilled`. An internal interface, for the fused paths of NR-RLS."""
        cache = self._cache
        if cache is not None and cache.size == self.offset + len(self.features):
            return cache
        return None

    #: ``refilled(cache, vector)``: keep ``vector``, ``refill``'s vector of a sample
    #: with the keys of ``cache`` (a `remembered` sample); the record's own
    #: `RememberedSample.refilled`, reached through the index (no call in between).
    refilled = staticmethod(RememberedSample.refilled)

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
