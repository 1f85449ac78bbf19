"""Baselines of the NR-RLS paper's comparisons (documented on the algorithms page)."""

from __future__ import annotations

from .acog import ACOGClassifier
from .arow import AROWClassifier
from .arrls import ARRLS
from .csogd import CSOGDClassifier
from .cw import CWClassifier
from .irrls import IRRLS

__all__ = ["ACOGClassifier", "AROWClassifier", "ARRLS", "CSOGDClassifier", "CWClassifier", "IRRLS"]
