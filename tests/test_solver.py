"""Every solver path (direct, batched multiclass, stale factor + CG) is the exact batch TER.

The stale-factor path (``river_nrrls/_solver.py``) is chosen automatically from
``STALE_MIN_DIM`` columns on; the tests force it at small widths (``stale_min_dim``) so that the
plain-numpy batch reference of ``tests/reference.py`` can be computed after every prefix, and
check one wide stream where the automatic choice takes it. Every model predicts before it
learns (river's prequential order), which is what drives the stale factor's warm starts.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
from kernel_paths import kernel_path  # noqa: F401  (a fixture)
from reference import TERReference, assert_model_matches, model_matrix, relative_error
from river import base

from river_nrrls import NRRLS, _native, _solver, _stale, _systems, _threads

RTOL = 1e-9

# Every test on the compiled kernels (where built: the CG of the stale factor, the multiclass
# and two-class direct solves) and on their Python twins
pytestmark = pytest.mark.usefixtures("kernel_path")


@pytest.fixture(autouse=True, params=["double", "single"])
def precision(request, monkeypatch):
    """Every test runs with P^-1 in double precision (the default below ``SINGLE_MIN_DIM``
    columns) and again with single precision allowed at every width (where accurate)."""
    monkeypatch.setattr(_stale, "SINGLE_MIN_DIM", 10**9 if request.param == "double" else 1)
    return request.param


def _stream(n: int, d: int, seed: int = 0, positives: float = 0.1, n_classes: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    score = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
    if n_classes == 2:
        labels = [bool(v) for v in score > np.quantile(score, 1 - positives)]
    else:
        labels = [int(v) for v in (X @ rng.normal(size=(d, n_classes))).argmax(axis=1)]
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    return rows, labels


def _forced(params: dict | None = None, stale_min_dim: int = 1) -> NRRLS:
    model = NRRLS(**(params or {}))
    model.weight_solver.stale_min_dim = model.weight_solver.class_stale_min_dim = stale_min_dim
    return model


def _predict_and_learn(model, rows, labels) -> None:
    """River's prequential order (predict, then learn every sample), without checks."""
    for x, y in zip(rows, labels):
        model.predict_one(x)
        model.learn_one(x, y)


def _prequential_matches(model, rows, labels, params, weights=None, start: int = 0):
    """Predict then learn every sample; compare with the batch TER after every prefix."""
    weights = weights or [1.0] * len(rows)
    for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
        model.predict_one(x)
        model.learn_one(x, y, w=w)
        if i < start:
            continue
        prefix = slice(0, i + 1)
        ref = TERReference(rows[prefix], labels[prefix], **params, sample_weights=weights[prefix])
        assert_model_matches(model, ref, [x], RTOL)


PARAMS = [
    {},
    {"forgetting": 0.97},
    {"reweight": False},
    {"tau": 0.5, "eta": 2.0, "intercept": False},
    {"l2": 1e-2, "forgetting": 0.995},
]


@pytest.mark.parametrize("params", PARAMS)
def test_stale_factor_is_the_batch_ter_after_every_prefix(params):
    rows, labels = _stream(160, 12, seed=1)
    model = _forced(params)
    _prequential_matches(model, rows, labels, params)
    counters = model.weight_solver.counters
    assert counters["stale"] > 0 and counters["refactor"] > 0  # the path ran, and refactored
    assert counters["direct"] == 1  # the first solve; it primes the factor built at the second


def test_stale_factor_with_sample_weights():
    rows, labels = _stream(150, 10, seed=2)
    rng = np.random.default_rng(3)
    weights = rng.choice([0.0, 0.5, 1.0, 2.0, 7.5], size=len(rows)).tolist()
    model = _forced()
    _prequential_matches(model, rows, labels, {}, weights)
    assert model.weight_solver.counters["stale"] > 0


def test_stale_factor_on_ill_conditioned_streams():
    """Rank-3 inputs in 15 dimensions plus 1e-4 noise. With l2 = 1e-4 both paths meet 1e-9;
    with l2 = 1e-8 (cond(M) ~ 1e12 on the first prefixes) no solver does, and the stale factor
    must be as good as a direct Cholesky solve of the same statistics."""
    rng = np.random.default_rng(4)
    n, d = 150, 15
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, d)) + 1e-4 * rng.normal(size=(n, d))
    labels = [bool(v) for v in X[:, 0] + 0.5 * rng.normal(size=n) > 1.0]
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    model = _forced()
    _prequential_matches(model, rows, labels, {})
    assert model.weight_solver.counters["stale"] > 0
    params = {"l2": 1e-8}
    stale, direct = _forced(params), _forced(params, stale_min_dim=10**9)
    for i, (x, y) in enumerate(zip(rows, labels)):
        for model in (stale, direct):
            model.predict_one(x)
            model.learn_one(x, y)
        ref = TERReference(rows[: i + 1], labels[: i + 1], **params)
        errors = [
            relative_error(model_matrix(m.weights, m.intercepts, ref), ref) for m in (stale, direct)
        ]
        assert errors[0] <= max(RTOL, 2 * errors[1]), (i, errors)
    assert stale.weight_solver.counters["stale"] > 0


@pytest.mark.parametrize(
    "scale, weight, params",
    [
        (1e-8, 1e4, {"l2": 1e-4, "reweight": False, "tau": -1.3}),
        (1e8, 1.0, {"l2": 1.0, "tau": 0.5, "forgetting": 0.99}),
    ],
)
def test_the_stale_factor_is_exact_on_columns_of_very_different_scales(scale, weight, params):
    """Inputs of 1e-8 (or 1e8) beside the intercept's constant 1: diag M spans 16 orders of
    magnitude. CG must not stop on an unscaled backward-error test (r - M w against
    the largest diagonal entry), which such a residual meets long before the weights of the
    small columns converge; Cholesky's accuracy does not depend on the scaling, and neither
    may the stale factor's. After every prefix: the batch TER to 1e-9, or as close as a direct
    Cholesky solve of the same statistics gets."""
    rng = np.random.default_rng(46)
    n, d = 160, 12
    labels = [bool(v) for v in rng.random(n) < 0.3]
    X = rng.normal(size=(n, d))
    X[:, 0] += np.array(labels)
    rows = [{f"x{j}": float(v) for j, v in enumerate(row * scale)} for row in X]
    stale, direct = _forced(params), _forced(params, stale_min_dim=10**9)
    for i, (x, y) in enumerate(zip(rows, labels)):
        for model in (stale, direct):
            model.predict_one(x)
            model.learn_one(x, y, w=weight)
        masses = [weight] * (i + 1)
        ref = TERReference(rows[: i + 1], labels[: i + 1], **params, sample_weights=masses)
        errors = [
            relative_error(model_matrix(m.weights, m.intercepts, ref), ref) for m in (stale, direct)
        ]
        assert errors[0] <= max(RTOL, 2 * errors[1]), (i, errors)
    assert stale.weight_solver.counters["stale"] > 0


def test_streams_that_switch_between_the_paths():
    """Emerging features take the width across the threshold; a third class turns the
    reweighted systems into C different ones (a stale factor each); learn_many interrupts the
    block."""
    rng = np.random.default_rng(5)
    rows, labels = [], []
    for i in range(170):
        width = min(4 + i // 8, 24)  # 4 features, then one more every 8 samples
        rows.append({f"x{j}": float(rng.random()) for j in range(width)})
        labels.append("late" if i >= 120 and i % 5 == 0 else bool(rng.random() < 0.2))
    model = _forced(stale_min_dim=12)
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.predict_one(x)
        if i == 60:  # a mini-batch in the middle of a stale run: rows 60 to 69
            model.learn_many(pd.DataFrame(rows[60:70]), pd.Series(labels[60:70]))
        if not 60 <= i < 70:
            model.learn_one(x, y)
        learnt = i + 1 if i < 60 else max(70, i + 1)
        ref = TERReference(rows[:learnt], labels[:learnt])
        assert_model_matches(model, ref, [x], RTOL)
        if i == 119:
            before = dict(model.weight_solver.counters)
            assert before["direct"] > 0 and before["stale"] > 0  # both paths ran
    after = model.weight_solver.counters  # three classes: every one factorised, then CG on each
    assert model.weight_solver.class_factors is not None and model.weight_solver.stale is None
    assert after["refactor"] >= before["refactor"] + 3 and after["stale"] > before["stale"]


def test_a_class_that_appears_late_without_reweighting_keeps_the_shared_system():
    rows, labels = _stream(150, 10, seed=6, n_classes=3)
    labels = [y if i >= 80 or y != 2 else 1 for i, y in enumerate(labels)]  # class 2 late
    params = {"reweight": False}
    model = _forced(params)
    _prequential_matches(model, rows, labels, params)
    assert model.weight_solver.counters["stale"] > 0


def test_many_classes_batched_solve_is_exact():
    rows, labels = _stream(120, 8, seed=7, n_classes=6)
    for params in ({}, {"tau": 0.3, "intercept": False}, {"l2": 1e-2}):
        model = NRRLS(**params)
        for i, (x, y) in enumerate(zip(rows, labels)):
            model.predict_one(x)
            model.learn_one(x, y)
            if i % 7 == 0 or i == len(rows) - 1:
                ref = TERReference(rows[: i + 1], labels[: i + 1], **params)
                assert_model_matches(model, ref, [x], RTOL)


@pytest.mark.parametrize("heavy", [1e8, 1e16, 1e30])
def test_batched_solve_with_a_class_far_heavier_than_its_rest(heavy):
    """Reweighted multiclass at a small d (one batched direct solve): a class whose mass is
    ``heavy`` times the others' has w_k = 1/n^k far below w_rest. Its M_k written as
    (w_k - w_rest) A^k + w_rest T cancels the digits of the rest (1e12: 7e-6 off, 1e16: 0.07,
    1e20: weights exactly 0, before the fix); its rest is summed directly."""
    rng = np.random.default_rng(0)
    rows, labels, weights = [], [], []
    for i in range(60):
        label = "abc"[i % 3]
        x = {f"f{j}": float(v) for j, v in enumerate(rng.normal(size=5))}
        x["f0"] += "abc".index(label)
        rows.append(x)
        labels.append(label)
        weights.append(heavy if label == "a" and i % 2 == 0 else 1.0)
    for params in ({}, {"tau": 0.4, "intercept": False}):
        model = NRRLS(**params)
        for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
            model.learn_one(x, y, w=w)
            if i >= 3 and i % 5 == 0 or i == len(rows) - 1:
                ref = TERReference(
                    rows[: i + 1], labels[: i + 1], **params, sample_weights=weights[: i + 1]
                )
                assert_model_matches(model, ref, [x], RTOL)
        assert model.weight_solver.counters["stale"] == 0  # the batched direct path


def test_least_squares_fallback_when_the_svd_does_not_converge(monkeypatch):
    """numpy's least squares (LAPACK gelsd) can raise "SVD did not converge" on a finite,
    numerically singular M (a fuzzed rank-deficient stream at d = 150 with b = 0 did, from
    predict_one): the fallback then takes gelsy's minimum-norm solution, which is gelsd's."""
    rng = np.random.default_rng(3)
    basis = rng.normal(size=(3, 6))
    rows = [
        {f"x{j}": float(v) for j, v in enumerate(rng.normal(size=3) @ basis)} for _ in range(40)
    ]
    labels = [bool(v) for v in rng.random(40) < 0.3]
    model = NRRLS(l2=0.0)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    svd_model = copy.deepcopy(model)
    calls = []
    lstsq = np.linalg.lstsq

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return lstsq(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "lstsq", counted)
    expected = svd_model.decision_one(rows[0])
    assert calls  # rank 4 of 7 columns: Cholesky fails, least squares runs

    def failing(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")

    monkeypatch.setattr(np.linalg, "lstsq", failing)
    decision = model.decision_one(rows[0])
    monkeypatch.undo()
    for label in expected:
        assert decision[label] == pytest.approx(expected[label], rel=1e-9, abs=1e-12)
    ref = TERReference(rows, labels, l2=0.0)
    for row, (M, r) in zip(model_matrix(model.weights, model.intercepts, ref), ref.systems):
        # every equation of the singular system holds
        assert np.abs(M @ row - r).max() <= 1e-9 * np.abs(M).max() * np.abs(row).max()


def test_pickle_copy_and_clone_in_the_middle_of_a_stale_factor_run():
    rows, labels = _stream(140, 12, seed=8)
    model = _forced()
    _predict_and_learn(model, rows[:70], labels[:70])
    assert model.weight_solver.stale is not None and model.weight_solver.stale.updates > 0
    restored = pickle.loads(pickle.dumps(model))
    copied = copy.deepcopy(model)
    clone = model.clone()
    assert clone.weight_solver.stale is None and clone.statistics.n_classes == 0
    for x, y in zip(rows[70:], labels[70:]):
        outputs = model.decision_one(x)
        assert restored.decision_one(x) == outputs  # the same state, bit for bit
        assert copied.decision_one(x) == outputs
        for m in (model, restored, copied):
            m.learn_one(x, y)
    ref = TERReference(rows, labels)
    assert_model_matches(restored, ref, [rows[0]], RTOL)
    # clone is a fresh model with the same parameters: it learns like a fresh one
    fresh = NRRLS()
    for x, y in zip(rows, labels):
        clone.learn_one(x, y)
        fresh.learn_one(x, y)
    assert clone.decision_one(rows[0]) == pytest.approx(fresh.decision_one(rows[0]), rel=1e-12)


def test_the_automatic_choice_takes_the_stale_factor_on_wide_streams():
    d = _stale.STALE_MIN_DIM + 10
    rows, labels = _stream(120, d, seed=9)
    model = NRRLS()
    # The first prefixes have n << d: a direct solve is only good to about cond(M) eps there.
    _prequential_matches(model, rows, labels, {}, start=0)
    counters = model.weight_solver.counters
    # The first solve is direct (the factor is built at the second); all the others are stale.
    assert counters["direct"] == 1 and counters["stale"] == len(rows) - 1 - counters["refactor"]


def test_a_wide_stream_with_a_single_precision_preconditioner_is_the_batch_ter(precision):
    """At a width where the default keeps P^-1 in single precision (if accurate), every prefix
    after the first is the batch TER to 1e-9."""
    d = max(_stale.STALE_MIN_DIM, 200)
    rows, labels = _stream(d + 60, d, seed=33)
    model = NRRLS()
    _prequential_matches(model, rows, labels, {}, start=d)
    single = precision == "single" or d >= _stale.SINGLE_MIN_DIM
    expected = np.float32 if single else np.float64
    assert (
        model.weight_solver.stale is not None
        and model.weight_solver.stale.inverse.dtype == expected
    )


@pytest.mark.parametrize("params", [{"eta": 1e-40}, {"eta": 1e30}])
def test_the_stale_factor_is_exact_at_extreme_scales_of_the_weights(params):
    """Weights of ~1e-40 (or ~1e30) relative to the statistics: single precision (where
    allowed) must not cut CG short, nor make it fail, by under- or overflowing the vectors it
    preconditions."""
    rows, labels = _stream(160, 12, seed=34)
    model = _forced(params)
    _prequential_matches(model, rows, labels, params)
    assert model.weight_solver.counters["stale"] > 0


def test_woodbury_solver_is_untouched_by_the_solver_strategy():
    rows, labels = _stream(60, 6, seed=10)
    model = NRRLS(solver="woodbury")
    assert not isinstance(model.weight_solver, _solver.SystemSolver)  # the paper's recursion
    for x, y in zip(rows, labels):
        model.predict_one(x)
        model.learn_one(x, y)
    ref = TERReference(rows, labels)
    assert_model_matches(model, ref, [rows[0]], 1e-6)


def test_cg_falls_back_to_a_direct_solve_when_it_does_not_converge(monkeypatch):
    rows, labels = _stream(80, 10, seed=11)
    monkeypatch.setattr(_stale, "MAX_ITERATIONS", 0)  # CG gives up at once
    model = _forced()
    _prequential_matches(model, rows, labels, {})
    assert (
        model.weight_solver.counters["stale"] == 0 and model.weight_solver.counters["refactor"] > 0
    )


def test_the_solver_strategy_is_not_a_parameter():
    """Same API: the choice of path is internal state, not a hyper-parameter."""
    params = NRRLS()._get_params()
    assert set(params) == {
        "l2",
        "reweight",
        "tau",
        "eta",
        "intercept",
        "forgetting",
        "solver",
        "max_size",
    }
    assert isinstance(NRRLS(), base.Classifier)


def test_a_wide_solve_restores_the_callers_blas_threading():
    """The solver runs BLAS on one thread from ONE_THREAD_MIN_DIM columns on (OpenBLAS's
    setter, found by river_nrrls._threads) and gives the caller its own setting back. (With
    another BLAS there is no setter and nothing to restore; the wheels this project tests with
    bundle OpenBLAS.)"""
    rows, labels = _stream(30, _threads.ONE_THREAD_MIN_DIM + 5, seed=12)
    model = NRRLS()
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    setters = _threads.THREAD_SETTERS
    previous = [setter(2) for setter in setters]
    try:
        model.predict_one(rows[0])
        assert [setter(2) for setter in setters] == [2] * len(setters)
    finally:
        for setter, value in zip(setters, previous):
            setter(value)


@pytest.mark.parametrize("params", [{}, {"forgetting": 0.98}, {"tau": 0.5, "intercept": False}])
def test_the_update_limit_refreshes_the_factor_and_stays_exact(params, monkeypatch):
    """A small queue (4 samples) makes the limit of rank-1 updates of P^-1 (``UPDATE_LIMIT``
    queues, 20 samples) bind many times: every factor serves at most that many samples, and
    every answer is still the batch TER."""
    monkeypatch.setattr(_stale, "QUEUE_CAPACITY", 4)
    rows, labels = _stream(260, 12, seed=13)
    rng = np.random.default_rng(14)
    weights = rng.choice([0.5, 1.0, 2.0], size=len(rows)).tolist()
    model = _forced(params)
    solver = model.weight_solver
    most = 0
    for x, y, w in zip(rows, labels, weights):
        model.predict_one(x)
        model.learn_one(x, y, w=w)
        if solver.stale is not None:
            most = max(most, solver.stale.updates)
    limit = _stale.UPDATE_LIMIT * 4
    assert 0 < most <= limit
    counters = solver.counters
    assert counters["stale"] > 0
    # one factor takes at most `limit` samples, each learnt after a prediction
    assert counters["refactor"] >= (counters["stale"] + counters["refactor"]) / (limit + 1)
    ref = TERReference(rows, labels, **params, sample_weights=weights)
    assert_model_matches(model, ref, rows[-5:], RTOL)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_sherman_morrison_updates_keep_the_inverse_of_the_preconditioner(dtype, rtol):
    """P^-1 after the updates is the inverse of M(t0) + sum_i f_i x_i x_i^T (plain numpy), to
    the precision P^-1 is kept in, and an update is refused, P^-1 untouched, when P^-1 is no
    longer positive definite."""
    rng = np.random.default_rng(21)
    d = 9
    X = rng.normal(size=(30, d))
    base_matrix = X.T @ X / 30 + 0.1 * np.eye(d)
    start = np.asfortranarray(np.linalg.inv(base_matrix), dtype=dtype)
    factor = _stale.StaleFactor(start, np.ones(2))
    expected = base_matrix.copy()
    for _ in range(12):
        x, frozen = rng.normal(size=d), float(rng.uniform(0.01, 2.0))
        assert factor.append(x, frozen)
        expected += frozen * np.outer(x, x)
    assert factor.inverse.dtype == dtype
    inverse = np.triu(factor.inverse) + np.triu(factor.inverse, 1).T
    np.testing.assert_allclose(inverse, np.linalg.inv(expected), rtol=rtol, atol=rtol / 1e3)
    vector = rng.normal(size=d)
    applied = factor.apply(vector, 0.5)
    assert applied.dtype == np.float64  # vectors go in and out in double precision
    np.testing.assert_allclose(applied, 0.5 * np.linalg.solve(expected, vector), rtol=rtol)
    assert factor.updates == 12
    # P^-1 that lost its positive definiteness (rounding, simulated): c = 1/f + x^T P^-1 x <= 0
    lost = _stale.StaleFactor(np.asfortranarray(-np.eye(d)), np.ones(2))
    x = np.full(d, 1.0)  # x^T P^-1 x = -9, 1/f = 1
    assert not lost.append(x, 1.0)
    np.testing.assert_array_equal(lost.inverse, -np.eye(d))
    assert lost.updates == 0


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-14), (np.float32, 1e-6)])
def test_the_preconditioner_kernels_do_not_depend_on_the_scale_of_the_vectors(dtype, rtol):
    """Applying P^-1 to 1e-50 v (or 1e100 v) is 1e-50 (1e100) times applying it to v in either
    precision; a non-finite v gives NaN (CG then gives up and refactors). An update by a
    sample too small to matter is a no-op, one too large to represent is refused; P^-1 stays
    as it was."""
    rng = np.random.default_rng(35)
    d = 7
    X = rng.normal(size=(20, d))
    start = np.asfortranarray(np.linalg.inv(X.T @ X / 20 + 0.1 * np.eye(d)), dtype=dtype)
    factor = _stale.StaleFactor(start.copy(order="F"), np.ones(2))
    vector = rng.normal(size=d)
    reference = factor.apply(vector, 0.5)
    for scale in (1e-50, 1e100):
        np.testing.assert_allclose(factor.apply(vector * scale, 0.5), reference * scale, rtol=rtol)
    assert np.isnan(factor.apply(np.full(d, np.inf))).all()
    assert factor.append(np.zeros(d), 1.0) and factor.append(np.full(d, 1e-200), 1e-200)
    assert not factor.append(np.full(d, 1e300), 1.0)
    np.testing.assert_array_equal(factor.inverse, start)


def test_single_precision_inverse_only_where_it_is_accurate():
    """`_single_if_accurate` keeps M(t0)^-1 in single precision for a well-conditioned M and
    in double for an ill-conditioned one (cond ~ 1e11, where single precision has no digit
    left in the small directions)."""
    rng = np.random.default_rng(30)
    d = 20
    basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
    for spread, expected in ((1e2, np.float32), (1e11, np.float64)):
        matrix = (basis * np.geomspace(1.0, 1.0 / spread, d)) @ basis.T
        inverse = np.asfortranarray(np.linalg.inv(matrix))
        chosen = _stale._single_if_accurate(inverse, np.asfortranarray(np.triu(matrix)))
        assert chosen.dtype == expected, spread
        if expected is np.float64:
            assert chosen is inverse  # untouched
        else:
            np.testing.assert_allclose(chosen, inverse, rtol=1e-6)


def test_both_precisions_of_the_preconditioner_give_the_batch_ter(precision, monkeypatch):
    """Where single precision is allowed, a well-conditioned stream keeps P^-1 in single
    precision and an ill-conditioned one (rank 3 plus 1e-4 noise, l2 = 1e-8) in double; below
    ``SINGLE_MIN_DIM`` it is always double. Every prefix is the batch TER either way."""
    dtypes = []
    build = _stale.StaleFactor.__init__

    def spy(self, inverse, coefficients):
        dtypes.append(inverse.dtype)
        build(self, inverse, coefficients)

    monkeypatch.setattr(_stale.StaleFactor, "__init__", spy)
    rows, labels = _stream(150, 14, seed=31)
    _prequential_matches(_forced(), rows, labels, {})
    single = np.dtype(np.float32 if precision == "single" else np.float64)
    assert dtypes and set(dtypes) == {single}
    rng = np.random.default_rng(32)
    n, d = 120, 15
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, d)) + 1e-4 * rng.normal(size=(n, d))
    ill_rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    ill_labels = [bool(v) for v in X[:, 0] + 0.5 * rng.normal(size=n) > 1.0]
    dtypes.clear()
    model = _forced({"l2": 1e-8})
    for x, y in zip(ill_rows, ill_labels):
        model.predict_one(x)
        model.learn_one(x, y)
    assert dtypes and np.dtype(np.float64) in dtypes
    ref = TERReference(ill_rows, ill_labels, l2=1e-8)
    direct = _forced({"l2": 1e-8}, stale_min_dim=10**9)
    for x, y in zip(ill_rows, ill_labels):
        direct.learn_one(x, y)
    errors = [
        relative_error(model_matrix(m.weights, m.intercepts, ref), ref) for m in (model, direct)
    ]
    assert errors[0] <= max(RTOL, 2 * errors[1]), errors
    # a tolerance no single copy meets: double precision, the batch TER as well
    monkeypatch.setattr(_stale, "SINGLE_TOLERANCE", -1.0)
    dtypes.clear()
    _prequential_matches(_forced(), rows, labels, {})
    assert dtypes and set(dtypes) == {np.dtype(np.float64)}


def test_a_factor_pickled_in_the_block_form_is_refreshed_and_stays_exact():
    """A stale factor pickled before the Sherman-Morrison form (M(t0)^-1 plus a separate
    block, no update count) loads, refactors at the next solve, and the answers stay exact."""
    rows, labels = _stream(120, 12, seed=22)
    model = _forced()
    for x, y in zip(rows[:60], labels[:60]):
        model.predict_one(x)
        model.learn_one(x, y)
    state = model.weight_solver.stale.__dict__.copy()
    del state["updates"]
    state.update(block=np.zeros((12, 48), order="F"), size=3, folds=0)
    old = object.__new__(_stale.StaleFactor)
    old.__setstate__(state)
    model.weight_solver.stale = pickle.loads(pickle.dumps(old))
    refactors = model.weight_solver.counters["refactor"]
    for x, y in zip(rows[60:], labels[60:]):
        model.predict_one(x)
        model.learn_one(x, y)
    assert model.weight_solver.counters["refactor"] > refactors
    assert_model_matches(model, TERReference(rows, labels), rows[-5:], RTOL)


def test_a_model_pickled_when_the_factor_lived_in_the_solver_module_loads():
    """Models pickled before ``_stale.py`` name the factor's class
    ``river_nrrls._solver._StaleFactor`` (and the statistics' workspace ``_workspace``): they
    load, and go on exactly as the model they were."""
    rows, labels = _stream(120, 12, seed=23)
    model = _forced()
    _predict_and_learn(model, rows[:60], labels[:60])
    assert model.weight_solver.stale is not None
    text = pickle.dumps(model, protocol=0)  # names as text: the older module path written in
    assert text.count(b"criver_nrrls._stale\nStaleFactor\n") == 1
    older = text.replace(
        b"criver_nrrls._stale\nStaleFactor\n", b"criver_nrrls._solver\n_StaleFactor\n"
    ).replace(b"Vworkspace\n", b"V_workspace\n")
    assert older != text
    loaded = pickle.loads(older)
    assert isinstance(loaded.weight_solver.stale, _stale.StaleFactor)
    _predict_and_learn(model, rows[60:], labels[60:])
    _predict_and_learn(loaded, rows[60:], labels[60:])
    for x in rows[-5:]:
        assert loaded.predict_proba_one(x) == model.predict_proba_one(x)


def test_common_shrinkage_of_the_class_weights_is_no_drift():
    """Both classes growing in proportion shrink every class weight by about the same factor
    s: M(t) ~ s P, which conjugate gradients does not see (the drift test measures the spread
    of the ratios, not their distance to 1). A shrinkage beyond ``MIN_SCALE`` refactors."""
    rows, labels = _stream(400, 12, seed=15, positives=0.5)
    model = _forced()
    for x, y in zip(rows, labels):
        model.predict_one(x)
        model.learn_one(x, y)
    stale = model.weight_solver.stale
    assert stale is not None and _stale.MIN_SCALE <= stale.scale < 1.0
    counters = model.weight_solver.counters
    # With balanced classes the spread stays small: far fewer factorisations than steps.
    assert counters["refactor"] < counters["stale"] / 5
    ref = TERReference(rows, labels)
    assert_model_matches(model, ref, rows[-5:], RTOL)


def test_singular_system_with_columns_of_very_different_scales():
    """Found by the state machine: a numerically singular M (cond = inf) whose columns differ
    in scale by 1e100. The least-squares fallback works on the equilibrated system: on the raw
    M its singular-value cut (relative to 8e247) dropped the well-determined column b as well,
    leaving a residual of 1e114 in b's equation."""
    model = NRRLS()
    model.learn_one({"a": -1e94, "c": -1e124}, "x", w=2.0)
    model.learn_many(pd.DataFrame([{}, {}], index=[10, 11]), pd.Series(["x", "y"], index=[10, 11]))
    model.learn_one({"a": -1e-300, "b": -1e115}, "x", w=0.5)
    rows = [{"a": -1e94, "c": -1e124}, {}, {}, {"a": -1e-300, "b": -1e115}]
    ref = TERReference(rows, ["x", "x", "y", "x"], sample_weights=[2.0, 1.0, 1.0, 0.5])
    for row, (M, r) in zip(model_matrix(model.weights, model.intercepts, ref), ref.systems):
        with np.errstate(over="ignore"):  # M's norm overflows (entries of 1e248): inf
            assert np.linalg.cond(M) > 1e30  # numerically singular: the fallback ran
        # every equation holds, each relative to its own row's scale
        residual = np.abs(M @ row - r)
        row_scale = np.abs(M) @ np.abs(row) + np.abs(r)
        assert (residual <= 1e-12 * row_scale).all(), residual / row_scale


def test_learning_without_predicting_keeps_no_growing_list_and_stays_exact():
    """After a prediction has set up a stale factor, a long run of ``learn_one`` without
    predictions must not queue every sample for the block (memory growing with the stream):
    beyond a block's worth the factor is let go, and the next prediction refactors exactly."""
    rows, labels = _stream(300, 12, seed=16)
    model = _forced()
    for x, y in zip(rows[:40], labels[:40]):
        model.predict_one(x)
        model.learn_one(x, y)
    solver = model.weight_solver
    assert solver.stale is not None
    capacity = solver.stale.capacity
    longest = 0
    for x, y in zip(rows[40:], labels[40:]):
        model.learn_one(x, y)
        longest = max(longest, len(solver.pending))
    assert longest <= capacity < len(rows) - 40
    assert solver.stale is None and solver.pending == []
    assert_model_matches(model, TERReference(rows, labels), rows[-5:], RTOL)
    # A short run (within a block) keeps the factor and its queue, and stays exact too.
    more_rows, more_labels = _stream(10, 12, seed=17)
    model.predict_one(more_rows[0])  # direct: the factor is built at the second solve
    model.learn_one(more_rows[0], more_labels[0])
    model.predict_one(more_rows[1])
    assert solver.stale is not None
    for x, y in zip(more_rows[1:], more_labels[1:]):
        model.learn_one(x, y)
    assert solver.stale is not None and len(solver.pending) == len(more_rows) - 1
    reference = TERReference(rows + more_rows, labels + more_labels)
    assert_model_matches(model, reference, more_rows[-3:], RTOL)


def test_a_model_that_predicts_once_after_each_change_never_builds_the_factor():
    """The stale factor is built at the second solve that follows a change the block cannot
    follow: a copy that predicts once (a block-prequential scorer) and ``learn_many`` batches
    between predictions get plain direct solves, exact, and no factor."""
    d = _stale.STALE_MIN_DIM + 5
    rows, labels = _stream(200, d, seed=18)
    model = NRRLS()
    for x, y in zip(rows[:100], labels[:100]):
        model.learn_one(x, y)
    scorer = copy.deepcopy(model)  # a scorer copy: one prediction, one direct solve, no factor
    scorer.predict_one(rows[0])
    assert scorer.weight_solver.stale is None and scorer.weight_solver.counters["refactor"] == 0
    assert scorer.weight_solver.counters["direct"] == 1
    frame, target = pd.DataFrame(rows[100:]), pd.Series(labels[100:])
    for start in range(0, 100, 25):
        model.learn_many(frame.iloc[start : start + 25], target.iloc[start : start + 25])
        model.predict_one(rows[0])
        assert model.weight_solver.stale is None
    counters = model.weight_solver.counters
    assert counters["refactor"] == 0 and counters["direct"] == 4
    assert_model_matches(model, TERReference(rows, labels), rows[-3:], RTOL)
    # Predictions that follow learn_one's build the factor at the second solve and use it.
    for x, y in zip(rows[:3], labels[:3]):
        model.predict_one(x)
        model.learn_one(x, y)
    model.predict_one(rows[3])
    assert model.weight_solver.stale is not None and counters["stale"] >= 1


# ------------------------------------------------------ reweighted multiclass: a factor per class


def _multiclass_stream(n: int, d: int, seed: int, n_classes: int = 4, late_from: int = 0):
    """Classes of comparable sizes (argmax of random projections of centred inputs), the last
    one only from sample ``late_from`` on."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    labels = ((X - 0.5) @ rng.normal(size=(d, n_classes))).argmax(axis=1).tolist()
    last = n_classes - 1
    labels = [y if i >= late_from or y != last else 0 for i, y in enumerate(labels)]
    return [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X], labels


@pytest.mark.parametrize("params", [p for p in PARAMS if p.get("reweight", True)])
def test_each_class_stale_factor_is_the_batch_ter_after_every_prefix(params):
    rows, labels = _multiclass_stream(160, 12, seed=40, late_from=90)
    model = _forced(params)
    _prequential_matches(model, rows, labels, params)
    solver = model.weight_solver
    assert solver.class_factors is not None and len(solver.class_factors) == 4
    assert all(factor is not None for factor in solver.class_factors)
    counters = solver.counters
    # One direct solve (the first, two classes); the third class and the late fourth make every
    # class factorise; then CG on the classes' systems (small classes drift fast: a class of n
    # samples moves its weight 1/n by 1/n at each arrival, so they refactor often early on).
    assert counters["direct"] == 1 and counters["refactor"] >= 3 + 4
    assert counters["stale"] > len(rows)


def test_each_class_stale_factor_with_sample_weights_and_emerging_features():
    rng = np.random.default_rng(41)
    rows, labels = [], []
    for i in range(150):
        width = min(6 + i // 10, 16)  # new features keep the factors refreshing
        rows.append({f"x{j}": float(rng.random()) for j in range(width) if rng.random() < 0.9})
        labels.append(("a", "b", "c")[int(rng.integers(3))] if i > 5 else ("a", "b", "c")[i % 3])
    weights = rng.choice([0.0, 0.3, 1.0, 2.0, 9.0], size=len(rows)).tolist()
    model = _forced()
    _prequential_matches(model, rows, labels, {}, weights)
    assert (
        model.weight_solver.counters["stale"] > 0 and model.weight_solver.class_factors is not None
    )


def test_each_class_stale_factor_on_an_ill_conditioned_stream():
    """Rank-3 inputs in 15 dimensions plus 1e-4 noise, three classes."""
    rng = np.random.default_rng(42)
    n, d = 150, 15
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, d)) + 1e-4 * rng.normal(size=(n, d))
    labels = [int(v) for v in np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), [-1.0, 1.0])]
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    model = _forced()
    _prequential_matches(model, rows, labels, {})
    assert (
        model.weight_solver.counters["stale"] > 0 and model.weight_solver.class_factors is not None
    )


def test_each_class_factor_survives_pickle_copy_and_learn_many_in_the_middle():
    rows, labels = _multiclass_stream(170, 12, seed=43)
    model = _forced()
    _predict_and_learn(model, rows[:70], labels[:70])
    factors = model.weight_solver.class_factors
    assert factors is not None and all(factor is not None for factor in factors)
    assert any(factor.updates > 0 for factor in factors)  # in the middle of a run
    restored, copied = pickle.loads(pickle.dumps(model)), copy.deepcopy(model)
    for x, y in zip(rows[70:120], labels[70:120]):
        outputs = model.decision_one(x)
        assert restored.decision_one(x) == outputs  # the same state, bit for bit
        assert copied.decision_one(x) == outputs
        for m in (model, restored, copied):
            m.learn_one(x, y)
    # a mini-batch lets the factors go; the predictions after it rebuild them, exactly
    model.learn_many(pd.DataFrame(rows[120:140]), pd.Series(labels[120:140]))
    assert model.weight_solver.class_factors is None
    for i in range(140, len(rows)):
        model.predict_one(rows[i])
        model.learn_one(rows[i], labels[i])
        assert_model_matches(model, TERReference(rows[: i + 1], labels[: i + 1]), [rows[i]], RTOL)
    assert model.weight_solver.class_factors is not None


def test_the_automatic_choice_gives_each_class_a_factor_on_wide_streams(precision):
    """From the automatic per-class threshold (``CLASS_STALE_MIN_DIM`` on the Python paths,
    below the two-class threshold: the batched direct path solves C systems a step;
    ``COMPILED_CLASS_STALE_MIN_DIM`` where the compiled kernel solves them) every class gets
    its factor; narrower, the batched path."""
    threshold = NRRLS()._solver.class_threshold()
    expected_threshold = (
        _stale.CLASS_STALE_MIN_DIM
        if not _native.compiled("each_weights")
        else _stale.COMPILED_CLASS_STALE_MIN_DIM
    )
    assert threshold == expected_threshold
    assert _stale.CLASS_STALE_MIN_DIM + 6 < _stale.STALE_MIN_DIM
    d = threshold + 6 if precision == "double" else max(200, threshold + 6)
    rows, labels = _multiclass_stream(d + 40, d, seed=44, n_classes=3)
    model = NRRLS()
    _prequential_matches(model, rows, labels, {}, start=d)
    factors = model.weight_solver.class_factors
    assert factors is not None and len(factors) == 3
    expected = np.float32 if precision == "single" else np.float64
    assert {factor.inverse.dtype for factor in factors} == {np.dtype(expected)}
    narrow = min(threshold, _stale.STALE_MIN_DIM) - 4  # (the first samples may be two classes)
    rows, labels = _multiclass_stream(narrow + 40, narrow, seed=47, n_classes=3)
    model = NRRLS()
    _prequential_matches(model, rows, labels, {}, start=narrow)
    assert model.weight_solver.class_factors is None and model.weight_solver.counters["stale"] == 0


@pytest.mark.parametrize("first", [0, 1])
def test_one_vs_rest_matrices_are_the_class_combinations_without_cancellation(first):
    """Every M_k = w_k A^k + w_rest A^rest + b I against plain numpy on the symmetrised
    scatters, with a class so much heavier than its rest (1e6 samples of large inputs against
    a few tiny ones) that the T - A^k form would lose about 1e-10 of M_k; and with spare
    capacity in the buffer (a grown index)."""
    from river_nrrls._stats import ClassStatistics, symmetrize_upper

    rng = np.random.default_rng(45)
    d = 9
    stats = ClassStatistics(dim=1)
    stats.grow(d)
    stats.grow(d + 1)  # capacity beyond dim: the non-contiguous case
    masses = {0: 1e6, 1: 3.0, 2: 2.0, 3: 5.0}
    for label, mass in masses.items():
        stats.add_class(label)
        scale = 10.0 if label == 0 else 1e-3
        X = np.hstack([np.ones((4, 1)), scale * rng.normal(size=(4, d))])
        stats.update_many(label, X, np.full(4, mass / 4))
    matrix_mix, _ = _systems.mixing(stats, True, 0.0, 1.0)
    scatters = [symmetrize_upper(stats.scatter(c))[first:, first:] for c in range(4)]
    matrices = list(_systems.one_vs_rest_matrices(stats, matrix_mix, 0.5, first))
    assert len(matrices) == 4
    for k, matrix in enumerate(matrices):
        expected = sum(matrix_mix[k, j] * scatters[j] for j in range(4)) + 0.5 * np.eye(
            d + 1 - first
        )
        assert matrix.flags.f_contiguous and matrix.shape == expected.shape
        upper = np.triu_indices(d + 1 - first)
        error = np.abs(matrix[upper] - expected[upper]).max() / np.abs(expected).max()
        assert error <= 1e-15, (k, error)  # T - A^k would be ~1e-11 off for class 0


@pytest.mark.parametrize("params", [{}, {"intercept": False, "tau": 0.5, "reweight": False}])
def test_pair_kernel_gives_the_parameters_of_the_two_class_direct_solve(params):
    model = NRRLS(**params)
    solver = model.weight_solver
    model.learn_one({"a": 1.0}, True)
    assert solver.pair_kernel(model.statistics) is None  # one class
    model.learn_one({"a": -1.0}, False)
    parameters = solver.pair_kernel(model.statistics)
    assert parameters is not None
    first = 0 if model.intercept else 1
    expected = (first, model.reweight, model.tau, model.eta, model.l2)
    assert (parameters.first, parameters.reweight, parameters.tau) == expected[:3]
    assert (parameters.eta, parameters.l2) == expected[3:]
    model.learn_one({"a": 0.5}, 3)
    assert solver.pair_kernel(model.statistics) is None  # three classes
