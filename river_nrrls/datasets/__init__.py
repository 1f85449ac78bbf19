"""Data sets of the NR-RLS paper, vendored with the package.

Seventeen binary classification data sets of the paper's Table 2 that are freely available, as
river `river.datasets.base.FileDataset` objects. Each is a small gzip-compressed CSV
file inside this package, built once from the KEEL/UCI raw files by the maintainer script
``data/prepare.py`` of the repository (not installed; the raw files and their provenance are in
the repository's ``data/`` folder). The preprocessing is the same for every data set:

- rows in the source's order, no row dropped (the sources hold no missing values);
- each nominal attribute becomes ONE ordinal code, categories numbered in sorted order of their
  strings (as the paper's dimensions show it did);
- every feature is then min-max scaled to [0, 1] over the whole data set (a constant column
  becomes 0);
- the label is a ``bool``, ``True`` for the MINORITY class.

Iterating a data set yields ``(x, y)`` with ``x`` a dict of ``{feature name: float}`` and ``y`` a
``bool`` (typed as river's streams: the keys as river's ``FeatureName``), always in the file's
order, which is the source's: several files are sorted or grouped by class (Sonar lists its 97
positives, then its 111 negatives), which flatters or hurts a progressive validation. Every data
set's **Order** note says how its file is ordered; shuffle the stream first, e.g. with river's
``stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)``.

The registry `NAMES`, `load`, `PAPER_TABLE_NUMBER`, `PAPER_GMEAN` and
`PAPER_TABLE3` serve command-line tools and benchmarks.

>>> from river_nrrls import datasets
>>> datasets.NAMES[:3]
('Monks3', 'Sonar', 'SpectfHeart')
>>> dataset = datasets.load("pima")
>>> dataset.n_samples, datasets.PAPER_TABLE_NUMBER["Pima"], datasets.PAPER_GMEAN["Pima"]
(768, 18, 0.742)

"""

from __future__ import annotations

import re

from ._base import KeelDataset
from .australian import Australian
from .breast_cancer_wisconsin import BreastCancerWisconsin
from .bupa import Bupa
from .credit_approval import CreditApproval
from .german import German
from .heart import Heart
from .ionosphere import Ionosphere
from .mammographic import Mammographic
from .monks3 import Monks3
from .mushroom import Mushroom
from .pima import Pima
from .sonar import Sonar
from .spambase import Spambase
from .spectf_heart import SpectfHeart
from .tic_tac_toe import TicTacToe
from .votes import Votes
from .wdbc import Wdbc

__all__ = [
    "KeelDataset",
    "Australian",
    "BreastCancerWisconsin",
    "Bupa",
    "CreditApproval",
    "German",
    "Heart",
    "Ionosphere",
    "Mammographic",
    "Monks3",
    "Mushroom",
    "Pima",
    "Sonar",
    "Spambase",
    "SpectfHeart",
    "TicTacToe",
    "Votes",
    "Wdbc",
    "DATASETS",
    "NAMES",
    "PAPER_GMEAN",
    "PAPER_METHODS",
    "PAPER_TABLE3",
    "PAPER_TABLE_NUMBER",
    "load",
]

#: The data set classes by class name, in the order of the paper's Table 2.
DATASETS: dict[str, type[KeelDataset]] = {
    cls.__name__: cls
    for cls in (
        Monks3,
        Sonar,
        SpectfHeart,
        Heart,
        Bupa,
        Ionosphere,
        Votes,
        Wdbc,
        CreditApproval,
        BreastCancerWisconsin,
        Australian,
        Pima,
        Mammographic,
        TicTacToe,
        German,
        Spambase,
        Mushroom,
    )
}

#: The class names, in the order of the paper's Table 2.
NAMES: tuple[str, ...] = tuple(DATASETS)

#: The number of each data set in the paper's Tables 2, 3 (by class name).
PAPER_TABLE_NUMBER: dict[str, int] = {name: cls.paper_number for name, cls in DATASETS.items()}

#: The methods of the paper's Table 3, in its column order.
PAPER_METHODS: tuple[str, ...] = ("PE", "PA", "CW", "AROW", "ACOG", "RLS", "AR-RLS", "NR-RLS")

_TABLE3 = {  # paper number -> G-means in the order of PAPER_METHODS
    1: (0.584, 0.593, 0.658, 0.713, 0.533, 0.771, 0.768, 0.771),
    6: (0.548, 0.529, 0.675, 0.674, 0.542, 0.702, 0.710, 0.729),
    7: (0.423, 0.407, 0.540, 0.077, 0.046, 0.450, 0.630, 0.649),
    8: (0.576, 0.540, 0.721, 0.786, 0.644, 0.820, 0.821, 0.823),
    9: (0.500, 0.498, 0.577, 0.543, 0.158, 0.629, 0.632, 0.639),
    10: (0.532, 0.509, 0.762, 0.731, 0.494, 0.786, 0.795, 0.796),
    11: (0.815, 0.837, 0.909, 0.925, 0.863, 0.944, 0.946, 0.946),
    13: (0.767, 0.718, 0.939, 0.934, 0.768, 0.938, 0.951, 0.956),
    14: (0.645, 0.572, 0.765, 0.845, 0.684, 0.869, 0.868, 0.869),
    15: (0.916, 0.921, 0.934, 0.948, 0.834, 0.950, 0.957, 0.956),
    16: (0.619, 0.541, 0.764, 0.850, 0.738, 0.864, 0.863, 0.864),
    18: (0.555, 0.502, 0.625, 0.667, 0.435, 0.698, 0.739, 0.742),
    19: (0.598, 0.499, 0.722, 0.798, 0.603, 0.813, 0.814, 0.813),
    20: (0.505, 0.505, 0.511, 0.334, 0.097, 0.427, 0.576, 0.577),
    21: (0.601, 0.591, 0.594, 0.622, 0.616, 0.638, 0.714, 0.715),
    27: (0.610, 0.630, 0.865, 0.869, 0.671, 0.864, 0.899, 0.900),
    28: (0.679, 0.510, 0.984, 0.916, 0.800, 0.932, 0.949, 0.950),
}

#: The paper's Table 3 (G-mean, mean over 10 runs of 2-fold cross-validation), by class name
#: then method name (see `PAPER_METHODS`).
PAPER_TABLE3: dict[str, dict[str, float]] = {
    name: dict(zip(PAPER_METHODS, _TABLE3[number], strict=True))
    for name, number in PAPER_TABLE_NUMBER.items()
}

#: The paper's NR-RLS G-mean per data set (Table 3), by class name.
PAPER_GMEAN: dict[str, float] = {name: row["NR-RLS"] for name, row in PAPER_TABLE3.items()}


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


# Accepted spellings: the class name, the paper's name and the raw file's name, compared in lower
# case without punctuation ("SPECTF-heart" == "spectfheart"). KEEL's misnamed "monk-2" file is
# deliberately not an alias of Monks3.
_ALIASES: dict[str, str] = {}
for _name, _cls in DATASETS.items():
    for _alias in (_name, _cls.paper_name, _cls.source.removesuffix(".csv.gz")):
        if _alias != "monk-2":
            _ALIASES.setdefault(_key(_alias), _name)
del _name, _cls, _alias


def load(name: str) -> KeelDataset:
    """Return a new instance of the data set called ``name``.

    The look-up ignores case and punctuation and accepts the class name
    (``"BreastCancerWisconsin"``), the paper's name (``"Breast-cancer-W"``) or the raw file's name
    (``"wisconsin"``).

    Parameters
    ----------
    name
        Name of the data set.

    Raises
    ------
    KeyError
        If no data set has that name.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> datasets.load("SPECTF-heart").n_features
    44
    >>> type(datasets.load("breast_cancer_wisconsin")).__name__
    'BreastCancerWisconsin'

    """
    try:
        # each class of DATASETS fixes its data set, so takes no argument (KeelDataset's own
        # constructor does: mypy cannot tell a subclass's constructor from type[KeelDataset])
        return DATASETS[_ALIASES[_key(name)]]()  # type: ignore[call-arg]
    except KeyError:
        raise KeyError(f"unknown data set {name!r}; known: {', '.join(NAMES)}") from None
