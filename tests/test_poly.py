"""Tests of PolynomialExtender (Toh's reduced model and the full one) and PolynomialOrderSelector.

The expansions are checked against plain-Python references written here (loops over the terms
of algorithms page, "Reduced polynomial model (RM)", and river's own
``feature_extraction.PolynomialExtender`` for the
full kind); NR-RLS on the expanded features against a plain-numpy batch TER on the expanded
matrix; the order selector against pipelines raced by hand.
"""

from __future__ import annotations

import itertools
import math
import pickle
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import checks, feature_extraction, metrics

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector, datasets

FEATURES = ("a", "b", "c", "d", "e")
VALUES = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)


# ------------------------------------------------------------------------------- references


def _power(name, power):
    return str(name) if power == 1 else f"{name}^{power}"


def reference_reduced(x, degree, include_bias=False, aggregate="sum", n_features=None):
    """Toh's RM terms, one Python loop per block (algorithms page, "Reduced polynomial model
    (RM)")."""
    present = {name: float(value) for name, value in x.items() if value is not None}
    out = {}
    if include_bias:
        out["bias"] = 1.0  # block 1
    for name, value in present.items():
        for k in range(1, degree + 1):
            out[_power(name, k)] = value**k  # block 2: x_j^k
    if degree == 1:
        return out
    total = math.fsum(present.values())
    if aggregate == "mean":
        total /= n_features
    for k in range(1, degree + 1):
        out[_power(aggregate, k)] = total**k  # block 3: S^k
    for name, value in present.items():
        for k in range(2, degree + 1):
            out[f"{name}*{_power(aggregate, k - 1)}"] = value * total ** (k - 1)  # block 4
    return out


def reference_full(x, degree, include_bias=False):
    """Every monomial of degree 1..r, by brute force over sorted feature tuples."""
    present = {name: float(value) for name, value in x.items() if value is not None}
    names = sorted(present)
    out = {"bias": 1.0} if include_bias else {}
    for size in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(names, size):
            out["*".join(combo)] = math.prod(present[name] for name in combo)
    return out


def reference_count(n_inputs, degree, kind, include_bias):
    bias = int(include_bias)
    if kind == "full":
        return math.comb(n_inputs + degree, degree) - 1 + bias
    if degree == 1:
        return n_inputs + bias
    return degree + n_inputs * (2 * degree - 1) + bias


def assert_dicts_close(actual, expected, rtol=1e-12):
    assert list(actual) == list(dict.fromkeys(actual))  # (names are unique by construction)
    assert set(actual) == set(expected)
    for name, value in expected.items():
        assert isinstance(actual[name], float)
        assert math.isclose(actual[name], value, rel_tol=rtol, abs_tol=rtol), name


def batch_ter(rows, labels, positive, b=1e-4, tau=0.0, eta=1.0):
    """Plain-numpy TER of class ``positive`` against the rest on dict rows (absent = 0).

    Returns ``(intercept, {feature: weight})`` solving
    ``(A+/n+ + A-/n- + b I) w = (tau + eta) s+/n+ + (tau - eta) s-/n-`` with a column of ones.
    """
    names = sorted({name for row in rows for name in row})
    matrix = np.array([[1.0] + [row.get(name, 0.0) for name in names] for row in rows])
    is_positive = np.array([label == positive for label in labels])
    system = b * np.eye(matrix.shape[1])
    rhs = np.zeros(matrix.shape[1])
    for mask, target in ((is_positive, tau + eta), (~is_positive, tau - eta)):
        part = matrix[mask]
        if len(part):
            system += part.T @ part / len(part)
            rhs += target * part.sum(axis=0) / len(part)
    weights = np.linalg.solve(system, rhs)
    return weights[0], dict(zip(names, weights[1:]))


@st.composite
def rows_strategy(draw, max_rows=6):
    """Rows over a few features: absent keys, None values, shuffled key order."""
    n_rows = draw(st.integers(1, max_rows))
    rows = []
    for _ in range(n_rows):
        keys = draw(st.lists(st.sampled_from(FEATURES), unique=True, max_size=len(FEATURES)))
        rows.append({key: draw(st.one_of(VALUES, st.none())) for key in keys})
    return rows


EXTENDER_PARAMS = st.one_of(
    st.fixed_dictionaries(
        {
            "degree": st.integers(1, 6),
            "kind": st.just("reduced"),
            "include_bias": st.booleans(),
            "aggregate": st.just("sum"),
        }
    ),
    st.fixed_dictionaries(
        {
            "degree": st.integers(1, 6),
            "kind": st.just("reduced"),
            "include_bias": st.booleans(),
            "aggregate": st.just("mean"),
            "n_features": st.integers(1, 10),
        }
    ),
    st.fixed_dictionaries(
        {"degree": st.integers(1, 4), "kind": st.just("full"), "include_bias": st.booleans()}
    ),
)


def reference(x, params):
    if params["kind"] == "full":
        return reference_full(x, params["degree"], params["include_bias"])
    return reference_reduced(
        x,
        params["degree"],
        params["include_bias"],
        params.get("aggregate", "sum"),
        params.get("n_features"),
    )


# ----------------------------------------------------------------------------- values, count


@pytest.mark.parametrize("degree", range(1, 7))
@pytest.mark.parametrize("include_bias", [False, True])
@pytest.mark.parametrize("aggregate", ["sum", "mean"])
def test_reduced_matches_reference_on_pima(degree, include_bias, aggregate):
    n_features = 8 if aggregate == "mean" else None
    poly = PolynomialExtender(degree, "reduced", include_bias, aggregate, n_features)
    for x, _ in itertools.islice(datasets.Pima(), 20):
        expected = reference_reduced(x, degree, include_bias, aggregate, n_features)
        assert_dicts_close(poly.transform_one(x), expected)


@pytest.mark.parametrize("degree", range(1, 7))
@pytest.mark.parametrize("include_bias", [False, True])
def test_full_matches_river_and_reference(degree, include_bias):
    river_poly = feature_extraction.PolynomialExtender(degree, include_bias=include_bias)
    poly = PolynomialExtender(degree, kind="full", include_bias=include_bias)
    for x, _ in itertools.islice(datasets.Bupa(), 10):  # 6 features: up to 923 monomials
        ours = poly.transform_one(x)
        assert_dicts_close(ours, reference_full(x, degree, include_bias))
        assert_dicts_close(ours, river_poly.transform_one(x))


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy(max_rows=1), params=EXTENDER_PARAMS)
def test_transform_one_matches_reference(rows, params):
    poly = PolynomialExtender(**params)
    x = rows[0]
    expected = reference(x, params)
    assert_dicts_close(poly.transform_one(x), expected, rtol=1e-9)
    n_present = sum(value is not None for value in x.values())
    count = reference_count(n_present, params["degree"], params["kind"], params["include_bias"])
    assert len(expected) == count == poly.n_outputs(n_present)


@settings(max_examples=40, deadline=None)
@given(rows=rows_strategy(max_rows=1), params=EXTENDER_PARAMS)
def test_expand_with_layout_is_transform_one_with_its_columns_orders(rows, params):
    """The selector's expansion (`expand_with_layout`): transform_one's values bit for bit,
    their names in column order and `output_orders`; the columns of order r or less are the
    expansion of degree r, with the same values (the nesting the selector builds on)."""
    poly = PolynomialExtender(**params)
    x = rows[0]
    expansion = poly.expand_with_layout(x)
    assert expansion.values == poly.transform_one(x)
    assert expansion.names == list(expansion.values)
    assert dict(zip(expansion.names, expansion.orders)) == poly.output_orders(x)
    for degree in range(1, params["degree"]):
        lower = poly.clone({"degree": degree}).transform_one(x)
        nested = {
            name: value
            for name, value, order in zip(
                expansion.names, expansion.values.values(), expansion.orders
            )
            if order <= degree
        }
        assert nested == lower and list(nested) == list(lower)


@pytest.mark.parametrize(
    ("n_inputs", "degree", "with_bias"),
    # algorithms page, "Reduced polynomial model (RM)": K = 1 + r + l(2r - 1), e.g. 95 at (8, 6),
    # 249 at (22, 6), 799 at (72, 6)
    [(8, 6, 95), (22, 6, 249), (72, 6, 799), (3, 2, 12), (166, 3, 834), (8, 1, 9)],
)
def test_reduced_count_formula(n_inputs, degree, with_bias):
    x = {f"x{j}": 0.5 for j in range(n_inputs)}
    assert len(PolynomialExtender(degree, include_bias=True).transform_one(x)) == with_bias
    assert len(PolynomialExtender(degree).transform_one(x)) == with_bias - 1
    assert PolynomialExtender(degree, include_bias=True).n_outputs(n_inputs) == with_bias


def test_full_count_formula():
    # C(l + r, r) - 1 monomials: 376,739 for l = 22, r = 6 (counted, not built)
    assert PolynomialExtender(6, kind="full").n_outputs(22) == 376_739
    x = {f"x{j}": 1.0 for j in range(5)}
    for degree in range(1, 5):
        out = PolynomialExtender(degree, kind="full").transform_one(x)
        assert len(out) == math.comb(5 + degree, degree) - 1


def test_degree_one_is_the_linear_model():
    x = {"b": 0.25, "a": -1.5, "c": 2.0}
    for kind in ("reduced", "full"):
        assert PolynomialExtender(1, kind=kind).transform_one(x) == {"a": -1.5, "b": 0.25, "c": 2.0}
    assert PolynomialExtender(1, include_bias=True).transform_one(x)["bias"] == 1.0


def test_documented_names():
    poly = PolynomialExtender(3, include_bias=True)
    assert list(poly.transform_one({"y": 1.0, "x": 2.0})) == [
        "bias",
        "x", "y", "x^2", "y^2", "x^3", "y^3",
        "sum", "sum^2", "sum^3",
        "x*sum", "y*sum", "x*sum^2", "y*sum^2",
    ]  # fmt: skip
    mean = PolynomialExtender(2, aggregate="mean", n_features=4)
    assert list(mean.transform_one({"x": 2.0})) == ["x", "x^2", "mean", "mean^2", "x*mean"]
    assert PolynomialExtender(2).transform_one({3: 2.0}) == {
        "3": 2.0, "3^2": 4.0, "sum": 2.0, "sum^2": 4.0, "3*sum": 4.0,
    }  # fmt: skip


# ------------------------------------------------------------------------- missing, order


def test_absent_features_count_as_zero_and_have_no_columns():
    poly = PolynomialExtender(3)
    both = poly.transform_one({"a": 0.5, "b": 0.25})
    only_a = poly.transform_one({"a": 0.5})
    assert only_a == poly.transform_one({"a": 0.5, "b": None})
    assert not any(name.startswith("b") for name in only_a)
    assert set(both) - set(only_a) == {"b", "b^2", "b^3", "b*sum", "b*sum^2"}
    assert only_a["sum^3"] == 0.5**3  # b adds nothing to the sum
    # a present zero is a value: its columns exist (and are zero)
    assert poly.transform_one({"a": 0.5, "b": 0.0})["b*sum"] == 0.0
    # the sum columns always exist, even for an empty x
    assert poly.transform_one({}) == {"sum": 0.0, "sum^2": 0.0, "sum^3": 0.0}


def test_mean_divides_by_the_constant_n_features():
    """An emerging feature never changes the S columns of a past sample (the stream's l is a
    constant), which is what keeps NR-RLS exact when features appear."""
    poly = PolynomialExtender(2, aggregate="mean", n_features=4)
    past = poly.transform_one({"a": 0.8})
    assert past["mean"] == 0.8 / 4
    assert poly.transform_one({"a": 0.8, "b": 0.0})["mean"] == past["mean"]
    assert poly.transform_one({"a": 0.8, "b": 0.4})["mean^2"] == pytest.approx((1.2 / 4) ** 2)
    # same span as the sum: each S column is a fixed multiple of the sum's
    total = PolynomialExtender(2).transform_one({"a": 0.8, "b": 0.4})
    mean = poly.transform_one({"a": 0.8, "b": 0.4})
    assert mean["a*mean"] == pytest.approx(total["a*sum"] / 4)
    assert mean["mean^2"] == pytest.approx(total["sum^2"] / 16)


@settings(max_examples=30, deadline=None)
@given(rows=rows_strategy(max_rows=1), params=EXTENDER_PARAMS, seed=st.integers(0, 2**16))
def test_key_order_does_not_matter(rows, params, seed):
    x = rows[0]
    keys = list(x)
    random.Random(seed).shuffle(keys)
    poly = PolynomialExtender(**params)
    first = poly.transform_one(x)
    second = poly.transform_one({key: x[key] for key in keys})
    assert list(first.items()) == list(second.items())


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy(), params=EXTENDER_PARAMS)
def test_transform_many_matches_transform_one(rows, params):
    poly = PolynomialExtender(**params)
    frame = pd.DataFrame(rows, index=[f"r{i}" for i in range(len(rows))])
    many = poly.transform_many(frame)
    assert list(many.index) == list(frame.index)
    ones = [poly.transform_one(x) for x in rows]
    # the columns are the expansion of every feature observed in some row: the same names as
    # transform_one on all those features (for "full", products of features that never meet in
    # one row are columns of zeros)
    observed = {name: 1.0 for x in rows for name, value in x.items() if value is not None}
    assert list(many.columns) == list(poly.transform_one(observed))
    assert set(many.columns) >= set().union(*ones)
    if params["kind"] == "reduced":
        assert set(many.columns) == set().union(*ones)
    for one, (_, row) in zip(ones, many.iterrows()):
        for name, value in row.items():
            assert math.isclose(value, one.get(name, 0.0), rel_tol=1e-12, abs_tol=1e-12)
    # column order is the expansion order and ignores the frame's column order
    shuffled = poly.transform_many(frame[list(reversed(frame.columns))])
    pd.testing.assert_frame_equal(many, shuffled)
    if len(rows) == 1:
        assert list(many.columns) == list(ones[0])


def test_transform_many_is_vectorised_and_keeps_the_index():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((500, 6)), columns=list("uvwxyz"), index=range(10, 510))
    frame.iloc[::7, 2] = np.nan  # missing cells are zero
    many = PolynomialExtender(4, include_bias=True).transform_many(frame)
    assert many.shape == (500, 1 + 4 + 6 * 7)
    assert list(many.index) == list(frame.index)
    for position in (0, 7, 499):
        x = {k: v for k, v in frame.iloc[position].items() if not math.isnan(v)}
        expected = reference_reduced(x, 4, include_bias=True)
        assert_dicts_close({k: v for k, v in many.iloc[position].items() if k in expected},
                           expected, rtol=1e-12)  # fmt: skip
    assert (many.iloc[0][["w", "w^4", "w*sum^3"]] == 0.0).all()


def test_transform_many_drops_all_missing_columns_and_accepts_empty_frames():
    poly = PolynomialExtender(2)
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [None, None]})
    assert list(poly.transform_many(frame).columns) == ["a", "a^2", "sum", "sum^2", "a*sum"]
    empty = poly.transform_many(pd.DataFrame({"a": []}, dtype=float))
    assert len(empty) == 0 and {"sum", "sum^2"} <= set(empty.columns)


# -------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"degree": 0}, ValueError, "degree"),
        ({"degree": -2}, ValueError, "degree"),
        ({"degree": 2.0}, TypeError, "degree"),
        ({"degree": "3"}, TypeError, "degree"),
        ({"degree": True}, TypeError, "degree"),
        ({"degree": None}, TypeError, "degree"),
        ({"kind": "complete"}, ValueError, "kind"),
        ({"aggregate": "median"}, ValueError, "aggregate"),
        ({"aggregate": "mean"}, ValueError, "n_features"),
        ({"aggregate": "mean", "n_features": 0}, ValueError, "n_features"),
        ({"aggregate": "mean", "n_features": 2.5}, ValueError, "n_features"),
        ({"n_features": 3}, ValueError, "n_features"),
        ({"kind": "full", "aggregate": "mean", "n_features": 3}, ValueError, "reduced"),
        ({"include_bias": "yes"}, TypeError, "include_bias"),
    ],
)
def test_invalid_parameters(params, error, match):
    with pytest.raises(error, match=match):
        PolynomialExtender(**params)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (-math.inf, ValueError),
        ("1.0", TypeError),
        ([1.0], TypeError),
        (1j, TypeError),
        (10**400, ValueError),
    ],
)
def test_bad_values_name_the_feature(value, error):
    poly = PolynomialExtender(3)
    before = pickle.dumps(poly)
    with pytest.raises(error, match="'bad'"):
        poly.transform_one({"good": 1.0, "bad": value})
    assert pickle.dumps(poly) == before
    frame = pd.DataFrame({"good": [1.0, 2.0], "bad": pd.Series([0.5, value], dtype=object)})
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        with pytest.raises(error, match="'bad'"):
            poly.transform_many(frame)
    assert pickle.dumps(poly) == before


def test_bad_containers():
    poly = PolynomialExtender(2)
    with pytest.raises(TypeError, match="dict"):
        poly.transform_one([("a", 1.0)])
    with pytest.raises(TypeError, match="DataFrame"):
        poly.transform_many(np.ones((2, 2)))
    frame = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])
    with pytest.raises(ValueError, match="duplicated"):
        poly.transform_many(frame)


@pytest.mark.parametrize(
    ("params", "x", "culprit"),
    [
        ({"degree": 2}, {"a": 1.0, "a^2": 2.0}, "a^2"),
        ({"degree": 2}, {"sum": 1.0}, "sum"),
        ({"degree": 1}, {1: 1.0, "1": 2.0}, "1"),
        ({"degree": 2, "kind": "full"}, {"a": 1.0, "b": 2.0, "a*b": 3.0}, "a*b"),
        ({"degree": 1, "include_bias": True}, {"bias": 1.0}, "bias"),
    ],
)
def test_name_collisions_raise(params, x, culprit):
    poly = PolynomialExtender(**params)
    before = pickle.dumps(poly)
    with pytest.raises(ValueError, match=culprit.replace("*", r"\*").replace("^", r"\^")):
        poly.transform_one(x)
    with pytest.raises(ValueError, match="rename"):
        poly.transform_many(pd.DataFrame([x]))
    assert pickle.dumps(poly) == before
    assert poly.transform_one({"z": 1.0})["z"] == 1.0  # still usable


def test_equal_keys_of_different_types_keep_their_own_names():
    poly = PolynomialExtender(2)
    assert "1^2" in poly.transform_one({1: 2.0})
    assert "1.0^2" in poly.transform_one({1.0: 2.0})
    assert "True^2" in poly.transform_one({True: 2.0})
    assert "1^2" in poly.transform_many(pd.DataFrame({1: [2.0]})).columns


def test_pickle_does_not_depend_on_what_was_transformed():
    poly = PolynomialExtender(3)
    before = pickle.dumps(poly)
    poly.transform_one({"a": 1.0, "b": 2.0})
    assert pickle.dumps(poly) == before
    clone = pickle.loads(pickle.dumps(poly))
    assert clone.transform_one({"b": 2.0, "a": 1.0}) == poly.transform_one({"a": 1.0, "b": 2.0})


# --------------------------------------------------------------------- NR-RLS on RM features


def _emerging_stream(n_samples=90, seed=3):
    """[0, 1] features; "c" appears after 30 samples and "d" after 60; some absent values."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n_samples):
        x = {"a": rng.random(), "b": rng.random()}
        if i >= 30:
            x["c"] = rng.random()
        if i >= 60 and rng.random() < 0.8:
            x["d"] = rng.random()
        if rng.random() < 0.1:
            x["b"] = None
        label = bool(x["a"] ** 2 + 0.5 * x.get("c", 0.0) + 0.1 * rng.normal() > 0.45)
        rows.append(x)
        labels.append(label)
    return rows, labels


@pytest.mark.parametrize(
    "extender",
    [
        PolynomialExtender(3),
        PolynomialExtender(4, aggregate="mean", n_features=4),
        PolynomialExtender(2, kind="full"),
    ],
    ids=["reduced-sum", "reduced-mean", "full"],
)
@pytest.mark.parametrize("batched", [False, True])
def test_nrrls_on_expanded_features_is_the_batch_ter(extender, batched):
    rows, labels = _emerging_stream()
    model = extender.clone() | NRRLS()
    params = extender._get_params()
    expanded = [reference(x, params) for x in rows]
    for stop in (45, 90):  # after "c" emerged, and after "d" too
        start = 0 if stop == 45 else 45
        if batched:
            model.learn_many(pd.DataFrame(rows[start:stop]), pd.Series(labels[start:stop]))
        else:
            for x, y in zip(rows[start:stop], labels[start:stop]):
                model.learn_one(x, y)
        intercept, weights = batch_ter(expanded[:stop], labels[:stop], positive=True)
        nrrls = model["NRRLS"]
        learnt = nrrls.weights[True]
        assert set(learnt) == set(weights)
        scale = max(abs(intercept), max(map(abs, weights.values())))
        assert abs(nrrls.intercepts[True] - intercept) <= 1e-7 * scale
        for name, weight in weights.items():
            assert abs(learnt[name] - weight) <= 1e-7 * scale, name


# ---------------------------------------------------------------- river checks on the pipeline


def _pipeline_cases():
    model = PolynomialExtender(3) | NRRLS()
    # No check is skipped: the pipeline holds no stateful scaler, so learn_many must match
    # learn_one exactly (the expansion is stateless and NR-RLS is exact).
    for i, check in enumerate(checks.yield_checks(model)):
        assert check.__name__ not in model._unit_test_skips()
        yield pytest.param(model, check, id=f"{i:02d}-{check.__name__}")


@pytest.mark.parametrize(("model", "check"), list(_pipeline_cases()))
def test_pipeline_passes_river_checks(model, check):
    check(model.clone())


# ------------------------------------------------------------------------- order selection


def _race_by_hand(stream, orders, extender, metric):
    """Pipelines raced on a prequential metric, written out: (best order, scores) per step."""
    pipelines = {r: extender.clone({"degree": r}) | NRRLS() for r in orders}
    scores = {r: metric.clone() for r in orders}
    history = []
    for x, y in stream:
        for r in orders:
            y_pred = pipelines[r].predict_one(x)
            if y_pred is not None:
                scores[r].update(y, y_pred)
            pipelines[r].learn_one(x, y)
        values = {r: scores[r].get() for r in orders}
        best = min(orders, key=lambda r: (-values[r], r))  # highest score, then lowest order
        history.append((best, values))
    return history


@pytest.mark.parametrize(
    "extender",
    [PolynomialExtender(), PolynomialExtender(aggregate="mean", n_features=8)],
    ids=["sum", "mean"],
)
def test_selector_follows_the_hand_race(extender):
    stream = list(itertools.islice(datasets.Pima(), 150))
    orders = (1, 2, 4)
    expected = _race_by_hand(stream, orders, extender, metrics.GeometricMean())
    selector = PolynomialOrderSelector(orders=(4, 1, 2), extender=extender)
    assert selector.best_order == 1  # nothing scored yet: the lowest order
    assert list(selector.pipelines) == [1, 2, 4]
    reference_models = {r: extender.clone({"degree": r}) | NRRLS() for r in orders}
    changes = set()
    for (x, y), (best, values) in zip(stream, expected):
        prediction = selector.predict_one(x)
        assert prediction == reference_models[selector.best_order].predict_one(x)
        selector.learn_one(x, y)
        for model in reference_models.values():
            model.learn_one(x, y)
        assert selector.best_order == best
        assert {r: score.get() for r, score in selector.scores.items()} == values
        changes.add(best)
    assert len(changes) > 1  # the race is not trivially won by one order on this prefix


def _race_by_blocks(stream, orders, extender, block):
    """Block-prequential race written out the other way round: every order predicts a whole
    block with the weights it had before the block, then learns the block; (best, scores) after
    every sample."""
    pipelines = {r: extender.clone({"degree": r}) | NRRLS() for r in orders}
    scores = {r: metrics.GeometricMean() for r in orders}
    history = []
    for start in range(0, len(stream), block):
        chunk = stream[start : start + block]
        predictions = {r: [pipelines[r].predict_one(x) for x, _ in chunk] for r in orders}
        for i, (_, y) in enumerate(chunk):
            for r in orders:
                if predictions[r][i] is not None:
                    scores[r].update(y, predictions[r][i])
            values = {r: scores[r].get() for r in orders}
            history.append((min(orders, key=lambda r: (-values[r], r)), values))
        for x, y in chunk:
            for r in orders:
                pipelines[r].learn_one(x, y)
    return history, pipelines


@pytest.mark.parametrize("block", [7, 25])
def test_selector_block_prequential_follows_the_block_race(block):
    stream = list(itertools.islice(datasets.Pima(), 160))
    extender = PolynomialExtender(aggregate="mean", n_features=8)
    expected, reference = _race_by_blocks(stream, (1, 2, 4), extender, block)
    selector = PolynomialOrderSelector(orders=(1, 2, 4), extender=extender, block=block)
    for (x, y), (best, values) in zip(stream, expected):
        selector.learn_one(x, y)
        assert selector.best_order == best
        assert {r: score.get() for r, score in selector.scores.items()} == values
    # The first block is not scored; every later sample is.
    for score in selector.scores.values():
        assert score.cm.total_weight == len(stream) - block
    # The pipelines have learnt every sample, whatever the block: best_model is up to date.
    x_test = stream[0][0]
    for r, model in selector.pipelines.items():
        assert model.predict_one(x_test) == reference[r].predict_one(x_test)
        assert model["NRRLS"].n_samples == reference[r]["NRRLS"].n_samples


def test_selector_block_one_is_the_plain_race():
    stream = list(itertools.islice(datasets.Heart(), 90))
    plain, blocked = (
        PolynomialOrderSelector(orders=(1, 3)),
        PolynomialOrderSelector(orders=(1, 3), block=1),
    )
    for x, y in stream:
        plain.learn_one(x, y)
        blocked.learn_one(x, y)
    assert pickle.dumps(plain) == pickle.dumps(blocked)
    # and a block changes the scores (the weights lag), so the test above can fail
    lagging = PolynomialOrderSelector(orders=(1, 3), block=10)
    for x, y in stream:
        lagging.learn_one(x, y)
    assert lagging.scores[3].get() != plain.scores[3].get()


def test_selector_block_bad_input_leaves_it_unchanged():
    selector = PolynomialOrderSelector(orders=(1, 2), block=4)
    for position, (x, y) in enumerate(itertools.islice(datasets.Pima(), 12)):
        if position in (8, 9):  # at the start of a block (8) and inside one (9)
            before = pickle.dumps(selector)
            with pytest.raises(ValueError, match="'glucose'"):
                selector.learn_one({**x, "glucose": math.inf}, y)
            assert pickle.dumps(selector) == before
        selector.learn_one(x, y)


def test_selector_ties_keep_the_lowest_order():
    selector = PolynomialOrderSelector(orders=(3, 2))
    for x, _ in itertools.islice(datasets.Pima(), 30):
        selector.learn_one(x, True)  # one class: every order predicts it, scores tie
    assert selector.scores[2].get() == selector.scores[3].get()
    assert selector.best_order == 2


def test_selector_with_a_probability_metric():
    stream = list(itertools.islice(datasets.Heart(), 80))
    selector = PolynomialOrderSelector(orders=(1, 2), metric=metrics.ROCAUC())
    by_hand = {r: PolynomialExtender(r) | NRRLS() for r in (1, 2)}
    scores = {r: metrics.ROCAUC() for r in (1, 2)}
    for x, y in stream:
        for r, model in by_hand.items():
            proba = model.predict_proba_one(x)
            if proba:
                scores[r].update(y, proba)
            model.learn_one(x, y)
        selector.learn_one(x, y)
    assert {r: s.get() for r, s in selector.scores.items()} == {
        r: s.get() for r, s in scores.items()
    }


def test_selector_bad_input_leaves_it_unchanged():
    selector = PolynomialOrderSelector(orders=(1, 2))
    for x, y in itertools.islice(datasets.Pima(), 20):
        selector.learn_one(x, y)
    before = pickle.dumps(selector)
    with pytest.raises(ValueError, match="'glucose'"):
        selector.learn_one({"glucose": math.nan, "age": 0.5}, True)
    with pytest.raises(TypeError, match="'glucose'"):
        selector.learn_one({"glucose": "high"}, True)
    with pytest.raises(TypeError, match="hashable"):
        selector.learn_one({"glucose": 0.5}, ["not", "hashable"])
    with pytest.raises(ValueError, match="'glucose'"):
        selector.predict_one({"glucose": math.inf})
    assert pickle.dumps(selector) == before


@pytest.mark.parametrize("block", [1, 3])
@pytest.mark.parametrize("orders", [(1, 2), (3, 1, 2)])
def test_a_sample_only_learning_refuses_leaves_every_score_and_pipeline_unchanged(orders, block):
    """A missing label, and values that every order predicts from but whose order-2 and
    order-3 statistics would leave NR-RLS's range (1e100 squared is within it, its square is
    not), were refused only after the lower orders had scored or learnt the sample."""
    selector = PolynomialOrderSelector(orders=orders, block=block)
    for x, y in itertools.islice(datasets.Pima(), 20):
        selector.learn_one(x, y)
    huge = {"glucose": 1e100, "age": 0.5}
    for pipeline in selector.pipelines.values():  # every order predicts it (and caches so)
        assert pipeline.predict_one(huge) in (True, False)
    before = pickle.dumps(selector)
    for label in (None, math.nan):
        with pytest.raises(ValueError, match="missing"):
            selector.learn_one({"glucose": 0.5}, label)
    with pytest.raises(ValueError, match="too large"):
        selector.learn_one(huge, True)
    assert pickle.dumps(selector) == before


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"orders": ()}, ValueError, "orders"),
        ({"orders": (0, 1)}, ValueError, "orders"),
        ({"orders": (1, 1)}, ValueError, "distinct"),
        ({"orders": (1.5,)}, ValueError, "orders"),
        ({"orders": 3}, ValueError, "orders"),
        ({"extender": NRRLS()}, TypeError, "extender"),
        ({"classifier": PolynomialExtender()}, TypeError, "classifier"),
        ({"metric": metrics.MAE()}, TypeError, "metric"),
        ({"block": 0}, ValueError, "block"),
        ({"block": 2.0}, ValueError, "block"),
        ({"block": True}, ValueError, "block"),
    ],
)
def test_selector_invalid_parameters(params, error, match):
    with pytest.raises(error, match=match):
        PolynomialOrderSelector(**params)
