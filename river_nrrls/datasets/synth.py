"""Imbalanced streams from river's synthetic generators, for experiments on rare classes.

river's generators (``river.datasets.synth``) give balanced or fixed-ratio classes;
`Imbalanced` resamples any binary stream to a chosen share of positives, and
`scale_agrawal` maps the features of ``synth.Agrawal`` to [0, 1] with the generator's
documented ranges (fixed constants, so the scaling does not change as the stream goes on).

"""

from __future__ import annotations

import random
import typing
from collections.abc import Iterator

from river.base.typing import FeatureName
from river.datasets import base

__all__ = ["AGRAWAL_RANGES", "Imbalanced", "scale_agrawal"]

#: The ranges of ``river.datasets.synth.Agrawal``'s features (without perturbation).
AGRAWAL_RANGES: dict[str, tuple[float, float]] = {
    "salary": (20_000.0, 150_000.0),
    "commission": (0.0, 85_000.0),
    "age": (20.0, 80.0),
    "elevel": (0.0, 4.0),
    "car": (1.0, 20.0),
    "zipcode": (0.0, 8.0),
    "hvalue": (0.0, 1_200_000.0),
    "hyears": (1.0, 30.0),
    "loan": (0.0, 500_000.0),
}


def scale_agrawal(x: dict, clip: bool = False) -> dict:
    """An Agrawal sample with every feature mapped by (value - low) / (high - low).

    ``clip=True`` also clamps to [0, 1] (values can leave the ranges with perturbation).

    """
    scaled = {}
    for name, value in x.items():
        low, high = AGRAWAL_RANGES[name]
        unit = (value - low) / (high - low)
        scaled[name] = min(1.0, max(0.0, unit)) if clip else unit
    return scaled


class Imbalanced(base.SyntheticDataset):
    """A binary stream resampled to a fixed share of positives (rejection sampling).

    The label of every output sample is drawn first (``True`` with probability ``pos_rate``);
    samples of ``dataset`` are then drawn until one has that label, so each class keeps the
    class-conditional distribution of ``dataset``.

    Parameters
    ----------
    dataset
        Any binary stream (an iterable of ``(x, y)``, ``y`` bool-like), e.g. a river generator.
    pos_rate
        Share of positive (``True``) samples in the output, in (0, 1).
    seed
        Seed of the label draws.

    Examples
    --------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from river_nrrls.datasets.synth import Imbalanced

    >>> stream = Imbalanced(synth.SEA(seed=1), pos_rate=0.1, seed=2)
    >>> labels = [y for _, y in itertools.islice(stream, 5000)]
    >>> round(sum(labels) / len(labels), 2)
    0.1

    """

    def __init__(self, dataset: typing.Iterable, pos_rate: float, seed: int):
        n_features = getattr(dataset, "n_features", None)
        super().__init__(task=base.BINARY_CLF, n_features=n_features)
        if not 0.0 < pos_rate < 1.0:
            raise ValueError(f"pos_rate must be in (0, 1), got {pos_rate!r}")
        self.dataset = dataset
        self.pos_rate = pos_rate
        self.seed = seed

    def __iter__(self) -> Iterator[tuple[dict[FeatureName, typing.Any], bool]]:
        rng = random.Random(self.seed)
        wanted = rng.random() < self.pos_rate  # the label of the next output sample
        for x, y in self.dataset:
            if bool(y) == wanted:
                yield x, wanted
                wanted = rng.random() < self.pos_rate
