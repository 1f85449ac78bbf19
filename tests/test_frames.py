"""Any dataframe river accepts (pandas, polars, pyarrow) in every ``*_many`` method."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from river_nrrls import NRRLS, PolynomialExtender


def _frame(rows: int = 40, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(rows, 3)), columns=["a", "b", "c"])
    y = pd.Series(X["a"] + 0.3 * X["b"] > 0, name="target")
    return X, y


BACKENDS = {
    "polars": (pl.from_pandas, pl.from_pandas),
    "pyarrow": (
        lambda X: pa.Table.from_pandas(X, preserve_index=False),
        lambda y: pa.chunked_array([y.to_numpy()]),
    ),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_nrrls_learns_the_same_from_every_backend(backend):
    to_frame, to_series = BACKENDS[backend]
    X, y = _frame()
    reference, model = NRRLS(), NRRLS()
    reference.learn_many(X, y)
    model.learn_many(to_frame(X), to_series(y))
    assert model.weights == reference.weights
    proba = model.predict_proba_many(to_frame(X))
    assert not isinstance(proba, pd.DataFrame)  # the input's backend, as river returns
    np.testing.assert_array_equal(
        proba.to_pandas().to_numpy(),
        reference.predict_proba_many(X).to_numpy(),
    )
    predictions = pd.Series(np.asarray(model.predict_many(to_frame(X))))
    assert predictions.dtype == bool
    assert predictions.tolist() == reference.predict_many(X).tolist()


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_missing_values_follow_the_pandas_rules(backend):
    to_frame, _ = BACKENDS[backend]
    X, y = _frame()
    X.loc[[1, 5, 9], "b"] = np.nan
    X["d"] = np.nan  # an all-missing column creates no feature
    reference, model = NRRLS(), NRRLS()
    reference.learn_many(X, y)
    model.learn_many(to_frame(X), y)
    assert model.weights == reference.weights
    assert "d" not in model.weights[True]


def test_polars_nulls_are_missing():
    X, y = _frame()
    X.loc[[2, 3], "c"] = np.nan
    polars_frame = pl.from_pandas(X).with_columns(
        pl.when(pl.col("c").is_nan()).then(None).otherwise(pl.col("c")).alias("c")
    )
    assert polars_frame["c"].null_count() == 2
    reference, model = NRRLS(), NRRLS()
    reference.learn_many(X, y)
    model.learn_many(polars_frame, y)
    assert model.weights == reference.weights


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_bad_values_raise_and_leave_the_model_unchanged(backend):
    import pickle

    to_frame, _ = BACKENDS[backend]
    X, y = _frame()
    model = NRRLS()
    model.learn_many(X, y)
    before = pickle.dumps(model)
    X.loc[4, "a"] = np.inf
    with pytest.raises(ValueError, match="'a'"):
        model.learn_many(to_frame(X), y)
    assert pickle.dumps(model) == before


def test_not_a_frame_raises():
    with pytest.raises(TypeError, match="DataFrame"):
        NRRLS().learn_many([[1.0, 2.0]], [True])


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_polynomial_extender_accepts_every_backend(backend):
    to_frame, _ = BACKENDS[backend]
    X, _ = _frame()
    extender = PolynomialExtender(degree=2)
    expected = extender.transform_many(X)
    result = extender.transform_many(to_frame(X))
    assert not isinstance(result, pd.DataFrame)
    assert list(result.column_names if backend == "pyarrow" else result.columns) == list(
        expected.columns
    )
    np.testing.assert_allclose(np.asarray(result.to_pandas()), expected.to_numpy())


def test_predict_many_has_the_label_dtype_and_y_name():
    X, y = _frame()
    model = NRRLS()
    model.learn_many(X, y)
    predictions = model.predict_many(X)
    assert predictions.dtype == bool
    assert predictions.name == "target"
    assert predictions.index.equals(X.index)
    model = NRRLS()
    model.learn_many(X, y.astype(int))
    assert model.predict_many(X).dtype == np.int64


def test_proba_columns_are_classes_in_first_seen_order():
    X, y = _frame()
    y = y.map({True: "yes", False: "no"})
    model = NRRLS()
    model.learn_many(X, y)
    first = list(dict.fromkeys(y))
    assert list(model.predict_proba_many(X).columns) == first
    assert list(model.decision_many(X).columns) == first
    assert list(model.n_samples) == first


def test_tuple_labels_are_flat_columns():
    X, y = _frame()
    y = y.map({True: (1, 2), False: (3,)})
    model = NRRLS()
    model.learn_many(X, y)
    for result in (model.predict_proba_many(X), model.decision_many(X)):
        assert not isinstance(result.columns, pd.MultiIndex)
        assert set(result.columns) == {(1, 2), (3,)}
        assert result.columns.nlevels == 1
    predictions = model.predict_many(X)
    assert set(predictions) <= {(1, 2), (3,)}
    one = model.predict_proba_one(X.iloc[0].to_dict())
    assert model.predict_proba_many(X).iloc[0].to_dict() == pytest.approx(one)


def test_debug_one_contributions_add_up_to_the_outputs():
    X, y = _frame()
    model = NRRLS()
    model.learn_many(X, y.map({True: "yes", False: "no"}))
    x = {"a": 0.5, "b": -1.25, "c": None, "unseen": 3.0}
    text = model.debug_one(x, decimals=6)
    outputs = model.decision_one(x)
    blocks = text.split("\n\n")
    assert len(blocks) == len(outputs)
    for block, (label, output) in zip(blocks, outputs.items()):
        lines = block.splitlines()
        assert lines[0] == f"Class {label!r} (output {output:,.6f})"
        rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[2:]}
        assert set(rows) == {"a", "b", "unseen", "Intercept"}  # None is missing: left out
        assert rows["unseen"][1] == 0.0
        assert rows["a"][1] == pytest.approx(model.weights[label]["a"], abs=1e-6)
        assert sum(row[2] for row in rows.values()) == pytest.approx(output, abs=1e-5)
    with pytest.raises(ValueError, match="'a'"):
        model.debug_one({"a": float("inf")})


def test_integer_labels_index_the_columns_by_label():
    X, y = _frame()
    model = NRRLS()
    model.learn_many(X, y.map({True: 7, False: 3}))
    proba = model.predict_proba_many(X)
    assert proba.columns.dtype == np.int64
    assert proba.iloc[0][7] == pytest.approx(model.predict_proba_one(X.iloc[0].to_dict())[7])


_WITHOUT_PYARROW = r"""
import json
import sys

sys.modules["pyarrow"] = None  # `import pyarrow` now raises ImportError, as if not installed

from datetime import date

import numpy as np
import polars as pl

from river_nrrls import NRRLS, PolynomialExtender

rng = np.random.default_rng(0)
a = rng.normal(size=40)
X = pl.DataFrame(
    {
        "a": a,
        "b": [None if i % 7 == 0 else float(v) for i, v in enumerate(rng.normal(size=40))],
        "n": [None if i % 5 == 0 else i for i in range(40)],  # nullable ints
        "flag": [None if i % 3 == 0 else bool(i % 2) for i in range(40)],  # nullable bools
    }
)
y = pl.Series("target", (a > 0).tolist())
w = pl.Series("w", np.linspace(0.5, 2.0, 40))
model = NRRLS()
model.learn_many(X, y, w=w)
bad = X.with_columns(pl.Series("a", [float("inf")] + a[1:].tolist()))
try:
    model.learn_many(bad, y)
except ValueError as error:
    refusal = str(error)
print(
    json.dumps(
        {
            "weights": {str(label): weights for label, weights in model.weights.items()},
            "predictions": model.predict_many(X).to_list(),
            "proba": model.predict_proba_many(X)["True"].to_list(),
            "expanded": PolynomialExtender(degree=2).transform_many(X).columns,
            "refusal": refusal,
            "pyarrow": "pyarrow" in sys.modules and sys.modules["pyarrow"] is not None,
        }
    )
)
"""


def test_polars_works_without_pyarrow():
    """river's ``*_many`` methods take polars frames with polars alone (pyarrow is not a
    dependency): so do this package's, with the same results as from pandas."""
    import json
    import pathlib
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYARROW],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=pathlib.Path(__file__).resolve().parent.parent,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["pyarrow"] is False
    # The same frame through pandas (nulls as NaN: missing), in this process.
    rng = np.random.default_rng(0)
    a = rng.normal(size=40)
    X = pd.DataFrame(
        {
            "a": a,
            "b": [np.nan if i % 7 == 0 else v for i, v in enumerate(rng.normal(size=40))],
            "n": [np.nan if i % 5 == 0 else float(i) for i in range(40)],
            "flag": [np.nan if i % 3 == 0 else float(i % 2) for i in range(40)],
        }
    )
    y = pd.Series(a > 0, name="target")
    reference = NRRLS()
    reference.learn_many(X, y, w=pd.Series(np.linspace(0.5, 2.0, 40)))
    assert result["weights"] == {
        str(label): pytest.approx(weights, rel=1e-12, abs=1e-12)
        for label, weights in reference.weights.items()
    }
    assert result["predictions"] == reference.predict_many(X).tolist()
    np.testing.assert_allclose(result["proba"], reference.predict_proba_many(X)[True], rtol=1e-12)
    assert result["expanded"] == list(PolynomialExtender(degree=2).transform_many(X).columns)
    assert "'a'" in result["refusal"] and "row 0" in result["refusal"]


def test_polars_columns_of_every_kind():
    """Nullable ints and bools are numbers with missing cells; strings and dates are refused
    naming the column, as for pandas."""
    X = pl.DataFrame(
        {
            "i": [1, None, 3, 4],
            "flag": [True, None, False, True],
        }
    )
    y = [True, False, True, False]
    model = NRRLS()
    model.learn_many(X, y)
    reference = NRRLS()
    reference.learn_many(
        pd.DataFrame({"i": [1.0, np.nan, 3.0, 4.0], "flag": [1.0, np.nan, 0.0, 1.0]}), y
    )
    assert model.weights == reference.weights
    for name, values in {
        "s": ["a", None, "c", "d"],
        "when": [date(2020, 1, day) for day in range(1, 5)],
        "cat": pl.Series(["x", "y", "x", "y"], dtype=pl.Categorical),
    }.items():
        with pytest.raises(TypeError, match=repr(name)):
            model.learn_many(X.with_columns(pl.Series(name, values)), y)
