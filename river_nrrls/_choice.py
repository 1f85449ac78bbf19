"""AutoNRRLS's choice rule: the simplest candidate until another's lead is significant.

A race's scores over a window that holds a handful of minority samples are noise: one
minority sample more or less right moves a G-mean by several points, and a race that follows
the best score switches to whichever candidate was lucky last. `PairedEvidence` weighs that
luck. Over the race's window (a `ClassWindow`: the last ``window`` samples, stretched to hold
``per_class`` samples of every class), it keeps, for every candidate k and class c, the
samples of c that k predicts right and the reference (the simplest candidate, the race's
first) wrong, ``wins[c][k]``, and the converse, ``losses[c][k]``: a paired comparison on the
same samples, as McNemar's test makes it.

Candidate k's recall of class c differs from the reference's by
``d_c = (wins - losses) / n_c``, of variance about ``(wins + losses) / n_c^2`` (the discordant
samples: McNemar's); the G-mean is ``exp(mean_c log r_c)``, so to first order its log
differs by ``mean_c d_c / r_c`` (``r_c`` the reference's recall, at least ``1 / (2 n_c)``).
The evidence of k over the reference is that difference in standard errors,

    z_k = sum_c (d_c / r_c) / sqrt(sum_c var(d_c) / r_c^2),

0 when the two never disagree. A candidate may lead only when ``z_k > evidence``; the
reference always may; the leader is the best score of those. With few minority samples a
class's discordant samples are few, the standard error large, and the reference
(``NRRLS()`` on the raw features, no forgetting) keeps the lead; on a long stream, or after
a drift that the reference cannot follow, the evidence grows with the samples and the best
score leads.

This module imports nothing of the estimators.

"""

from __future__ import annotations

import math
import typing

from ._race import ClassWindow

__all__ = ["PairedEvidence", "predicted_label"]


def predicted_label(y_pred: typing.Any) -> typing.Any:
    """The class of a prediction: a label, or the most probable class of a probability dict
    (the first of equal ones), or None."""
    if isinstance(y_pred, dict):
        return max(y_pred, key=y_pred.__getitem__) if y_pred else None
    return y_pred


class PairedEvidence:
    """Every candidate's paired evidence against the first one, over a `ClassWindow`."""

    def __init__(self, n_candidates: int, window: ClassWindow | None):
        self.n_candidates = n_candidates
        self.window = window  # (None: every scored sample counts)
        self.totals: dict = {}  # {class: weight of its samples}
        self.hits: dict = {}  # {class: weight the reference predicts right}
        self.wins: dict = {}  # {class: [weight k right and the reference wrong, for every k]}
        self.losses: dict = {}  # {class: [weight k wrong and the reference right, ...]}

    def add(self, y: typing.Hashable, predictions: typing.Sequence, weight: float) -> None:
        """One scored sample: every candidate's prediction of it, in the race's order."""
        right = tuple(predicted_label(p) == y for p in predictions)
        self._count(y, right, weight)
        if self.window is not None:
            self.window.push(y, (y, right, weight))
            for old_y, old_right, old_weight in self.window.leaving():
                self._count(old_y, old_right, -old_weight)

    def _count(self, y: typing.Hashable, right: tuple, weight: float) -> None:
        if y not in self.totals:
            n = self.n_candidates
            self.totals[y], self.hits[y] = 0.0, 0.0
            self.wins[y], self.losses[y] = [0.0] * n, [0.0] * n
        self.totals[y] += weight
        reference = right[0]
        if reference:
            self.hits[y] += weight
            losses = self.losses[y]
            for k, hit in enumerate(right):
                if not hit:
                    losses[k] += weight
        else:
            wins = self.wins[y]
            for k, hit in enumerate(right):
                if hit:
                    wins[k] += weight

    def z(self, k: int) -> float:
        """Candidate k's evidence over the reference, in standard errors (see the module)."""
        lead, variance = 0.0, 0.0
        for y, n in self.totals.items():
            if n <= 0.0:
                continue
            wins, losses = self.wins[y][k], self.losses[y][k]
            recall = max(self.hits[y] / n, 0.5 / n)
            lead += (wins - losses) / (n * recall)
            variance += (wins + losses) / (n * recall) ** 2
        return lead / math.sqrt(variance) if variance > 0.0 else 0.0

    def leader(self, values: typing.Sequence[float], sign: float, evidence: float) -> int:
        """The position of the best value (``sign`` -1: the lowest) among the reference and
        the candidates whose ``z`` exceeds ``evidence``; ties go to the first. Only the
        candidates that score better than the reference are tested, the best first."""
        reference = sign * values[0]
        better = [k for k in range(1, len(values)) if sign * values[k] > reference]
        better.sort(key=lambda k: -sign * values[k])  # (stable: ties keep the race's order)
        for k in better:
            if self.z(k) > evidence:
                return k
        return 0
