"""A refused call changes nothing: the defects of the thin-estimator work, each a regression test.

Every test here failed before its fix: a sample too wide for memory grew the index but not the
statistics, a subnormal weight turned every weight into NaN, a ``learn_one`` re-entered from a
key's ``__eq__`` left a half-learnt model, and two threads on one model lost updates.

"""

from __future__ import annotations

import pickle
import sys
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from kernel_paths import BUILT, NOT_BUILT, without_kernels

from river_nrrls import NRRLS, RLSRegressor, _memory

PATHS = ["compiled", "python"]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Run a test on the compiled kernels (where built) and on the Python paths."""
    if request.param == "python":
        without_kernels(monkeypatch)
    elif not BUILT:
        pytest.skip(NOT_BUILT)
    return request.param


def _learnt(model: NRRLS) -> NRRLS:
    for x, y in [({"a": 1.0, "b": 0.5}, True), ({"a": -1.0, "b": 2.0}, False)]:
        model.learn_one(x, y)
    model.predict_one({"a": 0.3, "b": 0.1})  # a solved model, caches filled
    return model


def test_a_sample_too_wide_for_memory_is_refused_up_front(path):
    model = _learnt(NRRLS())
    before = pickle.dumps(model)
    wide = {f"f{i}": 1.0 for i in range(100_000)}
    with pytest.raises(ValueError, match=r"100,002 features .* MiB") as error:
        model.learn_one(wide, True)
    assert "FeatureHasher" in str(error.value)  # says what to do
    assert pickle.dumps(model) == before
    assert model.predict_one({"a": 0.3, "b": 0.1}) is not None  # still usable
    model.learn_one({"a": 0.2, "c": 1.0}, False)
    assert "c" in model.weights[True]


def test_max_size_caps_the_statistics_of_learn_one_learn_many_and_merge(path):
    model = _learnt(NRRLS(max_size=0.5))  # 0.5 MiB: about 100 columns with two classes
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"max_size=0.5 MiB"):
        model.learn_one({f"f{i}": 1.0 for i in range(200)}, True)
    assert pickle.dumps(model) == before
    frame = pd.DataFrame(np.ones((3, 200)), columns=[f"f{i}" for i in range(200)])
    with pytest.raises(ValueError, match=r"max_size"):
        model.learn_many(frame, pd.Series([True, False, True]))
    assert pickle.dumps(model) == before
    other = NRRLS(max_size=100)
    other.learn_one({f"f{i}": 1.0 for i in range(200)}, True)
    with pytest.raises(ValueError, match=r"\(merging\)"):
        model += other
    assert pickle.dumps(model) == before
    model.learn_one({f"f{i}": 1.0 for i in range(50)}, True)  # within the budget


def test_max_size_is_validated():
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_size"):
            NRRLS(max_size=bad)
    with pytest.raises(TypeError, match="max_size"):
        NRRLS(max_size="1 GiB")


def test_a_growing_model_warns_with_its_width_memory_and_remedy(monkeypatch):
    monkeypatch.setattr(_memory, "SIZE_WARNING", _memory.MIB)
    model = NRRLS()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(40):  # a one-hot stream: every sample brings new features
            model.learn_one({f"value={i}.{j}": 1.0 for j in range(8)}, i % 3 == 0)
    messages = [str(w.message) for w in caught if issubclass(w.category, _memory.ModelSizeWarning)]
    assert messages and "features" in messages[0] and "MiB" in messages[0]
    assert "FeatureHasher" in messages[0]
    assert len(messages) <= 3  # at 1, 4 and 16 MiB at most: not a warning a sample


@pytest.mark.parametrize("weight", [1e-310, 5e-324, 2.2e-308])
def test_a_subnormal_weight_is_refused(path, weight):
    model = _learnt(NRRLS())
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="smallest normal float"):
        model.learn_one({"a": -1.0}, False, w=weight)
    assert pickle.dumps(model) == before
    X = pd.DataFrame({"a": [1.0, 2.0]}, index=["r1", "r2"])
    y = pd.Series([True, False], index=["r1", "r2"])
    with pytest.raises(ValueError, match=r"smallest normal float.*'r2'|'r2'.*smallest"):
        model.learn_many(X, y, w=pd.Series([1.0, weight], index=["r1", "r2"]))
    assert pickle.dumps(model) == before
    assert np.isfinite(model._weight_matrix()).all()


def test_the_smallest_normal_weight_is_learnt_exactly():
    model = NRRLS()
    model.learn_one({"a": 1.0}, True, w=float(np.finfo(float).tiny))
    model.learn_one({"a": -1.0}, False)
    assert all(np.isfinite(list(model.weights[True].values())))


class _ReenteringKey:
    """A feature name whose comparison learns a sample with a new feature in the model."""

    model: NRRLS | None = None

    def __init__(self, name: str):
        self.name = name

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other) -> bool:
        if self.model is not None and isinstance(other, _ReenteringKey):
            model, _ReenteringKey.model = self.model, None  # once
            model.learn_one({"brand new": 1.0, "a": 0.5}, True)
        return isinstance(other, _ReenteringKey) and other.name == self.name


@pytest.mark.parametrize("call", ["learn_one", "predict_one"])
def test_a_call_re_entered_from_a_key_is_refused_whole_or_done_whole(path, call):
    """The inner call always completes; the outer one either raises and changes nothing, or
    (when its encoding started after the inner call) completes as if it came second."""
    model = NRRLS()
    reference = NRRLS()
    for target in (model, reference):
        target.learn_one({"a": 1.0, _ReenteringKey("k"): 2.0}, True)
        target.learn_one({"a": -1.0, _ReenteringKey("k"): 0.5}, False)
    reference.learn_one({"brand new": 1.0, "a": 0.5}, True)  # what the inner call learns
    outer = {"a": 3.0, _ReenteringKey("k"): 1.0}
    _ReenteringKey.model = model
    try:
        result = getattr(model, call)(outer, False) if call == "learn_one" else None
        if call == "predict_one":
            result = model.predict_one(outer)
    except RuntimeError as error:
        assert "changed while x was being encoded" in str(error)
    else:
        if call == "learn_one":
            reference.learn_one({"a": 3.0, _ReenteringKey("k"): 1.0}, False)
        else:
            assert result == reference.predict_one({"a": 3.0, _ReenteringKey("k"): 1.0})
    finally:
        _ReenteringKey.model = None
    assert model.n_samples == reference.n_samples
    np.testing.assert_allclose(model._weight_matrix(), reference._weight_matrix(), rtol=1e-12)
    probe = {"a": 3.0, "brand new": 1.0}
    assert model.predict_one(probe) == reference.predict_one(probe)


def test_two_threads_on_one_model_lose_no_update(path):
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up at once
    model = NRRLS()
    rng = np.random.default_rng(0)
    streams = [
        [({"a": float(v), "b": float(-v)}, bool(v > 0)) for v in rng.standard_normal(4000)]
        for _ in range(3)
    ]
    shared = {"a": 0.0, "b": 0.0}  # a dict both threads also reuse and mutate

    def work(stream):
        for x, y in stream:
            model.learn_one(x, y)
            shared["a"] = x["a"]
            model.predict_one(shared)

    threads = [threading.Thread(target=work, args=(stream,)) for stream in streams]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert sum(model.n_samples.values()) == 12000
    sequential = NRRLS()
    for stream in streams:
        for x, y in stream:
            sequential.learn_one(x, y)
    assert model.n_samples == pytest.approx(sequential.n_samples)


def test_rls_regressor_two_threads_lose_no_update_and_max_size_refuses():
    model = RLSRegressor()
    rng = np.random.default_rng(1)
    streams = [
        [({"a": float(v)}, float(2 * v)) for v in rng.standard_normal(3000)] for _ in range(3)
    ]
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [
            threading.Thread(target=lambda s=s: [model.learn_one(x, y) for x, y in s])
            for s in streams
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert model.n_samples == pytest.approx(9000.0)
    capped = RLSRegressor(max_size=0.1)
    capped.learn_one({"a": 1.0}, 1.0)
    before = pickle.dumps(capped)
    with pytest.raises(ValueError, match=r"max_size=0.1 MiB"):
        capped.learn_one({f"f{i}": 1.0 for i in range(200)}, 1.0)
    assert pickle.dumps(capped) == before


def test_a_regressors_memory_refusal_names_features_only():
    model = RLSRegressor(max_size=0.1)
    model.learn_one({"a": 1.0}, 1.0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"grow to 200 features, whose statistics") as error:
        model.learn_one({f"f{i}": 1.0 for i in range(199)}, 1.0)
    assert "class" not in str(error.value)
    assert pickle.dumps(model) == before


def test_a_classifiers_memory_refusal_counts_one_class_in_the_singular():
    model = NRRLS(max_size=0.5)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"grow to 200 features and 1 class, whose") as error:
        model.learn_one({f"f{i}": 1.0 for i in range(200)}, True)
    assert "classes" not in str(error.value)
    assert pickle.dumps(model) == before
    model.learn_one({"a": 1.0}, True)
    model.learn_one({"a": -1.0}, False)
    with pytest.raises(ValueError, match=r"features and 2 classes, whose"):
        model.learn_one({f"f{i}": 1.0 for i in range(200)}, True)


def _selector_refusals() -> list:
    """Calls every selector must refuse: too wide for max_size=0.5, a non-numeric value, a
    missing label, an unhashable label, a negative and a non-numeric weight."""
    return [
        ({f"f{i}": 1.0 for i in range(200)}, True, 1.0, ValueError),
        ({"a": "high", "b": 1.0}, True, 1.0, (TypeError, ValueError)),
        ({"a": 1.0, "b": 1.0}, None, 1.0, ValueError),
        ({"a": 1.0, "b": 1.0}, ["unhashable"], 1.0, TypeError),
        ({"a": 1.0, "b": 1.0}, True, -1.0, ValueError),
        ({"a": 1.0, "b": 1.0}, True, "heavy", TypeError),
    ]


_SELECTOR_CASES = [
    pytest.param(options, learnt, id=f"{name}-{'learnt' if learnt else 'fresh'}")
    for name, options in [
        ("plain", {}),
        ("forgetting_grid", {"forgetting_grid": (1.0, 0.99)}),
        ("window", {"window": 3}),
        ("block", {"block": 2}),
        ("pipelines", {"solver": "woodbury"}),  # no shared statistics
        ("pipelines-block", {"solver": "woodbury", "block": 2}),
    ]
    for learnt in (False, True)
]


@pytest.mark.parametrize(("options", "learnt"), _SELECTOR_CASES)
def test_a_refused_call_leaves_the_order_selector_unchanged(path, options, learnt):
    from river_nrrls import PolynomialOrderSelector

    options = dict(options)
    classifier = NRRLS(max_size=0.5, solver=options.pop("solver", "cholesky"))
    selector = PolynomialOrderSelector(orders=(1, 2), classifier=classifier, **options)
    if learnt:
        for x, y in [({"a": 1.0, "b": 0.5}, True), ({"a": -1.0, "b": 2.0}, False)] * 3:
            selector.learn_one(x, y)
    before = pickle.dumps(selector)
    for x, y, w, error in _selector_refusals():
        with pytest.raises(error):
            selector.learn_one(x, y, w=w)
        assert pickle.dumps(selector) == before, (x if len(x) < 5 else "wide", y, w)
    selector.learn_one({"a": 0.5, "b": 0.5}, True)  # still usable


@pytest.mark.parametrize("estimator", ["NRRLS", "RLSRegressor"])
@pytest.mark.parametrize(
    ("y_index", "where"),
    [
        ([0, 1, 2], "position 0: row 'r1' of X, 0 of y"),  # a default RangeIndex
        (["r1", "r3", "r2"], "position 1: row 'r2' of X, 'r3' of y"),  # X's rows reordered
        (["r1", "r2", "r9"], "position 2: row 'r3' of X, 'r9' of y"),  # another row
    ],
    ids=["range", "reordered", "other"],
)
def test_learn_many_refuses_a_y_whose_index_differs_from_xs(path, estimator, y_index, where):
    """Both estimators refuse what `river_nrrls.dask` refuses: rows paired by position while
    the indexes say otherwise. The message names the first row where they differ."""
    from river_nrrls import RLSRegressor

    model = _learnt(NRRLS()) if estimator == "NRRLS" else RLSRegressor()
    targets = [True, False, True] if estimator == "NRRLS" else [1.0, -1.0, 0.5]
    if estimator == "RLSRegressor":
        model.learn_one({"a": 1.0, "b": 0.5}, 1.0)
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, 0.0, 1.0]}, index=["r1", "r2", "r3"])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="indexes of X and y differ") as error:
        model.learn_many(X, pd.Series(targets, index=y_index))
    assert where in str(error.value) and "y.loc[X.index]" in str(error.value)
    assert pickle.dumps(model) == before
    model.learn_many(X, targets)  # a list has no index: paired by position
    model.learn_many(X, pd.Series(targets, index=X.index))
