"""RLSRegressor's fused step (`river_nrrls._fused_rls`): the kernels ``rls_learn`` and
``rls_predict`` against their Python twins, and the model under hostile keys, values and threads
on both paths (``kernel_path``: the compiled kernels, then the Python paths). Also run by
``.ci/sanitize`` under AddressSanitizer and UndefinedBehaviorSanitizer."""

from __future__ import annotations

import importlib
import pickle
import threading

import numpy as np
import pytest
from kernel_paths import kernel_path, needs_kernels  # noqa: F401  (a fixture: both paths)
from reference import RidgeReference
from scipy import linalg

from river_nrrls import RLSRegressor, _twins

try:
    KERNELS = importlib.import_module("river_nrrls._kernels")
except ImportError:  # not built: the kernels' own tests are skipped (needs_kernels)
    KERNELS = None

# ------------------------------------------------------------------ the kernels and their twins


class State:
    """What ``rls_learn`` reads and writes: a remembered sample and the model's arrays."""

    def __init__(self, n_features: int, first: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.keys = tuple(f"x{j}" for j in range(n_features))
        self.columns = np.arange(1, n_features + 1, dtype=np.intp)
        self.vector = np.concatenate(([1.0], rng.normal(size=n_features)))
        self.vector.flags.writeable = False
        size = n_features + 1  # [1, x]
        rows = rng.normal(size=(size + 5, size + 1))
        rows[:, 0] = 1.0
        self.scatter = np.asfortranarray(np.triu(rows.T @ rows))
        n = size - first
        self.upper = np.asfortranarray(linalg.qr(rows[:, first:], mode="r")[0][: n + 1])
        self.solution = np.zeros(n)
        self.first = first

    def arrays(self) -> list[np.ndarray]:
        return [self.scatter, self.upper, self.solution]

    def learn(self, learn, x, weight=1.5, mass=2.5, target=0.7, bound=10.0, limit=1e300):
        return learn(
            x, self.keys, self.vector, self.columns, 1, 1.0, self.scatter, self.upper,
            self.solution, self.first, weight, mass, target, bound, limit,
        )  # fmt: skip

    def sample(self, values) -> dict:
        return dict(zip(self.keys, values))


def _paths():
    """The twin, and the kernel where built."""
    return [_twins] + ([KERNELS] if KERNELS is not None else [])


@needs_kernels
@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("mass", [1.0, 2.5])
@pytest.mark.parametrize("n_features", [0, 3, 22, 130, 200])  # 200: beyond the stack buffer
@pytest.mark.parametrize("same", [True, False], ids=["same values", "new values"])
def test_rls_learn_is_its_twin_to_rounding(first, mass, n_features, same):
    """The kernel's reflections are dtpqrt's: R, the weights and the scatter (the same dsyr)
    agree, and the weights are R11^{-1} z of the updated R, z the updated right column."""
    states = [State(n_features, first), State(n_features, first)]
    values = states[0].vector[1:] if same else np.linspace(-1.0, 2.0, n_features)
    x = states[0].sample(values.tolist())
    results = [
        state.learn(module.rls_learn, dict(x), mass=mass)
        for state, module in zip(states, (_twins, KERNELS))
    ]
    (twin_sample, twin_grown, twin_solved), (sample, grown, solved) = results
    same = same or n_features == 0  # no value: the same sample
    assert (sample is states[1].vector) == same and (twin_sample is states[0].vector) == same
    np.testing.assert_array_equal(sample, twin_sample)
    assert grown == twin_grown == (sample @ sample + 0.49) * 1.5 + 10.0
    assert solved and twin_solved
    np.testing.assert_array_equal(states[1].scatter, states[0].scatter)
    tolerance = 1e-12 * np.abs(states[0].upper).max()
    np.testing.assert_allclose(states[1].upper, states[0].upper, rtol=0, atol=tolerance)
    np.testing.assert_allclose(states[1].solution, states[0].solution, rtol=1e-10, atol=1e-12)
    # R^T R grew by m [x, y][x, y]^T, and the weights solve the new triangle
    fresh = State(n_features, first)
    row = np.append(np.asarray(sample)[first:], 0.7) * np.sqrt(mass)
    expected = fresh.upper.T @ fresh.upper + np.outer(row, row)
    upper = states[1].upper
    np.testing.assert_allclose(upper.T @ upper, expected, rtol=1e-10, atol=1e-9)
    n = len(row) - 1
    if n:
        solution = linalg.solve_triangular(upper[:n, :n], upper[:n, n])
        np.testing.assert_allclose(states[1].solution, solution, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("module", _paths(), ids=lambda module: module.__name__)
def test_rls_learn_changes_nothing_beyond_the_bound_or_for_the_validation(module):
    state = State(4, 0)
    before = [array.copy() for array in state.arrays()]
    x = state.sample([0.5, 1.0, 2.0, 3.0])
    sample, grown, solved = state.learn(module.rls_learn, x, bound=9.0, limit=30.0)
    assert grown is None and not solved and sample[1] == 0.5
    np.testing.assert_array_equal(sample[1:], [0.5, 1.0, 2.0, 3.0])
    for bad in (True, np.float64(1.0), float("nan"), float("inf"), 10**400, None, "1", 1 + 0j):
        assert state.learn(module.rls_learn, state.sample([bad, 1.0, 2.0, 3.0])) is None
    assert state.learn(module.rls_learn, {"x0": 1.0, "x1": 1.0, "x2": 1.0, "x9": 1.0}) is None
    assert state.learn(module.rls_learn, dict(list(x.items())[::-1])) is None  # other order
    assert state.learn(module.rls_learn, {**x, "x4": 1.0}) is None
    assert state.learn(module.rls_learn, type("D", (dict,), {})(x)) is None
    assert state.learn(module.rls_learn, [("x0", 1.0)]) is None
    for array, copy in zip(state.arrays(), before):
        np.testing.assert_array_equal(array, copy)


@needs_kernels
def test_rls_learn_refuses_inconsistent_arrays_before_changing_anything():
    state = State(4, 1)
    x = state.sample([0.5, 1.0, 2.0, 3.0])
    good = state.arrays()
    before = [array.copy() for array in good]
    frozen = state.upper.copy(order="F")
    frozen.flags.writeable = False
    bad_arrays = [
        (np.asfortranarray(np.eye(5)), state.upper, state.solution),  # scatter of 5 columns
        (state.scatter, np.asfortranarray(np.eye(6)), state.solution),
        (state.scatter, np.ascontiguousarray(np.triu(np.ones((5, 5))) + np.eye(5)), state.solution),
        (state.scatter, frozen, state.solution),
        (state.scatter, state.upper.astype(np.float32, order="F"), state.solution),
        (state.scatter, state.upper, np.zeros(5)),
        (state.scatter, state.upper, np.zeros(8)[::2]),
        (state.scatter, state.upper, np.zeros(4, dtype=np.float32)),
    ]
    for scatter, upper, solution in bad_arrays:
        with pytest.raises((TypeError, ValueError)):
            KERNELS.rls_learn(
                x, state.keys, state.vector, state.columns, 1, 1.0, scatter, upper, solution,
                1, 1.0, 1.0, 0.5, 0.0, 1e300,
            )  # fmt: skip
    for first in (-1, 6):
        with pytest.raises(ValueError):
            KERNELS.rls_learn(
                x, state.keys, state.vector, state.columns, 1, 1.0, *good, first, 1.0, 1.0, 0.5,
                0.0, 1e300,
            )  # fmt: skip
    for array, copy in zip(good, before):
        np.testing.assert_array_equal(array, copy)


@pytest.mark.parametrize("module", _paths(), ids=lambda module: module.__name__)
def test_rls_learn_reports_a_zero_pivot(module):
    """A column that never held a value and whose ridge term underflowed: R11 has a zero pivot
    there, and the caller's solve (with its fallbacks) takes the weights."""
    state = State(3, 0)
    state.upper[:, 2] = 0.0
    state.upper[2, :] = 0.0
    x = state.sample([1.0, 0.0, 2.0])  # nothing in the dead column
    sample, grown, solved = state.learn(module.rls_learn, x)
    assert grown is not None and not solved


@needs_kernels
@pytest.mark.parametrize("n_features", [0, 4, 150])
def test_rls_add_row_is_rls_learns_update_and_its_twin(n_features):
    """The general path's QR update and solve (`SquareRootFactor.add_row`) are the fused step's,
    bit for bit; the twin's (dtpqrt, dtrtrs) agree to rounding."""
    fused, compiled, twin = (State(n_features, 0) for _ in range(3))
    x = fused.sample(np.linspace(-2.0, 1.0, n_features).tolist())
    sample, _, solved = fused.learn(KERNELS.rls_learn, x, mass=2.0, target=0.3)
    row = np.append(sample, 0.3) * np.sqrt(2.0)
    assert KERNELS.rls_add_row(compiled.upper, row.copy(), compiled.solution) and solved
    np.testing.assert_array_equal(compiled.upper, fused.upper)
    np.testing.assert_array_equal(compiled.solution, fused.solution)
    assert _twins.rls_add_row(twin.upper, row.copy(), twin.solution)
    scale = np.abs(twin.upper).max()
    np.testing.assert_allclose(compiled.upper, twin.upper, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(compiled.solution, twin.solution, rtol=1e-10, atol=1e-12)
    good = (compiled.upper, row.copy(), compiled.solution)
    before = [array.copy() for array in good]
    for position, bad in [
        (0, np.ascontiguousarray(compiled.upper)),
        (0, np.asfortranarray(np.eye(n_features + 3))),
        (1, row[:-1].copy()),
        (1, np.repeat(row, 2)[::2]),
        (1, np.empty(0)),
        (2, np.zeros(n_features + 2)),
        (2, compiled.solution.astype(np.float32)),
    ]:
        if position == 0 and n_features == 0:
            continue  # a 1 x 1 array is both C- and F-contiguous
        arguments = list(good)
        arguments[position] = bad
        with pytest.raises((TypeError, ValueError)):
            KERNELS.rls_add_row(*arguments)
    for array, copy in zip(good, before):
        np.testing.assert_array_equal(array, copy)


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("params", [{}, {"forgetting": 0.9}, {"l2": 1e-3, "intercept": False}])
@pytest.mark.parametrize("d", [5, 60])
def test_a_model_resumed_from_a_copy_is_the_uninterrupted_one_bit_for_bit(params, d):
    """A copy does not keep the remembered sample, so its next sample takes the general path
    where the original takes the fused step: the two run the same QR update and solve, and the
    resumed model ends bit for bit as the uninterrupted one (wide: no delayed rows in between
    on the compiled path; the same delayed rows on the Python one)."""
    rows, targets = _dense(150, seed=d, d=d)
    model = RLSRegressor(**params)
    resumed = []
    for i, (x, y) in enumerate(zip(rows, targets)):
        model.predict_one(x)
        model.learn_one(x, y)
        if i % 37 == 5:
            resumed.append((i + 1, pickle.loads(pickle.dumps(model))))
    final = (model.n_samples, model.bias, model.weights)
    for start, copy in resumed:
        for x, y in zip(rows[start:], targets[start:]):
            copy.predict_one(x)
            copy.learn_one(x, y)
        assert (copy.n_samples, copy.bias, copy.weights) == final, start


@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("n_features", [0, 5, 70])
def test_rls_predict_is_its_twin(first, n_features):
    state = State(n_features, first)
    weights = np.linspace(-1.0, 1.0, n_features + 1 - first)
    x = state.sample(np.linspace(0.0, 3.0, n_features).tolist())
    expected = None
    for module in _paths():
        sample, prediction = module.rls_predict(
            x, state.keys, state.vector, state.columns, 1, 1.0, weights, first
        )
        assert prediction == pytest.approx(float(sample[first:] @ weights), rel=1e-12, abs=1e-12)
        expected = prediction if expected is None else expected
        assert prediction == expected  # the same ddot
        assert (
            module.rls_predict(
                {**x, "other": 1.0}, state.keys, state.vector, state.columns, 1, 1.0, weights, first
            )
            is None
        )
        with pytest.raises((TypeError, ValueError)):
            module.rls_predict(
                x, state.keys, state.vector, state.columns, 1, 1.0, np.zeros(80), first
            )


# ------------------------------------------------------------------------------- the model


def _dense(n: int, seed: int = 0, d: int = 6) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    coefficients = rng.normal(size=d)
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in rng.normal(size=(n, d))]
    targets = [float(np.dot(coefficients, list(x.values())) + rng.normal()) for x in rows]
    return rows, targets


@pytest.mark.parametrize("params", [{}, {"forgetting": 0.97}, {"intercept": False}])
@pytest.mark.usefixtures("kernel_path")
def test_the_fused_step_is_taken_and_exact(params, monkeypatch):
    """A dense stream takes the fused step at every sample but the first (and the ones that
    follow a new feature), and the model is the batch ridge after every prefix."""
    from river_nrrls import _native

    calls = {"rls_learn": 0, "rls_predict": 0}
    for name in calls:
        operation = getattr(_native, name)

        def counted(*arguments, _operation=operation, _name=name):
            result = _operation(*arguments)
            calls[_name] += result is not None
            return result

        monkeypatch.setattr(_native, name, counted)
    rows, targets = _dense(120, seed=4)
    model = RLSRegressor(**params)
    reference = None
    for i, (x, y) in enumerate(zip(rows, targets)):
        prediction = model.predict_one(x)
        if reference is not None:
            assert prediction == pytest.approx(reference.predict(x), rel=1e-9, abs=1e-9)
        model.learn_one(x, y, w=1.0 + (i % 3))
        reference = RidgeReference(
            rows[: i + 1], targets[: i + 1], sample_weights=[1.0 + (j % 3) for j in range(i + 1)],
            **params,
        )  # fmt: skip
        assert reference.relative_error(model) <= 1e-9, i
    assert calls["rls_learn"] >= 118 and calls["rls_predict"] >= 118


REFUSALS = (TypeError, ValueError, RuntimeError)


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), "1.0", 1e200, 10**400, 1 + 1j], ids=repr
)
@pytest.mark.usefixtures("kernel_path")
def test_a_bad_value_with_the_remembered_keys_changes_nothing(value):
    rows, targets = _dense(20)
    model = RLSRegressor()
    for x, y in zip(rows, targets):
        model.predict_one(x)
        model.learn_one(x, y)
    before = pickle.dumps(model)
    bad = dict(rows[0], x2=value)
    with pytest.raises(REFUSALS):
        model.learn_one(bad, 1.0)  # 1e200: its square passes the range limit
    assert pickle.dumps(model) == before
    if value != 1e200:  # (a valid input to predict)
        with pytest.raises(REFUSALS):
            model.predict_one(bad)
        assert pickle.dumps(model) == before


@pytest.mark.usefixtures("kernel_path")
def test_numpy_scalars_ints_and_bools_learn_as_their_floats():
    rows, targets = _dense(30)
    plain, mixed = RLSRegressor(), RLSRegressor()
    for i, (x, y) in enumerate(zip(rows, targets)):
        rounded = {k: float(round(v)) for k, v in x.items()}
        rounded["flag"] = float(i % 2)
        plain.learn_one(rounded, y)
        variant = {k: (np.float64(v) if i % 3 else int(v)) for k, v in rounded.items()}
        variant["flag"] = bool(i % 2)
        mixed.learn_one(variant, y)
        assert mixed.predict_one(variant) == pytest.approx(plain.predict_one(rounded), rel=1e-12)
    for name, weight in plain.weights.items():
        assert mixed.weights[name] == pytest.approx(weight, rel=1e-10, abs=1e-12)


class Trap(str):
    """A str subclass whose __eq__ and __hash__ call the model back (a re-entrant call)."""

    model: RLSRegressor | None = None

    def __eq__(self, other):
        if Trap.model is not None:
            model, Trap.model = Trap.model, None
            model.learn_one({"x0": 0.5, "x1": -1.0}, 2.0)
        return str.__eq__(self, other)

    def __hash__(self):
        return str.__hash__(self)


@pytest.mark.usefixtures("kernel_path")
def test_a_key_that_re_enters_the_model_leaves_it_consistent():
    """Keys that are not exact str or int never take the fused step (the kernel compares them
    by identity only, its twin not at all), so a key calling the model back meets the general
    path, which encodes before it reads the model: the model is the batch ridge of the samples
    learnt, the inner call's included."""
    model = RLSRegressor()
    rows = [{"x0": float(i % 4), "x1": float(i % 3)} for i in range(10)]
    targets = [1.0 + x["x0"] for x in rows]
    for x, y in zip(rows, targets):
        model.learn_one(x, y)
    Trap.model = model
    model.learn_one({Trap("x0"): 1.0, Trap("x1"): 2.0}, 3.0)
    called = Trap.model is None
    Trap.model = None
    assert called
    rows += [{"x0": 0.5, "x1": -1.0}, {"x0": 1.0, "x1": 2.0}]
    targets += [2.0, 3.0]
    assert RidgeReference(rows, targets).relative_error(model) <= 1e-9


@pytest.mark.usefixtures("kernel_path")
def test_threads_learning_predicting_and_pickling_one_model():
    """Two threads learn (one half of a stream each), one predicts, one pickles: without
    forgetting the model after both is the batch ridge of the whole stream (ridge does not
    depend on the order), every prediction is finite and every snapshot loads and predicts."""
    rows, targets = _dense(600, seed=9, d=22)
    model = RLSRegressor()
    errors: list[BaseException] = []
    done = threading.Event()

    def guarded(work):
        def run():
            try:
                work()
            except BaseException as error:  # noqa: BLE001  (reported by the test)
                errors.append(error)

        return run

    def learn(start):
        for x, y in zip(rows[start::2], targets[start::2]):
            model.learn_one(x, y)

    def predict():
        while not done.is_set():
            assert np.isfinite(model.predict_one(rows[7]))

    snapshots = []

    def snapshot():
        while not done.is_set() and len(snapshots) < 50:
            snapshots.append(pickle.dumps(model))

    learners = [threading.Thread(target=guarded(lambda s=s: learn(s))) for s in (0, 1)]
    others = [threading.Thread(target=guarded(work)) for work in (predict, snapshot)]
    for thread in learners + others:
        thread.start()
    for thread in learners:
        thread.join()
    done.set()
    for thread in others:
        thread.join()
    assert not errors
    assert RidgeReference(rows, targets).relative_error(model) <= 1e-9
    for state in snapshots[:10]:
        copy = pickle.loads(state)
        assert np.isfinite(copy.predict_one(rows[3]))
        copy.learn_one(rows[0], targets[0])


@pytest.mark.usefixtures("kernel_path")
def test_a_dict_mutated_by_another_thread_while_learnt():
    """Another thread rewrites the values (and sometimes the keys) of the dict being learnt:
    each call learns one state of the dict or refuses it; the scatter and the factor always
    agree (a model rebuilt from the scatter has the same weights)."""
    model = RLSRegressor()
    x = {f"x{j}": float(j) for j in range(8)}
    stop = threading.Event()
    rng = np.random.default_rng(3)
    noise = rng.normal(size=(1000, 8)).tolist()

    def mutate():
        i = 0
        while not stop.is_set():
            values = noise[i % 1000]
            for j, value in enumerate(values):
                x[f"x{j}"] = value
            if i % 50 == 0:
                x.pop("x3", None)
                x["x3"] = 1.0
            i += 1

    thread = threading.Thread(target=mutate)
    thread.start()
    try:
        for i in range(3000):
            try:
                model.learn_one(x, float(i % 5))
                model.predict_one(x)
            except REFUSALS:
                pass
    finally:
        stop.set()
        thread.join()
    rebuilt = RLSRegressor() + model  # the factor again, from the scatter
    weights = np.array([model.bias, *model.weights.values()])
    again = np.array([rebuilt.bias, *(rebuilt.weights[name] for name in model.weights)])
    # (a dict that rarely changes between two calls makes nearly collinear samples: the
    # rebuilt factor, from the scatter, is accurate to cond(M) 1e-16 only)
    assert np.abs(weights - again).max() <= 1e-7 * (1.0 + np.abs(weights).max())


@needs_kernels
def test_beyond_the_compiled_width_rows_wait_and_the_fused_step_gives_way(monkeypatch):
    """From `_COMPILED_ROWS_MAX_DIM` columns on (lowered here) the delayed rows are the faster
    update: they wait again, the fused step declines (it needs R itself), and the model stays
    the batch ridge."""
    from river_nrrls import _native, _sqrt_factor

    monkeypatch.setattr(_sqrt_factor, "_COMPILED_ROWS_MAX_DIM", 50)
    fused = []
    learn = _native.rls_learn
    monkeypatch.setattr(
        _native, "rls_learn", lambda *a: fused.append(1) or learn(*a)
    )  # counts the calls that reach the kernel
    rows, targets = _dense(80, seed=2, d=60)
    model = RLSRegressor(forgetting=0.999)
    waited = 0
    for i, (x, y) in enumerate(zip(rows, targets)):
        model.learn_one(x, y)
        waited += model._factor.waiting > 0
        if i % 9 == 0 or i == len(rows) - 1:
            reference = RidgeReference(rows[: i + 1], targets[: i + 1], forgetting=0.999)
            assert reference.relative_error(model) <= 1e-9, i
    assert waited > 60 and not fused
