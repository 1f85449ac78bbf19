"""The compiled kernels of ``_kernels.c``, each None where the extension is not built.

The extension is optional at install time (``setup.py``): without a C compiler the
package installs without it, and every caller takes its Python path, the same formulas. The
callers read the kernels from this module at call time (``_native.pair_weights``), so that the
tests can switch them off and check the Python paths too.

"""

from __future__ import annotations

try:
    from ._kernels import outputs, pair_matrix, pair_weights, rank_one, refill
except ImportError:  # not built: the Python paths
    outputs = pair_matrix = pair_weights = rank_one = refill = None

__all__ = ["outputs", "pair_matrix", "pair_weights", "rank_one", "refill"]
