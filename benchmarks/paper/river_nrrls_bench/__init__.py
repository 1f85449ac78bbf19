"""The NR-RLS paper's benchmark: the harness behind ``river-nrrls benchmark``.

The distribution ``river-nrrls-bench`` (the folder ``benchmarks/paper`` of the river-nrrls
repository), kept out of the ``river-nrrls`` package that users install: ``pip install
./benchmarks/paper`` from a clone adds the subcommand, and ``python benchmarks/paper/run.py``
runs it from a clone without installing it.

Importing this package registers the ``benchmark`` subcommand of `river_nrrls.cli`. Its
modules, in the order the data flows:

- `protocol`: the NR-RLS paper's protocol (splits, learners, the batch TER reference, the
  order selection, one cross-validation fold);
- `curves`: the two curves of the paper's Fig. 2 (weight norm, time per sample);
- `stream`: the long synthetic imbalanced stream of ``--long-stream``;
- `stats`: Friedman test, Nemenyi critical difference and ranks;
- `plots`: the figures (matplotlib, imported only when they are drawn);
- `report`: tables, CSV files and the ``README.md`` of a run;
- `command`: the subcommand itself (arguments, worker processes, progress).
"""

from __future__ import annotations

from .command import QUICK_DATASETS, blas_environment

__version__ = "0.1.0"

__all__ = ["QUICK_DATASETS", "blas_environment"]
