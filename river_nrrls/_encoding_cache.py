"""What `FeatureIndex` remembers of the last sample it encoded, and when the next one is the same.

River's prequential loop encodes every sample twice (``predict_one``, then ``learn_one``), and
the samples of a stream usually have the same keys. Each encoding of
`river_nrrls._index.FeatureIndex` keeps one record of its last sample:

- `RememberedSample`, for ``dense_one``: the keys, read-only vector and `SampleLayout` of the
  last sample whose features were all known and present. A sample with the same keys
  (`same_keys`) and finite real values is refilled at the same columns, without a look-up:
  ``_native.refill`` (the compiled kernel, or its twin in ``_twins.py``).
- `SparseMemo`, for ``encode_sparse``: the last sample whose values were all plain ints and
  floats, with its two encodings (`SparseSample`, with and without its new features). A sample
  with the same keys and values (`SparseMemo.repeats`) reuses them, without validation.

A record holds only while the index has the size it had then (a grown index encodes afresh),
its arrays are read-only, and none is pickled. The index decides when to remember and to reuse;
this module owns the records and the test of sameness.

"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np

from ._validation import PLAIN_NUMBERS, not_a_dict

__all__ = [
    "RememberedSample",
    "SampleLayout",
    "SparseMemo",
    "SparseSample",
    "frozen_encodings",
    "same_keys",
    "snapshot",
]


def snapshot(x: dict) -> tuple[tuple, tuple]:
    """The keys and the values of a feature dict, to recognise the sample at the next call."""
    if not isinstance(x, dict):
        raise not_a_dict(x)
    return tuple(x), tuple(x.values())


def same_keys(keys: tuple, known_keys: tuple) -> bool:
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


@dataclasses.dataclass(slots=True)
class SampleLayout:
    """Where a sample's values go in a dense vector: its feature columns (in the order of its
    keys, a ``np.intp`` array: what the refill reads) and, once asked for, its support
    (`support_after`)."""

    columns: np.ndarray
    support: np.ndarray | None = None

    def support_after(self, offset: int) -> np.ndarray:
        """The ``offset`` reserved columns, then the sample's feature columns: where a sample of
        this layout may be non-zero (computed once: the samples with these keys share it)."""
        if self.support is None:
            self.support = np.concatenate((np.arange(offset, dtype=np.intp), self.columns))
        return self.support


@dataclasses.dataclass(slots=True)
class RememberedSample:
    """The last sample ``FeatureIndex.dense_one`` encoded with every feature known and present.

    ``refill`` (`river_nrrls._native`: ``dense_one``'s and the fused paths' of
    `river_nrrls._fused`) reads its ``keys``, ``vector`` and ``layout.columns``; the vector it
    builds is kept through `refilled`.

    """

    keys: tuple
    size: int  # the index's size then (a grown index encodes afresh)
    vector: np.ndarray
    layout: SampleLayout

    @classmethod
    def of(
        cls, keys: tuple, size: int, vector: np.ndarray, layout: SampleLayout
    ) -> RememberedSample:
        """The record of a sample."""
        return cls(keys, size, vector, layout)

    def refilled(self, vector: np.ndarray) -> None:
        """Keep ``vector``, the encoding of a sample with these keys at these columns."""
        self.vector = vector


class SparseSample(typing.NamedTuple):
    """A sample as ``FeatureIndex.encode_sparse`` gives it: read-only columns and values."""

    columns: np.ndarray
    numbers: np.ndarray
    new: tuple  # new features (their provisional columns are in ``columns``)


def frozen_encodings(
    size: int, columns: list[int], numbers: np.ndarray, new: list
) -> tuple[SparseSample, SparseSample]:
    """A sample's sparse encodings, read-only: with the provisional columns (``>= size``) of its
    ``new`` features, and without them."""
    all_columns = np.asarray(columns, dtype=np.intp)
    if new:
        known = all_columns < size
        known_columns, known_numbers = all_columns[known], numbers[known]
    else:
        known_columns, known_numbers = all_columns, numbers
    for array in (all_columns, numbers, known_columns, known_numbers):
        array.flags.writeable = False
    return (
        SparseSample(all_columns, numbers, tuple(new)),
        SparseSample(known_columns, known_numbers, ()),
    )


class SparseMemo(typing.NamedTuple):
    """The last sample ``FeatureIndex.encode_sparse`` encoded, to recognise it at the next call."""

    size: int  # the index's size then
    keys: tuple
    values: tuple
    zeros: tuple  # positions of zero values (a zero must be the very same object: -0.0 == 0.0)
    grown: SparseSample  # with the provisional columns of its new features (grow=True)
    known: SparseSample  # without them (grow=False)

    @classmethod
    def of(
        cls, size: int, keys: tuple, values: tuple, grown: SparseSample, known: SparseSample
    ) -> SparseMemo:
        """The memo of a sample whose values are all plain ints and floats, validated."""
        numbers = grown.numbers
        zeros = () if numbers.all() else tuple(np.flatnonzero(numbers == 0.0).tolist())
        return cls(size, keys, values, zeros, grown, known)

    def repeats(self, keys: tuple, values: tuple, size: int) -> bool:
        """Whether a `snapshot` is the remembered sample's, in an index of the same ``size``:
        the same keys (`same_keys`), values all plain ints and floats (a complex or a
        ``Decimal`` equal to a remembered float must still be validated) equal to the
        remembered ones, and zeros the very same objects. The types are checked before the
        values are compared: a ``pd.NA`` (missing) cannot be compared, its ``==`` is NA and has
        no truth value."""
        return (
            self.size == size
            and same_keys(keys, self.keys)
            and PLAIN_NUMBERS.issuperset(map(type, values))
            and values == self.values
            and all(values[i] is self.values[i] for i in self.zeros)
        )
