"""The pieces of a prequential race between candidate models, shared by the two racing
estimators (`PolynomialOrderSelector` and `AutoNRRLS`).

A race keeps one clone of a river classification metric per candidate. Before a sample is
learnt, every candidate's prediction of it updates that candidate's metric (prequential, or
"test-then-train", scoring); with a window only the last ``window`` scored samples count (the
one leaving the window is reverted). The leader is the best score, ties going to the first
candidate in the race's order (each racer lists its candidates from the simplest up).

Block-prequential scoring freezes a candidate's scorer (its weights) at the start of a block
of samples and scores the whole block with it, so that the weights are solved once per block
instead of once per sample (`BlockClock` counts the block's samples).

This module imports nothing of the estimators.

"""

from __future__ import annotations

import collections
import numbers
import typing

import numpy as np
from river import metrics

from ._checks import check_real

__all__ = [
    "BlockClock",
    "ClassWindow",
    "check_count",
    "check_grid",
    "check_orders",
    "check_positive",
    "leader",
    "score_values",
    "update_score",
]


def check_positive(name: str, value: typing.Any) -> int:
    """A positive int parameter (bools refused), or a ValueError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_count(name: str, value: typing.Any) -> int:
    """A non-negative int parameter (bools refused), or a ValueError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return int(value)


def check_orders(orders: typing.Any) -> tuple[int, ...]:
    """Distinct positive ints (a tuple or list), increasing; else a ValueError."""
    if not isinstance(orders, (tuple, list)) or not orders:
        raise ValueError(f"orders must be a non-empty tuple of positive ints, got {orders!r}")
    for order in orders:
        if isinstance(order, (bool, np.bool_)) or not isinstance(order, numbers.Integral):
            raise ValueError(f"orders must hold positive ints, got {order!r}")
        if order < 1:
            raise ValueError(f"orders must hold positive ints, got {order!r}")
    if len(set(orders)) != len(orders):
        raise ValueError(f"orders must be distinct, got {orders!r}")
    return tuple(sorted(int(order) for order in orders))


def check_grid(grid: typing.Any) -> tuple[float, ...]:
    """The forgetting factors of a ``forgetting_grid``: in (0, 1], distinct (a tuple or list),
    decreasing (no forgetting first, the simplest); else a ValueError."""
    if not isinstance(grid, (tuple, list)) or not grid:
        raise ValueError(f"forgetting_grid must be a non-empty tuple of floats, got {grid!r}")
    factors = [check_real("forgetting_grid", v, low=0.0, high=1.0, low_open=True) for v in grid]
    if len(set(factors)) != len(factors):
        raise ValueError(f"forgetting_grid must hold distinct factors, got {grid!r}")
    return tuple(sorted(factors, reverse=True))


def update_score(
    score: metrics.base.ClassificationMetric,
    recent: collections.deque,
    window: int | None,
    y: typing.Hashable,
    y_pred: typing.Any,
    extra: dict,
) -> None:
    """Score one prediction: ``score.update(y, y_pred, **extra)``; with a ``window``, the
    sample that leaves it (the oldest of ``recent``, which keeps the last ``window``) is
    reverted first."""
    if window is not None:
        if len(recent) == window:
            score.revert(*recent.popleft())  # the sample that leaves the window
        recent.append((y, y_pred, *extra.values()))
    score.update(y, y_pred, **extra)


class ClassWindow:
    """One candidate's scored samples in a window that holds enough of every class.

    The window is the last ``size`` scored samples, stretched back (up to ``limit`` samples)
    until it holds at least ``per_class`` samples of every class in it: the oldest sample
    leaves only when the window is longer than ``size`` and the oldest sample's class keeps
    ``per_class`` samples without it (or the window is longer than ``limit``). So the window is
    the shortest suffix of the scored stream with both properties, and a score of a class with
    few samples (the minority of an imbalanced stream: a handful in the last 500) is read over
    enough of them to mean something. The decision depends on the labels alone, so every
    candidate scored on the same samples has the same window.

    """

    def __init__(self, size: int, per_class: int, limit: int):
        self.size = size
        self.per_class = per_class
        self.limit = max(limit, size)
        self.samples: collections.deque = collections.deque()  # (y, y_pred, *extra values)
        self.counts: collections.Counter = collections.Counter()  # samples of each class

    @classmethod
    def holding(cls, samples: typing.Iterable, size: int, per_class: int, limit: int):
        """A window holding ``samples`` (``(y, y_pred, *extra)`` tuples, the oldest first)."""
        window = cls(size, per_class, limit)
        for sample in samples:
            window.push(sample[0], sample)
        return window

    def __len__(self) -> int:
        return len(self.samples)

    def add(
        self,
        score: metrics.base.ClassificationMetric,
        y: typing.Hashable,
        y_pred: typing.Any,
        extra: dict,
    ) -> None:
        """Score one prediction (``score.update(y, y_pred, **extra)``), then revert the samples
        that leave the window."""
        self.push(y, (y, y_pred, *extra.values()))
        score.update(y, y_pred, **extra)
        for sample in self.leaving():
            score.revert(*sample)

    def push(self, y: typing.Hashable, sample: typing.Any) -> None:
        """Append ``sample``, of class ``y`` (its first item)."""
        self.samples.append(sample)
        self.counts[y] += 1

    def leaving(self) -> typing.Iterator:
        """Remove and yield the oldest samples while they leave the window."""
        samples, counts = self.samples, self.counts
        while len(samples) > self.size:
            oldest = samples[0][0]
            if counts[oldest] <= self.per_class and len(samples) <= self.limit:
                return
            counts[oldest] -= 1
            yield samples.popleft()


def leader(candidates: typing.Sequence, values: typing.Sequence[float], bigger_is_better: bool):
    """The candidate with the best value (the highest, or the lowest if smaller is better);
    strict comparison, so ties keep the first candidate (the simplest)."""
    sign = 1.0 if bigger_is_better else -1.0
    best, best_value = candidates[0], sign * values[0]
    for key, value in zip(candidates[1:], values[1:]):
        if sign * value > best_value:
            best, best_value = key, sign * value
    return best


class BlockClock:
    """The position within the current scoring block of ``size`` samples: a block starts
    (`starts`) at position 0; `advance` moves on by one learnt sample."""

    def __init__(self, size: int):
        self.size = size
        self.position = 0

    def starts(self) -> bool:
        return self.position == 0

    def advance(self) -> None:
        self.position = (self.position + 1) % self.size


def _recalls(metric: metrics.GeometricMean) -> list[float]:
    """Every class's recall as ``GeometricMean.get`` computes it (0 for an empty row): the
    classes of ``cm.classes`` (the labels of a non-zero row or column sum), in its order,
    read from the confusion matrix's dicts directly."""
    cm = metric.cm
    rows, data = cm.sum_row, cm.data
    classes = {c for c, n in rows.items() if n} | {c for c, n in cm.sum_col.items() if n}
    recalls = []
    for label in classes:
        hits, total = data[label][label], rows[label]  # (read as river reads them)
        recalls.append(hits / total if total != 0 else 0.0)  # x / 0: no recall
    return recalls


def score_values(scores: list) -> list[float]:
    """``metric.get()`` of every metric; for river's GeometricMean the same numbers without
    its scipy call.

    ``GeometricMean.get`` is ``scipy.stats.gmean`` of the class recalls, that is
    ``exp(mean(log(recalls)))`` with numpy, behind about 0.3 ms of argument handling: six times
    a sample it cost more than every order's model. This computes the recalls as it does and
    the same numpy expression, one row per metric when they have the same number of classes
    (``tests/test_order_selector.py`` checks the numbers are equal to the bit).

    """
    if not all(type(metric) is metrics.GeometricMean for metric in scores):
        return [metric.get() for metric in scores]
    rows = [_recalls(metric) for metric in scores]
    widths = {len(row) for row in rows}
    if len(widths) != 1 or 0 in widths:
        return [_geometric_mean(np.array(row, float)) for row in rows]
    if all(recall > 0.0 for row in rows for recall in row):  # no log(0): nothing to silence
        return _geometric_means(rows, widths)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _geometric_means(rows, widths)


def _geometric_means(rows: list, widths: set) -> list[float]:
    """exp(mean(log(recalls))) of every row (rows of one width), as scipy's gmean."""
    logs = np.log(np.array(rows, float))
    if widths == {2}:  # two classes: numpy's mean of two is (a + b) / 2, the same float
        return np.exp([(first + second) / 2 for first, second in logs.tolist()]).tolist()
    return np.exp(np.mean(logs, axis=1)).tolist()


def _geometric_mean(recalls: np.ndarray) -> float:
    if not len(recalls):
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.exp(np.mean(np.log(recalls))))
