"""The square-root factor of `RLSRegressor` (``river_nrrls._sqrt_factor``) on its own.

Its invariant: R^T R is the matrix it was built from plus every row added since (pending or
not), for whatever reads it: the weights ``w = M11^{-1} b``, ``rho^2 = c - b^T w`` and the
quadratic form ``x^T M11^{-1} x``, with ``M = [[M11, b], [b^T, c]]`` (the target last).
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import BUILT, NOT_BUILT

from river_nrrls import _native, _sqrt_factor
from river_nrrls._sqrt_factor import SquareRootFactor

RTOL = 1e-9


def _random_matrix(rng: np.random.Generator, size: int) -> np.ndarray:
    """A well-conditioned regularised scatter of ``size`` regression columns and a target."""
    rows = rng.normal(size=(3 * size + 4, size + 1))
    return rows.T @ rows + np.diag(np.r_[np.ones(size), 0.0])


def _assert_factors(factor: SquareRootFactor, matrix: np.ndarray, rng: np.random.Generator):
    size = matrix.shape[0] - 1
    assert factor.columns == size
    m11, b, c = matrix[:size, :size], matrix[:size, size], matrix[size, size]
    weights = np.linalg.solve(m11, b)
    np.testing.assert_allclose(factor.solve(), weights, rtol=RTOL)
    assert factor.rho() ** 2 == pytest.approx(c - b @ weights, rel=1e-7)
    probe = rng.normal(size=size)
    assert factor.inverse_quadratic(probe) == pytest.approx(probe @ np.linalg.solve(m11, probe))


@pytest.fixture(params=["compiled", "direct", "delayed"])
def update_path(request, monkeypatch):
    """Each row through its own QR (the compiled update, or LAPACK's dtpqrt: its twin), or,
    with dtpqrt, waiting (at most 4 rows) with the Woodbury weights (the compiled update is
    cheaper than the delayed rows: with it no row waits)."""
    if request.param == "compiled" and not BUILT:
        pytest.skip(NOT_BUILT)
    if request.param != "compiled":
        monkeypatch.setattr(_native, "rls_add_row", _native.STAND_INS["rls_add_row"])
    if request.param == "delayed":
        monkeypatch.setattr(_sqrt_factor, "_DELAYED_MIN_DIM", 1)
        monkeypatch.setattr(_sqrt_factor, "_PENDING_ROWS", 4)
    return request.param


def test_of_factors_definite_and_semi_definite_matrices():
    rng = np.random.default_rng(0)
    matrix = _random_matrix(rng, 5)
    _assert_factors(SquareRootFactor.of(matrix), matrix, rng)
    # rank 2 of 4: the eigen square root, still R^T R = M
    low = rng.normal(size=(2, 4))
    semi = low.T @ low
    factor = SquareRootFactor.of(semi)
    assert np.isfinite(factor.rho())
    assert factor.rho() ** 2 == pytest.approx(0.0, abs=1e-9)


def test_rows_keep_the_invariant_and_the_returned_weights_are_exact(update_path):
    rng = np.random.default_rng(1)
    matrix = _random_matrix(rng, 6)
    factor = SquareRootFactor.of(matrix)
    waited = 0
    for _ in range(11):
        row = rng.normal(size=7) * rng.uniform(0.5, 2.0)
        matrix = matrix + np.outer(row, row)
        weights = factor.add_row(row.copy())
        waited = max(waited, factor.waiting)
        size = matrix.shape[0] - 1
        np.testing.assert_allclose(
            weights, np.linalg.solve(matrix[:size, :size], matrix[:size, size]), rtol=RTOL
        )
        _assert_factors(factor, matrix, rng)  # reads R with the waiting rows, changes nothing
    assert (waited > 0) == (update_path == "delayed")
    assert waited < _sqrt_factor._PENDING_ROWS  # a full block is added to R at once
    factor.flush()
    assert factor.waiting == 0
    _assert_factors(factor, matrix, rng)


def test_blocks_of_rows_growth_and_rescaling(update_path):
    rng = np.random.default_rng(2)
    matrix = _random_matrix(rng, 3)
    factor = SquareRootFactor.of(matrix)
    row = rng.normal(size=4)
    factor.add_row(row.copy())  # may wait: every operation below sees it
    matrix += np.outer(row, row)
    block = rng.normal(size=(5, 4))
    factor.add_rows(block.copy())
    matrix += block.T @ block
    _assert_factors(factor, matrix, rng)
    # two new columns before the target, zero in every row so far, 0.25 = 0.5^2 on the diagonal
    factor.grow(2, 0.5)
    grown = np.zeros((6, 6))
    grown[:3, :3] = matrix[:3, :3]
    grown[:3, 5] = grown[5, :3] = matrix[:3, 3]
    grown[5, 5] = matrix[3, 3]
    grown[3, 3] = grown[4, 4] = 0.25
    _assert_factors(factor, grown, rng)
    factor.rescale(8.0)
    _assert_factors(factor, grown / 8.0, rng)


def test_a_dead_pivot_gets_weight_zero():
    """A column that only ever held zeros, added with an underflowed ridge term (sqrt(l2_t) =
    0): weight 0, the others the solution without it."""
    rng = np.random.default_rng(3)
    matrix = _random_matrix(rng, 2)
    factor = SquareRootFactor.of(matrix)
    factor.grow(1, 0.0)
    row = np.r_[rng.normal(size=2), 0.0, rng.normal()]
    factor.add_row(row.copy())
    matrix += np.outer(row[[0, 1, 3]], row[[0, 1, 3]])
    weights = factor.solve()
    assert weights[2] == 0.0
    np.testing.assert_allclose(
        weights[:2], np.linalg.solve(matrix[:2, :2], matrix[:2, 2]), rtol=RTOL
    )


def test_no_regression_column():
    """Only the target: no weight, rho^2 its sum of squares."""
    factor = SquareRootFactor.of(np.array([[4.0]]))
    assert factor.columns == 0 and factor.solve().shape == (0,)
    assert factor.add_row(np.array([3.0])).shape == (0,)
    assert factor.rho() ** 2 == pytest.approx(4.0 + 9.0)


@pytest.mark.parametrize("first", [0, 1])
def test_an_unregularised_factor_gives_centred_sums_and_penalised_factors(first):
    """For R^T R = S, the unregularised scatter of [1, x, y]: the centred sums of squares of
    the features, and the factor of S's columns ``first:`` plus a diagonal penalty."""
    rng = np.random.default_rng(first)
    X = rng.normal(loc=1e3, size=(40, 5)) * [1.0, 1e-3, 1e3, 1.0, 5.0]
    X[:, 3] = 7.0  # a constant feature: centred sum 0
    rows = np.column_stack((np.ones(40), X, rng.normal(size=40)))
    factor = SquareRootFactor.of(np.zeros((7, 7)))
    for start in range(0, 40, 9):
        factor.add_rows(rows[start : start + 9])
    centred = ((X - X.mean(axis=0)) ** 2).sum(axis=0)
    np.testing.assert_allclose(factor.centred_squares(), centred, rtol=1e-7, atol=1e-6)
    penalties = rng.uniform(0.5, 2.0, size=6 - first)
    penalised = factor.penalised(first, penalties)
    # the ridge by least squares on stacked rows (no normal equations: the means of 1e3 and
    # 1e6 beside the intercept make them ill conditioned)
    design = np.vstack((rows[:, first:-1], np.diag(np.sqrt(penalties))))
    target = np.r_[rows[:, -1], np.zeros(len(penalties))]
    weights, residual, *_ = np.linalg.lstsq(design, target, rcond=None)
    assert penalised.columns == len(penalties)
    error = np.linalg.norm(penalised.solve() - weights) / np.linalg.norm(weights)
    assert error <= 1e-9
    assert penalised.rho() ** 2 == pytest.approx(residual[0], rel=1e-8)
    probe = rng.normal(size=len(penalties))
    expected = probe @ np.linalg.pinv(design.T @ design) @ probe
    assert penalised.inverse_quadratic(probe) == pytest.approx(expected, rel=1e-5)
