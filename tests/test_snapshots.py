"""Snapshots taken while other threads learn are states that existed.

A ``pickle.dumps``, ``copy.deepcopy`` or ``clone(include_attributes=True)`` of every estimator
that learns (`NRRLS`, `RLSRegressor`, `OCSCA` with the model it wraps, the baselines, and the
composites `PolynomialOrderSelector` and `AutoNRRLS` with their inner models) is taken under
the model's lock, so it is the model after some prefix of the stream that another
thread is teaching it: never a mixture of two steps. Each test lets one thread learn a stream
while others take snapshots, then replays the stream and checks that every snapshot equals the
model after some prefix, and that a model resumed from a snapshot goes on exactly as one that
was never interrupted.
"""

from __future__ import annotations

import copy
import pickle
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
from kernel_paths import kernel_path  # noqa: F401  (a fixture: both kernel paths)
from river import linear_model, optim

from river_nrrls import NRRLS, OCSCA, AutoNRRLS, PolynomialOrderSelector, RLSRegressor, baselines


def _stream(n_samples: int, n_features: int, seed: int, regression: bool) -> list:
    """Samples whose features come and go (one emerges every 20 samples)."""
    rng = np.random.default_rng(seed)
    samples = []
    for t in range(n_samples):
        width = min(n_features, 2 + t // 20)
        x = {f"x{j}": float(v) for j, v in enumerate(rng.normal(size=width)) if v > -1.5}
        if regression:
            y: object = float(sum(x.values()) + rng.normal(scale=0.1))
        else:
            y = bool(sum(x.values()) + rng.normal() > 0.3)
        samples.append((x, y))
    return samples


#: Fixed inputs whose outputs a classifier's fingerprint holds (features seen and unseen).
_PROBES = [{"x0": 1.0, "x1": -0.5}, {"x2": 0.7, "x5": 1.3, "unseen": 2.0}, {"x3": -1.0}]


def _fingerprint(model) -> bytes:
    """What a state determines, as bytes: its samples' masses and its weights (NRRLS,
    RLSRegressor), every candidate's score and model (the composites), or its outputs at fixed
    probes, its public weights and, where it has them, its class masses and ACOG's cost ratio
    (any classifier; an OCSCA's outputs hold its base model's)."""
    if isinstance(model, PolynomialOrderSelector):
        parts = [model.best_order, model.best_forgetting, _scores(model.scores)]
        parts += [_fingerprint(pipeline["NRRLS"]) for pipeline in model.pipelines.values()]
    elif isinstance(model, AutoNRRLS):
        parts = [list(model.table), sorted(model.last_predictions.items(), key=repr)]
        parts += [
            sorted(model.predict_candidate(probe, row.candidate, proba=True).items())
            for row in model.table
            for probe in _PROBES
        ]
    elif isinstance(model, RLSRegressor):
        parts = [model.n_samples, model.bias, *sorted(model.weights.items())]
    elif isinstance(model, NRRLS):
        parts = [sorted(model.n_samples.items(), key=repr)]
        parts += [sorted(w.items()) for _, w in sorted(model.weights.items(), key=repr)]
    else:
        parts = [sorted(model.predict_proba_one(probe).items()) for probe in _PROBES]
        weights = model.weights
        parts.append(
            [(label, sorted(w.items())) for label, w in sorted(weights.items(), key=repr)]
            if weights and isinstance(next(iter(weights.values())), dict)
            else sorted(weights.items())
        )
        parts += [getattr(model, "rho", None), getattr(model, "n_samples", None)]
    return repr(parts).encode()


def _scores(scores: dict) -> list:
    return [(key, score.get()) for key, score in scores.items()]


def _logistic_regression():
    return linear_model.LogisticRegression(optimizer=optim.SGD(0.1))


MODELS = {
    "NRRLS": lambda: NRRLS(),
    "NRRLS-forgetting": lambda: NRRLS(forgetting=0.98),
    "RLSRegressor": lambda: RLSRegressor(),
    "RLSRegressor-forgetting": lambda: RLSRegressor(forgetting=0.98),
    "RLSRegressor-wide": lambda: RLSRegressor(l2=1e-2),
    "RLSRegressor-standardized": lambda: RLSRegressor(standardized_penalty=True),
    # the wrapped model learns too (learn_base): a snapshot holds f0 and w of the same step
    "OCSCA-LogisticRegression": lambda: OCSCA(
        _logistic_regression(), learn_base=True, intercept=True
    ),
    "OCSCA-NRRLS": lambda: OCSCA(NRRLS(), alpha=0.5, learn_base=True),
    "CW": lambda: baselines.CWClassifier(),
    "CW-diagonal": lambda: baselines.CWClassifier(diagonal=True, intercept=True),
    "AROW": lambda: baselines.AROWClassifier(),
    "ACOG": lambda: baselines.ACOGClassifier(),
    "ARRLS": lambda: baselines.ARRLS(),
    "IRRLS": lambda: baselines.IRRLS(),
    "CSOGD": lambda: baselines.CSOGDClassifier(intercept=True),
    # composites: their inner models (NRRLS, TreePathFeatures) learn inside the composite's step
    "PolynomialOrderSelector": lambda: PolynomialOrderSelector(
        orders=(1, 2), forgetting_grid=(1.0, 0.98), window=50
    ),
    "PolynomialOrderSelector-pipelines": lambda: PolynomialOrderSelector(
        orders=(1, 2), classifier=NRRLS(solver="woodbury"), block=3
    ),
    "AutoNRRLS": lambda: AutoNRRLS(
        orders=(1, 2), forgetting_grid=(1.0, 0.98), window=50, lazy_after=10, lazy_block=5
    ),
}

#: Shorter streams where a step is costly (the file also runs under the sanitizer): IR-RLS
#: re-runs its recursion over every stored sample; a composite races several models (an
#: AutoNRRLS's turn lazy after 10 samples out of contention, well within its stream).
_N_SAMPLES = {
    "IRRLS": 80,
    "PolynomialOrderSelector": 150,
    "PolynomialOrderSelector-pipelines": 150,
    "AutoNRRLS": 100,
}


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "clone"])
def test_every_snapshot_taken_while_another_thread_learns_is_a_prefix(name, how):
    wide = name.endswith("wide")
    regression = name.startswith("RLS")
    n_samples = _N_SAMPLES.get(name, 240)
    samples = _stream(n_samples, 60 if wide else 8, seed=len(name), regression=regression)
    model = MODELS[name]()
    snapshots: list = []
    done = threading.Event()
    start = threading.Barrier(3)
    # threads switch every microsecond rather than every 5 ms: snapshots meet every step
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def learn() -> None:
        start.wait()
        for x, y in samples:
            model.learn_one(x, y)
            time.sleep(0)  # let the snapshots in between two steps too
        done.set()

    def snapshot() -> None:
        start.wait()
        while not done.is_set():
            if how == "pickle":
                snapshots.append(pickle.loads(pickle.dumps(model)))
            elif how == "deepcopy":
                snapshots.append(copy.deepcopy(model))
            else:
                snapshots.append(model.clone(include_attributes=True))
            time.sleep(0)  # (a lock is not fair: let the learner in, or it may wait long)

    threads = [threading.Thread(target=learn)] + [
        threading.Thread(target=snapshot) for _ in range(2)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(snapshots) > 10

    replay = MODELS[name]()
    prefixes: dict[bytes, list[int]] = {_fingerprint(replay): [0]}
    for t, (x, y) in enumerate(samples, start=1):
        replay.learn_one(x, y)
        prefixes.setdefault(_fingerprint(replay), []).append(t)
    torn = [s for s in snapshots if _fingerprint(s) not in prefixes]
    assert not torn, f"{len(torn)} of {len(snapshots)} snapshots match no prefix"

    # a model resumed from the last snapshot goes on as the uninterrupted one, from one of the
    # prefixes it matches (a passive step leaves the outputs as they were: several may match)
    ends = set()
    for start in prefixes[_fingerprint(snapshots[-1])]:
        resumed = copy.deepcopy(snapshots[-1])
        for x, y in samples[start:]:
            resumed.learn_one(x, y)
        ends.add(_fingerprint(resumed))
    assert _fingerprint(replay) in ends


def test_a_snapshot_of_a_model_whose_lock_is_held_waits_for_the_call():
    model = NRRLS()
    model.learn_one({"a": 1.0}, True)
    taken = []
    with model._lock:  # (this test's own view of the call in progress)
        thread = threading.Thread(target=lambda: taken.append(pickle.dumps(model)))
        thread.start()
        thread.join(timeout=0.2)
        assert thread.is_alive() and not taken  # the snapshot waits for the lock
        model.learn_one({"a": -1.0}, False)
    thread.join()
    assert pickle.loads(taken[0]).n_samples == {True: 1.0, False: 1.0}


def _learnt(name: str):
    model = MODELS[name]()
    for x, y in _stream(30, 5, seed=1, regression=name.startswith("RLS")):
        model.learn_one(x, y)
    return model


@pytest.mark.parametrize("name", list(MODELS))
def test_a_call_from_another_thread_waits_for_the_one_in_progress(name):
    model = _learnt(name)
    x, y = {"fresh": 1.0}, (1.0 if name.startswith("RLS") else True)  # a step that changes it
    before = pickle.dumps(model)
    with model._lock:  # (this test's own view of a call in progress)
        thread = threading.Thread(target=model.learn_one, args=(x, y))
        thread.start()
        thread.join(timeout=0.2)
        assert thread.is_alive()  # the learning waits for the lock
        assert pickle.dumps(model) == before
    thread.join()
    assert pickle.dumps(model) != before


@pytest.mark.parametrize("name", list(MODELS))
def test_a_model_pickled_before_it_had_a_lock_loads_with_one(name):
    model = _learnt(name)
    state = {key: value for key, value in model.__getstate__().items() if key != "_lock"}
    old = type(model).__new__(type(model))  # what pickle does with a lockless old state
    old.__setstate__(state)
    x, y = _stream(31, 5, seed=1, regression=name.startswith("RLS"))[-1]
    old.learn_one(x, y)
    model.learn_one(x, y)
    assert _fingerprint(old) == _fingerprint(model)
    assert _fingerprint(pickle.loads(pickle.dumps(old))) == _fingerprint(model)


def test_a_parameter_set_on_a_fresh_model_keeps_its_lock_and_waits_for_it():
    model = baselines.CSOGDClassifier()
    lock = model._lock
    with lock:
        thread = threading.Thread(target=setattr, args=(model, "learning_rate", 0.5))
        thread.start()
        thread.join(timeout=0.2)
        assert thread.is_alive() and model.learning_rate == 0.1  # the change waits for the lock
    thread.join()
    assert model.learning_rate == 0.5 and model._lock is lock  # one lock for every thread


def test_a_clone_with_its_attributes_is_the_whole_state_of_an_ocsca_and_its_model():
    model = MODELS["OCSCA-LogisticRegression"]()
    for x, y in _stream(40, 5, seed=2, regression=False):
        model.learn_one(x, y)
    clone = model.clone(include_attributes=True)
    assert _fingerprint(clone) == _fingerprint(model)
    assert _fingerprint(model.clone()) != _fingerprint(model)  # the default: nothing learnt


_COMPOSITES = ["PolynomialOrderSelector", "PolynomialOrderSelector-pipelines", "AutoNRRLS"]


@pytest.mark.parametrize("name", _COMPOSITES)
def test_a_composite_pickled_when_its_scores_were_an_attribute_loads(name):
    model = _learnt(name)
    state = model.__getstate__()
    state["scores"] = state.pop("_scores")  # the layout before `scores` was a locked copy
    old = type(model).__new__(type(model))
    old.__setstate__(state)
    assert _fingerprint(old) == _fingerprint(model)
    x, y = _stream(31, 5, seed=1, regression=False)[-1]
    old.learn_one(x, y)
    model.learn_one(x, y)
    assert _fingerprint(old) == _fingerprint(model)


@pytest.mark.parametrize("name", _COMPOSITES)
def test_a_refused_mini_batch_of_a_composite_keeps_its_state_and_its_lock(name):
    model = _learnt(name)
    lock, before = model._lock, pickle.dumps(model)
    X = pd.DataFrame({"x0": [0.5, 1e100], "x1": [0.25, 1e100]})  # row 2: squares too large
    with pytest.raises(ValueError):
        model.learn_many(X, pd.Series([True, False]))
    assert pickle.dumps(model) == before
    assert model._lock is lock  # (other threads may be waiting on it)
    model.learn_one({"x0": 0.5}, True)  # and it still learns
