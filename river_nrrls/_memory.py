"""How large a model may grow: the ``max_size`` budget, its check and its warning.

The statistics of a dense least-squares model take d^2 numbers per class, so a stream whose
features keep appearing (a one-hot encoding of continuous values, say) grows a model
quadratically until the machine swaps. Every estimator with such statistics checks the memory
that new features or classes would take BEFORE allocating anything: beyond its ``max_size`` (in
MiB, as river's trees count theirs), or beyond the machine's physical memory when there is no
budget, the sample is refused with a ``ValueError`` that names the width and the memory; and a
`ModelSizeWarning` says so, with what to do, as the model passes 16 MiB, 64 MiB, 256 MiB, ...

"""

from __future__ import annotations

import dataclasses
import functools
import os
import typing
import warnings

from ._checks import check_real

__all__ = ["ModelSizeWarning", "SIZE_WARNING", "SizeBudget", "size_limit", "solver_nbytes"]

MIB = 2**20
#: The model size (bytes) of the first `ModelSizeWarning`; the next ones at 4x, 16x, ...
SIZE_WARNING = 16 * MIB

_ADVICE = (
    "if features keep appearing (a one-hot encoding of continuous values, ids, ...), hash them "
    "(river's preprocessing.FeatureHasher), select or bin them, or cap the model with max_size "
    "(MiB)"
)


class ModelSizeWarning(UserWarning):
    """A model's statistics passed a size worth knowing about (16 MiB, then every 4x)."""


@functools.cache
def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not a POSIX system: no known limit
        return float("inf")


def size_limit(max_size: typing.Any) -> float:
    """The byte budget of ``max_size`` (MiB, > 0; None: the machine's physical memory)."""
    if max_size is None:
        return _physical_memory()
    return check_real("max_size", max_size, low=0.0, low_open=True) * MIB


def solver_nbytes(width: int) -> int:
    """What a solver keeps or assembles beside the statistics for ``width`` columns: the
    assembled M, its factor and an explicit inverse (three d x d float64 arrays)."""
    return 3 * 8 * width * width


@dataclasses.dataclass
class SizeBudget:
    """A model's memory budget (its ``max_size`` parameter) and the size of its last warning:
    `check` refuses a growth beyond the budget and warns as the model passes `SIZE_WARNING`,
    then every 4x."""

    max_size: typing.Any  # the parameter, MiB or None
    limit: float  # bytes
    warned: float = 0.0  # the model size (bytes) of the last `ModelSizeWarning`

    @classmethod
    def of(cls, max_size: typing.Any) -> SizeBudget:
        """The budget of ``max_size`` (validated: a real number > 0, or None)."""
        return cls(max_size, size_limit(max_size))

    def check(
        self,
        needed: float,
        model: str,
        n_features: int,
        n_classes: int | None,
        where: str = "",
    ) -> None:
        """Refuse (``ValueError``) statistics of ``needed`` bytes beyond the budget, before
        anything is allocated; warn once they pass the next warning size. ``n_classes``: the
        classes a classifier would hold, None for a regressor (its message names features
        only)."""
        if needed > self.limit:
            held = f"{n_features:,} features"
            if n_classes is not None:
                held += f" and {n_classes} {'class' if n_classes == 1 else 'classes'}"
            budget = (
                f"max_size={self.max_size!r} MiB"
                if self.max_size is not None
                else "the machine's memory"
            )
            raise ValueError(
                f"the model would grow to {held}{where}"
                f", whose statistics take {needed / MIB:,.1f} MiB, beyond {budget} "
                f"({self.limit / MIB:,.1f} MiB): nothing was learnt; {_ADVICE}"
            )
        if needed >= 4 * max(self.warned, SIZE_WARNING / 4):
            self.warned = needed
            warnings.warn(
                f"{model} has grown to {n_features:,} features: its statistics take "
                f"{needed / MIB:,.0f} MiB and each sample costs O(features^2); {_ADVICE}",
                ModelSizeWarning,
                stacklevel=4,
            )
