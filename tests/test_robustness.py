"""Regression tests of issue 11: every input either works exactly or is refused, nothing is lost."""

from __future__ import annotations

import copy
import math
import pickle
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference import TERReference, assert_model_matches
from river import compose, linear_model, stream

from river_nrrls import NRRLS, OCSCA, PolynomialExtender, merge
from river_nrrls._woodbury import WoodburyAccuracyWarning
from river_nrrls.baselines import (
    ARRLS,
    IRRLS,
    ACOGClassifier,
    AROWClassifier,
    CSOGDClassifier,
    CWClassifier,
)
from river_nrrls.cli import main

TWO = [({"a": 1.0}, True), ({"a": -1.0}, False)]


def _trained(**params) -> NRRLS:
    model = NRRLS(**params)
    for x, y in TWO:
        model.learn_one(x, y)
    return model


def _assert_refused(model, call, error=ValueError, match=None):
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        call()
    assert pickle.dumps(model) == before


# ------------------------------------------------------------- 1. large finite values


@pytest.mark.parametrize("solver", ["cholesky", "woodbury"])
@pytest.mark.parametrize("value", [1e155, -1e200, 1e308, 10**200])
def test_learn_one_refuses_a_value_whose_square_overflows(solver, value):
    model = _trained(solver=solver)
    _assert_refused(model, lambda: model.learn_one({"a": value}, True), match="'a'")
    _assert_refused(model, lambda: model.learn_one({"b": 1.0, "z": value}, True), match="'z'")
    assert all(math.isfinite(w) for w in model.weights[True].values())
    assert model.predict_one({"a": 1.0}) is True


def test_learn_many_refuses_a_value_whose_square_overflows_naming_feature_and_row():
    model = _trained()
    X = pd.DataFrame({"a": [1.0, 2.0, 1e160], "b": [0.0, 1.0, 2.0]}, index=[7, 8, 9])
    y = pd.Series([True, False, True], index=X.index)
    _assert_refused(model, lambda: model.learn_many(X, y), match=r"'a' \(row 9\)")


def test_a_large_sample_weight_is_refused_like_a_large_value():
    model = _trained()
    _assert_refused(model, lambda: model.learn_one({"a": 1e100}, True, w=1e120), match="'a'")
    _assert_refused(model, lambda: model.learn_one({"a": 1.0}, True, w=1e301), match="mass")
    X = pd.DataFrame({"a": [1e100, 1.0]})
    y = pd.Series([True, False])
    _assert_refused(model, lambda: model.learn_many(X, y, w=[1e120, 1.0]), match="'a'")


@pytest.mark.parametrize("batch", [False, True])
def test_the_statistics_stay_finite_however_large_legal_samples_accumulate(batch):
    model = _trained()
    rows = [({"a": 9e149}, True)] * 3
    if batch:
        X = pd.DataFrame([x for x, _ in rows])
        y = pd.Series([label for _, label in rows])
        model.learn_many(X.iloc[:1], y.iloc[:1])
        _assert_refused(model, lambda: model.learn_many(X.iloc[1:], y.iloc[1:]), match="'a'")
    else:
        model.learn_one(*rows[0])
        _assert_refused(model, lambda: model.learn_one(*rows[1]), match="'a'")
    assert np.isfinite(model.statistics.data).all()
    reference = TERReference([x for x, _ in TWO] + [rows[0][0]], [True, False, True])
    assert_model_matches(model, reference, [{"a": 1.0}], rtol=1e-6)


def test_merging_refuses_statistics_that_would_overflow():
    left, right = _trained(), _trained()
    left.learn_one({"a": 9e149}, True)
    right.learn_one({"a": 9e149}, True)
    _assert_refused(left, lambda: left + right, match="'a'")
    _assert_refused(left, lambda: left.__iadd__(right), match="'a'")
    _assert_refused(left, lambda: merge(left, right), match="'a'")


def test_dask_fit_refuses_values_whose_square_overflows():
    import dask.dataframe as dd

    from river_nrrls import dask as nrrls_dask

    frame = pd.DataFrame({"a": [1.0, -1.0, 1e155, 2.0], "y": [True, False, True, False]})
    with pytest.raises(ValueError, match="'a'"):
        nrrls_dask.fit(dd.from_pandas(frame, npartitions=2), "y")


def test_polynomial_pipeline_refuses_then_keeps_predicting():
    model = PolynomialExtender(3) | NRRLS()
    for x, y in TWO:
        model.learn_one(x, y)
    _assert_refused(model, lambda: model.learn_one({"a": 1e60}, True), match="a")
    probabilities = model.predict_proba_one({"a": 2.0})
    assert math.isclose(sum(probabilities.values()), 1.0)
    assert all(math.isfinite(p) for p in probabilities.values())


@pytest.mark.parametrize("kind", ["reduced", "full"])
def test_polynomial_extender_never_emits_infinities(kind):
    poly = PolynomialExtender(3, kind=kind)
    with pytest.raises(ValueError, match="'b'.*degree 3"):
        poly.transform_one({"a": 1.0, "b": 1e200})
    with pytest.raises(ValueError, match="'b'.*row 'r2'"):
        poly.transform_many(pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, -1e120]}, index=["r", "r2"]))
    assert all(math.isfinite(v) for v in poly.transform_one({"a": 1e100}).values())


def _write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return str(path)


def test_cli_refuses_a_huge_column_cleanly(tmp_path, capsys):
    rows = [f"{i % 7},{1e200 if i == 3 else i},{i % 2}" for i in range(40)]
    path = _write(tmp_path / "big.csv", "a,b,y", rows)
    assert main(["evaluate", "--csv", path, "--target", "y", "--models", "nrrls"]) == 2
    error = capsys.readouterr().err
    assert "column 'b'" in error and "too large" in error and "Traceback" not in error


def test_cli_reports_a_model_refusal_cleanly(tmp_path, capsys):
    rows = [f"{9e149 if i % 2 else 0.5},{i % 2}" for i in range(40)]
    path = _write(tmp_path / "sum.csv", "a,y", rows)
    assert main(["evaluate", "--csv", path, "--target", "y", "--models", "nrrls"]) == 2
    assert "'a'" in capsys.readouterr().err


# ----------------------------------------------------------- 2. NaN probabilities


@pytest.mark.parametrize("eta", [1.0, 1e-300, 5e-324])
@pytest.mark.parametrize("value", [-1e308, 1e308, -1e200, 0.0])
def test_probabilities_are_finite_sum_to_one_and_agree_with_predict(eta, value):
    model = _trained(eta=eta)
    x = {"a": value}
    probabilities = model.predict_proba_one(x)
    assert all(math.isfinite(p) for p in probabilities.values())
    assert math.isclose(sum(probabilities.values()), 1.0)
    assert max(probabilities, key=probabilities.get) == model.predict_one(x)
    frame = model.predict_proba_many(pd.DataFrame([x, {"a": 1.0}]))
    assert np.isfinite(frame.to_numpy()).all()
    np.testing.assert_allclose(frame.sum(axis=1), 1.0)
    predictions = model.predict_many(pd.DataFrame([x, {"a": 1.0}]))
    assert frame.idxmax(axis=1).tolist() == predictions.tolist()


def test_outputs_that_overflow_are_refused_naming_the_feature():
    model = NRRLS(l2=1e-30)
    for x, y in [({"a": 1e-10}, True), ({"a": -1e-10}, False)]:
        model.learn_one(x, y)
    assert abs(model.weights[True]["a"]) > 1e9
    for predict in (model.predict_one, model.predict_proba_one, model.decision_one):
        for value in (1e300, 1e308):
            with pytest.raises(ValueError, match="overflow.*'a'"):
                predict({"a": value})
    with pytest.raises(ValueError, match="overflow at row 1.*'a'"):
        model.predict_proba_many(pd.DataFrame({"a": [1.0, 1e308]}))


# ---------------------------------------------------------- 3. huge ints that cancel

HUGE = {"a": 2**1024, "b": -(2**1024)}


def test_cancelling_huge_ints_are_refused_naming_the_feature():
    model = _trained()
    _assert_refused(model, lambda: model.learn_one(HUGE, True), match="feature 'a'")
    with pytest.raises(ValueError, match="feature 'a'"):
        model.predict_one(HUGE)
    model.predict_one({"a": 1, "b": 2})  # prime the dense cache with ints
    with pytest.raises(ValueError, match="feature 'a'"):
        model.predict_one(HUGE)
    with pytest.raises(ValueError, match="feature 'a'"):
        PolynomialExtender(2).transform_one(HUGE)
    ocsca = OCSCA(_trained())
    _assert_refused(ocsca, lambda: ocsca.learn_one(HUGE, True), match="feature 'a'")


# ---------------------------------------------------------------- 4. missing labels

MISSING = [None, float("nan"), np.nan, pd.NA, pd.NaT, np.datetime64("NaT")]


@pytest.mark.parametrize("label", MISSING, ids=repr)
@pytest.mark.parametrize("cls", [NRRLS, ARRLS, IRRLS], ids=lambda c: c.__name__)
def test_learn_one_refuses_missing_labels(label, cls):
    model = cls()
    for x, y in TWO:
        model.learn_one(x, y)
    _assert_refused(model, lambda: model.learn_one({"a": 1.0}, label), match="missing")


@pytest.mark.parametrize("label", MISSING, ids=repr)
@pytest.mark.parametrize("cls", [CWClassifier, AROWClassifier, ACOGClassifier, CSOGDClassifier])
def test_binary_models_refuse_missing_labels(label, cls):
    model = cls()
    _assert_refused(model, lambda: model.learn_one({"a": 1.0}, label))


@pytest.mark.parametrize("label", MISSING, ids=repr)
def test_learn_many_and_pipelines_refuse_missing_labels(label):
    model = _trained()
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=[4, 5, 6])
    y = pd.Series([True, label, False], index=X.index, dtype=object)
    _assert_refused(model, lambda: model.learn_many(X, y), match="row 5")
    pipeline = PolynomialExtender(2) | NRRLS()
    steps = pipeline.steps.values()  # river's pipeline caches its plan: compare the steps
    before = pickle.dumps(list(steps))
    with pytest.raises(ValueError, match="missing"):
        pipeline.learn_one({"a": 1.0}, label)
    with pytest.raises(ValueError, match="row 5"):
        pipeline.learn_many(X, y)
    assert pickle.dumps(list(steps)) == before


def test_a_float_target_with_gaps_from_iter_pandas_is_refused():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    y = pd.Series([1.0, np.nan, 0.0])
    model = NRRLS()
    with pytest.raises(ValueError, match="missing"):
        for x, label in stream.iter_frame(X, y):
            model.learn_one(x, label)
    assert model.n_samples == {1.0: 1.0}
    with pytest.raises(ValueError, match="row 1"):
        NRRLS().learn_many(X, y)


@pytest.mark.parametrize("cell", ["NaN", "NA", "null", "?"])
def test_cli_refuses_missing_targets(tmp_path, capsys, cell):
    path = _write(tmp_path / "gaps.csv", "a,y", ["1,1", f"2,{cell}", "3,0"])
    assert main(["evaluate", "--csv", path, "--target", "y", "--models", "nrrls"]) == 2
    assert "missing target" in capsys.readouterr().err


# ------------------------------------------------------------- 6. merging pipelines


def _pipelines():
    samples = [({"a": float(i % 5), "b": float(i % 3)}, i % 3 == 0) for i in range(30)]
    left, right = PolynomialExtender(2) | NRRLS(), PolynomialExtender(2) | NRRLS()
    for x, y in samples[:20]:
        left.learn_one(x, y)
    for x, y in samples[20:]:
        right.learn_one(x, y)
    return samples, left, right


def test_merge_of_pipelines_equals_one_pipeline_on_both_streams():
    samples, left, right = _pipelines()
    before = pickle.dumps(left), pickle.dumps(right)
    merged = merge(left, right)
    assert (pickle.dumps(left), pickle.dumps(right)) == before
    together = PolynomialExtender(2) | NRRLS()
    for x, y in samples:
        together.learn_one(x, y)
    for x, _ in samples:
        np.testing.assert_allclose(
            list(merged.predict_proba_one(x).values()),
            list(together.predict_proba_one(x).values()),
            rtol=1e-7,
        )
    assert merged["NRRLS"].n_samples == together["NRRLS"].n_samples


@pytest.mark.parametrize(
    ("other", "error", "match"),
    [
        (lambda: PolynomialExtender(3) | NRRLS(), ValueError, "differ"),
        (lambda: PolynomialExtender(2) | NRRLS(l2=1.0), ValueError, "l2"),
        (
            lambda: compose.Pipeline(PolynomialExtender(2), linear_model.LogisticRegression()),
            TypeError,
            "last step",
        ),
        (lambda: NRRLS(), ValueError, "steps"),
        (lambda: 3, TypeError, "right"),
    ],
)
def test_merge_checks_everything_before_changing_anything(other, error, match):
    _, left, _ = _pipelines()
    right = other()
    before = pickle.dumps(left)
    with pytest.raises(error, match=match):
        merge(left, right)
    assert pickle.dumps(left) == before


def test_merge_refuses_a_pipeline_with_a_step_that_learns():
    from river import preprocessing

    left = preprocessing.StandardScaler() | NRRLS()
    with pytest.raises(TypeError, match="learns"):
        merge(left, copy.deepcopy(left))


def test_sum_of_models():
    models = [_trained() for _ in range(3)]
    assert sum(models).n_samples == {True: 3.0, False: 3.0}
    with pytest.raises(TypeError):
        1 + models[0]


# --------------------------------------------------------------- 7. woodbury accuracy


def test_woodbury_warns_and_solves_from_the_statistics_when_it_loses_accuracy():
    model = _trained(solver="woodbury")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WoodburyAccuracyWarning)
        model.learn_one({"a": 1e100}, True)
    with pytest.warns(WoodburyAccuracyWarning, match="residual"):
        weights = model.weights
    reference = _trained()
    reference.learn_one({"a": 1e100}, True)
    np.testing.assert_allclose(weights[True]["a"], reference.weights[True]["a"], rtol=1e-8)
    assert model.decision_one({"a": 1.0}) == pytest.approx(reference.decision_one({"a": 1.0}))


def test_woodbury_does_not_warn_on_a_healthy_stream():
    model = NRRLS(solver="woodbury")
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WoodburyAccuracyWarning)
        for i in range(200):
            model.learn_one(dict(enumerate(rng.normal(size=4))), i % 3)
            model.predict_one({0: 1.0})


# ------------------------------------------------------------ 8. continuous CLI target


def test_cli_refuses_a_continuous_target(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = [f"{a:.6f},{t:.6f}" for a, t in rng.random((300, 2))]
    path = _write(tmp_path / "continuous.csv", "a,y", rows)
    assert main(["evaluate", "--csv", path, "--target", "y", "--models", "nrrls"]) == 2
    assert "300 distinct values" in capsys.readouterr().err


# ----------------------------------------------------- 9. parameters set after construction


def test_setting_an_nrrls_parameter_takes_effect():
    samples = [({"a": float(i % 4), "b": float(i % 3)}, i % 3) for i in range(20)]
    for name, value in [
        ("l2", 10.0),
        ("tau", 0.3),
        ("eta", 2.0),
        ("reweight", False),
        ("intercept", False),
        ("solver", "woodbury"),
    ]:
        model = NRRLS()
        for x, y in samples:
            model.learn_one(x, y)
        setattr(model, name, value)
        fresh = NRRLS(**{name: value})
        for x, y in samples:
            fresh.learn_one(x, y)
        for x, _ in samples[:5]:
            assert model.decision_one(x) == pytest.approx(fresh.decision_one(x), rel=1e-7, abs=1e-9)
        model.learn_one({"a": 1.0}, 1)
        fresh.learn_one({"a": 1.0}, 1)
        assert model.decision_one({"a": 2.0}) == pytest.approx(fresh.decision_one({"a": 2.0}))


def test_an_invalid_parameter_set_later_is_refused_and_changes_nothing():
    model = _trained(solver="woodbury")
    _assert_refused(model, lambda: setattr(model, "l2", 0.0), match="woodbury")
    _assert_refused(model, lambda: setattr(model, "eta", -1.0), match="eta")
    _assert_refused(model, lambda: setattr(model, "forgetting", "x"), TypeError, "forgetting")
    assert model.l2 == 1e-4


def test_parameters_of_the_other_estimators_take_effect_or_raise():
    poly = PolynomialExtender(2)
    poly.degree = 3
    assert "a^3" in poly.transform_one({"a": 2.0})
    with pytest.raises(TypeError, match="degree"):
        poly.degree = 2.5
    assert poly.degree == 3
    ocsca = OCSCA(_trained(), alpha=1.0)
    ocsca.learn_one({"a": 0.5}, True)
    ocsca.alpha = 1e-6
    before = ocsca.weights["a"]
    ocsca.learn_one({"a": 0.5}, True)
    assert abs(ocsca.weights["a"] - before) <= 1e-6 * 0.5 + 1e-15
    _assert_refused(ocsca, lambda: setattr(ocsca, "intercept", True), match="clone")
    ocsca.intercept = False  # the same value: fine
    arrls = ARRLS()
    arrls.l2 = 1.0  # nothing learnt yet: it is the model constructed with l2 = 1
    assert arrls._l2 == 1.0
    arrls.learn_one({"a": 1.0}, True)
    _assert_refused(arrls, lambda: setattr(arrls, "l2", 2.0), match="clone")
    cw = CWClassifier()
    cw.learn_one({"a": 1.0}, True)
    cw.confidence = 0.9
    assert cw._phi == pytest.approx(1.2815515655446004)
    with pytest.raises(ValueError, match="confidence"):
        cw.confidence = 1.0


def test_river_mutate_and_clone_see_the_new_parameter():
    model = _trained()
    model.mutate({"l2": 5.0})
    assert model._l2 == 5.0 and model.clone().l2 == 5.0


# -------------------------------------------------------------------- 10. smaller items


def test_decimal_and_fraction_are_numbers_and_pd_na_is_missing():
    model = NRRLS()
    model.learn_one({"a": Decimal("0.5"), "b": Fraction(1, 2), "c": pd.NA}, True)
    model.learn_one({"a": -0.5, "b": -0.5}, False)
    assert set(model.weights[True]) == {"a", "b"}
    for bad in [Decimal("NaN"), Decimal("1e400"), Decimal("-Infinity")]:
        _assert_refused(model, lambda bad=bad: model.learn_one({"a": bad}, True), match="'a'")


def test_huge_parameters_are_shown_short():
    with pytest.raises(ValueError) as caught:
        NRRLS(l2=2**2000)
    assert len(str(caught.value)) < 120
    with pytest.raises(TypeError, match="degree"):
        PolynomialExtender(degree=2.0)
