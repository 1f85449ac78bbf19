"""Ranks, the Friedman test and the Nemenyi critical difference (Demsar 2006).

Only numpy and scipy: the tables of ``river-nrrls benchmark`` are built from these numbers.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

__all__ = ["Comparison", "compare", "nemenyi_cd", "nemenyi_q", "rank_rows"]


def rank_rows(scores: np.ndarray) -> np.ndarray:
    """Rank of every learner (column) on every data set (row): 1 for the highest score, ties
    sharing the average of their ranks (Demsar 2006, section 3.2.2).

    >>> rank_rows([[0.9, 0.5, 0.9], [0.1, 0.2, 0.3]]).tolist()
    [[1.5, 3.0, 1.5], [3.0, 2.0, 1.0]]

    """
    scores = np.asarray(scores, dtype=float)
    return np.vstack([stats.rankdata(-row, method="average") for row in scores])


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the Nemenyi test for k learners: the studentized range
    statistic for infinite degrees of freedom divided by sqrt(2) (Demsar's Table 5a)."""
    if k < 2:
        raise ValueError(f"the Nemenyi test needs at least 2 learners, got {k}")
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Critical difference of average ranks: CD = q_alpha sqrt(k (k + 1) / (6 N)).

    Demsar's (2006) example, four learners on fourteen data sets:

    >>> round(nemenyi_cd(4, 14), 2)
    1.25

    """
    if n < 1:
        raise ValueError(f"the Nemenyi test needs at least one data set, got {n}")
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Friedman test and Nemenyi post-hoc of k learners over N data sets."""

    learners: tuple[str, ...]
    ranks: np.ndarray  # N x k
    average_ranks: np.ndarray  # k
    friedman_chi2: float
    friedman_p: float
    iman_davenport_f: float
    iman_davenport_p: float
    alpha: float
    q_alpha: float
    cd: float

    @property
    def n_datasets(self) -> int:
        return self.ranks.shape[0]


def compare(scores: np.ndarray, learners: tuple[str, ...], alpha: float = 0.05) -> Comparison:
    """Ranks, Friedman test (with scipy's tie correction), the Iman-Davenport F form and the
    Nemenyi CD for a matrix of scores (rows: data sets, columns: learners)."""
    scores = np.asarray(scores, dtype=float)
    n, k = scores.shape
    if k < 3:
        raise ValueError(f"the Friedman test needs at least 3 learners, got {k}")
    if n < 2:
        raise ValueError(f"the Friedman test needs at least 2 data sets, got {n}")
    ranks = rank_rows(scores)
    chi2, p = stats.friedmanchisquare(*scores.T)
    chi2, p = float(chi2), float(p)
    # Iman and Davenport's F_F = (N - 1) chi2 / (N (k - 1) - chi2), F with (k-1, (k-1)(N-1)) dof
    denominator = n * (k - 1) - chi2
    if denominator > 0:
        f_f = (n - 1) * chi2 / denominator
        f_p = float(stats.f.sf(f_f, k - 1, (k - 1) * (n - 1)))
    else:  # every data set ranks the learners identically
        f_f, f_p = math.inf, 0.0
    return Comparison(
        learners=tuple(learners),
        ranks=ranks,
        average_ranks=ranks.mean(axis=0),
        friedman_chi2=chi2,
        friedman_p=p,
        iman_davenport_f=float(f_f),
        iman_davenport_p=f_p,
        alpha=alpha,
        q_alpha=nemenyi_q(k, alpha),
        cd=nemenyi_cd(k, n, alpha),
    )
