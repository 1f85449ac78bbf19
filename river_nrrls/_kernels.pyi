"""The signatures of the compiled kernels (``_kernels.pyx``), for type checkers.

The extension is optional (``_native.py`` holds None in place of each kernel where it is not
built); this stub describes the built module. Each kernel's docstring in ``_kernels.pyx`` says
what it computes; ``tests/test_kernels.py`` checks that the parameter names here are those of the
built extension.
"""

from collections.abc import Hashable

import numpy as np
import numpy.typing as npt

_Floats = npt.NDArray[np.float64]
_Inverse = npt.NDArray[np.float64] | npt.NDArray[np.float32]

NOGIL_COLUMNS: int

def pair_weights(
    scatters: _Floats,
    dim: int,
    first: int,
    reweight: bool,
    tau: float,
    eta: float,
    l2: float,
    out: _Floats,
) -> int: ...
def pair_matrix(
    scatters: _Floats, dim: int, first: int, w_0: float, w_1: float, l2: float, out: _Floats
) -> None: ...
def each_weights(
    scatters: _Floats, dim: int, first: int, tau: float, eta: float, l2: float, out: _Floats
) -> int: ...
def conjugate_gradients(
    matrix: _Floats,
    rhs: _Floats,
    weights: _Floats,
    inverse: _Inverse,
    inverse_scale: float,
    root: _Floats | None,
    tolerance: float,
    backward: float,
    contraction: float,
    max_iterations: int,
    safe_low: float,
    safe_high: float,
) -> tuple[bool, int, bool]: ...
def stale_append(
    inverse: _Inverse, vector: _Floats, frozen: float, safe_low: float, safe_high: float
) -> int: ...
def outputs(weights: _Floats, vector: _Floats) -> list[float] | None: ...
def rank_one(scatters: _Floats, slot: int, dim: int, vector: _Floats, weight: float) -> None: ...
def refill(
    x: object,
    keys: tuple[Hashable, ...],
    vector: _Floats,
    columns: npt.NDArray[np.intp],
    offset: int,
    fill: float,
) -> _Floats | None: ...
def use_thread_setters(addresses: tuple[int, ...]) -> None: ...
def pair_outputs(
    x: object,
    keys: tuple[Hashable, ...],
    vector: _Floats,
    columns: npt.NDArray[np.intp],
    offset: int,
    fill: float,
    scatters: _Floats,
    dim: int,
    first: int,
    reweight: bool,
    tau: float,
    eta: float,
    l2: float,
    out: _Floats,
    one_thread: bool = False,
) -> tuple[_Floats, int, list[float] | None] | None: ...
def learn_remembered(
    x: object,
    keys: tuple[Hashable, ...],
    vector: _Floats,
    columns: npt.NDArray[np.intp],
    offset: int,
    fill: float,
    scatters: _Floats,
    slot: int,
    dim: int,
    weight: float,
    bound: float,
    limit: float,
) -> tuple[_Floats, float | None] | None: ...
def rls_learn(
    x: object,
    keys: tuple[Hashable, ...],
    vector: _Floats,
    columns: npt.NDArray[np.intp],
    offset: int,
    fill: float,
    scatter: _Floats,
    upper: _Floats,
    solution: _Floats,
    first: int,
    weight: float,
    mass: float,
    target: float,
    bound: float,
    limit: float,
) -> tuple[_Floats, float | None, bool] | None: ...
def rls_predict(
    x: object,
    keys: tuple[Hashable, ...],
    vector: _Floats,
    columns: npt.NDArray[np.intp],
    offset: int,
    fill: float,
    solution: _Floats,
    first: int,
) -> tuple[_Floats, float] | None: ...
def rls_add_row(upper: _Floats, row: _Floats, solution: _Floats) -> bool: ...
