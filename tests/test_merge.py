"""Merging NR-RLS models (``a + b``, ``a += b``) against a plain-numpy batch TER reference.

NR-RLS's state is per-class counts, scatters and sums, which add up across shards
(algorithms page, "Sufficient statistics and the exact solve"): two models trained on disjoint
parts of a stream must combine into the
model trained on the whole stream. Every merged model here is compared with the batch TER
solution of the concatenated stream (``tests/reference.py``, relative error convention there).
"""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np
import pandas as pd
import pytest
from helpers import pickled_state
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import TERReference, assert_model_matches, model_matrix, relative_error
from river import compose, linear_model, preprocessing

from river_nrrls import NRRLS

RTOL = 1e-9  # Cholesky: the merged statistics are the sums, up to rounding
RTOL_WOODBURY = 1e-6  # the recursive inverse continues from inverses rebuilt after the merge
PROBES = [
    {"a": 0.5, "b": -1.25, "c": 2.0, "d": -0.3, "e": 1.0, 7: 0.7, "never_seen": 11.0},
    {"a": -1.0, 7: 3.0},
    {},
]
SOLVERS = ("cholesky", "woodbury")


def _rtol(solver: str) -> float:
    return RTOL if solver == "cholesky" else RTOL_WOODBURY


def _stream(n: int, classes, features, seed: int = 0, emerging: bool = True):
    """Rows (absent keys, ``None`` values, features emerging over time, shuffled key order)."""
    rng = np.random.default_rng(seed)
    starts = {
        name: (int(rng.integers(0, n)) if emerging and i else 0) for i, name in enumerate(features)
    }
    rows, labels = [], []
    for i in range(n):
        row = {}
        for name in features:
            if i < starts[name]:
                continue
            draw = rng.random()
            if draw < 0.1:
                continue  # absent
            row[name] = None if draw < 0.15 else round(float(rng.normal()), 6)
        keys = list(row)
        rng.shuffle(keys)
        rows.append({key: row[key] for key in keys})
        labels.append(classes[int(rng.integers(0, len(classes)))])
    return rows, labels


def _learnt(rows, labels, **params) -> NRRLS:
    model = NRRLS(**params)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    return model


def _shards(rows, labels, cuts, **params) -> list[NRRLS]:
    bounds = [0, *cuts, len(rows)]
    return [
        _learnt(rows[start:stop], labels[start:stop], **params)
        for start, stop in zip(bounds[:-1], bounds[1:])
    ]


def _matrix(model: NRRLS, ref: TERReference) -> np.ndarray:
    return model_matrix(model.weights, model.intercepts, ref)


# ------------------------------------------------------------------------ a + b, a += b


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "params",
    [{}, {"reweight": False, "intercept": False, "tau": 0.5, "eta": 2.0, "l2": 0.3}],
    ids=["ter", "ridge-no-intercept"],
)
def test_add_is_a_new_model_trained_on_both_and_leaves_operands_untouched(solver, params):
    rows, labels = _stream(80, ("cat", "dog"), ["a", "b", "c", 7], seed=1)
    left, right = _shards(rows, labels, [30], solver=solver, **params)
    left.predict_one(rows[0])  # a cached solution must not leak into the merged model
    before = pickled_state(left), pickled_state(right)
    merged = left + right
    assert merged is not left and merged is not right
    assert (pickled_state(left), pickled_state(right)) == before
    ref = TERReference(rows, labels, **params)
    assert_model_matches(merged, ref, PROBES, _rtol(solver))
    # The operands still are the models of their own shards.
    assert_model_matches(
        left, TERReference(rows[:30], labels[:30], **params), PROBES, _rtol(solver)
    )
    # Merging must not share state: learning on the merged model leaves the operands alone.
    merged.learn_one({"a": 1.0, "z": 2.0}, "cat")
    assert (pickled_state(left), pickled_state(right)) == before


@pytest.mark.parametrize("solver", SOLVERS)
def test_iadd_updates_in_place_and_leaves_the_other_untouched(solver):
    rows, labels = _stream(70, (True, False), ["a", "b", "c"], seed=2)
    left, right = _shards(rows, labels, [25], solver=solver)
    stale = left.decision_one(PROBES[0])  # caches a solution that the merge must invalidate
    before = pickled_state(right)
    identity = id(left)
    left += right
    assert id(left) == identity
    assert pickled_state(right) == before
    assert left.decision_one(PROBES[0]) != stale
    assert_model_matches(left, TERReference(rows, labels), PROBES, _rtol(solver))
    assert left.n_samples == {
        label: float(sum(y == label for y in labels)) for label in (True, False)
    }


def test_merged_model_keeps_learning_online_exactly():
    rows, labels = _stream(120, ("u", "v", "w"), ["a", "b", "c", "d"], seed=3)
    left, right = _shards(rows[:80], labels[:80], [40])
    merged = left + right
    for x, y in zip(rows[80:], labels[80:]):
        merged.learn_one(x, y)
    assert_model_matches(merged, TERReference(rows, labels), PROBES, RTOL)
    merged.learn_many(pd.DataFrame([{"a": 1.0, "e": 2.0}]), pd.Series(["x"], dtype=object))
    ref = TERReference([*rows, {"a": 1.0, "e": 2.0}], [*labels, "x"])
    assert_model_matches(merged, ref, PROBES, RTOL)


def test_woodbury_merged_model_keeps_learning_with_its_recursion():
    rows, labels = _stream(90, ("u", "v", "w"), ["a", "b", "c"], seed=4)
    left, right = _shards(rows[:60], labels[:60], [20], solver="woodbury")
    merged = left + right
    for x, y in zip(rows[60:], labels[60:]):
        merged.learn_one(x, y)
    assert_model_matches(merged, TERReference(rows, labels), PROBES, RTOL_WOODBURY)


# ------------------------------------------------------------------------- features, classes


def test_features_are_unioned_whatever_their_order_in_each_shard():
    # Shard 1 sees a then b; shard 2 sees c, then b, then a: the union is in shard 1's order,
    # then shard 2's new features in its own order (that of the sequential model).
    rng = np.random.default_rng(5)
    left_rows = [{"a": float(v)} for v in rng.normal(size=10)]
    left_rows += [{"b": float(v), "a": float(w)} for v, w in rng.normal(size=(10, 2))]
    right_rows = [{"c": float(v)} for v in rng.normal(size=8)]
    right_rows += [{"b": float(v), "c": 1.0} for v in rng.normal(size=8)]
    right_rows += [{"a": float(v), "b": 0.5, "c": -1.0} for v in rng.normal(size=8)]
    left_labels = ["p", "q"] * 10
    right_labels = ["q", "p", "q", "q"] * 6
    left = _learnt(left_rows, left_labels)
    right = _learnt(right_rows, right_labels)
    assert list(right.weights["p"]) == ["c", "b", "a"]
    merged = left + right
    assert list(merged.weights["p"]) == ["a", "b", "c"]
    sequential = _learnt(left_rows + right_rows, left_labels + right_labels)
    assert list(merged.weights["p"]) == list(sequential.weights["p"])
    ref = TERReference(left_rows + right_rows, left_labels + right_labels)
    assert_model_matches(merged, ref, PROBES, RTOL)
    # The other way round: the union starts with the left operand's features.
    flipped = right + left
    assert list(flipped.weights["p"]) == ["c", "b", "a"]
    assert relative_error(_matrix(flipped, ref), ref) <= RTOL


def test_features_known_to_one_shard_only_are_zero_in_the_other():
    left = _learnt([{"a": 1.0, "b": 2.0}, {"a": -1.0}], [True, False])
    right = _learnt([{"z": 3.0}, {"z": -2.0, "y": 1.0}], [False, True])
    rows = [{"a": 1.0, "b": 2.0}, {"a": -1.0}, {"z": 3.0}, {"z": -2.0, "y": 1.0}]
    ref = TERReference(rows, [True, False, False, True])
    for merged in (left + right, right + left):
        assert_model_matches(merged, ref, PROBES + rows, RTOL)


def test_classes_seen_by_one_shard_only():
    rows, labels = _stream(60, ("cat", 7, ("t", 1)), ["a", "b", "c"], seed=6)
    right_rows, _ = _stream(30, ("x",), ["b", "c", "d"], seed=7)
    right_labels = ["bird" if i % 3 else "cat" for i in range(30)]  # one shared class, one new
    left = _learnt(rows, labels)
    right = _learnt(right_rows, right_labels)
    merged = left + right
    assert list(merged.weights) == [*dict.fromkeys(labels), "bird"]
    assert_model_matches(
        merged, TERReference(rows + right_rows, labels + right_labels), PROBES, RTOL
    )
    # A shard with a single class (one-vs-rest then has an empty "rest" in that shard).
    lone = _learnt(right_rows[:10], ["solo"] * 10)
    merged = lone + left
    assert list(merged.weights) == ["solo", *dict.fromkeys(labels)]
    assert_model_matches(
        merged, TERReference(right_rows[:10] + rows, ["solo"] * 10 + labels), PROBES, RTOL
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_multiclass_shards(solver):
    classes = ("cat", 7, ("t", 1), "dog", 2.5)
    rows, labels = _stream(150, classes, ["a", "b", "c", "d", "e"], seed=8)
    shards = _shards(rows, labels, [20, 75, 110], solver=solver)
    merged = shards[0] + shards[1] + shards[2] + shards[3]
    assert list(merged.weights) == list(dict.fromkeys(labels))
    assert_model_matches(merged, TERReference(rows, labels), PROBES, _rtol(solver))
    probe = pd.DataFrame([{k: v for k, v in p.items() if k != "never_seen"} for p in PROBES])
    sequential = _learnt(rows, labels, solver=solver)
    assert merged.predict_many(probe).tolist() == sequential.predict_many(probe).tolist()


def test_models_trained_with_learn_many_merge_with_models_trained_with_learn_one():
    rows, labels = _stream(90, ("u", "v", "w"), ["a", "b", "c", 7], seed=9)
    by_rows = _learnt(rows[:40], labels[:40])
    by_batch = NRRLS()
    by_batch.learn_many(pd.DataFrame(rows[40:]), pd.Series(labels[40:], dtype=object))
    assert_model_matches(by_rows + by_batch, TERReference(rows, labels), PROBES, RTOL)


def test_self_merge_counts_every_sample_twice():
    rows, labels = _stream(40, ("u", "v"), ["a", "b"], seed=10)
    for params in ({}, {"reweight": False}):
        model = _learnt(rows, labels, **params)
        ref = TERReference(rows + rows, labels + labels, **params)
        assert_model_matches(model + model, ref, PROBES, RTOL)
        model += model
        assert_model_matches(model, ref, PROBES, RTOL)


# ------------------------------------------------------------------------------ empty models


@pytest.mark.parametrize("solver", SOLVERS)
def test_empty_models_merge(solver):
    empty = NRRLS(solver=solver) + NRRLS(solver=solver)
    assert empty.weights == {} and empty.predict_proba_one({"a": 1.0}) == {}
    assert empty.predict_one({"a": 1.0}) is None
    rows, labels = _stream(30, ("u", "v", "w"), ["a", "b"], seed=11)
    model = _learnt(rows, labels, solver=solver)
    if solver == "cholesky":
        # Adding nothing is the identity, to the bit (no solution cached in either).
        assert pickled_state(model + NRRLS()) == pickled_state(model)
        identity = pickled_state(model)
        model += NRRLS()
        assert pickled_state(model) == identity
        merged = NRRLS() + model
        assert merged.weights == model.weights and merged.intercepts == model.intercepts
    ref = TERReference(rows, labels)
    for merged in (model + NRRLS(solver=solver), NRRLS(solver=solver) + model):
        assert_model_matches(merged, ref, PROBES, _rtol(solver))
        assert list(merged.weights) == list(model.weights)


# ------------------------------------------------------------------------------ merge chains


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 60),
    cuts=st.lists(st.integers(0, 60), min_size=1, max_size=5),
    n_classes=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    intercept=st.booleans(),
    reweight=st.booleans(),
)
def test_chains_of_merges_are_associative_and_exact(n, cuts, n_classes, seed, intercept, reweight):
    params = {"intercept": intercept, "reweight": reweight}
    rows, labels = _stream(n, ("u", 3, ("t", 1), "w")[:n_classes], ["a", "b", "c", 7], seed=seed)
    shards = _shards(rows, labels, sorted(min(c, n) for c in cuts), **params)
    ref = TERReference(rows, labels, **params)
    left_fold = functools.reduce(operator.add, shards)
    right_fold = functools.reduce(lambda acc, m: m + acc, reversed(shards))
    in_place = NRRLS(**params)
    for shard in shards:
        in_place += shard
    started = sum(shards, NRRLS(**params))
    for merged in (left_fold, right_fold, in_place, started):
        assert_model_matches(merged, ref, PROBES, RTOL)
    # Associativity (and commutativity up to class/feature order) to 1e-9 relative.
    reference_matrix = _matrix(left_fold, ref)
    for order in itertools.islice(itertools.permutations(shards), 6):
        merged = functools.reduce(operator.add, order)
        difference = np.linalg.norm(_matrix(merged, ref) - reference_matrix)
        assert difference <= RTOL * ref.scale + 1e-300


def test_merging_shards_in_order_gives_the_sequential_class_and_feature_order():
    rows, labels = _stream(100, ("u", 3, ("t", 1), "w"), ["a", "b", "c", 7, "d"], seed=12)
    sequential = _learnt(rows, labels)
    merged = sum(_shards(rows, labels, [10, 35, 36, 70]), NRRLS())
    assert list(merged.weights) == list(sequential.weights)
    for label in sequential.weights:
        assert list(merged.weights[label]) == list(sequential.weights[label])


# -------------------------------------------------------------------------------- bad merges


@pytest.mark.parametrize(
    ("name", "mine", "theirs"),
    [
        ("l2", 1e-4, 1e-3),
        ("tau", 0.0, 0.5),
        ("eta", 1.0, 2.0),
        ("intercept", True, False),
        ("reweight", True, False),
        ("forgetting", 1.0, 0.9),
        ("solver", "cholesky", "woodbury"),
    ],
)
def test_mismatched_parameters_raise_value_error_naming_the_parameter(name, mine, theirs):
    rows, labels = _stream(20, ("u", "v"), ["a", "b"], seed=13)
    left = _learnt(rows[:10], labels[:10], **{name: mine})
    right = _learnt(rows[10:], labels[10:], **{name: theirs})
    before = pickled_state(left), pickled_state(right)
    with pytest.raises(ValueError, match=rf"different {name}\b"):
        left + right
    with pytest.raises(ValueError, match=rf"different {name}\b"):
        right + left
    with pytest.raises(ValueError, match=rf"different {name}\b"):
        left += right
    assert (pickled_state(left), pickled_state(right)) == before


def test_forgetting_below_one_cannot_be_merged():
    rows, labels = _stream(20, ("u", "v"), ["a", "b"], seed=14)
    left = _learnt(rows[:10], labels[:10], forgetting=0.95)
    right = _learnt(rows[10:], labels[10:], forgetting=0.95)
    before = pickled_state(left), pickled_state(right)
    with pytest.raises(ValueError, match="forgetting"):
        left + right
    with pytest.raises(ValueError, match="forgetting"):
        left += right
    assert (pickled_state(left), pickled_state(right)) == before


@pytest.mark.parametrize(
    "other",
    [
        1,
        2.5,
        None,
        {"a": 1.0},
        linear_model.LogisticRegression(),
        preprocessing.StandardScaler() | NRRLS(),
        compose.Pipeline(NRRLS()),
    ],
    ids=["int", "float", "None", "dict", "LogisticRegression", "pipeline", "pipeline-of-nrrls"],
)
def test_merging_with_something_else_raises_type_error(other):
    rows, labels = _stream(20, ("u", "v"), ["a", "b"], seed=15)
    model = _learnt(rows, labels)
    before = pickled_state(model)
    try:
        with pytest.raises(TypeError):
            model + other
        with pytest.raises(TypeError):
            model += other
    finally:
        assert pickled_state(model) == before


@pytest.mark.parametrize("other", [1, 2.5, None, {"a": 1.0}, linear_model.LogisticRegression()])
def test_something_else_plus_a_model_raises_type_error(other):
    model = _learnt(*_stream(20, ("u", "v"), ["a", "b"], seed=16))
    before = pickled_state(model)
    with pytest.raises(TypeError):
        other + model
    assert pickled_state(model) == before
