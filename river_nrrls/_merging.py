"""Merging NR-RLS models, or pipelines that end in one, without ever half-merging."""

from __future__ import annotations

import copy
import typing

from river import base, compose

from ._parameters import parameter_names
from .nrrls import NRRLS

__all__ = ["merge"]


def _is_nrrls(model: typing.Any) -> bool:
    # Not isinstance: river's EstimatorMeta makes any pipeline ending in an NRRLS an "NRRLS".
    return issubclass(type(model), NRRLS)


def _is_stateless(step: typing.Any) -> bool:
    """A transformer that learns nothing (river's no-op ``learn_one``, and ``learn_many``)."""
    kind = type(step)
    if not issubclass(kind, base.Transformer) or step._supervised:
        return False
    if kind.learn_one is not base.Transformer.learn_one:
        return False
    return not issubclass(kind, base.MiniBatchTransformer) or (
        kind.learn_many is base.MiniBatchTransformer.learn_many
    )


def _same_parameters(left: typing.Any, right: typing.Any) -> bool:
    if type(left) is not type(right):
        return False
    try:
        names = parameter_names(type(left))
        return all(bool(getattr(left, n) == getattr(right, n)) for n in names)
    except Exception:  # parameters that cannot be compared
        return False


def _split(model: typing.Any, side: str) -> tuple[list[tuple[typing.Hashable, typing.Any]], NRRLS]:
    if _is_nrrls(model):
        return [], model
    if issubclass(type(model), compose.Pipeline):
        steps = list(model.steps.items())
        name, last = steps[-1]
        if not _is_nrrls(last):
            raise TypeError(f"the last step of the {side} pipeline is not an NRRLS: {name!r}")
        for name, step in steps[:-1]:
            if not _is_stateless(step):
                raise TypeError(
                    f"the step {name!r} of the {side} pipeline learns from the data: only "
                    "pipelines whose steps before the NRRLS are stateless (such as "
                    "PolynomialExtender) can be merged exactly"
                )
        return steps[:-1], last
    raise TypeError(
        f"the {side} model must be an NRRLS or a pipeline ending in one, "
        f"got {type(model).__name__}"
    )


def merge(left: NRRLS | compose.Pipeline, right: NRRLS | compose.Pipeline):
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
    left_steps, left_model = _split(left, "left")
    right_steps, right_model = _split(right, "right")
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
