"""Exact, deterministic online classifiers for imbalanced and cost-sensitive streams, for river."""

from __future__ import annotations

from . import datasets
from .nrrls import NRRLS

__version__ = "0.1.0"

__all__ = ["NRRLS", "datasets"]
