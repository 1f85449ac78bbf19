"""The scale-free ridge penalty of ``RLSRegressor(standardized_penalty=True)`` (internal).

Ridge regression on standardised features ``z_j = (x_j - mu_j) / s_j`` with a free intercept,

    min  sum_i m_i (y_i - b' - w'.z_i)^2 + L |w'|^2,

is, with ``w_j = w'_j / s_j`` and ``b = b' - sum_j w_j mu_j``, the ridge regression of the raw
features whose penalty on each coefficient is ``L s_j^2 w_j^2`` (the intercept free): the
centring is absorbed by the intercept, the scaling by the weights. So the batch
``StandardScaler + Ridge`` of a prefix is an exact ridge on the raw scatter with the diagonal
penalty ``L s_j^2``, which moves with the moments at every sample.

``mu_j`` and ``s_j^2`` are the population moments (ddof 0, as river's and scikit-learn's
``StandardScaler``) over the samples seen, weighted by their masses ``m_i``: with the
weighted scatter S of ``[1, x, y]`` and ``N = S_00``, ``mu_j = S_0j / N`` and
``s_j^2 = S_jj / N - mu_j^2``. The subtraction would cancel for a feature whose mean is large
next to its spread (a date), so ``RLSRegressor`` keeps, in this mode, the QR-updated factor R
of the unregularised scatter (R^T R = S): the centred sums ``N s_j^2`` are sums of squares of
R's entries, and the penalised factor comes from one QR of R stacked on the penalty's
square roots (`SquareRootFactor.penalised`), backward stable.

A feature whose variance is indistinguishable from 0 (a constant feature, or one never seen
yet) gets the scale 1, as scikit-learn's ``StandardScaler`` gives it: centred, its
standardised column is 0, so its raw weight is 0.

"""

from __future__ import annotations

import numpy as np

__all__ = ["squared_scales"]

# A variance within this many eps per arrival of the second moment is rounding: 0.
_ROUNDING = 16 * float(np.finfo(float).eps)


def squared_scales(scatter: np.ndarray, centred: np.ndarray, arrivals: int) -> np.ndarray:
    """``s_j^2`` of every feature, 1 where the variance is 0: from the scatter of
    ``[1, x, y]`` (its mass ``N = S_00`` and the second moments ``S_jj / N``; any common
    scale, only ratios to the mass enter) and the features' ``centred`` sums of squares
    ``N s_j^2`` (`SquareRootFactor.centred_squares`: no cancellation).

    A variance counts as 0 when it is within the rounding error of sums accumulated over
    ``arrivals`` samples: ``16 arrivals eps`` times the second moment (the error bound of a
    sum of squares, ``arrivals eps``, with room for the divisions and the rescalings of
    forgetting; scikit-learn's ``StandardScaler`` likewise takes a variance within its own
    rounding error for 0).

    """
    mass = scatter[0, 0]
    if not mass > 0.0:  # nothing learnt yet: every feature is constant
        return np.ones(scatter.shape[0] - 2)
    second = np.diagonal(scatter)[1:-1] / mass  # S_jj / N
    variances = centred / mass  # s_j^2 = (S_jj - S_0j^2 / N) / N
    constant = variances <= _ROUNDING * max(arrivals, 1) * second
    return np.where(constant, 1.0, variances)
