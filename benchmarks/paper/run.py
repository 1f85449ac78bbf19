"""``river-nrrls benchmark`` from a clone, without installing the harness.

Run:  python benchmarks/paper/run.py --quick      (seconds: 3 data sets, 2 runs)
      python benchmarks/paper/run.py --jobs 2 --out benchmarks/results/paper
      python benchmarks/paper/run.py --help

The folder of this script is first on ``sys.path``, so the command line finds the harness
(``river_nrrls_bench``) beside it; river-nrrls itself must be importable (installed, as for
every script of ``benchmarks/``).
"""

from __future__ import annotations

import sys

from river_nrrls import cli

if __name__ == "__main__":
    raise SystemExit(cli.main(["benchmark", *sys.argv[1:]]))
