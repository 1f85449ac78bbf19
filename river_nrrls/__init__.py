"""Exact, deterministic online classifiers for imbalanced and cost-sensitive streams, for river."""

from __future__ import annotations

from . import datasets, metrics
from ._merging import merge
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

__version__ = "0.1.0"

__all__ = [
    "NRRLS",
    "PolynomialExtender",
    "PolynomialOrderSelector",
    "OCSCA",
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
