"""The square-root factor of `river_nrrls.RLSRegressor`'s regularised scatter (internal).

With the regression columns first (``[1, x]``, or ``x`` without an intercept) and the target
``y`` last, the model keeps the upper-triangular factor

    R = [[R11, z], [0, rho]],      R^T R = [X y]^T diag(m) [X y] + l2_t J

of its regularised scatter (``m`` the masses, ``J`` the identity on the penalised columns, both
in the regressor's stored scale): the ridge weights are ``w = R11^{-1} z`` and
``rho^2 = RSS + l2_t |w|^2``. A sample of mass ``m`` adds the row ``sqrt(m) [x, y]``: the QR of
``[R; row]`` (LAPACK's Householder ``dtpqrt``) gives the new R in O(d^2), backward stable, never
losing symmetry or definiteness (an inverse-free QR-RLS, the "square-root information" form of
Haykin's square-root adaptive filters); where the kernels are built, the same reflections run
in C (``_native.rls_add_row``, with the weights' solve: the fused step's own update), many times
cheaper than dtpqrt for one row. With dtpqrt, from `_DELAYED_MIN_DIM` columns on, while R11 is
well conditioned, rows wait in `_PendingRows` and the weights are corrected for them exactly
(Woodbury); one blocked QR then adds them all.

`SquareRootFactor` owns R and its pending rows: everything that reads R sees the rows learnt,
pending or not. What the scatter means (its features, its scale sigma under forgetting, the
ridge term, the range of its values) is the regressor's business (`river_nrrls.rls`).

"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from . import _native

__all__ = ["SquareRootFactor"]

# From this many regression columns on, `SquareRootFactor.add_row` delays the QR update of R:
# the rows wait (at most _PENDING_ROWS of them) and the weights are corrected for them exactly
# (see `_PendingRows`); one blocked QR then adds them all. Below it, one QR per row is cheaper.
_DELAYED_MIN_DIM = 48
_PENDING_ROWS = 32
_PIVOT_SPREAD = 1e3  # largest ratio of R11's pivots for delayed updates (see _start_pending)
# Below this many regression columns a row's compiled QR update (`_native.rls_add_row`) is
# cheaper than the delayed rows, which then never wait; from it on they do, as without kernels.
_COMPILED_ROWS_MAX_DIM = 384


@dataclasses.dataclass(slots=True)
class _PendingRows:
    """Rows learnt but not yet in the factor R, and what the exact weights need of them.

    With V the pending rows sqrt(m) [x, y] (x part V_x, y part v), the system is
    M = R11^T R11 + V_x^T V_x and b = R11^T z + V_x^T v. With U = R11^{-T} V_x^T (one
    triangular solve per row) and G = I + U^T U (k x k, eigenvalues >= 1: well conditioned),

        w = M^{-1} b = R11^{-1} (c - U G^{-1} U^T c),    c = z + U v

    (Woodbury), so a row costs two triangular solves and O(d k) work, and every
    ``_PENDING_ROWS`` rows one blocked QR (LAPACK dtpqrt, level 3) adds them to R.
    """

    rows: np.ndarray  # (K, n): sqrt(m) [x, y] of the pending rows
    directions: np.ndarray  # U, (d, K), Fortran
    gram: np.ndarray  # lower Cholesky factor of G = I + U^T U, (K, K), Fortran
    combined: np.ndarray  # c = z + U v, (d,)
    count: int = 0


def _compiled_rows(columns: int) -> bool:
    """Whether a row's QR update at this width is the compiled one (`_native.rls_add_row`):
    cheaper than the delayed rows below `_COMPILED_ROWS_MAX_DIM` columns, so a model then never
    delays them (its loop walks R's rows, which from a few hundred columns on costs more than
    the delayed rows' level-3 QR)."""
    return columns < _COMPILED_ROWS_MAX_DIM and _native.compiled("rls_add_row")


def _add_rows(upper: np.ndarray, rows: np.ndarray) -> None:
    """R^T R += B^T B in place: the blocked QR of [R; B] (LAPACK dtpqrt, Householder)."""
    block = np.asfortranarray(rows)
    block_size = max(1, min(32, len(block), block.shape[1]))
    lapack.dtpqrt(0, block_size, upper, block, 1, 1)  # (l, nb, a, b, overwrite_a, overwrite_b)


class SquareRootFactor:
    """R with R^T R = a regularised scatter of ``[regression columns, y]`` (internal).

    Parameters
    ----------
    upper
        R itself: upper triangular, Fortran-ordered, ``(d + 1, d + 1)`` for ``d`` regression
        columns (the target last). `of` builds it from the matrix it factors.

    """

    def __init__(self, upper: np.ndarray):
        self._upper = upper
        self._pending: _PendingRows | None = None  # rows not in R yet (wide models)

    @classmethod
    def of(cls, matrix: np.ndarray) -> SquareRootFactor:
        """The factor of a symmetric positive semi-definite ``matrix`` (R^T R = matrix)."""
        try:
            upper = linalg.cholesky(matrix, lower=False, check_finite=False)
            if np.isfinite(upper).all():
                return cls(np.asfortranarray(upper))
        except linalg.LinAlgError:
            pass
        # Semi-definite (a perfect fit, or no sample yet): a square root of the PSD matrix.
        values, vectors = np.linalg.eigh(matrix)
        root = np.sqrt(np.clip(values, 0.0, None))[:, None] * vectors.T
        return cls(np.asfortranarray(linalg.qr(root, mode="r", check_finite=False)[0]))

    @property
    def columns(self) -> int:
        """d, the number of regression columns (R's order minus the target's)."""
        return self._upper.shape[0] - 1

    # ------------------------------------------------------------------ updates

    def add_row(self, row: np.ndarray) -> np.ndarray:
        """R^T R += row row^T for ``row = sqrt(m) [x, y]`` (overwritten, contiguous); returns
        the new weights w = R11^{-1} z, exact whether the row waits or not."""
        pending = self._pending
        columns = len(row) - 1
        if pending is None and columns >= _DELAYED_MIN_DIM and not _compiled_rows(columns):
            pending = self._start_pending()
        if pending is not None:
            return self._add_delayed(pending, row)
        # QR of [R; row]: R^T R += row row^T, O(d^2), R in place, then the weights: the
        # operation the fused step runs too (the same bits whichever path takes a sample)
        solution = np.empty(len(row) - 1)
        if _native.rls_add_row(self._upper, row, solution):
            return solution
        return self.solve()  # a zero pivot, or weights beyond the float range: the fallbacks

    def add_rows(self, rows: np.ndarray) -> None:
        """R^T R += B^T B for the rows of ``B`` (sqrt(m_j) [x_j, y_j]): one blocked QR."""
        self.flush()
        _add_rows(self._upper, rows)

    def rescale(self, scale: float) -> None:
        """R^T R /= scale: R /= sqrt(scale)."""
        self.flush()
        self._upper /= math.sqrt(scale)

    def grow(self, n_added: int, ridge_root: float) -> None:
        """Insert ``n_added`` regression columns before the target: zero in every row learnt
        (past samples had zeros there), ``ridge_root`` = sqrt(l2_t) on their diagonal."""
        self.flush()
        upper = self._upper
        n_old = self.columns
        n_new = n_old + n_added
        grown = np.zeros((n_new + 1, n_new + 1), order="F")
        grown[:n_old, :n_old] = upper[:n_old, :n_old]  # R11
        grown[:n_old, n_new] = upper[:n_old, n_old]  # z
        grown[n_new, n_new] = upper[n_old, n_old]  # rho
        added = np.arange(n_old, n_new)
        grown[added, added] = ridge_root
        self._upper = grown

    def flush(self) -> None:
        """Add the pending rows to R (one blocked QR); the weights were already exact."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        if pending.count:
            _add_rows(self._upper, pending.rows[: pending.count])

    def in_place(self) -> np.ndarray | None:
        """R itself, for an update in place of one row that the caller makes whole (the fused
        step of `river_nrrls._fused_rls`), when `add_row` would take the row through its own
        QR too: no row waits, and none would (fewer than `_DELAYED_MIN_DIM` columns, or the
        compiled QR update at this width); else None."""
        if self._pending is not None:
            return None
        if self.columns >= _DELAYED_MIN_DIM and not _compiled_rows(self.columns):
            return None
        return self._upper

    @property
    def waiting(self) -> int:
        """How many learnt rows wait outside R (the delayed updates of wide models)."""
        return 0 if self._pending is None else self._pending.count

    # -------------------------------------------- the unregularised factor (penalty moved)

    def centred_squares(self) -> np.ndarray:
        """For the factor of an unregularised scatter of ``[1, x, y]`` (the constant first):
        the centred sums of squares ``S_jj - S_0j^2 / S_00`` of the features, read off R as
        ``sum_{1 <= k <= j} R_kj^2`` (R_0j = S_0j / sqrt(S_00); R's strictly lower part is 0),
        without the cancellation of the subtraction."""
        features = self._flushed()[1:-1, 1:-1]
        return np.einsum("kj,kj->j", features, features)

    def penalised(self, first: int, penalties: np.ndarray) -> SquareRootFactor:
        """The factor of this (unregularised) scatter's columns ``first:`` (the target last)
        plus ``diag(penalties)`` on the regression columns: the R of the QR of
        ``[R[:, first:]; [diag(sqrt(penalties)), 0]]`` (LAPACK dtpqrt, O(d^3), backward
        stable). Without the constant column (``first = 1``) R's first row joins the rows
        below the triangle."""
        upper = self._flushed()
        top = np.array(upper[first:, first:], order="F")  # triangular: overwritten by the R
        size = top.shape[0] - 1
        below = np.zeros((size + first, size + 1), order="F")
        if first:
            below[0] = upper[0, 1:]
        below[first + np.arange(size), np.arange(size)] = np.sqrt(penalties)
        # (l, nb, a, b, overwrite_a, overwrite_b) by position: b a general block (l = 0)
        lapack.dtpqrt(0, max(1, min(32, size + 1, len(below))), top, below, 1, 1)
        return SquareRootFactor(top)

    # ----------------------------------------------------------------- solves

    def solve(self) -> np.ndarray:
        """w = R11^{-1} z (one triangular solve, O(d^2)); a zero pivot (a column that only
        ever held zeros since its ridge term underflowed) gets weight 0."""
        self.flush()
        upper = self._upper
        size = self.columns
        if size == 0:
            return np.zeros(0)
        # (a, b, lower, trans, unitdiag, lda) by position: f2py parses keyword arguments for
        # about as long as the solve itself takes at small d
        solution, info = lapack.dtrtrs(upper[:, :size], upper[:size, size], 0, 0, 0, size + 1)
        if info != 0 or not math.isfinite(blas.ddot(solution, solution)):
            r11 = np.triu(upper[:size, :size])
            diagonal = np.diagonal(r11).copy()
            dead = np.abs(diagonal) <= np.abs(diagonal).max() * 1e-300
            r11[dead, :] = 0.0
            r11[dead, dead] = 1.0
            rhs = np.where(dead, 0.0, upper[:size, size])
            solution = linalg.solve_triangular(r11, rhs, check_finite=False)
        return solution

    def rho(self) -> np.float64:
        """rho, R's last diagonal entry (the pending rows included): rho^2 = RSS + l2_t |w|^2."""
        upper = self._flushed()
        return upper[-1, -1]

    def inverse_quadratic(self, probe: np.ndarray) -> float:
        """x^T (R11^T R11)^{-1} x = |R11^{-T} x|^2 for ``x = probe`` (the pending rows
        included): one triangular solve."""
        upper = self._flushed()
        size = self.columns
        solved = linalg.solve_triangular(upper[:size, :size], probe, trans="T", check_finite=False)
        return float(solved @ solved)

    def _flushed(self) -> np.ndarray:
        """R with the pending rows added, without changing the factor (a copy if any)."""
        pending = self._pending
        if pending is None or not pending.count:
            return self._upper
        upper = np.array(self._upper, order="F")
        _add_rows(upper, pending.rows[: pending.count])
        return upper

    # ------------------------------------------------------------ delayed rows

    def _start_pending(self) -> _PendingRows | None:
        """Delayed updates for a wide model whose R11 is well conditioned (else None).

        The Woodbury correction subtracts U G^{-1} U^T c from c, which cancels where U is
        large: along the directions that R11 barely determines. So it is used only while the
        pivots of R11 span less than _PIVOT_SPREAD (cond(M) >~ 1e6 otherwise, and then every
        row goes through its own QR, backward stable whatever the conditioning).

        """
        upper = self._upper
        size = self.columns
        diagonal = np.abs(np.diagonal(upper)[:size])
        if not diagonal.min() * _PIVOT_SPREAD > diagonal.max():
            return None
        self._pending = _PendingRows(
            rows=np.zeros((_PENDING_ROWS, size + 1)),
            directions=np.zeros((size, _PENDING_ROWS), order="F"),
            gram=np.zeros((_PENDING_ROWS, _PENDING_ROWS), order="F"),
            combined=upper[:size, size].copy(),  # c = z
        )
        return self._pending

    def _add_delayed(self, pending: _PendingRows, row: np.ndarray) -> np.ndarray:
        """Learn ``row`` by the Woodbury correction of `_PendingRows`; the weights."""
        upper = self._upper
        size = self.columns
        k = pending.count
        pending.rows[k] = row
        # u = R11^{-T} sqrt(m) x: (a, b, lower, trans, unitdiag, lda) by position
        direction, _ = lapack.dtrtrs(upper[:, :size], row[:size], 0, 1, 0, size + 1)
        directions = pending.directions
        directions[:, k] = direction
        combined = pending.combined
        combined += direction * row[size]  # c += u sqrt(m) y
        gram = pending.gram
        if k:  # the new row of G's Cholesky factor: L l = U^T u, l_kk^2 = 1 + u.u - l.l >= 1
            coupling, _ = lapack.dtrtrs(gram[:k, :k], directions[:, :k].T @ direction, 1)
            gram[k, :k] = coupling
            gram[k, k] = math.sqrt(1.0 + direction @ direction - coupling @ coupling)
        else:
            gram[0, 0] = math.sqrt(1.0 + direction @ direction)
        k += 1
        pending.count = k
        used = directions[:, :k]
        correction, _ = lapack.dpotrs(gram[:k, :k], used.T @ combined, 1)  # G^{-1} U^T c
        right = combined - used @ correction
        # w = R11^{-1} (c - U G^{-1} U^T c)
        solution, _ = lapack.dtrtrs(upper[:, :size], right, 0, 0, 0, size + 1)
        if k == _PENDING_ROWS:
            self.flush()
        return solution
