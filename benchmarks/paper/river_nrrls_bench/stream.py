"""The long synthetic imbalanced stream of ``river-nrrls benchmark --long-stream``.

river's `river.datasets.synth.Agrawal` generator (classification function 8, a
"disposable income" rule that is nearly linear in salary, commission, education and loan, with
5 % feature perturbation) gives about 50 % positives; the stream keeps every negative and each
positive with probability 0.08 (rejection sampling with its own seeded generator), which leaves
about 7.5 % positives. The nine features are min-max scaled to [0, 1] with the generator's
documented ranges (and clipped, since the perturbation can step slightly outside them); the
categorical ``car`` and ``zipcode`` codes are kept as numbers, like the paper's ordinal codes.

Every learner runs a prequential pass (predict, then learn, every sample) in its own process;
the stream is regenerated identically in each.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
import typing

import numpy as np
from river.datasets import synth

from river_nrrls.datasets.synth import scale_agrawal

from .protocol import build_learner

__all__ = ["LONG_STREAM_LEARNERS", "StreamResult", "imbalanced_agrawal", "run_stream"]

#: The learners of the long stream (river's usual choices next to the least squares family).
LONG_STREAM_LEARNERS: tuple[str, ...] = ("NR-RLS", "RLS", "AR-RLS", "LR", "LR+ROS", "HT")

POSITIVE_KEEP = 0.08  # probability of keeping a positive sample (about 50 % are positives)
AGRAWAL_FUNCTION = 8
PERTURBATION = 0.05


def imbalanced_agrawal(n_samples: int, seed: int) -> typing.Iterator[tuple[dict, bool]]:
    """``n_samples`` scaled, imbalanced samples of the Agrawal stream (deterministic)."""
    generator = synth.Agrawal(
        classification_function=AGRAWAL_FUNCTION, seed=seed, perturbation=PERTURBATION
    )
    keep = random.Random(seed + 1)
    stream = (
        (x, bool(y))
        for x, y in generator
        if not y or keep.random() < POSITIVE_KEEP  # rejection sampling of the positives
    )
    for x, y in itertools.islice(stream, n_samples):
        yield scale_agrawal(x, clip=True), y


@dataclasses.dataclass
class StreamResult:
    """Prequential pass of one learner over the long stream."""

    learner: str
    n_samples: int
    n_positives: int
    seconds: float  # wall time of predict + learn, stream generation excluded
    samples: np.ndarray  # checkpoints (samples seen)
    cumulative: np.ndarray  # cumulative G-mean at each checkpoint
    windowed: np.ndarray  # G-mean of the samples since the previous checkpoint

    @property
    def throughput(self) -> float:
        return self.n_samples / self.seconds if self.seconds > 0 else float("inf")

    @property
    def final_gmean(self) -> float:
        return float(self.cumulative[-1])


def _gmean(counts: np.ndarray) -> float:
    """G-mean of a 2 x 2 confusion count ``counts[true, predicted]`` (NaN if a class is absent)."""
    positives, negatives = counts[1].sum(), counts[0].sum()
    if positives == 0 or negatives == 0:
        return float("nan")
    return float(np.sqrt(counts[1, 1] / positives * counts[0, 0] / negatives))


def run_stream(learner: str, n_samples: int, seed: int, window: int) -> StreamResult:
    """Prequential pass of one learner: G-mean every ``window`` samples, and the wall time."""
    model = build_learner(learner, seed)
    total, recent = np.zeros((2, 2)), np.zeros((2, 2))
    samples, cumulative, windowed = [], [], []
    seconds, n_positives = 0.0, 0
    clock = time.perf_counter
    for t, (x, y) in enumerate(imbalanced_agrawal(n_samples, seed), start=1):
        start = clock()
        y_pred = model.predict_one(x)
        model.learn_one(x, y)
        seconds += clock() - start
        if y_pred is not None:
            total[int(y), int(y_pred is True)] += 1
            recent[int(y), int(y_pred is True)] += 1
        n_positives += y
        if t % window == 0 or t == n_samples:
            samples.append(t)
            cumulative.append(_gmean(total))
            windowed.append(_gmean(recent))
            recent[:] = 0
    return StreamResult(
        learner=learner,
        n_samples=n_samples,
        n_positives=n_positives,
        seconds=seconds,
        samples=np.asarray(samples),
        cumulative=np.asarray(cumulative),
        windowed=np.asarray(windowed),
    )
