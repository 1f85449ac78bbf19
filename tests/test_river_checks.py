"""river's own conformance suite on every public estimator, one pytest case per check.

Estimators are discovered from ``river_nrrls.__all__``: any public river estimator is checked
for every one of its ``_unit_test_params`` sets, the way river's ``test_estimators.py`` does.
"""

from __future__ import annotations

import inspect

import pytest
from river import base, checks

import river_nrrls

# river's check streams are raw, unscaled data sets (ImageSegments' features span six orders of
# magnitude): there the paper's woodbury recursion (a PolynomialOrderSelector case runs it)
# loses accuracy, warns and solves from the statistics instead, by design. The warning itself is
# tested in tests/test_robustness.py; here it would only be noise.
pytestmark = pytest.mark.filterwarnings("ignore::river_nrrls._woodbury.WoodburyAccuracyWarning")


def _public_estimators():
    for name in river_nrrls.__all__:
        obj = getattr(river_nrrls, name)
        if inspect.isclass(obj) and issubclass(obj, base.Estimator):
            yield obj


#: The checks that learn long streams (memory measured as it grows): most of this file's time, so
#: outside the inner loop (``-m "not slow"``); every other check stays in it.
SLOW_CHECKS = frozenset({"check_bounded_memory_growth"})


def _cases():
    for klass in _public_estimators():
        for i, params in enumerate(klass._unit_test_params()):
            model = klass(**params)
            for check in checks.yield_checks(model):
                if check.__name__ in model._unit_test_skips():
                    continue
                marks = [pytest.mark.slow] if check.__name__ in SLOW_CHECKS else []
                case = f"{klass.__name__}[{i}]-{check.__name__}"
                yield pytest.param(model, check, marks=marks, id=case)


@pytest.mark.parametrize(("estimator", "check"), list(_cases()))
def test_river_check(estimator, check):
    check(estimator.clone())


def test_every_public_estimator_is_checked():
    names = {klass.__name__ for klass in _public_estimators()}
    assert "NRRLS" in names
    assert "RLSRegressor" in names
