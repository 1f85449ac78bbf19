"""Exact, deterministic online classifiers for imbalanced and cost-sensitive streams, for river.

Submodules and estimators load lazily on first access (PEP 562), so ``import river_nrrls`` stays
cheap: ``river_nrrls.NRRLS`` imports the NRRLS module only, and ``river_nrrls.datasets`` and
``river_nrrls.metrics`` (which pull in river's data set and stream machinery) load when used.

"""

from __future__ import annotations

import importlib
import typing

__version__ = "0.1.0"

# public name -> module (relative to this package) that defines it
_ESTIMATORS = {
    "NRRLS": ".nrrls",
    "PolynomialExtender": ".poly",
    "PolynomialOrderSelector": ".model_selection",
    "TreePathFeatures": ".tree_paths",
    "AutoNRRLS": ".auto",
    "OCSCA": ".ocsca",
    "RLSRegressor": ".rls",
    "ARRLS": ".baselines",
    "IRRLS": ".baselines",
    "CWClassifier": ".baselines",
    "AROWClassifier": ".baselines",
    "ACOGClassifier": ".baselines",
    "CSOGDClassifier": ".baselines",
    "merge": "._merging",
}
_SUBMODULES = {"baselines", "dask", "datasets", "metrics", "model_selection"}

__all__ = [
    "AutoNRRLS",
    "NRRLS",
    "PolynomialExtender",
    "PolynomialOrderSelector",
    "TreePathFeatures",
    "OCSCA",
    "RLSRegressor",
    "ARRLS",
    "IRRLS",
    "CWClassifier",
    "AROWClassifier",
    "ACOGClassifier",
    "CSOGDClassifier",
    "datasets",
    "metrics",
    "merge",
]

if typing.TYPE_CHECKING:  # pragma: no cover - static analysers see the eager imports
    from . import datasets, metrics
    from ._merging import merge
    from .auto import AutoNRRLS
    from .baselines import (
        ARRLS,
        IRRLS,
        ACOGClassifier,
        AROWClassifier,
        CSOGDClassifier,
        CWClassifier,
    )
    from .model_selection import PolynomialOrderSelector
    from .nrrls import NRRLS
    from .ocsca import OCSCA
    from .poly import PolynomialExtender
    from .rls import RLSRegressor
    from .tree_paths import TreePathFeatures


def __getattr__(name: str) -> typing.Any:
    if name in _ESTIMATORS:
        value = getattr(importlib.import_module(_ESTIMATORS[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
