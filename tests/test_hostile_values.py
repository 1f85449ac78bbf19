"""Values and feature names that misbehave on purpose: the same refusal (a ``ValueError`` or
``TypeError`` naming the culprit) or the same result, with and without the encoding caches and
the compiled kernel.

The caches remember the last sample (keys and values) so that river's prequential loop does not
encode it twice; a copy of a model (a pickle) starts without them, which is how the tests below
compare "with" and "without".

"""

from __future__ import annotations

import numbers
import pickle

import numpy as np
import pandas as pd
import pytest
from kernel_paths import NOT_BUILT, without_kernel
from river import linear_model

from river_nrrls import NRRLS, OCSCA, CSOGDClassifier, _native


def _nrrls() -> NRRLS:
    model = NRRLS()
    model.learn_one({"a": 1.0, "b": 2.0}, True)
    model.learn_one({"a": 2.0, "b": 0.5}, False)
    return model


def _ocsca() -> OCSCA:
    model = OCSCA(linear_model.LogisticRegression(), alpha=0.5, intercept=True)
    model.learn_one({"a": 1.0, "b": 2.0}, True)
    model.learn_one({"a": 2.0, "b": 0.5}, False)
    return model


def _csogd() -> CSOGDClassifier:
    model = CSOGDClassifier()
    model.learn_one({"a": 1.0, "b": 2.0}, True)
    model.learn_one({"a": 2.0, "b": 0.5}, False)
    return model


MODELS = {"NRRLS": _nrrls, "OCSCA": _ocsca, "CSOGD": _csogd}


@pytest.fixture(params=["kernel", "python"])
def kernel(request, monkeypatch):
    """With the compiled kernel (when built) and with the Python paths."""
    if request.param == "python":
        without_kernel(monkeypatch, "refill")
    elif not _native.compiled("refill"):
        pytest.skip(NOT_BUILT)
    return request.param


def _fresh_copy(model):
    """The model without its caches (they are not pickled)."""
    return pickle.loads(pickle.dumps(model))


def _outcome(call):
    """``("value", result)`` or ``("error", type, message)`` of ``call()``."""
    try:
        return ("value", call())
    except Exception as error:  # the tests compare the outcomes, whatever they are
        return ("error", type(error), str(error))


# ---------------------------------------------------------------- values


class _SumsToZero(float):
    """A float whose reflected addition answers 0.0 (so ``0.0 + self`` looks finite)."""

    def __radd__(self, other):
        return 0.0


class _NoFloat(numbers.Real):
    """A ``numbers.Real`` whose ``__float__`` raises (every other method is a stub)."""

    def __float__(self):
        raise RuntimeError("no float today")

    def __repr__(self):
        return "_NoFloat()"

    __hash__ = object.__hash__


for _name in sorted(numbers.Real.__abstractmethods__ - {"__float__"}):
    setattr(_NoFloat, _name, lambda self, *args: NotImplemented)
_NoFloat.__abstractmethods__ = frozenset()


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("column", ["a", "b"])
def test_an_infinite_float_subclass_is_refused_as_non_finite(name, column, kernel):
    """Its ``__radd__`` said the sum of the sample was finite: the cached path believed it and
    the refusal came later, as "too large"."""
    model = MODELS[name]()
    x = {"a": 1.0, "b": 0.5, column: _SumsToZero("inf")}
    before = pickle.dumps(model)
    for method in ("predict_one", "learn_one"):
        arguments = (x, True) if method == "learn_one" else (x,)
        for target in (model, _fresh_copy(model)):  # with the cache of {a, b}, and without
            with pytest.raises(ValueError, match=f"feature '{column}' has a non-finite value"):
                getattr(target, method)(*arguments)
        assert pickle.dumps(model) == before


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_real_whose_float_raises_is_a_value_error(name, kernel):
    model = MODELS[name]()
    before = pickle.dumps(model)
    x = {"a": 1.0, "b": _NoFloat()}
    with pytest.raises(ValueError, match="feature 'b' has a value _NoFloat\\(\\) that is not"):
        model.learn_one(x, True)
    with pytest.raises(ValueError, match="feature 'b'"):
        model.predict_one(x)
    assert pickle.dumps(model) == before


def test_a_real_whose_float_raises_in_a_frame_is_a_value_error():
    model = _nrrls()
    before = pickle.dumps(model)
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": pd.Series([0.5, _NoFloat()], dtype=object)})
    with pytest.raises(ValueError, match="feature 'b' .* at row 1"):
        model.learn_many(frame, pd.Series([True, False]))
    assert pickle.dumps(model) == before


# ----------------------------------------------------------------- names


class _OtherHash(str):
    """Equal to the plain string, but of another hash: another key for a dict."""

    def __hash__(self):
        return str.__hash__(self) + 1


class _RaisingComparisons(str):
    """A name whose comparisons raise (its hash is the plain string's)."""

    def __eq__(self, other):
        raise RuntimeError("no comparisons")

    def __lt__(self, other):
        raise RuntimeError("no comparisons")

    __hash__ = str.__hash__


def _decision(model, x):
    return model.decision_one(x) if hasattr(model, "decision_one") else model.predict_proba_one(x)


@pytest.mark.parametrize("name", ["OCSCA", "CSOGD", "NRRLS"])
def test_a_name_equal_to_a_known_one_but_hashing_differently(name, kernel):
    """A dict sees another key: with or without the cache, the model sees another feature."""
    model = MODELS[name]()
    known = {"a": 0.7, "b": 0.2}
    other = {_OtherHash("a"): 0.7, "b": 0.2}
    model.predict_one(known)  # the cache now holds the keys (a, b)
    with_cache = _outcome(lambda: _decision(model, other))
    without_cache = _outcome(lambda: _decision(_fresh_copy(model), other))
    assert with_cache == without_cache
    assert _decision(_fresh_copy(model), known) != without_cache[1]  # a is unknown there


@pytest.mark.parametrize("name", ["OCSCA", "CSOGD", "NRRLS"])
def test_a_new_name_whose_comparisons_raise_is_a_new_feature(name, kernel):
    """No known name equals it (no known name has its hash): it is learnt like any new name,
    with or without the cache of the last sample (whose comparison with it raised)."""
    model = MODELS[name]()
    model.predict_one({"a": 0.7, "b": 0.2})  # the cache holds the keys (a, b)
    x = {_RaisingComparisons("zz"): 0.7, "b": 0.2}
    copy = _fresh_copy(model)
    model.learn_one(x, True)
    copy.learn_one(x, True)
    # the same features and the same outputs (pickles may differ in which equal objects, such
    # as numpy dtypes, they share)
    assert [str(f) for f in model._index.features] == [str(f) for f in copy._index.features]
    for probe in ({"b": 0.5}, {"a": 0.3, "b": -0.2}):
        assert _decision(model, probe) == _decision(copy, probe)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_name_whose_comparison_with_a_known_one_raises_is_a_type_error(name, kernel):
    """Its hash is that of the known name "a": a look-up compares them, and the comparison
    raises. The refusal names it, as a ``TypeError``, and leaves the model as it was."""
    model = MODELS[name]()
    model.predict_one({"a": 0.7, "b": 0.2})
    before = pickle.dumps(model)
    x = {_RaisingComparisons("a"): 0.7, "b": 0.2}
    for target in (model, _fresh_copy(model)):
        with pytest.raises(TypeError, match="'a'"):
            target.learn_one(x, True)
        with pytest.raises(TypeError, match="'a'"):
            target.predict_one(x)
    assert pickle.dumps(model) == before


def test_names_whose_comparisons_raise_are_sorted_deterministically():
    from river_nrrls._index import sort_features

    names = [_RaisingComparisons("b"), "a", _RaisingComparisons("c")]
    assert [str(n) for n in sort_features(names)] == [str(n) for n in sort_features(names[::-1])]


def test_exact_types_only_take_the_fast_path():
    from river_nrrls._validation import finite_reals, validate_one

    assert finite_reals((1.0, 2, -3.5))
    assert not finite_reals((1.0, _SumsToZero("inf")))
    assert not finite_reals((True, 1.0))  # bools are validated (they count as 0/1)
    assert not finite_reals((10**400, -(10**400)))
    assert not finite_reals((1e308, 1e308))  # the sum overflows: value by value
    assert validate_one({"a": 1e308, "b": 1e308}) == {"a": 1e308, "b": 1e308}
    assert validate_one({"a": np.float64(2.0)}) == {"a": 2.0}
