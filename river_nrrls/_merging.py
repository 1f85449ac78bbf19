"""Merging models whose state is additive statistics, or pipelines that end in one, without
ever half-merging; the one pipeline split that `merge` and `river_nrrls.dask.fit` share."""

from __future__ import annotations

import copy
import typing

from river import base, compose

from ._parameters import parameter_names

__all__ = ["Mergeable", "PipelineParts", "is_mergeable", "merge", "split_pipeline"]


class Mergeable:
    """Base of the estimators whose whole state is additive statistics: ``a + b`` is exactly the
    model trained on both streams. `merge` and `river_nrrls.dask.fit` accept them (alone, or
    at the end of a pipeline of stateless transformers)."""

    def __iadd__(self, other: typing.Any) -> typing.Any:  # pragma: no cover - overridden
        raise NotImplementedError


class PipelineParts(typing.NamedTuple):
    """A mergeable model split into its transformers and its final estimator."""

    transformers: list[tuple[typing.Hashable, typing.Any]]  # (name, step), in order
    model: typing.Any  # the final `Mergeable` estimator


def is_mergeable(model: typing.Any) -> bool:
    # Not isinstance: river's EstimatorMeta makes any pipeline ending in a Mergeable one too.
    return issubclass(type(model), Mergeable)


def _is_stateless(step: typing.Any, mini_batch: bool) -> bool:
    """A transformer that learns nothing (river's no-op ``learn_one``, and ``learn_many``);
    with ``mini_batch``, one that also transforms a whole frame (``transform_many``)."""
    kind = type(step)
    if not issubclass(kind, base.Transformer) or step._supervised:
        return False
    if kind.learn_one is not base.Transformer.learn_one:
        return False
    if not issubclass(kind, base.MiniBatchTransformer):
        return not mini_batch
    return kind.learn_many is base.MiniBatchTransformer.learn_many


def _same_parameters(left: typing.Any, right: typing.Any) -> bool:
    if type(left) is not type(right):
        return False
    try:
        names = parameter_names(type(left))
        return all(bool(getattr(left, n) == getattr(right, n)) for n in names)
    except Exception:  # parameters that cannot be compared
        return False


def split_pipeline(model: typing.Any, *, mini_batch: bool = False, side: str = "") -> PipelineParts:
    """The stateless transformers and the final mergeable estimator of ``model``.

    ``model`` is a `Mergeable` estimator (no transformers) or a river pipeline whose last step
    is one and whose other steps learn nothing (such as `river_nrrls.PolynomialExtender`), so
    that each shard can apply them independently; ``mini_batch`` also requires
    ``transform_many`` (Dask partitions). Anything else raises ``TypeError`` naming the step;
    ``side`` names the model in the messages ("left", "right").

    """
    which = f"the {side} " if side else ""
    if is_mergeable(model):
        return PipelineParts([], model)
    if not issubclass(type(model), compose.Pipeline):
        raise TypeError(
            f"{which}model must be an NRRLS or a pipeline of stateless transformers ending in "
            f"an NRRLS (or another mergeable estimator), got {type(model).__name__}"
        )
    steps = list(model.steps.items())
    name, last = steps[-1]
    if not is_mergeable(last):
        raise TypeError(
            f"the last step of {which or 'the '}pipeline is not an NRRLS (or another mergeable "
            f"estimator): {name!r} is a {type(last).__name__}"
        )
    for name, step in steps[:-1]:
        if not _is_stateless(step, mini_batch):
            kind = "stateless mini-batch transformer" if mini_batch else "stateless transformer"
            raise TypeError(
                f"the step {name!r} of {which or 'the '}pipeline learns from the data (it is not "
                f"a {kind}): only pipelines whose steps before the final estimator learn nothing "
                "(such as PolynomialExtender) can be merged exactly"
            )
    return PipelineParts(steps[:-1], last)


def merge(left: typing.Any, right: typing.Any) -> typing.Any:
    """A new model equal to one trained on the streams of both (``left`` and ``right`` unchanged).

    For two `river_nrrls.NRRLS` this is ``left + right``. For two pipelines ending in an NRRLS,
    the steps before it must be stateless (they learn nothing, like `PolynomialExtender`) and
    the same on both sides (same classes, same parameters, in the same order); the result is a
    copy of ``left`` whose NRRLS is the sum of the two. Everything is checked before anything
    is built, so an error (``TypeError``/``ValueError`` naming what differs) leaves no
    half-merged model behind.

    river's ``pipeline_1 + pipeline_2`` builds a `river.compose.TransformerUnion` instead
    (which cannot predict), and ``pipeline["NRRLS"] += ...`` cannot work since a pipeline does
    not support item assignment: use this function to merge pipelines.

    Examples
    --------

    >>> from river_nrrls import NRRLS, PolynomialExtender, datasets, merge

    >>> samples = list(datasets.Pima())
    >>> left = PolynomialExtender(degree=2) | NRRLS()
    >>> right = PolynomialExtender(degree=2) | NRRLS()
    >>> for x, y in samples[:300]:
    ...     left.learn_one(x, y)
    >>> for x, y in samples[300:]:
    ...     right.learn_one(x, y)
    >>> both = merge(left, right)
    >>> both["NRRLS"].n_samples
    {True: 268.0, False: 500.0}

    """
    left_steps, left_model = split_pipeline(left, side="left")
    right_steps, right_model = split_pipeline(right, side="right")
    if len(left_steps) != len(right_steps):
        raise ValueError(
            f"the pipelines have {len(left_steps)} and {len(right_steps)} steps before the NRRLS"
        )
    for (left_name, left_step), (right_name, right_step) in zip(left_steps, right_steps):
        if not _same_parameters(left_step, right_step):
            raise ValueError(
                f"the pipelines differ at step {left_name!r} / {right_name!r}: "
                f"{left_step!r} != {right_step!r}"
            )
    merged_model = left_model + right_model  # checks compatibility and range first
    if not left_steps:
        return merged_model
    # A new pipeline (a copy of ``left`` would keep river's cached plan, which points to the
    # copy of left's NRRLS rather than to the merged one).
    steps = [(name, copy.deepcopy(step)) for name, step in left_steps]
    return compose.Pipeline(*steps, (list(left.steps)[-1], merged_model))
