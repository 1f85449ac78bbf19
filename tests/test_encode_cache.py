"""`FeatureIndex.encode_sparse` remembers the last sample it encoded (river's prequential loop
encodes every sample twice): the cache must never change a result.

Every scenario runs two copies of a model side by side, one with the cache and one whose cache
is emptied before every call (it never hits), and asserts bit-identical outputs, errors and
pickled states.
"""

from __future__ import annotations

import copy
import decimal
import fractions
import math
import pickle
import random

import numpy as np
import pandas as pd
import pytest
from river import datasets, linear_model, optim

from river_nrrls import OCSCA
from river_nrrls._encoding_cache import SparseMemo, frozen_encodings, snapshot
from river_nrrls._index import FeatureIndex
from river_nrrls._validation import validate_one
from river_nrrls.baselines import CSOGDClassifier


def _trained_lr():
    model = linear_model.LogisticRegression(optimizer=optim.SGD(0.5))
    for x, y in datasets.Phishing().take(40):
        model.learn_one({"a": x["empty_server_form_handler"], "b": x["popup_window"]}, y)
    return model


MODELS = {
    "ocsca": lambda: OCSCA(_trained_lr(), alpha=0.5, cost_pos=3.0, score="logit"),
    "ocsca intercept learn_base": lambda: OCSCA(
        _trained_lr(), alpha=0.5, score="logit", intercept=True, learn_base=True
    ),
    "csogd": lambda: CSOGDClassifier(learning_rate=0.5, intercept=True),
    "csogd loss I": lambda: CSOGDClassifier(loss="I", objective="sum", intercept=True),
}


def _call(model, method: str, x, *args, cached: bool):
    """The outcome of ``model.method(x, *args)``: its repr, or the error's type and message."""
    if not cached:
        model._index.forget_encodings()  # the reference never hits the cache
    try:
        return repr(getattr(model, method)(x, *args))
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)


class Twins:
    """A model with the cache and its reference without, driven by the same calls."""

    def __init__(self, make):
        self.cached, self.reference = make(), make()

    def __call__(self, method: str, x, *args):
        reference = _call(self.reference, method, x, *args, cached=False)
        before = pickle.dumps(self.cached)
        outcome = _call(self.cached, method, x, *args, cached=True)
        assert outcome == reference
        if isinstance(outcome, tuple):  # refused: the model is exactly as it was
            assert pickle.dumps(self.cached) == before
        return outcome

    def step(self, x, y, *, learn_x=None):
        """predict_one(x), then learn_one(learn_x or x, y)."""
        self("predict_one", x)
        return self("learn_one", x if learn_x is None else learn_x, y)

    def check_same_state(self):
        assert pickle.dumps(self.cached) == pickle.dumps(self.reference)
        weights = self.cached.weights
        assert repr(weights) == repr(self.reference.weights)
        assert np.array(list(weights.values())).tobytes() == (
            np.array(list(self.reference.weights.values())).tobytes()
        )

    def transform(self, function):
        self.cached, self.reference = function(self.cached), function(self.reference)


def _values(x: dict, **changes) -> dict:
    return {**x, **changes}


@pytest.mark.parametrize("name", list(MODELS))
def test_cache_never_changes_a_result(name):
    twins = Twins(MODELS[name])
    x1 = {"a": 0.5, "b": -1.0, "c": 2.0, 3: 0.25}
    twins.step(x1, True)  # new features: nothing to reuse
    twins.step(x1, False)  # the prequential case: the same dict twice
    twins.step(x1, True, learn_x=dict(x1))  # an equal copy
    x2 = _values(x1, a=1.5)
    twins("predict_one", x2)
    twins("predict_one", x1)
    twins("learn_one", x2, True)  # interleaved dicts: same keys, other values
    mutated = dict(x1)
    twins("predict_one", mutated)
    mutated["b"] = 4.0  # modified in place between predict and learn
    twins("learn_one", mutated, False)
    twins("predict_one", x1)
    twins("learn_one", _values(x1, new=1.0), True)  # a new feature: the index grows
    twins.step(x1, False)
    twins.step(_values(x1, new=1.0), True)
    integral = {"a": 1.0, "b": 2.0, "c": -3.0, 3: 4.0}
    twins.step(integral, True)
    twins.step(integral, False, learn_x=_values(integral, a=1, c=-3))  # ints equal to floats
    twins.step(integral, True, learn_x=_values(integral, a=True))  # a bool equal to 1.0
    twins.check_same_state()
    zero = {"a": 0.0, "b": -1.0, "c": 2.0, 3: 0.25}
    twins.step(zero, True, learn_x=_values(zero, a=-0.0))  # -0.0 == 0.0, not the same float
    twins.step(_values(zero, a=-0.0), False, learn_x=_values(zero, a=0))
    twins.step(zero, False)
    twins.step(x1, True, learn_x=_values(x1, a=decimal.Decimal("0.5")))  # valid, not a float
    twins.step(x1, False, learn_x=_values(x1, a=fractions.Fraction(1, 2)))
    twins.step(x1, True, learn_x=_values(x1, a=np.float64(0.5)))
    twins.step(x1, False, learn_x=_values(x1, a=None))  # missing: zero, not shown to f0
    twins.step(_values(x1, a=None), True, learn_x=x1)
    twins.check_same_state()


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(
    "bad",
    [0.5 + 0j, np.array([0.5]), float("nan"), decimal.Decimal("NaN"), math.inf, "0.5"],
    ids=repr,
)
def test_bad_input_after_a_cached_predict_is_still_refused(name, bad):
    twins = Twins(MODELS[name])
    x = {"a": 0.5, "b": -1.0, "c": 2.0}
    twins.step(x, True)
    twins.step(x, False)
    twins("predict_one", x)
    before = pickle.dumps(twins.cached)
    outcome = twins("learn_one", _values(x, a=bad), True)  # complex 0.5 + 0j == 0.5, ...
    assert isinstance(outcome, tuple) and "'a'" in outcome[1]
    assert pickle.dumps(twins.cached) == before
    outcome = twins("predict_one", _values(x, a=bad))
    assert isinstance(outcome, tuple) and "'a'" in outcome[1]
    twins("learn_one", x, False)  # the cache still serves the good sample correctly
    twins.check_same_state()


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(
    "transform",
    [lambda m: pickle.loads(pickle.dumps(m)), copy.deepcopy, lambda m: m.clone()],
    ids=["pickle", "deepcopy", "clone"],
)
def test_copies_between_predict_and_learn(name, transform):
    twins = Twins(MODELS[name])
    x = {"a": 0.5, "b": -1.0, "c": 2.0}
    for y in (True, False, True):
        twins("predict_one", x)
        twins.transform(transform)
        twins("learn_one", x, y)
        twins.check_same_state()


@pytest.mark.parametrize("name", list(MODELS))
def test_random_sparse_stream_is_bit_identical(name):
    rng = random.Random(7)
    twins = Twins(MODELS[name])
    previous = {"f0": 1.0}
    for _ in range(150):
        values = [rng.choice([rng.gauss(0, 2), 0.0, -0.0, 1]) for _ in range(rng.randint(0, 6))]
        x = {f"f{rng.randrange(12)}": value for value in values}
        y = rng.random() < 0.3
        kind = rng.random()
        if kind < 0.5:
            twins.step(x, y)
        elif kind < 0.7:
            twins.step(x, y, learn_x=previous)  # interleaved samples
        elif kind < 0.85 and x:
            twins("predict_one", x)
            x[next(iter(x))] = rng.gauss(0, 2)  # modified in place
            twins("learn_one", x, y)
        else:
            twins("decision_one", x)
            twins("predict_proba_one", x)
            twins("learn_one", x, y)
        previous = x
    twins.check_same_state()


# ------------------------------------------------------------------------- the index itself


def test_encode_sparse_matches_encode_one_and_reuses_its_arrays():
    index = FeatureIndex(offset=1)
    columns, values, new, as_given = index.encode_sparse({"b": 2.0, "a": 1.0})
    assert columns.dtype == np.intp and columns.tolist() == [2, 1] and new == ["a", "b"]
    assert as_given and values.tolist() == [2.0, 1.0]
    index.add(new)
    x = {"b": 2.0, "a": 1.0}
    first = index.encode_sparse(x, grow=False)
    second = index.encode_sparse(x, grow=True)
    assert second[0] is first[0] and second[1] is first[1]  # reused
    assert not first[0].flags.writeable and not first[1].flags.writeable
    assert first[0].tolist() == index.encode_one(x)[0] == [2, 1]
    x["a"] = 3.0
    third = index.encode_sparse(x)
    assert third[1] is not first[1] and third[1].tolist() == [2.0, 3.0]
    index.add(["c"])  # the index changed: nothing is reused across it
    assert index.encode_sparse(x)[1] is not third[1]


@pytest.mark.parametrize("name", list(MODELS))
def test_a_missing_pd_na_after_a_remembered_sample_is_missing_not_an_error(name):
    """pd.NA (a missing value) in a sample with the keys of the remembered one: its ``==`` has
    no truth value, so comparing it with the remembered values raised TypeError (found by the
    stateful test). Now the outcome is the one without the cache: learnt as missing, or
    refused by a river base model that takes no missing values, with the same message."""
    twins = Twins(MODELS[name])
    for _ in range(2):  # the second time the features are known: the sample is remembered
        twins.step({"a": 1.0, "b": 0.5}, True)
    for x, y in (({"a": pd.NA, "b": 0.5}, False), ({"a": 1.0, "b": pd.NA}, True)):
        outcome = twins.step(x, y)  # Twins: the same outcome as without the cache
        if name.startswith("csogd"):
            assert not isinstance(outcome, tuple)  # learnt, not refused
    twins.check_same_state()


def test_encode_sparse_reports_missing_values_and_is_not_pickled():
    index = FeatureIndex()
    index.add(["a", "b"])
    before = pickle.dumps(index)
    columns, values, new, as_given = index.encode_sparse({"a": 1.0, "b": None})
    assert columns.tolist() == [0] and values.tolist() == [1.0] and not as_given
    assert index.encode_sparse({"a": 1.0, "b": 2.0})[3]
    assert pickle.dumps(index) == before
    restored = pickle.loads(pickle.dumps(index))
    assert pickle.dumps(restored) == before  # nothing remembered comes back
    assert restored.encode_sparse({"b": 2.0})[0].tolist() == [1]
    with pytest.raises(TypeError, match="dict"):
        index.encode_sparse([("a", 1.0)])


def test_encode_sparse_keeps_the_sign_of_a_zero():
    index = FeatureIndex()
    index.add(["a", "b"])
    index.encode_sparse({"a": 0.0, "b": 1.0})
    values = index.encode_sparse({"a": -0.0, "b": 1.0})[1]  # -0.0 == 0.0 for the tuples
    assert np.signbit(values).tolist() == [True, False]
    x = {"a": -0.0, "b": 1.0}
    assert index.encode_sparse(x)[1] is index.encode_sparse(x)[1]  # the same objects: reused


def test_encode_sparse_equals_encode_one_with_new_and_missing_features():
    rng = random.Random(3)
    index = FeatureIndex(offset=1)
    x = {}
    for _ in range(300):
        if rng.random() < 0.6:  # a fresh sample, else the last one again (maybe modified)
            x = {
                rng.choice([f"f{rng.randrange(30)}", rng.randrange(5)]): rng.choice(
                    [rng.gauss(0, 1), 0.0, -0.0, 2, None, True, decimal.Decimal("1.5")]
                )
                for _ in range(rng.randint(0, 6))
            }
        elif x and rng.random() < 0.5:
            x[next(iter(x))] = rng.gauss(0, 1)
        grow = rng.random() < 0.5
        columns, values, new, as_given = index.encode_sparse(x, grow=grow)
        expected = index.encode_one(x, grow=grow)
        assert columns.tolist() == expected[0] and new == expected[2]
        assert values.tobytes() == expected[1].tobytes()
        assert as_given == (validate_one(x) is x)
        if new and rng.random() < 0.3:
            index.add(new)


def test_a_sample_with_unknown_features_is_encoded_once():
    index = FeatureIndex()
    index.add(["a"])
    x = {"b": 2.0, "a": 1.0, "c": 3.0}
    predicted = index.encode_sparse(x, grow=False)
    assert predicted[0].tolist() == [0] and predicted[1].tolist() == [1.0] and predicted[2] == []
    learnt = index.encode_sparse(x, grow=True)
    assert learnt[0].tolist() == [1, 0, 2] and learnt[2] == ["b", "c"]
    again = index.encode_sparse(x, grow=True)
    assert again[0] is learnt[0] and again[2] == learnt[2] and again[2] is not learnt[2]
    assert index.encode_sparse(x, grow=False)[0] is predicted[0]


def test_forget_encodings_lets_go_of_both_caches_and_changes_no_result():
    index = FeatureIndex(offset=1, fill=1.0)
    index.add(["a", "b"])
    x = {"a": 1.0, "b": 2.0}
    dense, sparse = index.dense_one(x).vector, index.encode_sparse(x)
    assert index.remembered() is not None and index.encode_sparse(x)[0] is sparse[0]
    index.forget_encodings()
    assert index.remembered() is None
    again = index.encode_sparse(x)
    assert again[0] is not sparse[0] and again[0].tolist() == sparse[0].tolist()
    assert again[1].tobytes() == sparse[1].tobytes() and again[2:] == sparse[2:]
    assert index.dense_one(x).vector.tobytes() == dense.tobytes()


def test_a_sparse_memo_repeats_only_the_same_plain_values_in_an_index_of_its_size():
    index = FeatureIndex()
    index.add(["a", "b"])
    x = {"a": 0.0, "b": 2}
    columns, numbers, new, _ = index.encode_sparse(x)
    grown, known = frozen_encodings(index.size, columns.tolist(), numbers.copy(), new)
    memo = SparseMemo.of(index.size, *snapshot(x), grown, known)
    assert memo.zeros == (0,)
    assert memo.repeats(*snapshot(x), index.size)
    assert memo.repeats(*snapshot({"a": 0.0, "b": 2.0}), index.size)  # 2 == 2.0, both plain
    assert not memo.repeats(*snapshot(x), index.size + 1)  # the index grew
    assert not memo.repeats(*snapshot({"a": -0.0, "b": 2}), index.size)  # -0.0 == 0.0
    assert not memo.repeats(*snapshot({"a": 0.0, "b": decimal.Decimal(2)}), index.size)
    assert not memo.repeats(*snapshot({"b": 2, "a": 0.0}), index.size)  # other key order
    assert not memo.repeats(*snapshot({"a": 0.0, "b": pd.NA}), index.size)  # no NA comparison


def test_frozen_encodings_drop_the_provisional_columns_and_are_read_only():
    grown, known = frozen_encodings(2, [2, 0, 3], np.array([1.0, 2.0, 3.0]), ["c", "d"])
    assert grown.columns.tolist() == [2, 0, 3] and grown.new == ("c", "d")
    assert known.columns.tolist() == [0] and known.numbers.tolist() == [2.0] and known.new == ()
    assert not any(a.flags.writeable for a in (*grown[:2], *known[:2]))


def test_a_remembered_sample_keeps_what_it_is_refilled_with():
    index = FeatureIndex(offset=1, fill=1.0)
    index.add(["a", "b"])
    first = index.dense_one({"b": 2.0, "a": 1.0}, with_support=True)
    cache = index.remembered()
    assert cache.layout.columns.tolist() == [2, 1]
    assert first.support.tolist() == [0, 2, 1]
    assert cache.layout.support_after(index.offset) is first.support  # computed once
    vector = np.array([1.0, 3.0, 4.0])
    index.refilled(cache, vector)  # as the refill of NR-RLS's fused paths
    assert cache.vector is vector
    cache.refilled(first.vector)
    assert cache.vector is first.vector
    index.add(["c"])
    assert index.remembered() is None  # the index grew: the vectors no longer fit
