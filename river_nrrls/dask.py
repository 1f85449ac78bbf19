"""Exact NR-RLS on Dask DataFrames: fit by merging per-partition statistics, score in parallel.

NR-RLS's whole state is per-class counts, scatters and sums, which add up across shards
(algorithms page, "Sufficient statistics and the exact solve"): the model of a whole data set is
the sum of the models of its parts,

    n^c = sum_p n^c_p,   A^c = sum_p A^c_p,   s^c = sum_p s^c_p

so `fit` learns every partition of a `dask.dataframe.DataFrame` with the vectorised
``learn_many`` of a fresh clone of the model, then adds the partial models up (``+``) in a tree,
in partition order. The result is an ordinary `river_nrrls.NRRLS` (or a pipeline ending
in one), identical up to rounding to the model that learns the partitions one after the other,
and it keeps learning online with ``learn_one``. `predict` and `predict_proba` score
a Dask DataFrame partition by partition.

Dask is an optional dependency: ``pip install "river-nrrls[dask]"``. The functions run on the
current Dask scheduler: a ``dask.distributed.Client`` when one is active, threads otherwise.

"""

from __future__ import annotations

import copy
import dataclasses
import typing

import pandas as pd
from river import base, compose

from ._frames import label_index
from ._merging import PipelineParts, is_mergeable, split_pipeline
from .nrrls import NRRLS

if typing.TYPE_CHECKING:
    import dask.dataframe as dd

__all__ = ["fit", "predict", "predict_proba"]


def _require_dask():
    try:
        import dask
        import dask.dataframe
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError('river_nrrls.dask needs Dask: pip install "river-nrrls[dask]"') from error
    return dask, dask.dataframe


def _split_model(model: typing.Any) -> PipelineParts:
    """The transformers and the final estimator of ``model`` (a fresh ``NRRLS()`` when it is
    None): the split that `river_nrrls.merge` uses, with mini-batch transformers."""
    if model is None:
        return PipelineParts([], NRRLS())
    return split_pipeline(model, mini_batch=True)


def _check_column(column: typing.Any, frame: typing.Any, name: str) -> None:
    """``column`` (given as ``name``) must be a column name of ``frame``."""
    try:
        present = column in frame.columns
    except TypeError as error:
        raise TypeError(
            f"{name} must be a column name or a dask Series, got {type(column).__name__}"
        ) from error
    if not present:
        raise ValueError(f"{name} {column!r} is not a column of frame")


def _check_aligned(series: typing.Any, frame: typing.Any, name: str) -> None:
    """A Dask Series given beside ``frame`` must be partitioned like it (``ValueError``)."""
    if series.npartitions != frame.npartitions:
        raise ValueError(
            f"{name} has {series.npartitions} partitions but frame has {frame.npartitions}"
        )
    if frame.known_divisions and series.known_divisions:
        if tuple(frame.divisions) != tuple(series.divisions):
            raise ValueError(f"{name} and frame have different divisions")


@dataclasses.dataclass(frozen=True)
class _Refusal:
    """The error of a partition's bad data, returned by its task instead of raised: a worker
    prints the traceback of every task that raises, beside the error that reaches the caller,
    so the refusal travels as a value through the reduction and `fit` raises it."""

    error: Exception


def _refusing(step: typing.Callable[..., NRRLS], *args: typing.Any) -> NRRLS | _Refusal:
    """``step(*args)`` (a task of `fit`), returning a `_Refusal` instead of raising the
    ``ValueError`` or ``TypeError`` of bad data, and passing on the first refusal among
    ``args``."""
    refused = next((arg for arg in args if isinstance(arg, _Refusal)), None)
    if refused is not None:
        return refused
    try:
        return step(*args)
    except (ValueError, TypeError) as error:
        return _Refusal(error)


def _fit_partition(
    X: pd.DataFrame,
    y: pd.Series,
    target_name,
    transformers: list,
    template: NRRLS,
    w: pd.Series | None = None,
) -> NRRLS:
    """A fresh clone of ``template`` that has learnt one partition (``learn_many``: exact),
    with the sample weights ``w`` when given."""
    model = template.clone()
    transformers = [transformer.clone() for transformer in transformers]  # no shared caches
    if len(X) != len(y) or not X.index.equals(y.index):
        raise ValueError(
            f"a partition of the target {target_name!r} is not aligned with the features "
            f"({len(y)} labels for {len(X)} rows, or different indexes)"
        )
    if len(X) == 0:
        return model  # an empty partition adds nothing (not even its columns as features)
    if y.isna().any():
        row = y.index[int(y.isna().to_numpy().argmax())]
        raise ValueError(f"the target {target_name!r} has a missing value at row {row!r}")
    if w is not None and (len(w) != len(y) or not w.index.equals(y.index)):
        raise ValueError(
            f"a partition of the weights is not aligned with the target {target_name!r} "
            f"({len(w)} weights for {len(y)} labels, or different indexes)"
        )
    for transformer in transformers:
        X = transformer.transform_many(X)
    model.learn_many(X, y, w=w)
    return model


def _fit_frame_partition(
    partition: pd.DataFrame, target, transformers, template, weight=None, w=None
) -> NRRLS:
    """One partition of ``frame``: the target column, and the weight column if ``weight`` names
    one (else the aligned partition ``w`` of a weight Series, or no weights)."""
    dropped = [target] if weight is None else [target, weight]
    if weight is not None:
        w = partition[weight]
    X = partition.drop(columns=dropped)
    return _fit_partition(X, partition[target], target, transformers, template, w)


def _sum_models(*models: NRRLS) -> NRRLS:
    """Left-to-right sum of partial models; its inputs are left untouched (they may be reused
    if the scheduler recomputes a task)."""
    if len(models) == 1:
        return models[0]
    merged = models[0] + models[1]  # a new model: n^c, A^c and s^c summed
    for model in models[2:]:
        merged += model
    return merged


def fit(
    frame: dd.DataFrame,
    target: typing.Hashable | dd.Series,
    model: NRRLS | compose.Pipeline | None = None,
    *,
    weight: typing.Hashable | dd.Series | None = None,
    split_every: int = 8,
) -> NRRLS | compose.Pipeline:
    """Fit an NR-RLS exactly on a Dask DataFrame.

    Every partition is learnt by a fresh clone of ``model`` with its vectorised ``learn_many``
    (exact), then the partial models are added up with ``+`` (their statistics are sums) in a
    tree of fan-in ``split_every``, in partition order: classes and features come in the order
    in which the model that learns the partitions one after the other would see them. The
    returned model is an ordinary one: it predicts, keeps learning online with ``learn_one`` and
    can be merged with other models.

    Parameters
    ----------
    frame
        The features, and the target unless ``target`` is a Series. Values as for
        ``NRRLS.learn_many``: numbers or bools, ``NaN`` for a missing value (zero).
    target
        The name of the label column of ``frame``, or a Dask Series of labels with the same
        partitions as ``frame``. Labels must not be missing. Dask turns ``object`` columns into
        strings by default (its ``dataframe.convert-string`` option): keep bool and int labels
        in bool and int columns.
    model
        An `river_nrrls.NRRLS`, or a pipeline of stateless mini-batch transformers (such
        as `river_nrrls.PolynomialExtender`) ending in one; ``None`` is ``NRRLS()``.
        Only its parameters are used: it is cloned, and left unchanged. To add the data to a
        model that has already learnt, merge: ``model += fit(frame, target, model)``.
        ``forgetting`` must be 1 (decayed statistics do not add up). ``solver="woodbury"`` is
        exact too, but learns row by row (Theta(d^3) per sample).
    weight
        Sample weights (river's ``w``, see ``NRRLS.learn_many``): the name of a column of
        ``frame``, or a Dask Series with the same partitions as ``frame``; ``None`` weighs every
        row 1. A row of weight ``w`` counts as ``w`` copies of it; weights must be finite and
        >= 0.
    split_every
        Number of partial models added up per task of the tree reduction (at least 2).

    Returns
    -------
    NRRLS | river.compose.Pipeline
        A new NRRLS, or a new pipeline (the same transformers, then the fitted NRRLS).

    Examples
    --------

    >>> import dask.dataframe as dd
    >>> import pandas as pd
    >>> from river_nrrls import NRRLS, PolynomialExtender, datasets
    >>> from river_nrrls import dask as nrrls_dask

    >>> rows, labels = zip(*datasets.Pima())
    >>> frame = pd.DataFrame(list(rows)).assign(diabetes=list(labels))
    >>> ddf = dd.from_pandas(frame, npartitions=4)

    >>> model = nrrls_dask.fit(ddf, "diabetes", NRRLS())
    >>> model.n_samples
    {True: 268.0, False: 500.0}

    It is the model that learns the whole stream online, up to rounding:

    >>> online = NRRLS()
    >>> for x, y in datasets.Pima():
    ...     online.learn_one(x, y)
    >>> max(
    ...     abs(weight - online.weights[label][feature])
    ...     for label, weights in model.weights.items()
    ...     for feature, weight in weights.items()
    ... ) < 1e-9
    True

    It keeps learning online, and scores Dask DataFrames in parallel:

    >>> model.learn_one(rows[0], labels[0])
    >>> features = ddf.drop(columns="diabetes")
    >>> nrrls_dask.predict(model, features).head(6).tolist()
    [True, True, True, False, True, False]
    >>> nrrls_dask.predict_proba(model, features).head(3).round(3)
        True  False
    0  0.984  0.016
    1  0.934  0.066
    2  0.936  0.064

    The paper's polynomial expansion goes in front, as a pipeline:

    >>> pipeline = nrrls_dask.fit(ddf, "diabetes", PolynomialExtender(degree=2) | NRRLS())
    >>> pipeline["NRRLS"].n_samples
    {True: 268.0, False: 500.0}
    >>> len(pipeline["NRRLS"].weights[True])  # r + l (2r - 1) = 2 + 8 x 3 reduced-model terms
    26

    """
    dask, dd = _require_dask()
    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask DataFrame, got {type(frame).__name__}")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an int >= 2, got {split_every!r}")
    transformers, estimator = _split_model(model)
    if estimator.forgetting != 1:
        raise ValueError(
            f"fit needs forgetting == 1, got forgetting={estimator.forgetting!r}: decayed "
            "statistics of separate partitions do not add up"
        )
    transformers = [transformer.clone() for _, transformer in transformers]
    template = estimator.clone()
    weight_column, weight_partitions = _weight_inputs(frame, weight)

    if isinstance(target, dd.Series):
        if weight_column is not None:
            weight_partitions = frame[weight_column].to_delayed()
            frame = frame.drop(columns=[weight_column])
        _check_aligned(target, frame, "target")
        partials = [
            dask.delayed(_refusing)(_fit_partition, X, y, target.name, transformers, template, w)
            for X, y, w in zip(frame.to_delayed(), target.to_delayed(), weight_partitions)
        ]
    else:
        _check_column(target, frame, "target")
        partials = [
            dask.delayed(_refusing)(
                _fit_frame_partition, partition, target, transformers, template, weight_column, w
            )
            for partition, w in zip(frame.to_delayed(), weight_partitions)
        ]

    # Tree reduction in partition order: the sum of every group of split_every neighbours.
    level = partials
    while len(level) > 1:
        level = [
            dask.delayed(_refusing)(_sum_models, *level[start : start + split_every])
            for start in range(0, len(level), split_every)
        ]
    fitted = level[0].compute() if level else template
    if isinstance(fitted, _Refusal):  # bad data in a partition, in partition order
        raise fitted.error.with_traceback(None) from None

    if not transformers:
        return fitted
    pipeline = typing.cast(compose.Pipeline, model)  # transformers come from a pipeline only
    names = list(pipeline.steps)
    steps = [(name, step) for name, step in zip(names, transformers)]
    return type(pipeline)(*steps, (names[-1], fitted))


def _weight_inputs(frame, weight) -> tuple[typing.Hashable | None, list]:
    """``(column name or None, per-partition weights)``: one entry per partition of ``frame``,
    ``None`` where the weights come from the column (or there are none)."""
    _, dd = _require_dask()
    if weight is None:
        return None, [None] * frame.npartitions
    if isinstance(weight, dd.Series):
        _check_aligned(weight, frame, "weight")
        return None, list(weight.to_delayed())
    _check_column(weight, frame, "weight")
    return weight, [None] * frame.npartitions


def _final_nrrls(model: typing.Any) -> typing.Any:
    """The final mergeable estimator of ``model`` (an NRRLS, an RLSRegressor), alone or at the
    end of a pipeline; anything else raises ``TypeError``."""
    if is_mergeable(model):
        return model
    if issubclass(type(model), compose.Pipeline) and is_mergeable(list(model.steps.values())[-1]):
        return list(model.steps.values())[-1]
    raise TypeError(
        f"model must be an NRRLS or a pipeline ending in an NRRLS, got {type(model).__name__}"
    )


def _scoring_inputs(model: NRRLS | compose.Pipeline, frame: dd.DataFrame):
    """The labels and empty index of the outputs, and the model as one Dask object."""
    dask, dd = _require_dask()
    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask DataFrame, got {type(frame).__name__}")
    _final_nrrls(model)
    # A snapshot: the result does not change if the model keeps learning before it is computed.
    snapshot = copy.deepcopy(model)
    if issubclass(type(_final_nrrls(snapshot)), base.Regressor):  # RLSRegressor: no classes
        return [], dd.utils.make_meta(frame).index, dask.delayed(snapshot, traverse=False)
    labels = list(_final_nrrls(snapshot).n_samples)
    if labels:
        _final_nrrls(snapshot).weights  # solve once here, not once per partition  # noqa: B018
    empty_index = dd.utils.make_meta(frame).index
    # One graph key holds the model: shipped once per worker, not embedded in every task.
    return labels, empty_index, dask.delayed(snapshot, traverse=False)


def _predict_partition(
    X: pd.DataFrame, model: NRRLS | compose.Pipeline, dtype: typing.Any = object
) -> pd.Series:
    predictions = model.predict_many(X)
    return pd.Series(predictions.to_numpy(dtype=dtype), index=X.index, dtype=dtype)


def _predict_proba_partition(
    X: pd.DataFrame, model: NRRLS | compose.Pipeline, columns: pd.Index
) -> pd.DataFrame:
    if len(columns) == 0:
        return pd.DataFrame(index=X.index, columns=columns, dtype=float)
    probabilities = model.predict_proba_many(X)
    return pd.DataFrame(probabilities.to_numpy(dtype=float), index=X.index, columns=columns)


def predict(model: NRRLS | compose.Pipeline, frame: dd.DataFrame) -> dd.Series:
    """The predicted label of every row of a Dask DataFrame, as a lazy Dask Series.

    Parameters
    ----------
    model
        A fitted NRRLS, or a pipeline ending in one (as returned by `fit`).
    frame
        The features (any label column must be dropped first).

    Returns
    -------
    dask.dataframe.Series
        A Dask Series of ``object`` dtype (labels keep their Python types), indexed like
        ``frame``; ``None`` everywhere for a model that has not learnt anything. The model is
        copied when this is called: learning more before the result is computed does not
        change it.

    """
    _, empty_index, shipped = _scoring_inputs(model, frame)
    # A regressor (RLSRegressor) predicts floats; a classifier its labels, as objects.
    dtype = float if issubclass(type(_final_nrrls(model)), base.Regressor) else object
    meta = pd.Series([], index=empty_index, dtype=dtype)
    return frame.map_partitions(_predict_partition, shipped, dtype, meta=meta)


def predict_proba(model: NRRLS | compose.Pipeline, frame: dd.DataFrame) -> dd.DataFrame:
    """Class probabilities of every row of a Dask DataFrame, as a lazy Dask DataFrame.

    One ``float64`` column per class, in the model's class order; no column for a model that
    has not learnt anything. See `predict` for the parameters.

    """
    labels, empty_index, shipped = _scoring_inputs(model, frame)
    columns = label_index(labels)  # tuple labels stay whole (no MultiIndex)
    meta = pd.DataFrame(
        {i: pd.Series([], dtype=float) for i in range(len(labels))}, index=empty_index
    )
    meta.columns = columns
    return frame.map_partitions(_predict_proba_partition, shipped, columns, meta=meta)
