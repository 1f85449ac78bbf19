"""AutoNRRLS against the independent pipelines of its candidates, sample by sample.

Every candidate that solves at a sample must score it with what its independent pipeline
(``PolynomialExtender(r) | NRRLS(forgetting=l)``, ``TreePathFeatures() | NRRLS(forgetting=l)``)
predicts before learning it; a lazy one with what that pipeline predicted at the start of its
block; and every candidate, lazy or not, predicts from its present statistics what its pipeline
does. Then mini-batches, refused calls, pickles and clones, multiclass and determinism.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
from river import compose, metrics

from river_nrrls import NRRLS, AutoNRRLS, PolynomialExtender
from river_nrrls.tree_paths import TreePathFeatures, tree_template

ATOL = 1e-7  # probabilities: the same systems, their columns in another order


def _stream(n_samples=300, classes=(False, True), seed=0, emerging=True, drift=True):
    """[-1, 1] features, a rule-based concept with a drift halfway; with ``emerging`` a
    feature appears after a third of the stream; some values missing (None)."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n_samples):
        x = {f"x{j}": float(rng.uniform(-1, 1)) for j in range(3)}
        if emerging and i >= n_samples // 3:
            x["late"] = float(rng.uniform(-1, 1))
        if rng.random() < 0.05:
            x["x2"] = None
        flip = drift and i >= n_samples // 2
        score = (x["x0"] > 0.2) + (x["x1"] * x["x0"] > 0.0) + 0.5 * rng.normal()
        position = int(np.clip(score, 0, len(classes) - 1))
        if flip:
            position = len(classes) - 1 - position
        rows.append(x)
        labels.append(classes[position])
    return rows, labels


def _pipeline(candidate):
    if candidate.features == "tree":
        extender = TreePathFeatures(tree=tree_template(None))
    else:
        extender = PolynomialExtender(
            1 if candidate.features == "raw" else int(candidate.features[4:])
        )
    return compose.Pipeline(extender, NRRLS(forgetting=candidate.forgetting))


def _small(**params):
    defaults = {"orders": (1, 2), "forgetting_grid": (1.0, 0.95), "window": 40}
    return AutoNRRLS(**{**defaults, **params})


def _same_proba(got: dict, expected: dict):
    assert got.keys() == expected.keys()
    for label, value in expected.items():
        assert got[label] == pytest.approx(value, abs=ATOL)


def _check_every_sample(model, rows, labels, weights=None):
    """Run ``model`` and every candidate's pipeline side by side; compare after every
    sample. Returns the number of (sample, candidate) pairs scored lazily."""
    pipelines = {key: _pipeline(key) for key in model.candidates}
    if not pipelines:  # orders=None: the candidates come with the first sample
        x, y = rows[0], labels[0]
        model.learn_one(x, y)
        pipelines = {key: _pipeline(key) for key in model.candidates}
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y)
        rows, labels = rows[1:], labels[1:]
        weights = None if weights is None else weights[1:]
    frozen: dict = {}  # candidate -> (pipeline copy of its block start, samples left)
    lazy_block = model.lazy_block
    n_lazy = 0
    seen: set = set()
    grew = True  # (the features of the last learnt sample gave the statistics new columns)
    for i, (x, y) in enumerate(zip(rows, labels)):
        w = 1.0 if weights is None else weights[i]
        solving = {row.candidate: row.solving for row in model.table}
        expected = {key: pipeline.predict_one(x) for key, pipeline in pipelines.items()}
        for key, pipeline in pipelines.items():
            _same_proba(model.predict_candidate(x, key, proba=True), pipeline.predict_proba_one(x))
            assert model.predict_candidate(x, key) == expected[key]
            if solving[key]:
                frozen.pop(key, None)
            else:  # a lazy candidate: its pipeline as it was at the start of its block
                block = frozen.get(key)
                if block is None or block[1] == 0:  # the weights of the block's start
                    block = (copy.deepcopy(pipeline["NRRLS"]), lazy_block)
                elif grew and key.features != "tree":  # new columns: solved again, the
                    block = (copy.deepcopy(pipeline["NRRLS"]), block[1])  # same block
                frozen[key] = (block[0], block[1] - 1)
                # (on the present features: a tree-path candidate reads the present tree's)
                features = compose.Pipeline(*list(pipeline.steps.values())[:-1]).transform_one(x)
                expected[key] = block[0].predict_one(features)
                n_lazy += 1
        best = model.best_candidate
        assert model.predict_one(x) == pipelines[best].predict_one(x)
        _same_proba(model.predict_proba_one(x), pipelines[best].predict_proba_one(x))
        model.learn_one(x, y, w)
        for pipeline in pipelines.values():
            if w > 0:  # (AutoNRRLS: w = 0 changes nothing, the tree included)
                pipeline.learn_one(x, y, w=w)
        if w > 0:
            assert model.last_predictions == expected, i
            keys = {k for k, v in x.items() if v is not None}
            grew, seen = bool(keys - seen), seen | keys
    return n_lazy


@pytest.mark.parametrize("weights", [False, True])
def test_every_candidate_is_its_pipeline_after_every_sample(weights):
    rows, labels = _stream(n_samples=200)
    rng = np.random.default_rng(1)
    sample_weights = rng.choice([0.0, 0.5, 1.0, 2.0], size=len(rows)).tolist() if weights else None
    model = _small(lazy_after=None)
    assert _check_every_sample(model, rows, labels, sample_weights) == 0


def test_empty_samples_are_learnt_as_the_pipelines_learn_them():
    """No order-1 column, only the sum terms of the higher orders (it raised TypeError)."""
    rows, labels = _stream(n_samples=80)
    for i in (0, 9, 30, 55):
        rows[i] = {}
    assert _check_every_sample(_small(lazy_after=None), rows, labels) == 0


def test_lazy_candidates_are_scored_by_blocks_and_resolved_exactly():
    rows, labels = _stream(n_samples=400, emerging=False)
    model = _small(lazy_after=10, lazy_block=7, lazy_margin=0.0)
    states = []
    pipelines_lazy = 0
    pipelines_lazy = _check_every_sample(model, rows, labels)
    states = [row.solving for row in model.table]
    assert pipelines_lazy > 0  # some candidates went lazy (and were checked by blocks)
    assert len(states) == len(model.candidates)


def test_reconsidered_models_solve_again():
    rows, labels = _stream(n_samples=400, emerging=False)
    model = _small(lazy_after=5, lazy_block=4, lazy_margin=0.0)
    history = []
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
        history.append(tuple(row.solving for row in model.table))
    columns = list(zip(*history))
    # some candidate went lazy, then solving again
    assert any(
        any(a and not b for a, b in zip(c, c[1:])) and any(not a and b for a, b in zip(c, c[1:]))
        for c in columns
    )
    leader = [row for row in model.table if row.leader]
    assert len(leader) == 1 and leader[0].solving


@pytest.mark.slow
def test_default_model_is_its_candidates_multiclass():
    rows, labels = _stream(n_samples=250, classes=("a", "b", "c"))
    model = AutoNRRLS(window=60, lazy_after=30, lazy_block=10)
    _check_every_sample(model, rows, labels)


def test_multiclass_and_hashable_labels():
    classes = ((1, "a"), (2, "b"), (3, "c"))
    rows, labels = _stream(n_samples=150, classes=classes)
    model = _small(lazy_after=None)
    _check_every_sample(model, rows, labels)
    assert set(model.predict_proba_one(rows[0])) == set(classes)


def test_labels_of_mixed_types_without_the_tree():
    # (river's Hoeffding trees sort their classes: labels of mixed types need no tree)
    rows, labels = _stream(n_samples=100, classes=((1, "a"), "b", 3.5))
    model = _small(tree_paths=False, lazy_after=10)
    _check_every_sample(model, rows, labels)
    assert set(model.predict_proba_one(rows[0])) == {(1, "a"), "b", 3.5}


def test_bools_for_binary():
    rows, labels = _stream(n_samples=80)
    model = _small()
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    assert isinstance(model.predict_one(rows[0]), bool)
    assert model.predict_many(pd.DataFrame(rows[:5])).dtype == bool


def _frame(rows):
    return pd.DataFrame(rows).astype(float)


def _records(frame):
    """The rows as learn_one takes them: NaN is missing (None)."""
    return [
        {k: (None if np.isnan(v) else v) for k, v in x.items()} for x in frame.to_dict("records")
    ]


def test_learn_many_is_the_loop():
    rows, labels = _stream(n_samples=160)
    weights = np.random.default_rng(2).choice([0.0, 1.0, 3.0], size=len(rows))
    one, many = _small(lazy_after=10, lazy_block=3), _small(lazy_after=10, lazy_block=3)
    frame = _frame(rows)
    for x, y, w in zip(_records(frame), labels, weights.tolist()):
        one.learn_one(x, y, w)
    for start in range(0, len(rows), 37):
        part = frame.iloc[start : start + 37]
        many.learn_many(
            part,
            pd.Series(labels[start : start + 37], index=part.index),
            pd.Series(weights[start : start + 37], index=part.index),
        )
    assert one.table == many.table
    assert one.best_candidate == many.best_candidate
    pd.testing.assert_frame_equal(one.predict_proba_many(frame), many.predict_proba_many(frame))
    expected = [one.predict_one(x) for x in _records(frame)]
    assert many.predict_many(frame).tolist() == expected


def _refused(model, call, error=ValueError):
    before = pickle.dumps(model)
    with pytest.raises(error):
        call()
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("lazy_after", [None, 5])
def test_refused_calls_change_nothing(lazy_after):
    rows, labels = _stream(n_samples=60)
    model = _small(lazy_after=lazy_after, lazy_block=3)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    # values whose squares' sums would leave the range (1e300): refused by the statistics
    _refused(model, lambda: model.learn_one({"x0": 1e100, "x1": 1.0}, True))
    _refused(model, lambda: model.learn_one({"x0": 1e140}, True, w=2.0))
    _refused(model, lambda: model.learn_one({"x0": "text"}, True), TypeError)
    _refused(model, lambda: model.learn_one({"x0": float("inf")}, True))
    _refused(model, lambda: model.learn_one({"x0": 1.0}, None))
    _refused(model, lambda: model.learn_one({"x0": 1.0}, True, w=-1.0))
    _refused(model, lambda: model.learn_one([1.0], True), TypeError)
    frame = _frame(rows[:10])
    bad = frame.copy()
    bad.iloc[6, 0] = np.inf
    _refused(model, lambda: model.learn_many(bad, pd.Series(labels[:10], index=frame.index)))
    shifted = pd.Series(labels[:10], index=frame.index + 1)
    _refused(model, lambda: model.learn_many(frame, shifted))


def test_max_size_counts_every_candidate():
    rows, labels = _stream(n_samples=20, emerging=False)
    model = _small(max_size=0.05)  # 51 KiB: six models of a dozen columns fit
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    one_model = NRRLS(max_size=0.05)
    wide = {f"w{j}": 1.0 for j in range(20)}
    one_model.learn_one(wide, True)  # one model of these features fits the budget
    _refused(model, lambda: model.learn_one(wide, True))
    frame = pd.DataFrame([rows[0], wide]).astype(float)
    _refused(model, lambda: model.learn_many(frame, pd.Series([True, False])))


def test_max_size_counts_every_order_of_the_polynomial_candidates():
    """Every order keeps its own NR-RLS: the budget is their sum, not the highest order's."""
    x = {f"x{j}": 0.1 * j for j in range(6)}
    sizes = [
        NRRLS().nbytes_after(PolynomialExtender(degree=order).transform_one(x), True)
        for order in (1, 2)
    ]
    params = {"orders": (1, 2), "forgetting_grid": (1.0,), "tree_paths": False}
    tight = AutoNRRLS(max_size=(max(sizes) + sum(sizes)) / 2 / 2**20, **params)
    _refused(tight, lambda: tight.learn_one(x, True))  # the highest order alone would fit
    roomy = AutoNRRLS(max_size=1.01 * sum(sizes) / 2**20, **params)
    roomy.learn_one(x, True)
    assert roomy.predict_one(x) is True


def test_pickle_and_clone_mid_stream_then_resume():
    rows, labels = _stream(n_samples=240)
    model = _small(lazy_after=10, lazy_block=4)
    for x, y in zip(rows[:120], labels[:120]):
        model.learn_one(x, y)
    restored = pickle.loads(pickle.dumps(model))
    copied = copy.deepcopy(model)
    fresh = model.clone()
    assert fresh.table[0].score == 0.0 and fresh.predict_one(rows[0]) is None
    for x, y in zip(rows[120:], labels[120:]):
        expected = model.predict_proba_one(x)
        _same_proba(restored.predict_proba_one(x), expected)
        _same_proba(copied.predict_proba_one(x), expected)
        for m in (model, restored, copied):
            m.learn_one(x, y)
        assert restored.table == model.table == copied.table


def test_deterministic():
    rows, labels = _stream(n_samples=200, seed=3)
    runs = []
    for _ in range(2):
        model = _small(lazy_after=10)
        for x, y in zip(rows, labels):
            model.learn_one(x, y)
        probe = [model.predict_proba_one(x) for x in rows[:50]]
        runs.append((model.table, model.last_predictions, probe))
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    ("n_features", "orders"),
    [(2, (1, 2, 3, 4, 5, 6)), (4, (1, 2, 3, 4, 5)), (8, (1, 2, 3)), (10, (1, 2)), (36, (1, 2))],
)
def test_default_orders_follow_the_width_of_the_first_sample(n_features, orders):
    model = AutoNRRLS(tree_paths=False)
    assert model.candidates == [] and model.best_candidate is None
    assert model.predict_one({"a": 1.0}) is None and model.predict_proba_one({"a": 1.0}) == {}
    x = {f"f{j}": 0.5 for j in range(n_features)}
    _refused(model, lambda: model.learn_one({**x, "f0": "text"}, True), TypeError)
    model.learn_one(x, True, w=0.0)  # changes nothing
    assert model.candidates == []
    model.learn_one(x, True)
    names = ["raw"] + [f"poly{r}" for r in orders[1:]]
    assert [c.features for c in model.candidates[::3]] == names
    assert model.best_candidate == model.candidates[0]


def test_default_model_is_its_candidates():
    rows, labels = _stream(n_samples=150)
    _check_every_sample(AutoNRRLS(window=50, lazy_after=20, lazy_block=5), rows, labels)


def test_ties_go_to_the_simplest_candidate():
    model = _small()
    assert model.best_candidate == model.candidates[0]
    assert [c.features for c in model.candidates] == [
        "raw",
        "raw",
        "poly2",
        "poly2",
        "tree",
        "tree",
    ]
    assert [c.forgetting for c in model.candidates[:2]] == [1.0, 0.95]
    model.learn_one({"a": 1.0}, True)
    assert model.best_candidate == model.candidates[0]  # nothing scored yet: all tied


def test_any_metric_and_debug_one():
    rows, labels = _stream(n_samples=100)
    # probabilities; smaller is better (evidence=None: the best score leads, whatever the evidence)
    model = _small(metric=metrics.LogLoss(), evidence=None)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    values = {row.candidate: row.score for row in model.table}
    assert values[model.best_candidate] == min(values.values())
    text = model.debug_one(rows[0])
    assert "solving" in text and "*" in text and len(text.splitlines()) == len(model.candidates) + 1


@pytest.mark.parametrize(
    "params",
    [
        {"orders": ()},
        {"orders": (0,)},
        {"forgetting_grid": ()},
        {"forgetting_grid": (1.0, 1.0)},
        {"forgetting_grid": (1.5,)},
        {"window": 0},
        {"lazy_after": 0},
        {"lazy_block": 0},
        {"lazy_margin": -0.1},
        {"tree_paths": "yes"},
        {"max_size": -1.0},
        {"window_per_class": 1.5},
        {"evidence": float("nan")},
    ],
)
def test_bad_parameters(params):
    with pytest.raises(ValueError):
        AutoNRRLS(**params)
