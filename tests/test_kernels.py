"""The compiled kernels of ``river_nrrls/_kernels.pyx`` against plain numpy and the Python paths.

The extension is optional at install time. One test requires it wherever it can be built (a C
compiler, Cython and setuptools: a CI install that silently failed to build it would otherwise
test only the Python paths); the kernels' own tests are skipped, saying why, where it is not
built. The model-level tests run on both paths (the ``kernel_path`` fixture), each against the
batch TER, and check that the Python paths, which a machine without a C compiler takes, give the
same models as the kernels.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import pathlib
import pickle

import numpy as np
import pytest
from kernel_paths import (
    BUILD_ERROR,
    KERNELS,
    kernel_path,  # noqa: F401  (a fixture)
    needs_kernels,
    why_the_kernels_cannot_be_built,
    without_kernel,
)
from kernel_paths import without_kernels as _without_kernels
from reference import TERReference, assert_model_matches

from river_nrrls import NRRLS, _native


def test_the_compiled_kernels_are_built_wherever_they_can_be():
    # Where a C compiler, Cython and setuptools are present the tested tree must have built
    # the extension (setup.py marks it optional so that a machine without a C compiler can
    # still install the package, and conftest.py builds it next to the sources).
    reason = why_the_kernels_cannot_be_built()
    if reason is not None:
        pytest.skip(f"the kernels cannot be built here: {reason}")
    missing = [name for name in KERNELS if not _native.compiled(name)]
    assert not missing, f"river_nrrls._kernels is not built: {missing}; {BUILD_ERROR}"


def _stub_signatures() -> dict[str, list[str]]:
    """The parameters (``name`` or ``name=``, with a default) of each kernel of the stub."""
    path = pathlib.Path(_native.__file__).with_name("_kernels.pyi")
    signatures = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            arguments = node.args.args
            first_default = len(arguments) - len(node.args.defaults)
            signatures[node.name] = [
                argument.arg + ("=" if i >= first_default else "")
                for i, argument in enumerate(arguments)
            ]
    return signatures


@needs_kernels
def test_the_stub_declares_the_built_kernels():
    # river_nrrls/_kernels.pyi is what mypy reads of the extension: the same functions, with the
    # same parameters in the same order (and the same ones with defaults)
    kernels = importlib.import_module("river_nrrls._kernels")
    built = {}
    for name, function in vars(kernels).items():
        if not name.startswith("_") and callable(function):
            parameters = inspect.signature(function).parameters.values()
            built[name] = [
                p.name + ("" if p.default is inspect.Parameter.empty else "=") for p in parameters
            ]
    assert _stub_signatures() == built


# ------------------------------------------------------------------ model level


def _emerging_row(rng, i: int, start: int, every: int, missing: tuple[int, int]):
    """Sample ``i``'s values and dict: ``start`` features, one more every ``every`` samples
    (at most 6 more), ``f1`` missing from the samples with i % missing[0] == missing[1]."""
    values = rng.normal(size=start + min(i // every, 6))
    x = {f"f{j}": float(v) for j, v in enumerate(values)}
    if i % missing[0] == missing[1]:
        del x["f1"]  # a feature missing from some samples
    return values, x


def _stream(n: int, seed: int):
    """Two classes (10 % positives), features that emerge and disappear, some ints."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n):
        values, x = _emerging_row(rng, i, 4, 15, (7, 3))
        if i % 11 == 5:
            x["f0"] = int(round(values[0] * 3))  # an int value
        rows.append(x)
        labels.append(bool(values[:3].sum() + 0.5 * rng.normal() > 1.8))
    return rows, labels


PARAMS = [
    {},
    {"tau": 0.3, "eta": 2.0},
    {"intercept": False},
    {"reweight": False, "l2": 1e-2},
    {"forgetting": 0.97},
]


def _run(params, rows, labels, weights, stale_min_dim=None):
    """Prequential outputs, and the model, after every step (predict, then learn)."""
    model = NRRLS(**params)
    if stale_min_dim is not None:
        model._solver.stale_min_dim = stale_min_dim
    outputs = []
    for x, y, w in zip(rows, labels, weights):
        outputs.append(model.decision_one(x))
        model.predict_one(x)
        model.learn_one(x, y, w=w)
    return outputs, model


@needs_kernels
@pytest.mark.parametrize("params", PARAMS, ids=repr)
@pytest.mark.parametrize("stale_min_dim", [None, 1], ids=["direct", "stale factor"])
def test_the_kernels_and_the_python_paths_give_the_same_models(params, stale_min_dim, monkeypatch):
    rows, labels = _stream(150, seed=len(repr(params)))
    weights = [1.0 if i % 5 else 2.5 for i in range(len(rows))]
    compiled, compiled_model = _run(params, rows, labels, weights, stale_min_dim)
    _without_kernels(monkeypatch)
    python, python_model = _run(params, rows, labels, weights, stale_min_dim)
    for step, (mine, theirs) in enumerate(zip(compiled, python)):
        assert mine.keys() == theirs.keys(), step
        for label in mine:
            assert mine[label] == pytest.approx(theirs[label], rel=1e-10, abs=1e-12), step
    ref = TERReference(rows, labels, **params, sample_weights=weights)
    for model in (compiled_model, python_model):
        assert_model_matches(model, ref, rows[-5:], 1e-9)


@pytest.mark.usefixtures("kernel_path")
def test_the_kernel_path_is_the_batch_ter_after_every_prefix():
    rows, labels = _stream(90, seed=3)
    model = NRRLS(tau=0.2)
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.predict_one(x)
        model.learn_one(x, y)
        ref = TERReference(rows[: i + 1], labels[: i + 1], tau=0.2)
        assert_model_matches(model, ref, [x], 1e-9)
    assert model._solver.counters["direct"] > 0


@pytest.mark.usefixtures("kernel_path")
def test_refused_input_leaves_the_model_as_it_was():
    rows, labels = _stream(40, seed=4)
    model = NRRLS()
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    x = dict(rows[-1])
    model.predict_one(x)  # the encoding of x is cached
    before = pickle.dumps(model)
    for bad in (float("nan"), float("inf"), "1.5", 1 + 0j):
        with pytest.raises((ValueError, TypeError), match="f2"):
            model.learn_one({**x, "f2": bad}, True)
        with pytest.raises((ValueError, TypeError), match="f2"):
            model.predict_one({**x, "f2": bad})
        assert pickle.dumps(model) == before


# ------------------------------------------------------------------ the kernels


def _scatters(rng, capacity: int, dim: int, sizes=(30, 6)) -> np.ndarray:
    """Augmented scatters [n, s; s, A] of two classes in a (capacity, capacity, 2) buffer."""
    buffer = np.zeros((capacity, capacity, 2), order="F")
    for c, n in enumerate(sizes):
        X = np.hstack([np.ones((n, 1)), rng.normal(size=(n, dim - 1))])
        buffer[:dim, :dim, c] = X.T @ X
    return buffer


def _solve_numpy(buffer, dim, first, reweight, tau, eta, l2):
    n_0, n_1 = buffer[0, 0, 0], buffer[0, 0, 1]
    if reweight:
        w_0, w_1 = (1 / n_0 if n_0 > 0 else 0.0), (1 / n_1 if n_1 > 0 else 0.0)
    else:
        w_0, w_1 = float(n_0 > 0), float(n_1 > 0)
    A_0, A_1 = buffer[:dim, :dim, 0], buffer[:dim, :dim, 1]
    M = (w_0 * A_0 + w_1 * A_1)[first:, first:] + l2 * np.eye(dim - first)
    s_0, s_1 = A_0[0, first:], A_1[0, first:]
    r_0 = (tau + eta) * w_0 * s_0 + (tau - eta) * w_1 * s_1
    r_1 = (tau - eta) * w_0 * s_0 + (tau + eta) * w_1 * s_1
    weights = np.zeros((2, dim))
    weights[:, first:] = np.linalg.solve(M, np.column_stack([r_0, r_1])).T
    return weights


@needs_kernels
@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("tau", [0.0, 0.4])
@pytest.mark.parametrize("reweight", [True, False])
@pytest.mark.parametrize("capacity", [7, 12])
def test_pair_weights_is_the_two_class_solve(first, tau, reweight, capacity):
    rng = np.random.default_rng(capacity + first)
    dim = 7
    buffer = _scatters(rng, capacity, dim)
    out = np.full((2, dim), np.nan, order="F")
    info = _native.pair_weights(buffer, dim, first, reweight, tau, 1.5, 1e-3, out)
    assert info == 0
    expected = _solve_numpy(buffer, dim, first, reweight, tau, 1.5, 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    assert (out[:, :first] == 0.0).all()
    if tau == 0.0:
        assert (out[1] == -out[0]).all()  # w_1 = -w_0 exactly


@needs_kernels
@pytest.mark.parametrize("tau", [0.0, 0.4])
def test_pair_weights_and_rank_one_at_widths_that_release_the_gil(tau):
    # From 128 columns on the BLAS and LAPACK calls run without the GIL: the same results.
    rng = np.random.default_rng(11)
    dim, capacity = 140, 150
    buffer = _scatters(rng, capacity, dim, sizes=(400, 300))
    out = np.full((2, dim), np.nan, order="F")
    assert _native.pair_weights(buffer, dim, 1, True, tau, 1.0, 1e-3, out) == 0
    expected = _solve_numpy(buffer, dim, 1, True, tau, 1.0, 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-8, atol=1e-10)
    before = buffer.copy(order="F")
    vector = np.asfortranarray(rng.normal(size=(2, capacity)))[0]  # strided
    _native.rank_one(buffer, 0, dim, vector, 0.5)
    upper = np.triu(np.ones((dim, dim), dtype=bool))
    expected = before[:dim, :dim, 0] + 0.5 * np.outer(vector[:dim], vector[:dim])
    # dsyr adds (alpha x_i) x_j, numpy alpha (x_i x_j): each entry agrees to rounding of the
    # terms added, not of a result that cancels (with FMA, to a few ulps of the terms)
    terms = np.abs(before[:dim, :dim, 0]) + 0.5 * np.abs(np.outer(vector[:dim], vector[:dim]))
    error = np.abs(buffer[:dim, :dim, 0] - expected)[upper]
    assert (error <= 1e-14 * terms[upper]).all()
    assert (buffer[:, :, 1] == before[:, :, 1]).all()


@needs_kernels
def test_pair_weights_with_an_empty_class_and_a_singular_system():
    rng = np.random.default_rng(5)
    buffer = _scatters(rng, 5, 5, sizes=(8, 0))  # class 1 empty: its weight is 0
    out = np.zeros((2, 5), order="F")
    assert _native.pair_weights(buffer, 5, 0, True, 0.0, 1.0, 1e-4, out) == 0
    np.testing.assert_allclose(out, _solve_numpy(buffer, 5, 0, True, 0.0, 1.0, 1e-4), rtol=1e-9)
    singular = np.zeros((5, 5, 2), order="F")  # M = 0 with b = 0: not positive definite
    out = np.full((2, 5), 7.0, order="F")
    assert _native.pair_weights(singular, 5, 0, True, 0.0, 1.0, 0.0, out) > 0
    assert (out == 7.0).all()  # written only on success


@needs_kernels
@pytest.mark.parametrize("first", [0, 1])
def test_pair_matrix_writes_the_upper_triangle_of_m(first):
    rng = np.random.default_rng(6)
    dim, capacity = 9, 13
    buffer = _scatters(rng, capacity, dim)
    n = dim - first
    out = np.full((n, n), 5.0, order="F")
    _native.pair_matrix(buffer, dim, first, 0.25, 0.125, 1e-2, out)
    expected = (0.25 * buffer[:dim, :dim, 0] + 0.125 * buffer[:dim, :dim, 1])[first:, first:]
    expected += 1e-2 * np.eye(n)
    upper = np.triu_indices(n)
    np.testing.assert_allclose(out[upper], expected[upper], rtol=1e-15)
    assert (out[np.tril_indices(n, -1)] == 5.0).all()  # the lower triangle is not touched


@needs_kernels
def test_outputs_is_the_matrix_vector_product_or_none():
    rng = np.random.default_rng(7)
    weights = np.asfortranarray(rng.normal(size=(3, 6)))
    rows = np.asfortranarray(rng.normal(size=(4, 6)))
    vector = rows[2]  # a strided view
    assert not vector.flags.c_contiguous
    result = _native.outputs(weights, vector)
    assert isinstance(result, list) and len(result) == 3
    np.testing.assert_allclose(result, weights @ vector, rtol=1e-14)
    weights[1, 2] = np.inf
    assert _native.outputs(weights, vector) is None
    with pytest.raises(ValueError, match="shapes"):
        _native.outputs(weights, vector[:5])
    with pytest.raises(TypeError):
        _native.outputs(weights.astype(np.float32, order="F"), vector)
    with pytest.raises(TypeError):
        _native.outputs(weights, vector[::-1])  # negative stride


@needs_kernels
def test_rank_one_updates_the_upper_triangle_of_the_class_block():
    rng = np.random.default_rng(8)
    buffer = _scatters(rng, 10, 6)
    before = buffer.copy(order="F")
    rows = np.asfortranarray(rng.normal(size=(3, 6)))
    vector = rows[1]  # strided
    _native.rank_one(buffer, 1, 6, vector, 0.5)
    upper = np.triu(np.ones((6, 6), dtype=bool))
    expected = before[:6, :6, 1] + 0.5 * np.outer(vector, vector)
    np.testing.assert_allclose(buffer[:6, :6, 1][upper], expected[upper], rtol=1e-14)
    assert (buffer[:, :, 0] == before[:, :, 0]).all()  # the other class
    assert (buffer[6:, :, 1] == 0).all() and (buffer[:, 6:, 1] == 0).all()  # spare capacity
    with pytest.raises(ValueError, match="shapes"):
        _native.rank_one(buffer, 2, 6, vector, 1.0)  # no such class
    with pytest.raises(ValueError, match="shapes"):
        _native.rank_one(buffer, 0, 11, vector, 1.0)  # beyond the capacity
    frozen = buffer.copy()
    frozen.flags.writeable = False
    with pytest.raises((ValueError, BufferError, TypeError)):
        _native.rank_one(frozen, 0, 6, vector, 1.0)


def _cached_vector(size=5, offset=1, fill=1.0):
    vector = np.array([fill, 0.5, 0.0, -2.0, 3.0])
    vector.flags.writeable = False
    return vector, np.array([1, 3, 4], dtype=np.intp)


@needs_kernels
def test_refill_returns_the_cached_vector_for_the_same_values():
    vector, columns = _cached_vector()
    keys = ("a", "b", "c")
    for x in ({"a": 0.5, "b": -2.0, "c": 3.0}, {"a": 0.5, "b": -2, "c": 3}):
        assert _native.refill(x, keys, vector, columns, 1, 1.0) is vector


@needs_kernels
def test_refill_makes_a_new_read_only_vector_for_new_values():
    vector, columns = _cached_vector()
    x = {"a": 1.5, "b": -2.0, "c": 4}
    refilled = _native.refill(x, ("a", "b", "c"), vector, columns, 1, 1.0)
    assert refilled is not vector and not refilled.flags.writeable
    assert refilled.tolist() == [1.0, 1.5, 0.0, -2.0, 4.0]
    assert vector.tolist() == [1.0, 0.5, 0.0, -2.0, 3.0]  # the cached one is untouched


class _Dict(dict):
    pass


@needs_kernels
@pytest.mark.parametrize(
    "x",
    [
        {"b": -2.0, "a": 0.5, "c": 3.0},  # other order
        {"a": 0.5, "b": -2.0},  # a key fewer
        {"a": 0.5, "b": -2.0, "c": 3.0, "d": 1.0},  # a key more
        {"a": 0.5, "b": -2.0, "z": 3.0},  # another key
        _Dict(a=0.5, b=-2.0, c=3.0),  # not a plain dict
        {"a": True, "b": -2.0, "c": 3.0},
        {"a": np.float64(0.5), "b": -2.0, "c": 3.0},
        {"a": "0.5", "b": -2.0, "c": 3.0},
        {"a": None, "b": -2.0, "c": 3.0},
        {"a": float("nan"), "b": -2.0, "c": 3.0},
        {"a": float("-inf"), "b": -2.0, "c": 3.0},
        {"a": 10**400, "b": -2.0, "c": 3.0},
        {"a": 1 + 0j, "b": -2.0, "c": 3.0},
    ],
    ids=repr,
)
def test_refill_leaves_everything_else_to_the_validation(x):
    vector, columns = _cached_vector()
    assert _native.refill(x, ("a", "b", "c"), vector, columns, 1, 1.0) is None


@needs_kernels
def test_refill_compares_exact_str_and_int_keys_by_value_and_others_by_identity():
    vector, columns = _cached_vector()
    big = 10**30  # ints beyond the small-int cache: equal, not the same object
    keys = ("".join(["a", "b"]), big, "c")
    x = {"ab": 0.5, int(str(big)): -2.0, "c": 3.0}  # equal keys, other objects
    assert next(iter(x)) is not keys[0] and list(x)[1] is not keys[1]
    assert _native.refill(x, keys, vector, columns, 1, 1.0) is vector

    class Name(str):
        pass

    # A str subclass (its __eq__ may be anything), a float key equal to an int one, a tuple
    # key equal to the remembered one: not compared here (no Python code runs in the walk)
    for other in (Name("ab"), (1, 2)):
        remembered = other if isinstance(other, str) else (1, 2)
        given = {other if isinstance(other, str) else tuple([1, 2]): 0.5, big: -2.0, "c": 3.0}
        fresh = ("ab" if isinstance(other, str) else remembered, big, "c")
        assert _native.refill(given, fresh, vector, columns, 1, 1.0) is None
    assert (
        _native.refill({"ab": 0.5, float(big): -2.0, "c": 3.0}, keys, vector, columns, 1, 1.0)
        is None
    )
    same = (1, 2)
    assert (
        _native.refill({same: 0.5, big: -2.0, "c": 3.0}, (same, big, "c"), vector, columns, 1, 1.0)
        is vector
    )


@needs_kernels
def test_refill_and_outputs_beyond_their_stack_buffers():
    rng = np.random.default_rng(12)
    n_keys = 300  # more than refill's 64 values on the stack
    keys = tuple(f"k{i}" for i in range(n_keys))
    columns = np.arange(2, n_keys + 2, dtype=np.intp)
    vector = np.zeros(n_keys + 2)
    vector[:2] = 1.0
    vector.flags.writeable = False
    x = dict(zip(keys, rng.normal(size=n_keys).tolist()))
    refilled = _native.refill(x, keys, vector, columns, 2, 1.0)
    assert refilled.tolist() == [1.0, 1.0, *x.values()]
    weights = np.asfortranarray(rng.normal(size=(20, n_keys + 2)))  # more than 8 classes
    np.testing.assert_allclose(_native.outputs(weights, refilled), weights @ refilled, rtol=1e-13)


@needs_kernels
def test_the_kernels_refuse_what_is_not_a_float64_array():
    rng = np.random.default_rng(13)
    weights = np.asfortranarray(rng.normal(size=(2, 4)))
    vector = rng.normal(size=4)
    for bad_weights, bad_vector in (
        (None, vector),
        (weights, None),
        (weights.tolist(), vector),
        (weights, vector.astype(">f8")),  # byte-swapped
        (weights.astype(">f8", order="F"), vector),
        (np.ascontiguousarray(weights), vector),  # row-major
        (weights, vector.astype(np.int64)),
    ):
        with pytest.raises(TypeError):
            _native.outputs(bad_weights, bad_vector)
    with pytest.raises(TypeError):
        _native.rank_one(None, 0, 2, vector, 1.0)
    with pytest.raises(TypeError):
        _native.pair_weights(None, 2, 0, True, 0.0, 1.0, 1e-3, np.zeros((2, 2), order="F"))
    out = np.zeros((2, 4), order="F")
    scatters = _scatters(rng, 4, 4)
    for dim, first in ((5, 0), (4, 4), (4, -1)):
        with pytest.raises(ValueError, match="shapes"):
            _native.pair_weights(scatters, dim, first, True, 0.0, 1.0, 1e-3, out)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _native.pair_weights(scatters, 4, 0, True, 0.0, 1.0, 1e-3, out)


@needs_kernels
def test_refill_refuses_inconsistent_arguments():
    vector, columns = _cached_vector()
    x = {"a": 0.5, "b": -2.0, "c": 3.0}
    with pytest.raises(ValueError, match="columns"):
        _native.refill(x, ("a", "b", "c"), vector, columns[:2], 1, 1.0)
    with pytest.raises(ValueError, match="columns"):
        _native.refill(x, ("a", "b", "c"), vector, columns.astype(np.float64), 1, 1.0)
    with pytest.raises(TypeError, match="tuple"):
        _native.refill(x, ["a", "b", "c"], vector, columns, 1, 1.0)
    out_of_range = np.array([1, 3, 9], dtype=np.intp)
    assert _native.refill(x, ("a", "b", "c"), vector, out_of_range, 1, 1.0) is None


@pytest.mark.usefixtures("kernel_path")
def test_a_model_copied_between_predict_and_learn_stays_exact():
    rows, labels = _stream(60, seed=9)
    model = NRRLS()
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.predict_one(x)
        if i % 9 == 0:
            model = copy.deepcopy(model) if i % 2 else pickle.loads(pickle.dumps(model))
        model.learn_one(x, y)
    assert_model_matches(model, TERReference(rows, labels), rows[-3:], 1e-9)


@needs_kernels
def test_a_failed_kernel_solve_takes_the_direct_fallbacks_not_the_stale_path(monkeypatch):
    """A singular M (b = 0, fewer samples than columns) makes the kernel's dposv fail; on a
    wide first solve the fallback must be the direct one (solve_spd), as on the Python path,
    not a factorisation for the stale factor that the kernel's bookkeeping has just primed."""
    rows = [{"a": 1.0, "b": 2.0, "c": -1.0}, {"a": -0.5, "b": 1.0, "c": 0.5}]

    def first_solve():
        model = NRRLS(l2=0.0)
        model._solver.stale_min_dim = 1  # every width counts as wide
        for x, y in zip(rows, [True, False]):
            model.learn_one(x, y)
        return model.decision_one(rows[0]), dict(model._solver.counters)

    compiled, counters = first_solve()
    _without_kernels(monkeypatch)
    python, python_counters = first_solve()
    assert counters == python_counters  # one direct solve, no factorisation
    assert counters["refactor"] == 0 and counters["direct"] == 1
    for label in python:
        assert compiled[label] == pytest.approx(python[label], rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ pair_outputs


def _pair_arguments(rng, tau=0.0, first=0):
    """A remembered sample of 4 features (columns 1..4 of 5) and two classes' scatters."""
    dim = 5
    buffer = _scatters(rng, 8, dim)
    vector = np.array([1.0, 0.5, -1.0, 2.0, 0.25])
    vector.flags.writeable = False
    columns = np.array([1, 2, 3, 4], dtype=np.intp)
    keys = ("a", "b", "c", "d")
    out = np.full((2, dim), np.nan, order="F")
    return keys, vector, columns, buffer, dim, out


@needs_kernels
@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("tau", [0.0, 0.4])
@pytest.mark.parametrize("values", ["same", "new"])
def test_pair_outputs_is_refill_then_the_solve_then_the_outputs(first, tau, values):
    keys, vector, columns, buffer, dim, out = _pair_arguments(np.random.default_rng(5))
    x = (
        {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
        if values == "same"
        else {"a": 3.0, "b": -1.0, "c": 2, "d": -0.5}
    )
    result = _native.pair_outputs(
        x, keys, vector, columns, 1, 1.0, buffer, dim, first, True, tau, 1.5, 1e-3, out
    )
    sample, info, outputs = result
    assert info == 0
    expected_vector = np.array([1.0, *map(float, x.values())])
    assert sample.tolist() == expected_vector.tolist()
    assert (sample is vector) == (values == "same")
    assert not sample.flags.writeable
    expected = _solve_numpy(buffer, dim, first, True, tau, 1.5, 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outputs, expected @ expected_vector, rtol=1e-10, atol=1e-12)
    # the same bits as the separate kernels
    separate = np.empty((2, dim), order="F")
    assert _native.pair_weights(buffer, dim, first, True, tau, 1.5, 1e-3, separate) == 0
    assert out.tolist() == separate.tolist()
    assert outputs == _native.outputs(separate, sample)


@needs_kernels
@pytest.mark.parametrize(
    "x",
    [
        {"a": 0.5, "b": -1.0, "c": 2.0},  # a key missing
        {"a": 0.5, "b": -1.0, "d": 0.25, "c": 2.0},  # another order
        {"a": 0.5, "b": -1.0, "c": 2.0, "d": float("nan")},  # a value to validate
        {"a": 0.5, "b": -1.0, "c": 2.0, "d": "0.25"},
    ],
    ids=["missing", "order", "nan", "str"],
)
def test_pair_outputs_leaves_what_refill_leaves_to_the_validation_unsolved(x):
    keys, vector, columns, buffer, dim, out = _pair_arguments(np.random.default_rng(6))
    result = _native.pair_outputs(
        x, keys, vector, columns, 1, 1.0, buffer, dim, 0, True, 0.0, 1.0, 1e-3, out
    )
    assert result is None
    assert np.isnan(out).all()  # nothing solved


@needs_kernels
def test_pair_outputs_reports_a_failed_solve_and_outputs_that_overflow():
    keys, vector, columns, buffer, dim, out = _pair_arguments(np.random.default_rng(7))
    x = {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
    singular = np.zeros_like(buffer)
    singular[0, 0, :] = 1.0  # masses, nothing else: M = 0 with l2 = 0
    sample, info, outputs = _native.pair_outputs(
        x, keys, vector, columns, 1, 1.0, singular, dim, 0, True, 0.0, 1.0, 0.0, out
    )
    assert sample is vector and info != 0 and outputs is None
    assert np.isnan(out).all()  # not written
    huge = {"a": 1e308, "b": -1.0, "c": 2.0, "d": 0.25}
    sample, info, outputs = _native.pair_outputs(
        huge, keys, vector, columns, 1, 1.0, buffer * 1e-300, dim, 0, True, 0.0, 1.0, 1e-300,
        out,
    )  # fmt: skip
    assert info == 0 and sample[1] == 1e308
    assert (outputs is None) == (not np.isfinite(out @ sample).all())


@needs_kernels
def test_pair_outputs_checks_its_arrays():
    keys, vector, columns, buffer, dim, out = _pair_arguments(np.random.default_rng(8))
    x = {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
    with pytest.raises(TypeError):
        _native.pair_outputs(
            x, keys, vector, columns, 1, 1.0, np.ascontiguousarray(buffer), dim, 0, True, 0.0,
            1.0, 1e-3, out,
        )  # fmt: skip
    with pytest.raises(ValueError):
        _native.pair_outputs(
            x, keys, vector, columns, 1, 1.0, buffer, dim + 1, 0, True, 0.0, 1.0, 1e-3,
            np.empty((2, dim + 1), order="F"),
        )  # fmt: skip
    with pytest.raises(ValueError):
        _native.pair_outputs(
            x, keys, vector, columns, 1, 1.0, buffer, dim, 0, True, 0.0, 1.0, 1e-3,
            np.empty((2, dim + 1), order="F"),
        )  # fmt: skip


def _count_calls(monkeypatch, name: str) -> list:
    """Count the calls of the kernel ``name`` (one entry a call) for one test."""
    calls = []
    kernel = getattr(_native, name)

    def counting(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(_native, name, counting)
    return calls


@needs_kernels
@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_the_one_call_prediction_gives_the_bits_of_the_separate_kernels(params, monkeypatch):
    rows, labels = _stream(120, seed=9)
    weights = [1.0] * len(rows)
    calls = _count_calls(monkeypatch, "pair_outputs")
    fused, fused_model = _run(params, rows, labels, weights)
    assert len(calls) > len(rows) // 2  # the one-call path was taken (remembered keys)
    taken = fused_model._solver.counters["direct"]
    without_kernel(monkeypatch, "pair_outputs")
    separate, separate_model = _run(params, rows, labels, weights)
    assert fused == separate  # the same floats, bit for bit
    assert pickle.dumps(fused_model) == pickle.dumps(separate_model)
    assert taken == separate_model._solver.counters["direct"]


@needs_kernels
def test_pair_outputs_sets_one_blas_thread_and_restores_the_setting():
    import ctypes

    from river_nrrls import _kernels, _threads

    calls = []

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
    def setter(n):  # a stand-in for OpenBLAS's: 4 threads until told otherwise
        calls.append(n)
        return 4 if len(calls) == 1 else 1

    keys, vector, columns, buffer, dim, out = _pair_arguments(np.random.default_rng(10))
    x = {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
    arguments = (x, keys, vector, columns, 1, 1.0, buffer, dim, 0, True, 0.0, 1.0, 1e-3, out)
    address = ctypes.cast(setter, ctypes.c_void_p).value
    try:
        _kernels.use_thread_setters((address,))
        expected = _native.pair_outputs(*arguments)
        assert calls == []  # not asked
        assert _native.pair_outputs(*arguments, True) == expected
        assert calls == [1, 4]  # one thread, then the setting found
        with pytest.raises(ValueError, match="one_thread"):
            wide = _scatters(np.random.default_rng(1), 130, 130)
            wide_x = {f"f{j}": 1.0 for j in range(129)}
            wide_vector = np.ones(130)
            wide_vector.flags.writeable = False
            _native.pair_outputs(
                wide_x, tuple(wide_x), wide_vector, np.arange(1, 130), 1, 1.0, wide, 130, 0,
                True, 0.0, 1.0, 1e-3, np.empty((2, 130), order="F"), True,
            )  # fmt: skip
        assert calls == [1, 4]  # refused before any setting
        with pytest.raises(ValueError, match="positive int"):
            _kernels.use_thread_setters((0,))
    finally:
        _kernels.use_thread_setters(
            tuple(ctypes.cast(s, ctypes.c_void_p).value for s in _threads.THREAD_SETTERS)
        )


@needs_kernels
def test_the_one_call_prediction_on_one_blas_thread_gives_the_separate_kernels_bits(monkeypatch):
    # 64 <= d < 128: the kernel sets one BLAS thread itself (the general path: one_blas_thread)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(150, 70))
    rows = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    labels = (X[:, :5].sum(axis=1) > 1.0).tolist()
    fused, fused_model = _run({}, rows, labels, [1.0] * len(rows))
    without_kernel(monkeypatch, "pair_outputs")
    separate, separate_model = _run({}, rows, labels, [1.0] * len(rows))
    assert fused == separate
    assert pickle.dumps(fused_model) == pickle.dumps(separate_model)


# ------------------------------------------------------------------ learn_remembered


@needs_kernels
@pytest.mark.parametrize("values", ["same", "new"])
@pytest.mark.parametrize("slot", [0, 1])
def test_learn_remembered_is_refill_then_the_load_then_the_rank_one_update(values, slot):
    keys, vector, columns, buffer, dim, _ = _pair_arguments(np.random.default_rng(12))
    x = (
        {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
        if values == "same"
        else {"a": 3.0, "b": -1.0, "c": 2, "d": -0.5}
    )
    before = buffer.copy(order="F")
    sample, load = _native.learn_remembered(
        x, keys, vector, columns, 1, 1.0, buffer, slot, dim, 2.5, 10.0, 1e300
    )
    x_full = np.array([1.0, *map(float, x.values())])
    assert sample.tolist() == x_full.tolist() and (sample is vector) == (values == "same")
    assert load == pytest.approx(2.5 * x_full @ x_full, rel=1e-14)
    expected = before.copy(order="F")
    expected[:dim, :dim, slot] += np.triu(2.5 * np.outer(x_full, x_full))
    np.testing.assert_allclose(np.triu(buffer[:, :, slot]), np.triu(expected[:, :, slot]))
    assert (buffer[:, :, 1 - slot] == before[:, :, 1 - slot]).all()
    # the same bits as the separate kernel
    separate = before.copy(order="F")
    _native.rank_one(separate, slot, dim, sample, 2.5)
    assert (separate == buffer).all()


@needs_kernels
def test_learn_remembered_changes_nothing_beyond_the_bound_or_for_what_refill_leaves():
    keys, vector, columns, buffer, dim, _ = _pair_arguments(np.random.default_rng(13))
    before = buffer.copy(order="F")
    x = {"a": 0.5, "b": -1.0, "c": 2.0, "d": 0.25}
    load = 1.0 + 0.25 + 1.0 + 4.0 + 0.0625
    arguments = (keys, vector, columns, 1, 1.0, buffer, 0, dim, 1.0)
    assert _native.learn_remembered(x, *arguments, 1e300 - 1e299, 1e300) == (vector, load)
    _native.rank_one(before, 0, dim, vector, 1.0)
    assert (buffer == before).all()
    for bound in (1e300, float("inf"), float("nan")):  # bound + load > limit, or undecided
        assert _native.learn_remembered(x, *arguments, bound, 1e299) == (vector, None)
        assert (buffer == before).all()
    for other in ({"a": 0.5, "b": -1.0, "c": 2.0}, {**x, "d": float("inf")}, {**x, "d": "1"}):
        assert _native.learn_remembered(other, *arguments, 0.0, 1e300) is None
        assert (buffer == before).all()
    with pytest.raises(ValueError, match="inconsistent"):
        _native.learn_remembered(x, keys, vector, columns, 1, 1.0, buffer, 2, dim, 1.0, 0.0, 1e300)
    with pytest.raises(ValueError, match="inconsistent"):
        _native.learn_remembered(x, keys, vector, columns, 1, 1.0, buffer, 0, 4, 1.0, 0.0, 1e300)
    read_only = buffer.copy(order="F")
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _native.learn_remembered(x, keys, vector, columns, 1, 1.0, read_only, 0, dim, 1.0, 0, 1)
    assert (buffer == before).all()


@needs_kernels
@pytest.mark.parametrize("params", [*PARAMS, {"solver": "woodbury"}], ids=repr)
def test_the_one_call_update_gives_the_bits_of_the_separate_kernels(params, monkeypatch):
    rows, labels = _stream(120, seed=14)
    weights = [1.0 if i % 5 else 2.5 for i in range(len(rows))]
    calls = _count_calls(monkeypatch, "learn_remembered")
    fused, fused_model = _run(params, rows, labels, weights)
    without_kernel(monkeypatch, "learn_remembered")
    separate, separate_model = _run(params, rows, labels, weights)
    assert fused == separate  # the same floats, bit for bit
    assert pickle.dumps(fused_model) == pickle.dumps(separate_model)
    one_call = params.get("forgetting", 1.0) == 1.0 and params.get("solver") != "woodbury"
    assert (len(calls) > len(rows) // 2) == one_call  # taken where the update is plain


@needs_kernels
def test_a_sample_beyond_the_range_bound_is_refused_whole_after_the_one_call_path():
    model = NRRLS()
    x = {"a": 1e149, "b": 1.0}
    model.learn_one(x, True)
    model.learn_one({"a": 1.0, "b": 2.0}, False)
    model.learn_one({"a": 1.0, "b": 3.0}, False)  # remembered keys, a plain update
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'a'"):
        for _ in range(200):  # the class's sum of squares passes 1e300 within 100 samples
            model.learn_one(x, True)
            before = pickle.dumps(model)
    assert pickle.dumps(model) == before


# ------------------------------------------------------------------ reweighted multiclass


def _class_scatters(rng, capacity: int, dim: int, sizes, scales=None) -> np.ndarray:
    """Augmented scatters [n, s; s, A] of len(sizes) classes in a (capacity, capacity, C)
    buffer (upper triangle authoritative, as the statistics keep it: the lower is garbage)."""
    buffer = np.zeros((capacity, capacity, len(sizes)), order="F")
    for c, n in enumerate(sizes):
        scale = 1.0 if scales is None else scales[c]
        X = np.hstack([np.ones((n, 1)), scale * rng.normal(size=(n, dim - 1))])
        full = X.T @ X
        full[np.tril_indices(dim, -1)] = 1e300  # never read
        buffer[:dim, :dim, c] = full
    return buffer


def _each_numpy(buffer, dim, first, tau, eta, l2):
    """Every class's one-vs-rest TER system, from the symmetrised scatters, in plain numpy."""
    n_classes = buffer.shape[2]
    scatters = [np.triu(buffer[:dim, :dim, c]) for c in range(n_classes)]
    scatters = [upper + np.triu(upper, 1).T for upper in scatters]
    weights = np.zeros((n_classes, dim))
    for k in range(n_classes):
        others = [scatters[c] for c in range(n_classes) if c != k]
        own, rest = scatters[k], sum(others)
        w_k = 1.0 / own[0, 0] if own[0, 0] > 0 else 0.0  # 1/n^k
        w_rest = 1.0 / rest[0, 0] if rest[0, 0] > 0 else 0.0  # 1/n^rest
        M = (w_k * own + w_rest * rest)[first:, first:] + l2 * np.eye(dim - first)
        r = (tau + eta) * w_k * own[0, first:] + (tau - eta) * w_rest * rest[0, first:]
        weights[k, first:] = np.linalg.solve(M, r)
    return weights


@needs_kernels
@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("tau", [0.0, 0.4])
@pytest.mark.parametrize("capacity", [8, 13])
@pytest.mark.parametrize("sizes", [(30, 6, 11), (9, 40, 3, 12, 7), (25, 0, 14)], ids=repr)
def test_each_weights_is_every_class_own_system(first, tau, capacity, sizes):
    rng = np.random.default_rng(capacity + first + len(sizes))
    dim = 8
    buffer = _class_scatters(rng, capacity, dim, sizes)
    out = np.full((len(sizes), dim), np.nan, order="F")
    assert _native.each_weights(buffer, dim, first, tau, 1.5, 1e-3, out) == 0
    expected = _each_numpy(buffer, dim, first, tau, 1.5, 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12)
    assert (out[:, :first] == 0.0).all()


@needs_kernels
def test_each_weights_keeps_the_digits_of_a_small_rest_and_releases_the_gil_when_wide():
    # A class heavier than its rest (w_k < w_rest) is combined from the other scatters, not as
    # T - A^k (which would cancel the digits of the small rest); 140 columns run without the GIL.
    rng = np.random.default_rng(12)
    for dim, sizes, scales in (
        (9, (4000, 5, 3, 4), (10.0, 1e-3, 1e-3, 1e-3)),
        (140, (400, 300, 350), None),
    ):
        buffer = _class_scatters(rng, dim + 3, dim, sizes, scales)
        out = np.empty((len(sizes), dim), order="F")
        assert _native.each_weights(buffer, dim, 1, 0.2, 1.0, 1e-2, out) == 0
        expected = _each_numpy(buffer, dim, 1, 0.2, 1.0, 1e-2)
        np.testing.assert_allclose(out, expected, rtol=1e-8, atol=1e-10)


@needs_kernels
def test_each_weights_reports_a_singular_system_and_refuses_bad_arguments():
    rng = np.random.default_rng(13)
    singular = np.zeros((5, 5, 3), order="F")
    singular[0, 0, :] = (2.0, 1.0, 1.0)  # masses but M = 0 with b = 0: not positive definite
    out = np.zeros((3, 5), order="F")
    assert _native.each_weights(singular, 5, 1, 0.0, 1.0, 0.0, out) > 0
    scatters = _class_scatters(rng, 6, 6, (5, 7, 9))
    with pytest.raises(TypeError):
        _native.each_weights(None, 6, 0, 0.0, 1.0, 1e-3, out)
    with pytest.raises(TypeError):
        _native.each_weights(np.ascontiguousarray(scatters), 6, 0, 0.0, 1.0, 1e-3, out)
    for dim, first, shape in ((7, 0, (3, 7)), (6, 6, (3, 6)), (6, -1, (3, 6)), (6, 0, (2, 6))):
        with pytest.raises(ValueError, match="shapes"):
            _native.each_weights(scatters, dim, first, 0.0, 1.0, 1e-3, np.zeros(shape, order="F"))
    frozen = np.zeros((3, 6), order="F")
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _native.each_weights(scatters, 6, 0, 0.0, 1.0, 1e-3, frozen)


def _multiclass_stream(n: int, seed: int, n_classes: int = 4):
    """Imbalanced classes (one much larger than the others), emerging and missing features."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n):
        values, x = _emerging_row(rng, i, 3, 20, (6, 2))
        rows.append(x)
        score = values[:3] @ np.array([1.0, -0.5, 0.8])
        cuts = (-0.5, 0.5)[: n_classes - 2]
        label = 0 if rng.random() < 0.6 else 1 + int(np.digitize(score, cuts))
        labels.append(f"class {label}")
    return rows, labels


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize(
    "params", [{}, {"tau": 0.3, "eta": 2.0}, {"intercept": False}, {"forgetting": 0.98}], ids=repr
)
def test_reweighted_multiclass_is_the_batch_ter_after_every_prefix(params):
    rows, labels = _multiclass_stream(120, seed=len(repr(params)))
    weights = [1.0 if i % 4 else 3.0 for i in range(len(rows))]
    model = NRRLS(**params)
    for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
        model.predict_one(x)
        model.learn_one(x, y, w=w)
        if i >= 10:
            ref = TERReference(
                rows[: i + 1], labels[: i + 1], **params, sample_weights=weights[: i + 1]
            )
            assert_model_matches(model, ref, [x], 1e-9)
    assert len(model._stats.labels) == 4
    assert model._solver.counters["direct"] > 0


# ------------------------------------------------------------------ the stale factor's CG


def _cg_problem(rng, d: int, dtype, drift: float):
    """M, a stale factor whose P^-1 is the inverse of M perturbed by ``drift`` (so that CG needs
    a few iterations), r (a strided column) and a warm start."""
    from river_nrrls import _stale

    X = rng.normal(size=(3 * d, d))
    matrix = np.asfortranarray(X.T @ X / (3 * d) + 0.05 * np.eye(d))
    Y = X + drift * rng.normal(size=X.shape)
    older = Y.T @ Y / (3 * d) + 0.05 * np.eye(d)
    stale = _stale.StaleFactor(np.asfortranarray(np.linalg.inv(older), dtype=dtype), np.ones(2))
    stale.scale = 1.1
    rhs = np.asfortranarray(rng.normal(size=(d, 2)))[:, 1]  # a column of an F array
    start = np.linalg.solve(matrix, rhs) + 0.01 * rng.normal(size=d)
    root = np.sqrt(np.diag(matrix))
    return matrix, stale, rhs, start, root


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d, drift", [(9, 0.3), (40, 0.05), (150, 0.02), (30, 3.0)])
@pytest.mark.parametrize("scale", [1.0, 1e-30, 1e30])
def test_the_compiled_cg_is_the_python_cg_step_for_step(dtype, d, drift, scale, monkeypatch):
    """The same iterations, stopping test, refactor flag and answer (to rounding) as the Python
    iteration, in double and single precision, for right-hand sides of any scale (single
    precision's safe window of norms), with the GIL released from 128 columns."""
    from river_nrrls import _stale

    rng = np.random.default_rng(d)
    matrix, stale, rhs, start, root = _cg_problem(rng, d, dtype, drift)
    rhs, start = rhs * scale, start * scale
    compiled_stale = copy.deepcopy(stale)
    compiled = _stale._conjugate_gradients(matrix, rhs, start.copy(), compiled_stale, root)
    without_kernel(monkeypatch, "conjugate_gradients")
    python = _stale._conjugate_gradients(matrix, rhs, start.copy(), stale, root)
    assert compiled_stale.last_iterations == stale.last_iterations
    assert compiled_stale.refactor == stale.refactor
    if python is None:
        assert compiled is None
        return
    np.testing.assert_allclose(compiled, python, rtol=1e-10, atol=1e-12 * scale)
    exact = np.linalg.solve(matrix, rhs)
    assert np.linalg.norm(compiled - exact) <= 1e-8 * np.linalg.norm(exact)


@needs_kernels
def test_the_compiled_cg_gives_up_as_the_python_one(monkeypatch):
    from river_nrrls import _stale

    rng = np.random.default_rng(3)
    matrix, stale, rhs, start, root = _cg_problem(rng, 12, np.float64, 3.0)
    monkeypatch.setattr(_stale, "MAX_ITERATIONS", 0)  # read at every call
    assert _stale._conjugate_gradients(matrix, rhs, start.copy(), stale, root) is None
    monkeypatch.setattr(_stale, "MAX_ITERATIONS", 8)
    bad = rhs.copy()
    bad[3] = np.nan
    for dtype in (np.float64, np.float32):
        stale.inverse = stale.inverse.astype(dtype, order="F")
        assert _stale._conjugate_gradients(matrix, bad, start.copy(), stale, root) is None


@needs_kernels
def test_the_compiled_cg_refuses_bad_arguments():
    rng = np.random.default_rng(4)
    matrix, stale, rhs, start, root = _cg_problem(rng, 6, np.float64, 0.1)
    inverse = stale.inverse
    good = (matrix, rhs, start.copy(), inverse, 1.0, root, 1e-9, 1e-15, 0.3, 8, 1e-20, 1e20)
    assert _native.conjugate_gradients(*good)[0]
    for position, bad in (
        (0, np.ascontiguousarray(matrix + np.triu(np.ones((6, 6))))),  # row-major
        (3, inverse.astype(np.float16, order="F")),
        (3, np.ascontiguousarray(inverse + np.triu(np.ones((6, 6))))),
        (2, np.asfortranarray(np.zeros((2, 6)))[0]),  # strided weights
        (5, root.astype(np.float32)),
        (1, rhs.astype(np.int64)),
    ):
        arguments = list(good)
        arguments[position] = bad
        with pytest.raises(TypeError):
            _native.conjugate_gradients(*arguments)
    for position, bad in ((1, rhs[:5]), (2, start[:5].copy()), (5, root[:4].copy())):
        arguments = list(good)
        arguments[position] = bad
        with pytest.raises(ValueError, match="shapes"):
            _native.conjugate_gradients(*arguments)
    frozen = start.copy()
    frozen.flags.writeable = False
    arguments = list(good)
    arguments[2] = frozen
    with pytest.raises(ValueError, match="writable"):
        _native.conjugate_gradients(*arguments)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_compiled_cg_reads_a_leading_block_in_place(dtype):
    """M given as the leading block of a wider Fortran array (its columns further apart than
    its height, as `PolynomialOrderSelector` passes every order's M): the same answer as from
    a contiguous copy."""
    from river_nrrls import _stale

    rng = np.random.default_rng(8)
    matrix, stale, rhs, start, root = _cg_problem(rng, 30, dtype, 0.05)
    wider = np.asfortranarray(rng.normal(size=(37, 37)))
    wider[:30, :30] = matrix
    block = wider[:30, :30]
    assert not block.flags.f_contiguous and block.strides[0] == 8
    copied = copy.deepcopy(stale)
    from_block = _stale._conjugate_gradients(block, rhs, start.copy(), stale)  # D computed
    from_copy = _stale._conjugate_gradients(matrix, rhs, start.copy(), copied, root)
    assert stale.last_iterations == copied.last_iterations > 0
    np.testing.assert_allclose(from_block, from_copy, rtol=1e-13, atol=1e-15)
    # a row-major block (rows contiguous) is refused by the kernel, and left to the Python CG
    with pytest.raises(TypeError, match="column-major"):
        _native.conjugate_gradients(
            np.ascontiguousarray(wider)[:30, :30],
            rhs,
            start.copy(),
            stale.inverse,
            1.0,
            root,
            1e-9,
            1e-15,
            0.3,
            8,
            1e-20,
            1e20,
        )


# ------------------------------------------------------------------ the stale factor's update


@needs_kernels
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 1e-5)])
@pytest.mark.parametrize("d", [7, 140])
def test_the_compiled_stale_update_is_the_python_one(dtype, rtol, d, monkeypatch):
    """P^-1 after a sample's Sherman-Morrison update, compiled and in Python, for samples of
    every scale (single precision's safe window of norms), strided, zero and non-finite ones,
    and a P^-1 that lost its positive definiteness (refused, left as it was)."""
    from river_nrrls import _stale

    rng = np.random.default_rng(d)
    X = rng.normal(size=(3 * d, d))
    start = np.asfortranarray(np.linalg.inv(X.T @ X / (3 * d) + 0.1 * np.eye(d)), dtype=dtype)
    samples = np.asfortranarray(rng.normal(size=(d, 6)))  # columns contiguous, rows strided
    cases = [
        (samples[:, 0], 0.7),
        (samples[:, 1] * 1e-30, 2.0),
        (samples[:, 2] * 1e30, 1e-60),
        (np.ascontiguousarray(samples.T)[3], 0.3),
        (np.zeros(d), 1.0),  # nothing to add
        (np.full(d, np.inf), 1.0),  # refused
    ]
    lost = np.asfortranarray(-np.eye(d), dtype=dtype)  # c = 1/f + x^T P^-1 x <= 0
    assert _native.stale_append(lost, np.ones(d), 1.0, 1e-20, 1e20) == 0
    np.testing.assert_array_equal(lost, -np.eye(d))
    compiled = _stale.StaleFactor(start.copy(order="F"), np.ones(2))
    results = [compiled.append(vector, frozen) for vector, frozen in cases]
    without_kernel(monkeypatch, "stale_append")
    python = _stale.StaleFactor(start.copy(order="F"), np.ones(2))
    assert results == [python.append(vector, frozen) for vector, frozen in cases]
    assert results == [True, True, True, True, True, False]
    assert compiled.updates == python.updates == 5
    assert compiled.inverse.dtype == python.inverse.dtype == dtype
    scale = float(np.abs(python.inverse).max())
    np.testing.assert_allclose(compiled.inverse, python.inverse, rtol=rtol, atol=rtol * scale)


@needs_kernels
def test_the_compiled_stale_update_refuses_bad_arguments():
    inverse = np.asfortranarray(np.eye(4))
    vector = np.ones(4)
    for bad_inverse, bad_vector in (
        (np.asfortranarray(np.eye(5))[:4, :4], vector),  # not contiguous: updated in place
        (np.ascontiguousarray(np.arange(16.0).reshape(4, 4)), vector),  # row-major
        (inverse.astype(np.float16, order="F"), vector),
        (inverse, vector.astype(np.int64)),
    ):
        with pytest.raises(TypeError):
            _native.stale_append(bad_inverse, bad_vector, 1.0, 1e-20, 1e20)
    with pytest.raises(ValueError, match="shapes"):
        _native.stale_append(inverse, np.ones(3), 1.0, 1e-20, 1e20)
    frozen = inverse.copy(order="F")
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _native.stale_append(frozen, vector, 1.0, 1e-20, 1e20)


# ------------------------------------------------------------------ the one dispatch place


def test_every_operation_is_its_kernel_or_its_stand_in(monkeypatch):
    """`_native` binds each operation once: the kernel where built, else its stand-in (the
    Python twin, or `declined`); the switch of the tests binds the stand-ins."""
    assert set(KERNELS) == set(_native.STAND_INS)
    assert {name for name, twin in _native.STAND_INS.items() if twin is not _native.declined} == {
        "outputs",
        "rank_one",
        "refill",
        "rls_add_row",
        "rls_learn",
        "rls_predict",
    }
    for name in KERNELS:
        bound = getattr(_native, name)
        assert callable(bound)
        assert _native.compiled(name) == (bound is not _native.STAND_INS[name])
    _without_kernels(monkeypatch)
    for name, stand_in in _native.STAND_INS.items():
        assert getattr(_native, name) is stand_in and not _native.compiled(name)
    assert _native.declined(1, "two", None) is None


@needs_kernels
@pytest.mark.parametrize("capacity", [6, 9])  # the block in use is the buffer, or a part of it
def test_the_rank_one_twin_gives_the_kernels_update(capacity):
    from river_nrrls import _twins

    rng = np.random.default_rng(20)
    buffer = _scatters(rng, capacity, 6)
    vector = np.array([1.0, *rng.normal(size=5)])
    twin = buffer.copy(order="F")
    _native.rank_one(buffer, 1, 6, vector, 0.75)
    _twins.rank_one(twin, 1, 6, vector, 0.75)
    if capacity == 6:  # both one dsyr: the same bits
        np.testing.assert_array_equal(np.triu(twin[:, :, 1]), np.triu(buffer[:, :, 1]))
    else:  # the twin's numpy update of a block that BLAS cannot address: to rounding
        np.testing.assert_allclose(np.triu(twin[:, :, 1]), np.triu(buffer[:, :, 1]), rtol=1e-15)
    np.testing.assert_array_equal(twin[:, :, 0], buffer[:, :, 0])


@needs_kernels
def test_the_outputs_twin_gives_the_kernels_outputs():
    from river_nrrls import _twins

    rng = np.random.default_rng(21)
    weights = np.asfortranarray(rng.normal(size=(3, 7)))
    vector = rng.normal(size=7)
    assert _twins.outputs(weights, vector) == _native.outputs(weights, vector)  # one dgemv
    weights[1, 2] = 1e308
    vector[2] = 10.0
    assert _twins.outputs(weights, vector) is None and _native.outputs(weights, vector) is None


@needs_kernels
def test_the_refill_twin_gives_the_kernels_vectors():
    from river_nrrls import _twins

    vector, columns = _cached_vector()
    keys = ("a", "b", "c")
    for x in (
        {"a": 0.5, "b": -2.0, "c": 3.0},  # the same values: the remembered vector
        {"a": 0.5, "b": -2, "c": 3},
        {"a": 1.5, "b": -2.0, "c": 4},  # new values: a new read-only vector
        {"a": 0.5, "b": -2.0},  # other keys, or values to validate: None
        {"a": 0.5, "c": 3.0, "b": -2.0},
        {"a": 0.5, "b": float("nan"), "c": 3.0},
        {"a": 0.5, "b": "1", "c": 3.0},
        {"a": 0.5, "b": True, "c": 3.0},
    ):
        compiled = _native.refill(x, keys, vector, columns, 1, 1.0)
        twin = _twins.refill(x, keys, vector, columns, 1, 1.0)
        if compiled is None or compiled is vector:
            assert twin is compiled, x
        else:
            assert twin.tolist() == compiled.tolist() and not twin.flags.writeable
