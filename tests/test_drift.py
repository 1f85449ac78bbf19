"""NR-RLS on drifting streams: forgetting, river's drift detectors and ``reset()``.

* Forgetting is exact: after 10^6 samples the model equals the decayed-mass batch TER computed
  here in closed form with plain numpy, and its statistics stay bounded (no wind-up).
* Forgetting recovers after a drift on an imbalanced SEA stream, where lambda = 1 does not.
* ``river.drift.DriftRetrainingClassifier`` with ``NRRLS`` (DDM, ADWIN) and with ``OCSCA``
  retrains on post-drift data only, and passes river's conformance checks.
* ``reset()`` is an exact restart that keeps the feature index.
"""

from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from helpers import relative_difference
from river import base, checks, drift, evaluate, metrics
from river.datasets import synth

from river_nrrls import NRRLS, OCSCA
from river_nrrls.datasets.synth import Imbalanced

# --------------------------------------------------------------- references


def decayed_masses(labels: np.ndarray, forgetting: float) -> np.ndarray:
    """Mass of every sample: lambda ** (number of LATER arrivals of its own class).

    >>> decayed_masses(np.array([1, 0, 1, 1, 0]), 0.5).tolist()
    [0.25, 0.5, 0.5, 1.0, 1.0]
    """
    masses = np.empty(len(labels))
    for label in np.unique(labels):
        members = labels == label
        later = np.cumsum(members[::-1])[::-1] - 1  # arrivals of the class after i (for members)
        masses[members] = forgetting ** later[members].astype(float)
    return masses


def decayed_ter(X: np.ndarray, labels: np.ndarray, forgetting: float, b: float = 1e-4) -> dict:
    """Batch TER with decayed masses, one-vs-rest, intercept column regularised by b.

    Row i of class c weighs mass_i / n_c for class c's system and mass_i / n_rest for the others
    (n = summed masses); targets +1 / -1 (tau = 0, eta = 1). Returns ``{label: [w_0, w_1, ...]}``
    with w_0 the intercept.
    """
    design = np.hstack([np.ones((len(X), 1)), X])  # [1, x]
    masses = decayed_masses(labels, forgetting)
    solutions = {}
    for label in np.unique(labels):
        in_k = labels == label
        weight = np.where(in_k, masses / masses[in_k].sum(), masses / masses[~in_k].sum())
        targets = np.where(in_k, 1.0, -1.0)
        M = design.T @ (weight[:, None] * design) + b * np.eye(design.shape[1])  # X^T W X + b I
        r = design.T @ (weight * targets)  # X^T W t
        solutions[label] = np.linalg.solve(M, r)
    return solutions


def model_vector(model: NRRLS, label, names: list) -> np.ndarray:
    weights = model.weights[label]
    return np.array([model.intercepts[label]] + [weights.get(n, 0.0) for n in names])


def low_dim_stream(n: int, seed: int, silent_after: int | None = None):
    """(X, y): d = 4 features, ~10 % positives; feature 3 is 0 after ``silent_after``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 4))
    X[:, 3] *= 3.0
    score = X @ np.array([1.0, -0.5, 0.25, 0.5]) + 0.3 * rng.standard_normal(n)
    y = score > np.quantile(score, 0.9)
    if silent_after is not None:
        X[silent_after:, 3] = 0.0  # a direction that stops being excited
    return X, y


# ------------------------------------------------ 1. exactness over a long stream

NAMES = ["a", "b", "c", "d"]


def test_forgetting_equals_decayed_batch_ter_after_a_million_samples():
    n, lam, chunk = 1_000_000, 0.999, 20_000
    X, y = low_dim_stream(n, seed=11, silent_after=n // 10)
    model = NRRLS(forgetting=lam)
    for start in range(0, n, chunk):
        frame = pd.DataFrame(X[start : start + chunk], columns=NAMES)
        model.learn_many(frame, pd.Series(y[start : start + chunk]))

    reference = decayed_ter(X, y, lam)
    for label in (True, False):
        assert relative_difference(model_vector(model, label, NAMES), reference[label]) <= 1e-9

    # No wind-up: class c's mass is sum_j lambda^j = (1 - lambda^n_c) / (1 - lambda) -> 1/(1-lambda)
    for label in (True, False):
        n_c = int((y == label).sum())
        expected = (1.0 - lam**n_c) / (1.0 - lam)
        assert model.n_samples[label] == pytest.approx(expected, rel=1e-9)
        assert model.n_samples[label] <= (1.0 + 1e-12) / (1.0 - lam)  # 1 - lam is rounded
    # ... and every statistic is bounded by max|x|^2 / (1 - lambda), whatever the stream length
    # (the statistics are private: this is a white-box check of their size).
    bound = max(1.0, float(np.abs(X).max()) ** 2) / (1.0 - lam)
    assert np.abs(model.statistics.data).max() <= bound
    # The silent feature's statistics decayed instead of winding up: its weight is ~0 and finite.
    assert np.isfinite(model_vector(model, True, NAMES)).all()
    assert abs(model.weights[True]["d"]) < 1e-6
    # while lambda = 1 keeps its full weight (the direction was informative at the start)
    plain = NRRLS()
    plain.learn_many(pd.DataFrame(X, columns=NAMES), pd.Series(y))
    assert abs(plain.weights[True]["d"]) > 1e-3


# (solver, silent): the paper's recursion (woodbury) is exact to 1e-9 while every direction
# stays excited; when one goes silent its recursive inverse saturates at 1/b and the recursion
# loses digits (measured: a plateau of 4e-9 to 3e-8 over 10^5 samples, lambda 0.99 and 0.9):
# bounded, no wind-up, but not 1e-9. The statistics solver stays at ~1e-15 in both cases.
SOLVER_CASES = {
    ("cholesky", True): 1e-9,
    ("cholesky", False): 1e-9,
    ("woodbury", False): 1e-9,
    ("woodbury", True): 1e-6,
}


@pytest.mark.parametrize(("solver", "silent"), list(SOLVER_CASES))
@pytest.mark.parametrize("lam", [0.99, 0.9])
def test_learn_one_with_forgetting_equals_decayed_batch_ter(solver, silent, lam):
    n = 4000
    X, y = low_dim_stream(n, seed=3, silent_after=n // 4 if silent else None)
    tolerance = SOLVER_CASES[solver, silent]
    model = NRRLS(forgetting=lam, solver=solver)
    rows = [dict(zip(NAMES, row)) for row in X.tolist()]
    for i, (x, label) in enumerate(zip(rows, y.tolist())):
        model.learn_one(x, label)
        if i + 1 in (50, 1000, 2000, n):
            reference = decayed_ter(X[: i + 1], y[: i + 1], lam)
            for c in (True, False):
                assert relative_difference(model_vector(model, c, NAMES), reference[c]) <= tolerance
    # learn_many in uneven chunks reaches the same model
    chunked = NRRLS(forgetting=lam, solver=solver)
    for start, stop in itertools.pairwise([0, 7, 900, 901, 2500, n]):
        chunked.learn_many(pd.DataFrame(X[start:stop], columns=NAMES), pd.Series(y[start:stop]))
    reference = decayed_ter(X, y, lam)
    for c in (True, False):
        assert relative_difference(model_vector(chunked, c, NAMES), reference[c]) <= tolerance
        assert chunked.n_samples[c] == pytest.approx(model.n_samples[c], rel=1e-12)


def test_multiclass_forgetting_equals_decayed_batch_ter():
    rng = np.random.default_rng(5)
    n, lam = 3000, 0.98
    X = rng.normal(size=(n, 4))
    labels = rng.choice(np.array(["x", "y", "z"]), size=n, p=[0.6, 0.3, 0.1])
    X[labels == "y"] += 1.0
    model = NRRLS(forgetting=lam)
    for x, label in zip(X.tolist(), labels.tolist()):
        model.learn_one(dict(zip(NAMES, x)), label)
    reference = decayed_ter(X, labels, lam)
    for label in ("x", "y", "z"):
        assert relative_difference(model_vector(model, label, NAMES), reference[label]) <= 1e-9


# ------------------------------------- 2. recovery after a drift on an imbalanced stream


DRIFT_AT, WIDTH, LENGTH, WINDOW = 18_000, 200, 24_000, 3_000


def sea_drift(seed: int = 1) -> list:
    """SEA, 10 % positives; the threshold x0 + x1 > 9.5 (variant 3) drifts to > 7 (variant 2).

    ConceptDriftStream's sigmoid overflows for widths below position / 177, hence the width of
    200 samples (an essentially abrupt drift).
    """
    stream = synth.ConceptDriftStream(
        stream=Imbalanced(synth.SEA(variant=3, seed=seed), 0.1, seed + 100),
        drift_stream=Imbalanced(synth.SEA(variant=2, seed=seed + 200), 0.1, seed + 300),
        position=DRIFT_AT,
        width=WIDTH,
        seed=seed + 400,
    )
    return list(itertools.islice(stream, LENGTH))


@pytest.fixture(scope="module")
def drifting():
    return sea_drift()


def prequential_gmean(model, data: list, start: int, stop: int) -> float:
    """G-mean of the test-then-train predictions on samples ``start:stop``."""
    metric = metrics.GeometricMean()
    for i, (x, y) in enumerate(data[:stop]):
        if i >= start:
            metric.update(y, model.predict_one(x))
        model.learn_one(x, y)
    return metric.get()


def test_forgetting_recovers_after_a_drift_and_lambda_one_does_not(drifting):
    assert 0.08 < np.mean([y for _, y in drifting]) < 0.12
    last = (LENGTH - WINDOW, LENGTH)
    forgetting = prequential_gmean(NRRLS(forgetting=0.99), drifting, *last)
    plain = prequential_gmean(NRRLS(), drifting, *last)
    # The yardstick: a model that knows when the drift happened and learns only what follows.
    after = DRIFT_AT + 2 * WIDTH
    oracle = prequential_gmean(NRRLS(), drifting[after:], LENGTH - WINDOW - after, LENGTH - after)
    # Over 8 seeds the forgetting model was within 0.01 of the oracle and lambda = 1 was 0.05 to
    # 0.08 below it (G-mean, last 3000 samples); both were above 0.97 before the drift.
    assert forgetting >= oracle - 0.02
    assert plain <= oracle - 0.03
    assert forgetting >= plain + 0.03
    # Before the drift, both do well (forgetting costs little on a stationary stream).
    before = (DRIFT_AT - WINDOW - WIDTH, DRIFT_AT - WIDTH)
    assert prequential_gmean(NRRLS(forgetting=0.99), drifting, *before) > 0.95
    assert prequential_gmean(NRRLS(), drifting, *before) > 0.95


# --------------------------------------------- 3. DriftRetrainingClassifier + NRRLS


def replay(wrapper: drift.DriftRetrainingClassifier, data: list) -> tuple[list, list]:
    """Learn ``data`` one sample at a time, observing what the wrapper does.

    Returns the steps at which the model was replaced, and the indices of the samples that the
    final model learnt: after a replacement the new model is the background model (trained on
    the warning-zone samples since the previous replacement) and it learns the current sample.
    """
    replaced, current, background = [], [], []
    for i, (x, y) in enumerate(data):
        model = wrapper.model
        active = model.predict_one(x) is not None  # the detector is only updated then
        wrapper.learn_one(x, y)
        if wrapper.model is not model:
            replaced.append(i)
            current = (background if wrapper.train_in_background else []) + [i]
            background = []
        else:
            current.append(i)
            if active and wrapper.train_in_background and wrapper.drift_detector.warning_detected:
                background.append(i)
    return replaced, current


def equal_models(a, b, probes: list) -> bool:
    return all(a.decision_one(x) == b.decision_one(x) for x in probes)


WRAPPERS = {
    "DDM": lambda model: drift.DriftRetrainingClassifier(model, drift.binary.DDM()),
    "ADWIN": lambda model: drift.DriftRetrainingClassifier(
        model,
        drift.ADWIN(),
        train_in_background=False,  # ADWIN gives no warnings
    ),
}


@pytest.mark.parametrize("detector", list(WRAPPERS))
def test_drift_retraining_classifier_retrains_on_post_drift_data(drifting, detector):
    wrapper = WRAPPERS[detector](NRRLS())
    metric = metrics.GeometricMean()
    evaluate.progressive_val_score(drifting, wrapper, metric)
    assert metric.get() > 0.9

    # The same run, one step at a time, tells which samples the final model learnt.
    observed = WRAPPERS[detector](NRRLS())
    replaced, learnt = replay(observed, drifting)
    probes = [x for x, _ in drifting[-50:]]
    assert equal_models(wrapper.model, observed.model, probes)
    assert sum(wrapper.model.n_samples.values()) == len(learnt)

    # The detector fired after the drift, and the final model learnt post-drift samples only.
    assert replaced and replaced[-1] > DRIFT_AT - WIDTH
    assert min(learnt) > DRIFT_AT - WIDTH
    assert len(learnt) < LENGTH - DRIFT_AT
    fresh = NRRLS()
    for i in learnt:
        fresh.learn_one(*drifting[i])
    assert equal_models(wrapper.model, fresh, probes)
    assert learnt[-1] == LENGTH - 1


def test_drift_retraining_beats_the_static_model_after_the_drift(drifting):
    last = (LENGTH - WINDOW, LENGTH)
    plain = prequential_gmean(NRRLS(), drifting, *last)
    for make in WRAPPERS.values():
        assert prequential_gmean(make(NRRLS()), drifting, *last) >= plain + 0.03


def _conformance_cases():
    wrappers = {
        "DDM": drift.DriftRetrainingClassifier(NRRLS(), drift.binary.DDM()),
        "ADWIN-forgetting": WRAPPERS["ADWIN"](NRRLS(forgetting=0.99)),
    }
    for name, wrapper in wrappers.items():
        for i, check in enumerate(checks.yield_checks(wrapper)):
            if check.__name__ in wrapper._unit_test_skips():
                continue
            yield pytest.param(wrapper, check, id=f"{name}-{i}-{check.__name__}")


@pytest.mark.parametrize(("estimator", "check"), list(_conformance_cases()))
def test_river_check_on_drift_retraining_nrrls(estimator, check):
    check(estimator.clone())


# ------------------------------------------- 4. DriftRetrainingClassifier + OCSCA


@pytest.mark.slow
@pytest.mark.parametrize("learn_base", [False, True])
def test_ocsca_inside_drift_retraining_classifier(drifting, learn_base):
    # f0: NR-RLS trained offline on the pre-drift concept (SEA variant 3, 10 % positives).
    f0 = NRRLS()
    for x, y in itertools.islice(Imbalanced(synth.SEA(variant=3, seed=50), 0.1, 51), 2000):
        f0.learn_one(x, y)
    as_given = copy.deepcopy(f0)
    probes = [x for x, _ in drifting[-50:]]
    # A small alpha: OCSCA then corrects f0 slowly and DDM sees the drift. (With alpha >= 0.01
    # the adaptation tracks this drift by itself and DDM raises no alarm after it.)
    params = dict(alpha=1e-5, cost_pos=3.0, cost_neg=1.0, intercept=True, learn_base=learn_base)

    def make(base_model):
        return drift.DriftRetrainingClassifier(OCSCA(base_model, **params), drift.binary.DDM())

    wrapper = make(f0)
    metric = metrics.GeometricMean()
    evaluate.progressive_val_score(drifting, wrapper, metric)
    assert metric.get() > 0.75

    observed = make(copy.deepcopy(as_given))
    replaced, learnt = replay(observed, drifting)
    assert equal_models(wrapper.model, observed.model, probes)
    assert replaced and replaced[-1] > DRIFT_AT - WIDTH
    assert min(learnt) > DRIFT_AT - WIDTH and learnt[-1] == LENGTH - 1
    assert isinstance(wrapper.model, OCSCA)

    # The final model is f0 as given, adapted (and with learn_base, trained) on those samples.
    fresh = OCSCA(copy.deepcopy(as_given), **params)
    for i in learnt:
        fresh.learn_one(*drifting[i])
    assert equal_models(wrapper.model, fresh, probes)
    assert wrapper.model.weights == fresh.weights and wrapper.model.bias == fresh.bias
    final_f0 = wrapper.model.model
    assert final_f0 is not f0
    if learn_base:
        assert final_f0.n_samples == fresh.model.n_samples
        # OCSCA trains the model it is given in place: the first wrapped OCSCA trained the
        # user's f0 until DDM replaced it; its replacements start from copies of f0 as given.
        assert sum(f0.n_samples.values()) == 2000 + replaced[0]
    else:
        # f0 is never trained: neither the user's object nor the copies in the replacements.
        for model in (f0, final_f0):
            assert model.n_samples == as_given.n_samples
            assert equal_models(model, as_given, probes)


# ---------------------------------------------------------------- 5. reset()


def _rows(seed: int, n: int, names: list[str]) -> list[tuple[dict, object]]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(names)))
    labels = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.8, "pos", "neg")
    labels[rng.random(n) < 0.1] = "odd"
    return [(dict(zip(names, row)), label) for row, label in zip(X.tolist(), labels.tolist())]


@pytest.mark.parametrize("params", list(NRRLS._unit_test_params()), ids=repr)
def test_reset_is_an_exact_restart_that_keeps_the_feature_index(params):
    old = _rows(1, 300, ["a", "b", "c", "gone"])
    new = _rows(2, 300, ["a", "b", "c", "fresh"])
    model = NRRLS(**params)
    for x, y in old:
        model.learn_one(x, y)
    old_features = set(model.weights["pos"])

    assert model.reset() is model
    assert model.predict_one(old[0][0]) is None
    assert model.predict_proba_one(old[0][0]) == {}
    assert model.weights == {} and model.n_samples == {}

    fresh = NRRLS(**params)
    for x, y in new[:100]:
        model.learn_one(x, y)
        fresh.learn_one(x, y)
    frame = pd.DataFrame([x for x, _ in new[100:]])
    labels = pd.Series([y for _, y in new[100:]])
    model.learn_many(frame, labels)
    fresh.learn_many(frame, labels)

    assert model.n_samples == fresh.n_samples
    # The kept column of "gone" changes the order of the rounding errors, nothing else. The
    # paper's recursion (woodbury) is only accurate to ~1e-11 (it is ~1e-11 from the batch TER
    # itself on this stream), so it gets a looser tolerance.
    tolerance = 1e-9 if params.get("solver") == "woodbury" else 1e-12
    probes = [x for x, _ in old[:20] + new[:20]]
    for x in probes:
        got, want = model.decision_one(x), fresh.decision_one(x)
        assert list(got) == list(want)
        scale = max(1.0, max(abs(v) for v in want.values()))
        assert all(abs(got[c] - want[c]) <= tolerance * scale for c in want)
    # The feature index survives: old features are listed with weight 0.
    assert set(model.weights["pos"]) == old_features | {"fresh"}
    assert all(model.weights[c]["gone"] == 0.0 for c in model.weights)
    assert "gone" not in fresh.weights["pos"]

    restored = pickle.loads(pickle.dumps(model))
    for x in probes:
        assert restored.decision_one(x) == model.decision_one(x)
    for x, y in old[:10]:
        restored.learn_one(x, y)
        model.learn_one(x, y)
    assert restored.n_samples == model.n_samples
    assert set(restored.weights["pos"]) == set(model.weights["pos"])
    for x in probes:
        assert restored.decision_one(x) == model.decision_one(x)


def test_manual_reset_on_detection_equals_drift_retraining_classifier(drifting):
    """The in-place recovery loop (``reset()`` on an ADWIN detection) is river's retraining."""
    wrapper = WRAPPERS["ADWIN"](NRRLS())
    model, detector = NRRLS(), drift.ADWIN()
    resets = 0
    for x, y in drifting:
        prediction = model.predict_one(x)
        assert wrapper.predict_one(x) == prediction
        wrapper.learn_one(x, y)
        if prediction is not None:
            detector.update(int(prediction != y))
            if detector.drift_detected:
                model.reset()
                resets += 1
        model.learn_one(x, y)
    assert resets > 0
    assert wrapper.model.n_samples == model.n_samples
    probes = [x for x, _ in drifting[-20:]]
    for x in probes:
        want = wrapper.model.decision_one(x)
        assert model.decision_one(x) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_wrapped_estimators_are_river_classifiers():
    wrapper = WRAPPERS["DDM"](NRRLS())
    assert isinstance(wrapper, base.Classifier) and isinstance(wrapper.model, NRRLS)
    assert wrapper.bkg_model is not wrapper.model
