"""AutoNRRLS's choice rule (river_nrrls/_choice.py, `ClassWindow` of river_nrrls/_race.py):
the window that holds enough of every class, the paired evidence against the simplest
candidate, the leader it allows; and labels of mixed types with and without the tree."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from river import compose, metrics, tree

from river_nrrls import NRRLS, AutoNRRLS, PolynomialExtender
from river_nrrls._choice import PairedEvidence, predicted_label
from river_nrrls._race import ClassWindow
from river_nrrls.tree_paths import TreePathFeatures, ordered_classes, tree_template


def _suffix_start(labels: list, size: int, per_class: int, limit: int) -> int:
    """The start of the shortest suffix of ``labels`` with at least ``size`` samples and, of
    every class c, at least min(per_class, all the samples of c), cut to the last ``limit``
    (brute force; before the window is ever cut by its limit)."""
    n = len(labels)
    for start in range(max(0, n - size), -1, -1):
        window = labels[start:]
        if all(window.count(c) >= min(per_class, labels.count(c)) for c in set(labels)):
            return max(start, n - limit)
    return max(0, n - limit)


@pytest.mark.parametrize(("size", "per_class"), [(10, 0), (10, 6), (5, 8), (1, 1)])
def test_class_window_is_the_shortest_suffix_holding_every_class(size, per_class):
    limit = 1000  # (never reached here: see the next test)
    rng = np.random.default_rng(size + per_class)
    labels = [bool(v) for v in rng.random(300) < 0.1]  # 10 % positives: the window stretches
    predictions = [bool(v) for v in rng.random(300) < 0.3]
    weights = rng.choice([0.5, 1.0, 2.0], size=300).tolist()
    window, score = ClassWindow(size, per_class, limit), metrics.GeometricMean()
    stretched = False
    for i in range(len(labels)):
        window.add(score, labels[i], predictions[i], {"w": weights[i]})
        start = _suffix_start(labels[: i + 1], size, per_class, limit)
        assert len(window) == i + 1 - start
        reference = metrics.GeometricMean()
        for j in range(start, i + 1):
            reference.update(labels[j], predictions[j], w=weights[j])
        assert score.get() == pytest.approx(reference.get(), abs=1e-12)
        stretched |= len(window) > size
    assert stretched == (per_class > 0)


def test_class_window_never_exceeds_its_limit():
    window, score = ClassWindow(5, 8, 30), metrics.Accuracy()
    lengths = []
    for i in range(200):
        window.add(score, i % 50 == 0, True, {})  # a positive every 50 samples: stretched
        lengths.append(len(window))
    assert max(lengths) == 30  # reached, never passed
    assert lengths[-1] == 8 == sum(window.counts.values())  # the positives gone: 8 negatives


def _z(labels, right, k, weights):
    """Candidate k's evidence over candidate 0, from the whole arrays (numpy)."""
    lead, variance = 0.0, 0.0
    for c in set(labels.tolist()):
        rows = labels == c
        n = weights[rows].sum()
        recall = max((weights * right[:, 0])[rows].sum() / n, 0.5 / n)
        wins = (weights * (right[:, k] & ~right[:, 0]))[rows].sum()
        losses = (weights * (~right[:, k] & right[:, 0]))[rows].sum()
        lead += (wins - losses) / (n * recall)
        variance += (wins + losses) / (n * recall) ** 2
    return lead / math.sqrt(variance) if variance > 0 else 0.0


@pytest.mark.parametrize("classes", [(False, True), ("a", "b", 3)])
def test_paired_evidence_is_mcnemars_over_the_window(classes):
    rng = np.random.default_rng(len(classes))
    n, k_candidates = 400, 4
    labels = np.array([classes[i] for i in rng.integers(0, len(classes), n)], dtype=object)
    guesses = np.array(
        [[classes[i] for i in row] for row in rng.integers(0, len(classes), (n, k_candidates))],
        dtype=object,
    )
    guesses[:, 2] = np.where(rng.random(n) < 0.8, labels, guesses[:, 2])  # a better one
    weights = rng.choice([1.0, 2.0], size=n)
    evidence = PairedEvidence(k_candidates, ClassWindow(60, 20, 1000))
    labels_seen: list = []
    for i in range(n):
        evidence.add(labels[i], list(guesses[i]), float(weights[i]))
        labels_seen.append(labels[i])
        start = _suffix_start(labels_seen, 60, 20, 1000)
        rows = slice(start, i + 1)
        right = guesses[rows] == labels[rows][:, None]
        for k in range(1, k_candidates):
            assert evidence.z(k) == pytest.approx(_z(labels[rows], right, k, weights[rows]))
    values = [0.5, 0.9, 0.8, 0.95]
    z = [evidence.z(k) for k in range(k_candidates)]
    assert z[2] > 3  # the better one is significantly better
    expected = max((k for k in range(k_candidates) if k == 0 or z[k] > 2.0), key=values.__getitem__)
    assert evidence.leader(values, 1.0, 2.0) == expected
    assert evidence.leader(values, 1.0, 1e9) == 0  # no evidence is enough: the reference


def test_predicted_label():
    assert predicted_label({"a": 0.2, "b": 0.8}) == "b"
    assert predicted_label({"a": 0.5, "b": 0.5}) == "a"
    assert predicted_label({}) is None and predicted_label(True) is True


def _stream(n, seed=0, positives=0.1):
    rng = np.random.default_rng(seed)
    rows = [{f"x{j}": float(v) for j, v in enumerate(rng.uniform(-1, 1, 3))} for _ in range(n)]
    labels = [bool(x["x0"] + 0.3 * x["x1"] ** 2 > 1 - 2 * positives) for x in rows]
    return rows, labels


def test_without_evidence_the_simplest_candidate_predicts():
    rows, labels = _stream(400)
    model = AutoNRRLS(orders=(1, 2), forgetting_grid=(1.0, 0.99), evidence=1e9, window=50)
    plain = NRRLS()
    for x, y in zip(rows, labels):
        assert model.predict_one(x) == plain.predict_one(x)
        model.learn_one(x, y)
        plain.learn_one(x, y)
        assert model.best_candidate == model.candidates[0]


def test_the_leader_is_the_best_score_of_the_candidates_with_evidence():
    rows, labels = _stream(600, seed=1, positives=0.3)
    params = {"orders": (1, 3), "forgetting_grid": (1.0,), "tree_paths": False, "window": 100}
    gated, free = AutoNRRLS(**params), AutoNRRLS(**params, evidence=None)
    poly = compose.Pipeline(PolynomialExtender(3), NRRLS())
    for x, y in zip(rows, labels):
        gated.learn_one(x, y)
        free.learn_one(x, y)
        poly.learn_one(x, y)
        values = {row.candidate: row.score for row in free.table}
        assert values[free.best_candidate] == max(values.values())
    # a quadratic concept: order 3 wins, significantly, once enough samples are scored
    assert gated.best_candidate.features == "poly3" == free.best_candidate.features
    x = rows[0]
    assert gated.predict_proba_one(x) == pytest.approx(poly.predict_proba_one(x))


@pytest.mark.parametrize("tree_paths", [True, False])
@pytest.mark.parametrize("batches", [False, True])
@pytest.mark.parametrize(
    ("first", "then"), [((False, True), ("1",)), (("a", "b"), (3,)), ((False, True), (2, "z"))]
)
def test_labels_of_another_type_are_learnt_and_predicted(tree_paths, batches, first, then):
    """A "1" after bools, an int after strings: learnt, and every later call answers, as
    every candidate's pipeline does."""
    rows, bools = _stream(240, seed=2, positives=0.4)
    labels = [first[int(y)] for y in bools]
    for i in range(160, 240, 3):  # the new labels arrive late
        labels[i] = then[i % len(then)]
    model = AutoNRRLS(orders=(1, 2), forgetting_grid=(1.0,), tree_paths=tree_paths, window=40)
    grace = tree_template(None)
    pipelines = {
        key: compose.Pipeline(
            TreePathFeatures(tree=grace)
            if key.features == "tree"
            else PolynomialExtender(1 if key.features == "raw" else 2),
            NRRLS(),
        )
        for key in model.candidates
    }
    if batches:
        for start in range(0, 240, 40):
            model.learn_many(pd.DataFrame(rows[start : start + 40]), pd.Series(labels[start:][:40]))
    else:
        for x, y in zip(rows, labels):
            model.learn_one(x, y)
    for x, y in zip(rows, labels):
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y)
    classes = set(first) | set(then)
    for x in rows[:20]:
        assert model.predict_one(x) in classes
        assert set(model.predict_proba_one(x)) == classes
        for key, pipeline in pipelines.items():
            assert model.predict_candidate(x, key) == pipeline.predict_one(x)
    frame = pd.DataFrame(rows[:5])
    assert len(model.predict_many(frame)) == 5
    assert set(model.predict_proba_many(frame).columns) == classes
    pickle.loads(pickle.dumps(model)).predict_one(rows[0])


def test_ordered_classes():
    assert ordered_classes({True, False}) == [False, True]
    assert ordered_classes({True, "1", False}) == [False, True, "1"]  # bool < str, by name
    assert ordered_classes({3, "a", "b"}) == [3, "a", "b"]


def test_the_tree_parameter():
    template = tree.HoeffdingTreeClassifier(grace_period=20)
    model = AutoNRRLS(orders=(1,), tree=template, forgetting_grid=(1.0,))
    paths = compose.Pipeline(TreePathFeatures(tree=template), NRRLS())
    rows, labels = _stream(300, positives=0.4)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
        paths.learn_one(x, y)
    key = model.candidates[-1]
    assert key.features == "tree"
    assert len(paths["TreePathFeatures"].path_names(rows[0])) > 1  # it has split
    for x in rows[:20]:
        assert model.predict_candidate(x, key, proba=True) == pytest.approx(
            paths.predict_proba_one(x)
        )
    assert tree_template(None).grace_period == 50
    with pytest.raises(TypeError, match="HoeffdingTreeClassifier"):
        AutoNRRLS(tree=tree.HoeffdingAdaptiveTreeClassifier())


@pytest.mark.parametrize("params", [{"window_per_class": -1}, {"evidence": -1.0}])
def test_bad_choice_parameters(params):
    with pytest.raises(ValueError):
        AutoNRRLS(**params)


def test_a_model_pickled_before_the_evidence_rule_runs_the_plain_race():
    rows, labels = _stream(200, positives=0.3)
    params = {"window": 30, "evidence": None, "window_per_class": 0}  # the old race
    model = AutoNRRLS(orders=(1, 2), forgetting_grid=(1.0,), **params)
    for x, y in zip(rows[:100], labels[:100]):
        model.learn_one(x, y)
    state = model.__getstate__()
    for name in ("evidence", "window_per_class", "tree", "_z", "_per_class", "_evidence"):
        state.pop(name)
    state["_tree_template"] = None
    state["_recent"] = {key: window.samples for key, window in state["_recent"].items()}
    old = AutoNRRLS.__new__(AutoNRRLS)
    old.__setstate__(state)
    plain = pickle.loads(pickle.dumps(model))
    for x, y in zip(rows[100:], labels[100:]):
        old.learn_one(x, y)
        plain.learn_one(x, y)
        assert old.best_candidate == plain.best_candidate
        assert old.predict_proba_one(x) == plain.predict_proba_one(x)
    assert old.clone().evidence is None
