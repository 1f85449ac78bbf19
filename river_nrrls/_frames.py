"""Dataframe interop: any eager dataframe river accepts, in and out of the estimators.

Every ``*_many`` method of the package takes its input through `as_frame` / `as_series` and
returns its result through `native_frame` / `native_series`, in the backend of its input
(pandas, polars, pyarrow, ... through narwhals). Validation of the values is not this
module's business: `river_nrrls._validation.validate_frame` owns it.

"""

from __future__ import annotations

import typing

import numpy as np
import pandas as pd

__all__ = ["as_frame", "as_series", "label_index", "native_frame", "native_series"]


def as_frame(X: typing.Any) -> pd.DataFrame:
    """Any eager dataframe river accepts (pandas, polars, pyarrow, ... via narwhals) as pandas.

    This is the one entry point of every ``*_many`` method. A pandas DataFrame passes through
    untouched; another backend is converted once, column by column through numpy (as river's
    own ``*_many`` methods read frames: polars needs no pyarrow), its nulls becoming the NaN or
    ``None`` that the rest of the package reads as *missing*, so every backend follows the same
    missing-value rules.

    """
    if isinstance(X, pd.DataFrame):
        return X
    import narwhals.stable.v2 as nw

    try:
        frame = nw.from_native(X, eager_only=True)
    except TypeError:
        raise TypeError(
            f"X must be a DataFrame (pandas, polars, pyarrow, ...), got {type(X).__name__}"
        ) from None
    names = frame.columns
    columns = {j: frame.get_column(name).to_numpy() for j, name in enumerate(names)}
    pandas_frame = pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))
    pandas_frame.columns = pd.Index(names, dtype=object)
    return pandas_frame


def as_series(y: typing.Any) -> typing.Any:
    """A series of any backend river accepts as a pandas Series (through numpy, as `as_frame`);
    anything else is returned as is (a list, a numpy array, a scalar weight)."""
    if isinstance(y, pd.Series) or y is None or isinstance(y, (list, tuple, np.ndarray)):
        return y
    import narwhals.stable.v2 as nw

    try:
        series = nw.from_native(y, series_only=True)
    except TypeError:
        return y
    return pd.Series(series.to_numpy(), name=series.name)


def _is_pandas(X: typing.Any) -> bool:
    return isinstance(X, pd.DataFrame)


def native_series(values: np.ndarray, *, name: typing.Hashable, like: typing.Any) -> typing.Any:
    """The predictions of a ``*_many`` call in the backend of its input ``like``, as river's own
    estimators return them: a pandas Series on ``like``'s index, or a Series of like's backend.

    An object array is narrowed to the labels' own dtype (bool labels give a bool Series)."""
    if _is_pandas(like):
        return pd.Series(values, index=like.index, name=name).infer_objects()
    import narwhals.stable.v2 as nw
    from river.utils.dataframe import to_native_series

    if values.dtype == object:
        values = pd.Series(values).infer_objects().to_numpy()
    # river types the name as its backends' (str or None); pandas alone takes any hashable
    return to_native_series(
        values, name=typing.cast(str | None, name), like=nw.from_native(like, eager_only=True)
    )


def native_frame(values: np.ndarray, *, columns: list, like: typing.Any) -> typing.Any:
    """A ``*_many`` result (one column per class) in the backend of its input ``like``.

    pandas keeps the labels themselves as column labels (a tuple label stays one tuple, never a
    MultiIndex level); other backends need string names, so there the labels are ``str(label)``,
    as river's own estimators do."""
    if _is_pandas(like):
        return pd.DataFrame(values, index=like.index, columns=label_index(columns))
    import narwhals.stable.v2 as nw
    from river.utils.dataframe import to_native_frame

    frame = nw.from_native(like, eager_only=True)
    if not columns:
        return frame.select([]).to_native()
    return to_native_frame(np.asarray(values, dtype=float), like=frame, columns=columns)


def label_index(labels: list) -> pd.Index:
    """Class labels as a flat pandas Index of their own dtype (tuples kept whole: no
    MultiIndex)."""
    return pd.Index(list(labels), tupleize_cols=False)
