"""Test-session setup shared by the tests and the doctests.

BLAS threads only slow down the small matrices of this package on a 2-core machine (a
multi-threaded ``dsyr`` at d = 200 was measured 100x slower than a single-threaded one while other
processes were running), so the test session pins them to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
