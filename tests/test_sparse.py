"""Sparse learning and capacity growth are the exact batch TER.

From ``_SPARSE_MIN_DIM`` columns on, a sample with few non-zeros updates only the k x k block of
its class's scatter, and a batch touching few columns only their block; the statistics' buffer
grows geometrically when features emerge. Each is compared with the plain-numpy batch reference
of ``tests/reference.py`` after every prefix (or every batch), with sample weights, forgetting
and merging.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from reference import TERReference, assert_model_matches

from river_nrrls import NRRLS, _stats

RTOL = 1e-9


def _one_hot_stream(n: int, n_variables: int, levels: int, seed: int = 0, classes=(True, False)):
    """``n_variables`` categorical variables with ``levels`` levels each, one-hot encoded
    (river's ``OneHotEncoder`` gives these dicts), and a few dense numeric features."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for _ in range(n):
        codes = rng.integers(levels, size=n_variables)
        row = {f"v{j}_{code}": 1.0 for j, code in enumerate(codes)}
        row["num"] = float(rng.normal())
        rows.append(row)
        score = codes[0] / levels + 0.3 * row["num"] + 0.2 * rng.normal()
        labels.append(classes[0] if score > 0.8 else classes[int(rng.integers(1, len(classes)))])
    return rows, labels


@pytest.mark.parametrize(
    "params", [{}, {"forgetting": 0.98}, {"reweight": False, "intercept": False, "tau": 0.2}]
)
def test_sparse_learn_one_is_the_batch_ter_after_every_prefix(params):
    rows, labels = _one_hot_stream(120, 4, 30, seed=1)  # D = 121 > _SPARSE_MIN_DIM, k = 5
    rng = np.random.default_rng(2)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(rows)).tolist()
    model = NRRLS(**params)
    for i, (x, y, w) in enumerate(zip(rows, labels, weights)):
        model.learn_one(x, y, w=w)
        if i < 30 or i % 3 == 0:
            if not any(weights[: i + 1]):
                continue
            ref = TERReference(
                rows[: i + 1], labels[: i + 1], **params, sample_weights=weights[: i + 1]
            )
            assert_model_matches(model, ref, [x], RTOL)
    assert model.statistics.dim > _stats._SPARSE_MIN_DIM


def test_sparse_and_dense_updates_give_the_same_statistics():
    rows, labels = _one_hot_stream(200, 5, 40, seed=3)
    sparse = NRRLS()
    for x, y in zip(rows, labels):
        sparse.learn_one(x, y)
    dense = NRRLS()
    dense._grow(sparse._index.features)  # every column known up front: same layout
    for x, y in zip(rows, labels):
        vector = dense._index.dense_one(x).vector
        # every column as the support: the dense rank-1 update of the same sample
        dense.statistics.update_one(dense._slot(y), np.array(vector), 1.0, np.arange(len(vector)))
    for c in range(2):
        a = _stats.symmetrize_upper(sparse.statistics.scatter(c))
        b = _stats.symmetrize_upper(dense.statistics.scatter(c))
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-12)


def test_emerging_features_one_per_sample_grow_the_capacity_geometrically():
    rng = np.random.default_rng(4)
    rows, labels = [], []
    for i in range(150):
        rows.append({f"f{i}": 1.0, f"f{i // 3}": float(rng.normal()), "bias": 0.5})
        labels.append(bool(rng.random() < 0.3))
    model = NRRLS()
    reallocations, capacity = 0, None
    for i, (x, y) in enumerate(zip(rows, labels)):
        model.predict_one(x)
        model.learn_one(x, y)
        if model.statistics._buffer.shape[0] != capacity:
            reallocations += 1
            capacity = model.statistics._buffer.shape[0]
        assert capacity >= model.statistics.dim
        ref = TERReference(rows[: i + 1], labels[: i + 1])
        assert_model_matches(model, ref, [x, rows[0]], RTOL)
    assert model.statistics.dim == 152
    assert reallocations <= 12  # 1.5x growth: about log(150) / log(1.5), not 150
    # pickling keeps the spare capacity, and the restored model carries on identically
    restored = pickle.loads(pickle.dumps(model))
    x, y = {"f999": 2.0, "f3": 1.0}, True
    for m in (model, restored):
        m.learn_one(x, y)
    assert restored.decision_one(x) == model.decision_one(x)


def test_sparse_learn_many_is_the_batch_ter():
    rows, labels = _one_hot_stream(240, 3, 60, seed=5, classes=("a", "b", "c"))
    frame = pd.DataFrame(rows)  # absent levels are NaN: missing, i.e. zero
    model = NRRLS(forgetting=0.99)
    for start in range(0, 240, 40):
        batch = slice(start, start + 40)
        model.learn_many(frame.iloc[batch], labels[batch])  # (a list: paired by position)
        ref = TERReference(rows[: start + 40], labels[: start + 40], forgetting=0.99)
        assert_model_matches(model, ref, [rows[start]], RTOL)
    # a batch touching few of the many columns takes the block update: still exact
    narrow = pd.DataFrame([{"v0_1": 1.0, "num": 0.5}, {"v0_2": 1.0, "num": -1.0}])
    model.learn_many(narrow, pd.Series(["a", "b"]))
    ref = TERReference(rows + narrow.to_dict("records"), labels + ["a", "b"], forgetting=0.99)
    assert_model_matches(model, ref, [rows[0]], RTOL)


def test_merge_after_sparse_learning_is_the_model_of_both_streams():
    rows, labels = _one_hot_stream(160, 4, 30, seed=6)
    left, right = NRRLS(), NRRLS()
    for x, y in zip(rows[:80], labels[:80]):
        left.learn_one(x, y)
    for x, y in zip(rows[80:], labels[80:]):
        right.learn_one(x, y)
    merged = left + right
    ref = TERReference(rows[:80] + rows[80:], labels)
    assert_model_matches(merged, ref, [rows[0], rows[100]], RTOL)
    left += right
    assert_model_matches(left, ref, [rows[0]], RTOL)
    left.learn_one(rows[0], labels[0])  # and it goes on learning sparsely, exactly
    ref = TERReference(rows + rows[:1], labels + labels[:1])
    assert_model_matches(left, ref, [rows[0]], RTOL)
