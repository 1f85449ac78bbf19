"""RLSRegressor: exact online ridge regression (recursive least squares), the river-facing class.

It owns what the regression means: the weighted scatter of ``[1, x, y]`` (``y`` last, columns
in the order of its `FeatureIndex`), its ridge term l2_t, its forgetting and its merging. A
sample goes: validation -> range check -> update of the scatter and of its square-root factor
-> weights. The factor R (R^T R the regularised scatter, updated by QR, with its triangular
solve) is `river_nrrls._sqrt_factor`'s; the range invariant and its error messages are shared
with the classifiers' statistics (`refuse_out_of_range`).

Forgetting here is not `ClassStatistics`' algorithm. There, every arrival multiplies the past
statistics by lambda (an O(d^2) pass over a scatter that is updated anyway). Here the stored
scatter and R are the true ones times a scale sigma that grows by 1 / lambda at every arrival,
a new sample entering with the mass w sigma, so that an arrival costs no pass over R; they are
divided back by sigma (an exact common factor) before it passes ``_RESCALE_AT``.

"""

from __future__ import annotations

import copy
import math
import sys
import typing

import numpy as np
import pandas as pd
from river import base, proba
from scipy.linalg import blas

from ._checks import (
    STATISTICS_LIMIT,
    check_bool,
    check_paired,
    check_real,
    row_name,
    sample_weights,
)
from ._debug import contribution_table
from ._frames import as_frame, as_series, native_series
from ._fused_rls import learn_remembered, predict_remembered
from ._index import FeatureIndex
from ._locking import OneCallAtATime
from ._memory import SizeBudget
from ._merging import Mergeable
from ._parameters import LiveParameters
from ._ranges import ColumnNamer, check_totals, refuse_large_values
from ._sqrt_factor import SquareRootFactor
from ._standardized import squared_scales
from ._stats import batch_masses, symmetrize_upper
from ._validation import validate_one

__all__ = ["RLSRegressor"]

_MAX_FLOAT = sys.float_info.max
# With forgetting, the stored statistics are the true ones times ``_scale``: rather than decay
# the past by lambda at every arrival (an O(d^2) pass), a new sample gets the mass w * _scale,
# and _scale grows by 1/lambda. They are divided back to the true scale (an exact common
# factor: the weights do not depend on it) before _scale would exceed this; STATISTICS_LIMIT
# times it stays below the float overflow.
_RESCALE_AT = 1e4


def _check_target(y: typing.Any, where: str = "") -> float:
    """A regression target as a finite float; bools, strings and NaN/inf are refused."""
    try:
        return check_real("y", y)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{error}{where}") from None


class RLSRegressor(LiveParameters, Mergeable, OneCallAtATime, base.MiniBatchRegressor):
    """Recursive least squares: exact online (weighted, forgetting) ridge regression.

    After every sample the weights equal the batch ridge solution on everything seen so far:

        (w, b) = argmin  sum_i m_i (y_i - w.x_i - b)^2 + l2_t (|w|^2 + [penalize_intercept] b^2)

    where ``m_i`` is sample ``i``'s mass: its weight ``w_i`` (river's ``learn_one(x, y, w)``,
    1 by default) times lambda^(number of later arrivals), and ``l2_t = lambda^t l2`` with ``t``
    the number of arrivals (samples of positive weight) so far. Without forgetting
    (``forgetting = 1``) this is plain weighted ridge regression with the constant ``l2``. With
    forgetting it is the classic exponentially weighted RLS filter (initial inverse scatter
    ``I / l2``): the ridge term decays with the data, so the model is the batch solution of a
    problem in which every term has aged alike.

    The model keeps the upper-triangular factor ``R`` of the regularised, decayed scatter of
    ``[1, x, y]`` (``R^T R = [1 X y]^T diag(m) [1 X y] + l2_t J``, ``J`` the identity on the
    penalised columns; an inverse-free QR-RLS, the "square-root information" form) and updates
    it with LAPACK's Householder QR of ``R`` and the new row (``dtpqrt``): O(d^2) per
    ``learn_one``, backward stable, it never loses symmetry or definiteness (the textbook
    recursion of the inverse ``P`` does, under forgetting). The weights are one triangular solve
    away (O(d^2), done at learn time), so ``predict_one`` is a dot product, O(d). Where the
    compiled kernels are built, the same reflections run in C, and a sample with the previous
    one's keys is learnt and predicted in one compiled call each. Elsewhere,
    from 48 columns on, while ``R`` is well conditioned, ``learn_one`` lets up to 32 rows wait
    and corrects the weights for them exactly (Woodbury: two triangular solves a row), then
    adds them to ``R`` with one blocked QR, several times faster than LAPACK's QR per row.

    Parameters
    ----------
    l2
        Ridge constant (> 0): the prior precision of the weights relative to the noise's, as
        ``alpha / beta`` in river's ``BayesianLinearRegression`` (1 by default there and here).
        It must be positive, so that the solution is unique after every prefix.
    forgetting
        Exponential forgetting lambda in (0, 1]: every arrival multiplies the mass of the past
        samples, and the ridge term, by lambda. ``1.0`` (no forgetting) is plain ridge.
    intercept
        Fit an intercept ``b`` (a constant feature 1).
    penalize_intercept
        Regularise the intercept with ``l2`` like the weights (the Bayesian prior of
        ``BayesianLinearRegression`` on a constant feature). ``False`` (default): the intercept
        is free, as in ordinary ridge regression, so the model does not need centred targets.
    max_size
        Memory budget of the model's statistics, in MiB (``None``: the machine's memory); new
        features that would take them beyond it are refused before anything is allocated.
    standardized_penalty
        A scale-free penalty: ``l2_t s_j^2 w_j^2`` on each weight instead of ``l2_t w_j^2``,
        ``s_j^2`` the feature's variance over the samples seen (population variance, weighted
        by the masses ``m_i``; 1 for a feature whose variance is 0). With the free intercept
        this is exactly the batch ``StandardScaler + Ridge(l2_t)`` of everything seen so far
        (the same predictions; ``w_j = w'_j / s_j``, ``b = b' - sum_j w_j mu_j``), whatever
        the units of the features, which river's online ``StandardScaler() | RLSRegressor()``
        is not: its scale moves after every sample (see the RLSRegressor guide). Without an
        intercept it is ``StandardScaler(with_mean=False)`` (scaled, not centred) +
        ``Ridge(fit_intercept=False)``; with ``penalize_intercept=True`` it is refused. The
        penalty moves with the variances, so a ``learn_one`` costs O(d^3) (one QR of the
        factor and the penalty's square roots) instead of O(d^2).

    Attributes
    ----------
    weights
        ``{feature: weight}``.
    bias
        The intercept ``b`` (0 when ``intercept=False``).
    n_samples
        The total mass ``sum_i m_i`` (the sample count without weights and forgetting).

    Notes
    -----
    Features may appear at any time (exact: past samples had zeros there, and the new weight
    is regularised by the current ``l2_t``) or be absent (zero). Non-numeric or non-finite
    values, targets that are not finite real numbers (bools included), bad weights or a value
    whose square would take a statistic beyond 1e300 raise an error naming the culprit and
    leave the model exactly as it was.

    ``learn_many`` equals the ``learn_one`` loop over its rows up to rounding (one blocked QR
    update). ``a + b`` is the model trained on both streams (its state is sufficient
    statistics: the weighted scatter of ``[1, x, y]``), for models without forgetting;
    `river_nrrls.merge` and `river_nrrls.dask.fit` accept it, alone or at the end of a
    pipeline of stateless transformers.

    ``predict_one(x, with_dist=True)`` returns a Gaussian ``N(mu, sigma^2)`` from the same
    statistics: ``mu = w.x + b`` and ``sigma^2 = s^2 (1 + x^T P x)``, the predictive variance of
    ridge regression read as a Bayesian linear model with a Gaussian prior of precision
    ``l2_t / s^2`` and homoscedastic Gaussian noise of variance ``s^2``. Here ``P`` is the
    inverse of the regularised scatter (a feature the model has not seen counts with
    ``1 / l2_t``), and the noise variance ``s^2 = RSS / (N - p)``, the residual sum of
    squares (which the factor gives exactly: ``R``'s last diagonal entry squared is
    ``RSS + l2_t |w|^2``) over the mass ``N`` minus the ``p`` fitted columns (``s^2 = 1``, as
    ``BayesianLinearRegression``'s default noise, while ``N <= p``). It is the unbiased
    estimate for unweighted samples without forgetting as ``l2`` goes to 0, and a plug-in
    otherwise; the distribution ignores the uncertainty of ``s^2`` itself. Before the first
    sample a free intercept is unknown: ``sigma`` is infinite.

    With forgetting, ``l2_t`` underflows after about ``708 / -ln(lambda)`` arrivals (70 000 for
    lambda = 0.99): the model is then the least-squares fit of the recent data, and a feature
    whose every occurrence has been forgotten that long ago gets weight 0.

    Sparse samples cost O(d^2) nevertheless: a rank-1 update of a triangular factor changes
    its whole trailing block from the sample's first non-zero column on, and with an intercept
    (the first column) that is the whole factor.

    Examples
    --------

    >>> from river import datasets, evaluate, metrics
    >>> from river_nrrls import RLSRegressor

    >>> dataset = datasets.TrumpApproval()
    >>> model = RLSRegressor()
    >>> evaluate.progressive_val_score(dataset, model, metrics.MAE() + metrics.RMSE())
    MAE: 0.506519
    RMSE: 1.50092

    The weights are those of the batch ridge regression on all the samples seen, and a
    prediction can come with its uncertainty:

    >>> round(model.weights["gallup"], 4), round(model.bias, 1)
    (0.1823, -1491.3)
    >>> x, y = next(iter(dataset))
    >>> model.predict_one(x, with_dist=True), y
    (𝒩(μ=43.236, σ=0.574), 43.75505)

    An online ``StandardScaler`` in front of the exact ridge about doubles the error here (its
    scale moves after every sample: the ridge fits past inputs expressed in scales that have
    since changed); the exact batch ``StandardScaler + Ridge`` of every prefix is an option:

    >>> from river import preprocessing
    >>> scaled = preprocessing.StandardScaler() | RLSRegressor()
    >>> evaluate.progressive_val_score(dataset, scaled, metrics.MAE())
    MAE: 0.891071
    >>> standardized = RLSRegressor(standardized_penalty=True)
    >>> evaluate.progressive_val_score(dataset, standardized, metrics.MAE())
    MAE: 0.506207

    Forgetting follows a drifting stream:

    >>> from river.datasets import synth
    >>> stream = synth.FriedmanDrift(drift_type="gra", position=(1000, 1500), seed=42)
    >>> for forgetting in (1.0, 0.99):
    ...     metric = evaluate.progressive_val_score(
    ...         stream.take(2500), RLSRegressor(forgetting=forgetting), metrics.MAE()
    ...     )
    ...     print(forgetting, metric)
    1.0 MAE: 2.327531
    0.99 MAE: 2.147338

    References
    ----------
    [^1]: Haykin, S. (2002). Adaptive Filter Theory, 4th edition: the chapters on the
        exponentially weighted RLS filter (its initialisation and forgetting) and on
        square-root (QR-decomposition-based) adaptive filters. Prentice Hall.
    [^2]: Golub, G. H. and Van Loan, C. F. (2013). Matrix Computations, 4th edition, section
        6.5 (updating matrix factorizations). Johns Hopkins University Press.
    [^3]: Bishop, C. M. (2006). Pattern Recognition and Machine Learning, section 3.3 (the
        predictive distribution of Bayesian linear regression). Springer.
    [^4]: river issue #1378, "Recursive least squares".
        [github.com/online-ml/river/issues/1378](https://github.com/online-ml/river/issues/1378)

    """

    def __init__(
        self,
        l2: float = 1.0,
        forgetting: float = 1.0,
        intercept: bool = True,
        penalize_intercept: bool = False,
        max_size: float | None = None,
        standardized_penalty: bool = False,
    ):
        self.l2 = l2
        self.forgetting = forgetting
        self.intercept = intercept
        self.penalize_intercept = penalize_intercept
        self.max_size = max_size
        self.standardized_penalty = standardized_penalty
        self._l2 = check_real("l2", l2, low=0.0, low_open=True)
        self._forgetting = check_real("forgetting", forgetting, low=0.0, high=1.0, low_open=True)
        check_bool("intercept", intercept)
        check_bool("penalize_intercept", penalize_intercept)
        check_bool("standardized_penalty", standardized_penalty)
        if standardized_penalty and penalize_intercept:
            raise ValueError(
                "standardized_penalty=True needs penalize_intercept=False: the standardised "
                "ridge leaves the intercept free (it absorbs the centring of the features)"
            )
        self._first = 0 if intercept else 1  # first dense column the regression uses
        self._budget = SizeBudget.of(max_size)
        self._new_lock()  # one call at a time (`OneCallAtATime`)
        self._init_state()

    def _init_state(self) -> None:
        # Column 0 is a constant 1: the intercept, and the mass slot of the scatter.
        self._index = FeatureIndex(offset=1, fill=1.0)
        # Weighted scatter of [1, x, y] (y last), in the growing scale: the true statistics are
        # these divided by ``_scale`` (upper triangle authoritative).
        self._scatter = np.zeros((2, 2), order="F")
        self._scale = 1.0  # sigma: true statistics = stored ones / sigma
        self._penalty_scale = 1.0  # the ridge term in the stored scale is l2 * _penalty_scale
        self._arrivals = 0
        self._bound: float | None = 0.0  # >= every true diagonal entry of the scatter
        # standardized_penalty: R of the unregularised scatter of [1, x, y], QR-updated
        self._raw = SquareRootFactor.of(self._scatter) if self.standardized_penalty else None
        # R with R^T R = the regularised scatter of the columns first: (`_regularised_scatter`)
        self._factor = SquareRootFactor.of(self._regularised_scatter())
        self._solution = np.zeros(self._factor.columns)  # w = R11^{-1} z, columns first:

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"forgetting": 0.99}
        yield {"l2": 0.1, "intercept": False}
        yield {"penalize_intercept": True, "forgetting": 0.9}
        yield {"standardized_penalty": True, "forgetting": 0.99}
        yield {"standardized_penalty": True, "intercept": False}

    _derived_attributes = ("_l2", "_forgetting", "_first", "_budget")

    def _adopt(self, trial: RLSRegressor, name: str) -> None:
        """A parameter set after learning takes effect from the statistics (which no parameter
        changes): the factor and the weights are rebuilt; a new ``forgetting`` applies to the
        arrivals that follow."""
        super()._adopt(trial, name)
        self._bound = None
        self._refactor()

    # ---------------------------------------------------- the scatter and its factor

    @property
    def _penalty(self) -> float:
        """The ridge constant in the stored scale: l2_t times sigma."""
        return self._l2 * self._penalty_scale

    def _penalties(self) -> np.ndarray:
        """The ridge term of each regression column (first:) in the stored scale: l2_t on the
        penalised ones, l2_t s_j^2 under ``standardized_penalty`` (`_standardized`); 0 on a
        free intercept."""
        size = self._scatter.shape[0] - 1 - self._first
        if self._raw is not None:  # s_j^2 of the features
            squares = squared_scales(self._scatter, self._raw.centred_squares(), self._arrivals)
            penalties = np.concatenate((np.zeros(1 - self._first), squares))
        else:
            penalties = np.ones(size)
            if self._first == 0 and not self.penalize_intercept:
                penalties[0] = 0.0
        return penalties * self._penalty

    def _regularised_scatter(self) -> np.ndarray:
        """The matrix R^T R equals: the scatter of the regression columns and y (first:)
        plus l2_t J, J the identity on the penalised columns (the stored scale)."""
        regularised = symmetrize_upper(self._scatter[self._first :, self._first :])
        size = regularised.shape[0] - 1
        regularised[np.arange(size), np.arange(size)] += self._penalties()
        return regularised

    def _refactor(self) -> None:
        """R from the scatter (which holds every row learnt), and the weights."""
        if self.standardized_penalty:
            self._raw = SquareRootFactor.of(symmetrize_upper(self._scatter))
        else:
            self._raw = None
            self._factor = SquareRootFactor.of(self._regularised_scatter())
        self._solve()

    def _solve(self) -> None:
        """w = R11^{-1} z; 0 before the first arrival (the prior's mean). Under
        ``standardized_penalty`` every penalty moved with the moments, so the QR updates of R
        do not apply: R is the QR of the unregularised factor stacked on the penalties'
        square roots (`SquareRootFactor.penalised`, O(d^3))."""
        if self._raw is not None:
            self._factor = self._raw.penalised(self._first, self._penalties())
        if self._arrivals == 0:
            self._solution = np.zeros(self._factor.columns)
        else:
            self._solution = self._factor.solve()

    def _rescale(self, scale: float) -> None:
        """Divide the stored statistics by ``scale``: they become the true ones (sigma = 1)."""
        self._factor.rescale(scale)  # R^T R / scale: R / sqrt(scale)
        if self._raw is not None:
            self._raw.rescale(scale)
        self._scatter /= scale
        self._penalty_scale /= scale
        self._scale = 1.0

    def _grow(self, new_features: list) -> None:
        """Commit new features: zero scatter columns and factor rows (past samples had zeros
        there) with the current ridge term on the factor's diagonal. The target stays last."""
        if not new_features:
            return
        old = self._index.size
        self._index.add(new_features)
        size = self._index.size
        scatter = np.zeros((size + 1, size + 1), order="F")
        scatter[:old, :old] = self._scatter[:old, :old]
        scatter[:old, size] = self._scatter[:old, old]
        scatter[size, size] = self._scatter[old, old]
        self._scatter = scatter
        added = size - old
        self._factor.grow(added, math.sqrt(self._penalty))  # sqrt(l2_t) on the new diagonal
        if self._raw is not None:
            self._raw.grow(added, 0.0)
        self._solution = np.concatenate((self._solution, np.zeros(added)))

    def _check_size(self, n_new: int, where: str = "") -> None:
        """Refuse new features whose scatter and factor (two (d + 2)^2 arrays) would not fit
        ``max_size`` (or the machine's memory), before anything is allocated; warn as the
        model grows large (`river_nrrls._memory`)."""
        size = self._index.size + n_new + 1  # [1, x, y]
        needed = 2 * 8 * size * size
        self._budget.check(needed, type(self).__name__, size - 2, None, where)

    # --------------------------------------------------------------- range checks

    def _column_name(self, column: int, new: list) -> str:
        """How a range error names a column of the scatter of [1, x, y]."""
        if column == 0:
            return "the sample mass (the sum of the sample weights)"
        if column == self._index.size + len(new):
            return "the target y"
        return f"feature {self._index.feature_at(column, new)!r}"

    def _namer(self, new: list) -> ColumnNamer:
        """`_column_name` for the shared range checks (`river_nrrls._ranges`)."""
        return lambda column: self._column_name(column, new)

    def _true_diagonal(self, decay: float = 1.0, width: int | None = None) -> np.ndarray:
        """The true diagonal of the scatter of [1, x, y] times ``decay``; over ``width``
        columns, those of features not committed yet (zero) come before y's."""
        diagonal = np.diagonal(self._scatter) * (decay / self._scale)
        if width is None or width == len(diagonal):
            return diagonal
        spread = np.zeros(width)
        spread[: len(diagonal) - 1] = diagonal[:-1]
        spread[-1] = diagonal[-1]
        return spread

    def _check_one_in_range(
        self, vector: np.ndarray, target: float, weight: float, new: list
    ) -> float | None:
        """Refuse a sample that would take the mass or a sum of squares beyond the limit;
        returns the new bound of the diagonal (None: recompute it at the next sample)."""
        bound = self._bound
        if bound is None:
            bound = float(self._true_diagonal().max())
        with np.errstate(over="ignore"):
            grown = (blas.ddot(vector, vector) + target * target) * weight + bound
        if grown <= STATISTICS_LIMIT:
            return grown
        # diag after the sample: lambda diag + w [1, x, y]^2
        with np.errstate(over="ignore"):
            totals = np.append(np.square(vector), target * target) * weight
        check_totals(totals, self._true_diagonal(self._forgetting, len(totals)), self._namer(new))
        return None  # recomputed exactly at the next sample

    def _check_many_in_range(
        self, matrix: np.ndarray, targets: np.ndarray, weights: np.ndarray, new: list, rows
    ) -> None:
        """`_check_one_in_range` for a mini-batch (rows labelled by the index ``rows``), and
        no value beyond `VALUE_LIMIT`."""
        if len(targets) == 0:
            return
        augmented = np.column_stack((matrix, targets))
        namer = self._namer(new)
        refuse_large_values(augmented, namer, rows)
        # diag after the batch: lambda^n diag + sum_j w_j lambda^(n-1-j) [1, x_j, y_j]^2
        n_rows = len(targets)
        masses = batch_masses(self._forgetting, n_rows, weights)
        with np.errstate(over="ignore", invalid="ignore"):
            totals = masses @ (augmented * augmented)
        check_totals(totals, self._true_diagonal(self._forgetting**n_rows, len(totals)), namer)

    # ------------------------------------------------------------------ learning

    def learn_one(self, x: dict, y: float, w: float = 1.0) -> None:
        """Learn one sample of mass ``w``: the same as learning it ``w`` times (w >= 0).

        ``w = 0`` is a no-op (the sample is still validated): it is no arrival either.

        """
        weight = w if w.__class__ is float and 0.0 <= w <= _MAX_FLOAT else check_real("w", w, 0.0)
        target = y if y.__class__ is float and math.isfinite(y) else _check_target(y)
        with self._lock:
            self._learn_one(x, target, weight)

    def _learn_one(self, x: dict, target: float, weight: float) -> None:
        if weight > 0.0 and self._fusable and self._learn_fused(x, target, weight):
            return  # the sample had the remembered keys: learnt in one call
        vector, new, _ = self._index.dense_one(x, grow=True)  # [1, x] (validated)
        if weight == 0.0:
            return
        # Range: every true diagonal entry after the sample stays <= STATISTICS_LIMIT; the
        # usual case, bound + w |[1, x, y]|^2 within it, needs no look at the scatter
        bound = self._bound
        if bound is not None:
            grown = (blas.ddot(vector, vector) + target * target) * weight + bound
            bound = grown if grown <= STATISTICS_LIMIT else None
        if bound is None:
            bound = self._check_one_in_range(vector, target, weight, new)
        if new:
            self._check_size(len(new))
            self._grow(new)
        if self._forgetting != 1.0:
            self._forget_past()  # sigma <- sigma / lambda
        mass = weight * self._scale  # m = w sigma: the mass w in the stored scale
        size = len(vector)
        augmented = np.empty(size + 1)
        augmented[:size] = vector
        augmented[size] = target
        # scatter += m [1, x, y][1, x, y]^T (upper triangle, in place)
        blas.dsyr(mass, augmented, 0, 1, 0, size + 1, self._scatter, 1)
        self._arrivals += 1
        self._bound = bound * self._forgetting if bound is not None else None
        if self._raw is not None:  # R^T R += m [1, x, y][1, x, y]^T; the penalties moved
            self._raw.add_rows(augmented[None, :] * math.sqrt(mass))
            self._solve()
            return
        row = augmented[self._first :]
        if mass != 1.0:
            row *= math.sqrt(mass)
        # R^T R += m [x, y][x, y]^T (a QR update of R, or a delayed row), then w = R11^{-1} z
        self._solution = self._factor.add_row(row)

    @property
    def _fusable(self) -> bool:
        """Whether the fused learning step (`river_nrrls._fused_rls`: the plain ridge update)
        is this model's: not under ``standardized_penalty``, whose penalties move with every
        sample (its prediction, w . x, is fused alike)."""
        return self._raw is None

    def _learn_fused(self, x: dict, target: float, weight: float) -> bool:
        """`_learn_one`'s steps in one call (`river_nrrls._fused_rls`) for a sample with the
        remembered keys, when the range bound is known and no rescaling is due: True when it
        learnt it, False for the general path (the model as it was)."""
        scale = self._scale / self._forgetting  # sigma <- sigma / lambda, as `_forget_past`
        if self._bound is None or scale > _RESCALE_AT:
            return False
        solution = self._solution  # w = R11^{-1} z, solved again in place
        mass = weight * scale  # m = w sigma
        args = (self._index, self._scatter, self._factor, solution, self._first, x, target)
        grown = learn_remembered(*args, weight, mass, self._bound)
        if grown is None:
            return False
        self._scale = scale
        self._arrivals += 1
        self._bound = grown * self._forgetting
        return True

    def _forget_past(self) -> None:
        """One arrival's forgetting: the true statistics of the past decay by lambda, so the
        stored ones (the true ones times sigma) stay and sigma grows by 1 / lambda; they are
        divided back to the true scale before sigma would pass ``_RESCALE_AT``."""
        scale = self._scale / self._forgetting
        if scale > _RESCALE_AT:
            self._rescale(scale)
            scale = 1.0
        self._scale = scale

    def learn_many(self, X: pd.DataFrame, y: pd.Series, w: float | pd.Series | None = None) -> None:
        """Learn a mini-batch exactly as the ``learn_one`` loop over its rows would (up to
        rounding), with a blocked QR update of the factor.

        Rows and targets are paired by position (a Series ``y`` whose index is not that of
        ``X`` is refused, naming the first row where they differ; a list or array is paired as
        given); ``w`` is one weight for every row or one per row; rows of weight 0 are left out,
        as ``learn_one`` would.

        """
        X, y, w = as_frame(X), as_series(y), as_series(w)
        with self._lock:
            self._learn_many(X, y, w)

    def _learn_many(self, X: pd.DataFrame, y: typing.Any, w: typing.Any) -> None:
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)} targets")
        check_paired(X, y)
        weights = sample_weights(w, y)
        targets = self._targets(y)
        if weights is not None and not weights.all():
            self._index.encode_many(X, grow=False)  # validate every row, the left-out ones too
            kept = weights > 0
            X, weights, targets = X[kept], weights[kept], targets[kept]
        matrix, new = self._index.encode_many(X, grow=True)
        if weights is None:
            weights = np.ones(len(targets))
        self._check_many_in_range(matrix, targets, weights, new, X.index)
        if new:
            self._check_size(len(new))
        self._grow(new)
        if len(targets) == 0:
            return
        self._y_name = getattr(y, "name", None)  # river names predict_many's Series after y
        augmented = np.column_stack((matrix, targets))
        if self._forgetting == 1.0:
            self._add_block(augmented, weights)
        else:
            self._add_forgetting(augmented, weights)
        self._arrivals += len(targets)
        self._bound = None
        self._solve()

    def _add_forgetting(self, augmented: np.ndarray, weights: np.ndarray) -> None:
        """`_add_block` of rows arriving one after the other under forgetting: row j of a
        chunk gets the mass w_j sigma_j, sigma growing by 1 / lambda a row, as in learn_one."""
        forgetting = self._forgetting
        if 1.0 / forgetting > _RESCALE_AT:  # every arrival rescales, as in learn_one
            for row, weight in zip(augmented, weights):
                self._rescale(self._scale / forgetting)
                self._add_block(row[None, :], np.array([weight]))
            return
        self._rescale(self._scale)  # sigma = 1, then chunks that stay below _RESCALE_AT
        chunk = int(math.log(_RESCALE_AT) / -math.log(forgetting))
        for start in range(0, len(augmented), chunk):
            rows = augmented[start : start + chunk]
            growth = np.float_power(forgetting, -np.arange(1, len(rows) + 1, dtype=float))
            self._add_block(rows, weights[start : start + chunk] * growth)
            self._rescale(growth[-1])

    def _add_block(self, augmented: np.ndarray, masses: np.ndarray) -> None:
        """Add rows of [1, x, y] with the stored-scale masses: scatter and blocked QR."""
        weighted = augmented * masses[:, None]
        scatter = augmented.T @ weighted
        self._scatter += np.triu(scatter)  # upper triangle authoritative
        # R^T R += B^T B, B the rows sqrt(m_j) [x_j, y_j]: one blocked QR
        if self._raw is not None:  # (the rows [1, x_j, y_j]; R comes from it in _solve)
            self._raw.add_rows(augmented * np.sqrt(masses)[:, None])
        else:
            self._factor.add_rows(augmented[:, self._first :] * np.sqrt(masses)[:, None])

    @staticmethod
    def _targets(y: typing.Any) -> np.ndarray:
        """The targets of a mini-batch as finite floats (errors name the row)."""
        index = y.index if isinstance(y, pd.Series) else range(len(y))
        values = y.to_numpy() if isinstance(y, pd.Series) else np.asarray(y, dtype=object)
        if values.dtype.kind not in "iuf":
            for row, value in zip(index, values):
                _check_target(value, f" (row {row!r})")
        targets = np.asarray(values, dtype=float)
        bad = ~np.isfinite(targets)
        if bad.any():
            position = int(np.argmax(bad))
            raise ValueError(
                f"y must be finite, got {targets[position]!r} at row "
                f"{row_name(pd.Index(list(index)), position)!r}"
            )
        return targets

    # -------------------------------------------------------------------- merging

    # What must be equal for a merge (`Mergeable`)
    _merge_parameters = (
        "l2",
        "forgetting",
        "intercept",
        "penalize_intercept",
        "standardized_penalty",
    )

    def _merged_scatter(self, other: RLSRegressor) -> tuple[np.ndarray, list]:
        """The sum of both scatters over the union of the features (self's first)."""
        new, columns = self._index.merged_columns(other._index)
        size = self._index.size + len(new)
        columns = np.append(columns, size)  # the target y: last in both scatters
        old = self._index.size
        scatter = np.zeros((size + 1, size + 1), order="F")
        mine = np.r_[np.arange(old), size]
        scatter[np.ix_(mine, mine)] = symmetrize_upper(self._scatter)
        # other's upper triangle may land below the diagonal here: add the full symmetric
        scatter[np.ix_(columns, columns)] += symmetrize_upper(other._scatter)
        return scatter, new

    def __iadd__(self, other: RLSRegressor) -> RLSRegressor:
        """Add the samples ``other`` has learnt, in place: exact, the statistics are additive."""
        with self._lock:
            return self._merge(other)

    def _merge(self, other: RLSRegressor) -> RLSRegressor:
        self._check_mergeable(other)
        if other._index.features:
            self._check_size(len(self._index.merged_columns(other._index).new))
        scatter, new = self._merged_scatter(other)
        check_totals(np.diagonal(scatter), None, self._namer(new), " (in the merged model)")
        self._grow(new)
        self._scatter = scatter
        self._arrivals += other._arrivals
        self._bound = None
        if other._arrivals:
            self._y_name = getattr(self, "_y_name", getattr(other, "_y_name", None))
        self._refactor()
        return self

    def __add__(self, other: RLSRegressor) -> RLSRegressor:
        """A new model equal to one trained on both streams; ``self`` and ``other`` unchanged.

        Features are the union (``self``'s first). Different parameters, or forgetting < 1,
        raise ``ValueError``.

        """
        self._check_mergeable(other)
        merged = copy.deepcopy(self)
        merged += other
        return merged

    # ------------------------------------------------------------------ inference

    def _refuse_overflow(self, vector: np.ndarray, where: str = "") -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.abs(self._solution * vector[self._first :])
        column = int(np.argmax(np.where(np.isnan(terms), np.inf, terms))) + self._first
        raise ValueError(
            f"the prediction overflows{where}: {self._column_name(column, [])} has a value too "
            "large for the model's weights"
        )

    @typing.overload
    def predict_one(self, x: dict, with_dist: typing.Literal[False] = False) -> float: ...
    @typing.overload
    def predict_one(self, x: dict, with_dist: typing.Literal[True]) -> proba.Gaussian: ...
    @typing.overload
    def predict_one(self, x: dict, with_dist: bool) -> float | proba.Gaussian: ...
    def predict_one(self, x: dict, with_dist: bool = False) -> float | proba.Gaussian:
        """The prediction ``w.x + b``, or (``with_dist=True``) a Gaussian predictive
        distribution (see the Notes of the class) at the cost of one triangular solve."""
        with self._lock:
            return self._predict_one(x, with_dist)

    def _predict_one(self, x: dict, with_dist: bool) -> float | proba.Gaussian:
        if not with_dist:  # a sample with the remembered keys: in one call
            fused = predict_remembered(self._index, self._solution, self._first, x)
            if fused is not None:
                return fused
        vector = self._index.dense_one(x, grow=False).vector
        first = self._first
        solution = self._solution
        mean = 0.0  # no intercept and no feature yet: nothing to multiply
        if len(solution):
            mean = blas.ddot(solution, vector if first == 0 else vector[first:])
        if not math.isfinite(mean):
            self._refuse_overflow(vector)
        if not with_dist:
            return mean
        return proba.Gaussian._from_state(
            n=1, m=mean, var=self._predictive_variance(x, vector), ddof=0
        )

    @property
    def noise_variance(self) -> float:
        """s^2 = RSS / (N - p): the residual variance of the fit; 1 while the mass N is no
        larger than the number p of fitted columns (no estimate yet)."""
        size = self._factor.columns
        solution = self._solution
        with np.errstate(over="ignore"):
            # rho^2 = RSS + sum_j l2_j w_j^2 (the stored scale): RSS = rho^2 - sum_j l2_j w_j^2
            rss = self._factor.rho() ** 2 - float(self._penalties() @ (solution * solution))
        mass = self.n_samples
        if mass <= size:  # no estimate yet: as many columns as samples (or more)
            return 1.0
        return max(rss / self._scale, 0.0) / (mass - size)

    def _predictive_variance(self, x: dict, vector: np.ndarray) -> float:
        """s^2 (1 + x^T P x), P the inverse of the true regularised scatter (inf where it is
        singular: a free intercept before the first sample)."""
        size = self._factor.columns
        unknown = sum(
            value * value for name, value in validate_one(x).items() if name not in self._index
        )
        penalty = self._penalty / self._scale  # l2_t
        probe = vector[self._first :]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # an unseen feature's prior variance 1 / l2_t: infinite once l2_t underflowed
            spread = (unknown / penalty if penalty else math.inf) if unknown else 0.0
            if size and self._arrivals == 0:  # the prior alone: P = diag(1 / l2), or inf
                spread += float(np.sum(probe * probe / (self._penalties() / self._scale)))
            elif size:
                # x^T M^{-1} x = |R11^{-T} x|^2, times sigma for the true scale
                spread += self._factor.inverse_quadratic(probe) * self._scale
            variance = self.noise_variance * (1.0 + spread)
        return variance if not math.isnan(variance) else math.inf

    def predict_many(self, X: typing.Any) -> typing.Any:
        """The predictions for every row of ``X`` as a Series (pandas: on ``X``'s index, named
        after the ``y`` of `learn_many`), in ``X``'s backend."""
        frame = as_frame(X)
        with self._lock:
            matrix, _ = self._index.encode_many(frame, grow=False)
            with np.errstate(over="ignore", invalid="ignore"):
                outputs = matrix[:, self._first :] @ self._solution
        if not np.isfinite(outputs).all():
            row = int(np.argmax(~np.isfinite(outputs)))
            self._refuse_overflow(matrix[row], f" at row {row_name(frame.index, row)!r}")
        return native_series(outputs, name=getattr(self, "_y_name", None), like=X)

    # ----------------------------------------------------------------- inspection

    def debug_one(self, x: dict, decimals: int = 5) -> str:
        """Explain the prediction for ``x``: every feature's value, weight and contribution
        ``value * weight`` to it (as river's ``LinearRegression.debug_one``).

        The rows come by decreasing contribution, the intercept's last among equals; the
        contributions add up to `predict_one` ``(x)``. Features the model has not seen have
        weight 0; missing (``None``) values are left out.

        Parameters
        ----------
        x
            A dictionary of features.
        decimals
            The number of decimals shown for every number.

        Returns
        -------
        A table which explains the prediction.

        Examples
        --------

        >>> from river_nrrls import RLSRegressor
        >>> model = RLSRegressor(l2=1e-6)
        >>> for x, y in [({"a": 1.0, "b": 0.0}, 3.0), ({"a": 0.0, "b": 1.0}, -1.0),
        ...              ({"a": 1.0, "b": 1.0}, 2.0), ({"a": 2.0, "b": 1.0}, 4.0)]:
        ...     model.learn_one(x, y)
        >>> print(model.debug_one({"a": 2.0, "b": 0.5}, decimals=3))
        Name        Value    Weight   Contribution
                a    2.000    2.500          5.000
        Intercept    1.000    0.500          0.500
                b    0.500   -1.333         -0.667

        The contributions add up to the prediction:

        >>> round(model.predict_one({"a": 2.0, "b": 0.5}), 3)
        4.833

        """
        clean = validate_one(x)
        with self._lock:
            weights, bias = self.weights, self.bias
        intercept = bias if self.intercept else None
        return contribution_table(clean, weights, intercept, decimals)

    @property
    def weights(self) -> dict[typing.Hashable, float]:
        """``{feature: weight}`` (a copy)."""
        solution = self._solution if self._first == 1 else self._solution[1:]
        return {feature: float(weight) for feature, weight in zip(self._index.features, solution)}

    @property
    def bias(self) -> float:
        """The intercept (0 when ``intercept=False``)."""
        return float(self._solution[0]) if self._first == 0 and len(self._solution) else 0.0

    @property
    def n_samples(self) -> float:
        """The total (weighted, decayed) mass of the samples learnt."""
        return float(self._scatter[0, 0] / self._scale)
