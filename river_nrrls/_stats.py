"""Per-class sufficient statistics of the total-error-rate (TER) least squares.

For every class ``c`` the state is its (decayed, weighted) sample mass ``n^c = sum_i m_i``, its
scatter ``A^c = sum_i m_i x_i x_i^T`` and its sum ``s^c = sum_i m_i x_i``, ``m_i`` being sample
``i``'s mass: its weight ``w_i`` (1 by default) times lambda to the number of later arrivals of
its class (algorithms page, "Sufficient statistics and the exact solve"). All three live in one
augmented scatter: column 0 is a constant 1
prepended to every sample, so that

    scatter^c = sum_i m_i [1, x_i] [1, x_i]^T = [[n^c, s^c^T], [s^c, A^c]]

and one symmetric rank-1 update (BLAS ``dsyr``) learns a sample. The scatters of all classes are
stored as one Fortran-ordered ``(D, D, C)`` array, ``data[:, :, c]`` being class ``c``'s. That
array is the leading block of a buffer whose capacity grows geometrically (by half), as river's
``BayesianLinearRegression`` grows its dense index, so a stream in which features keep emerging
does not reallocate D x D x C numbers at every new feature. A sample with k non-zero entries
out of D updates only the k x k block of its class's scatter (O(k^2), not O(D^2)).

The one-vs-rest system of class ``k`` (algorithms page, "Total error rate (TER)"; the NR-RLS
paper's Appendix B), with
"rest" the union of the other classes, is assembled at solve time:

    M_k = w_k A^k + w_rest A^rest + b I,      w_k = 1/n^k, w_rest = 1/n^rest
    r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest

(``reweight=False``: both weights 1, plain ridge least squares; an empty side has weight 0, the
0/0 of the paper taken as 0). Every M_k is a linear combination of the class scatters, so all
of them come from one matrix product, and learning costs O(d^2) whatever the number of classes.
The constant column is the model's intercept when ``intercept=True``; otherwise the systems use
the columns after it (``first = 1``) and the intercept is 0.

Only the upper triangle of each scatter is kept up to date (``dsyr`` updates it in place, the
sparse update writes both triangles of its block); readers use LAPACK routines that read the
upper triangle, or `symmetrize_upper`. Which solver consumes the statistics is not this module's
business: it gives M_k and r_k (``matrix``, ``right_hand_sides``), the solvers live in
``_solver.py``.

"""

from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np
from scipy.linalg import blas

from . import _native
from ._checks import SMALLEST_WEIGHT, STATISTICS_LIMIT, VALUE_LIMIT, row_name
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

__all__ = ["ClassStatistics", "ColumnNamer", "refuse_out_of_range", "symmetrize_upper"]

#: How a range error names a dense column >= 1: ``"feature 'a'"`` (the index knows the names).
ColumnNamer = typing.Callable[[int], str]

# Below this width a BLAS rank-1 update of the whole scatter is cheaper than finding the
# non-zeros and updating their block.
_SPARSE_MIN_DIM = 64
# From this width OpenBLAS's dsyr wakes its threads (below it, it runs on one, whatever the
# setting: measured beside a busy process, 2.3 us at d = 96 with or without threads, 3.6 us
# against 2.3 at d = 100), so `update_one` runs it inside `one_blas_thread` from here on: the
# context's setter calls (~1.7 us) would only cost below it.
_THREADED_DSYR_MIN_DIM = max(100, ONE_THREAD_MIN_DIM)


def symmetrize_upper(matrix: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of ``matrix``."""
    upper = np.triu(matrix)
    return upper + np.triu(upper, 1).T


@dataclasses.dataclass(slots=True)
class _Workspace:
    """Output arrays of `ClassStatistics._narrow_system`, kept between calls: BLAS writes M and
    the right-hand sides into ``combined`` in place, read through the views ``matrix`` and
    ``rhs``; M's diagonal lies in ``flat_matrix`` from ``diagonal_start`` every
    ``diagonal_stride`` entries (where ``daxpy`` adds b I, with the vector ``ones``)."""

    flat: np.ndarray  # the stacked scatters it was made for
    key: tuple  # (dim, first, mix.shape) it was made for
    combined: np.ndarray  # (capacity^2, rows), F-contiguous: the product's output
    matrix: np.ndarray  # M over the columns first:dim (a view)
    rhs: np.ndarray  # R, one column per right-hand side (a view)
    flat_matrix: np.ndarray  # M, column-major, as the output's first column (a view)
    ones: np.ndarray
    diagonal_start: int
    diagonal_stride: int

    @classmethod
    def build(cls, flat: np.ndarray, dim: int, first: int, rows: int, key: tuple) -> _Workspace:
        capacity = int(round(math.sqrt(flat.shape[0])))
        combined = np.empty((rows, capacity * capacity))
        square = combined[0].reshape(capacity, capacity, order="F")
        matrix = square[first:dim, first:dim]  # F-contiguous when first == 0, capacity == dim
        rhs = combined[1:, first * capacity : dim * capacity : capacity].T  # row 0 of each
        # combined.T is F-contiguous: BLAS's product writes into it in place
        return cls(
            flat,
            key,
            combined.T,
            matrix,
            rhs,
            combined[0],
            np.ones(dim - first),
            first * (capacity + 1),
            capacity + 1,
        )


def _refuse_tiny_weight(weight: float, where: str) -> typing.NoReturn:
    raise ValueError(
        f"w = {weight!r}{where} is below the smallest normal float ({SMALLEST_WEIGHT:.1e}): a "
        "class mass that small has no finite inverse 1/n, and every weight of the model would "
        "become NaN; give the sample w = 0 to leave it out, or rescale the weights"
    )


def _refuse_out_of_range(totals: np.ndarray, name_of: ColumnNamer, where: str = "") -> None:
    """`refuse_out_of_range` for an augmented class scatter: column 0 is the class mass."""
    refuse_out_of_range(
        totals,
        lambda column: (
            "the class mass (the sum of the sample weights)" if column == 0 else name_of(column)
        ),
        where,
    )


def refuse_out_of_range(
    totals: np.ndarray, name_of: ColumnNamer, where: str = ""
) -> typing.NoReturn:
    """Raise a ``ValueError`` for the first column of ``totals`` (the diagonal some statistics
    would have) beyond `STATISTICS_LIMIT`, named by ``name_of(column)``."""
    with np.errstate(invalid="ignore"):
        column = int(np.argmax(~(totals <= STATISTICS_LIMIT)))
    name = name_of(column)
    raise ValueError(
        f"{name}{where} is too large: the sum of its squared values (times the sample weights) "
        f"would exceed {STATISTICS_LIMIT:.0e} and the statistics could no longer be kept "
        f"finite; rescale the data (a single value beyond {VALUE_LIMIT:.0e} is always refused)"
    )


class ClassStatistics:
    """Augmented scatters per class, with exponential forgetting, exact growth and merging.

    Parameters
    ----------
    dim
        Number of dense columns, the constant column 0 included (so at least 1).
    forgetting
        The factor lambda in (0, 1]: an arrival of class ``c`` multiplies that class's mass,
        scatter and sum by lambda before the sample is added.

    """

    def __init__(self, dim: int = 1, forgetting: float = 1.0):
        self.forgetting = forgetting
        self.labels: list[typing.Hashable] = []
        self.slot: dict[typing.Hashable, int] = {}
        self._dim = dim
        # (capacity, capacity, C), Fortran order; only the leading (dim, dim) block is in use and
        # everything outside it is zero (a column is zero until its feature is seen).
        self._buffer = np.zeros((dim, dim, 0), order="F")
        self._stacked: np.ndarray | None = None  # the buffer as (capacity^2, C), see `stacked`
        self._workspace: _Workspace | None = None  # output arrays of `_narrow_system`
        # >= every diagonal entry (every n^c and sum m_i x_ij^2); None: recompute when needed
        self._bound: float | None = 0.0

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_stacked"] = None  # a view: rebuilt on use, not pickled as a copy
        state["_workspace"] = None
        state["_bound"] = None  # derived: recomputed at the next check
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_stacked", "_workspace", "_bound"):  # a pickle of an earlier version
            self.__dict__.setdefault(name, None)

    def stacked(self) -> np.ndarray:
        """The buffer as a ``(capacity^2, C)`` matrix, one column-major scatter per column (a
        view, kept until the buffer is reallocated): sum_j mix_j A^j is ``stacked() @ mix``."""
        stacked = self._stacked
        if stacked is None or stacked.base is not self._buffer:
            capacity = self._buffer.shape[0]
            stacked = self._buffer.reshape(capacity * capacity, -1, order="F")
            self._stacked = stacked
        return stacked

    @property
    def buffer(self) -> np.ndarray:
        """The ``(capacity, capacity, C)`` Fortran array of augmented scatters (the leading
        ``(dim, dim)`` block of each in use, upper triangle authoritative)."""
        return self._buffer

    @property
    def data(self) -> np.ndarray:
        """The ``(D, D, C)`` augmented scatters (a view of the buffer's leading block)."""
        dim = self._dim
        if self._buffer.shape[0] == dim:
            return self._buffer
        return self._buffer[:dim, :dim, :]

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def counts(self) -> np.ndarray:
        """n^c of every class (a view)."""
        return self._buffer[0, 0, :]

    def scatter(self, c: int) -> np.ndarray:
        """Class ``c``'s augmented scatter (a view; upper triangle authoritative)."""
        return self.data[:, :, c]

    # ------------------------------------------------------------------ growth

    def add_class(self, label: typing.Hashable) -> int:
        """Register a new class with empty statistics and return its slot."""
        capacity = self._buffer.shape[0]
        grown = np.zeros((capacity, capacity, self.n_classes + 1), order="F")
        grown[:, :, : self.n_classes] = self._buffer
        self._buffer = grown
        self.slot[label] = self.n_classes
        self.labels.append(label)
        return self.slot[label]

    def nbytes_for(self, dim: int, n_classes: int) -> int:
        """The bytes of the statistics at ``dim`` columns and ``n_classes`` classes (the buffer
        after `grow`'s geometric growth), for checking a size budget before growing."""
        capacity = self._buffer.shape[0]
        if dim > capacity:
            capacity = dim if self._dim <= 1 else max(dim, capacity + capacity // 2)
        return 8 * capacity * capacity * max(n_classes, 1)

    def grow(self, dim: int) -> None:
        """Append zero rows/columns up to ``dim`` columns: exact, past samples had zeros there.

        The buffer is reallocated only when ``dim`` exceeds its capacity, to at least 1.5 times
        that capacity: n new features one at a time cost O(n^2 C) copies in all, not O(n^3 C).

        """
        old = self._dim
        if dim <= old:
            return
        capacity = self._buffer.shape[0]
        if dim > capacity:
            capacity = dim if old <= 1 else max(dim, capacity + capacity // 2)
            grown = np.zeros((capacity, capacity, self.n_classes), order="F")
            grown[:old, :old, :] = self.data
            self._buffer = grown
        self._dim = dim

    def assign(self, data: np.ndarray) -> None:
        """Set every class's augmented scatter at once from a ``(dim, dim, C)`` array (upper
        triangle authoritative): another model's statistics, or a block of them."""
        self.data[...] = data
        self._bound = None

    def permute(self, order: np.ndarray) -> None:
        """Renumber the dense columns in place: column ``j`` becomes the present column
        ``order[j]``, in every class's scatter (``order`` a permutation of ``range(dim)``).

        The upper triangles are authoritative, so each scatter is symmetrised before its rows
        and columns are reindexed (an entry may move to the other side of the diagonal).

        """
        if not self.n_classes:
            return
        data = self.data
        permuted = np.empty_like(data, order="F")
        block = np.ix_(order, order)
        for c in range(self.n_classes):  # upper triangles authoritative: symmetrise first
            permuted[:, :, c] = symmetrize_upper(data[:, :, c])[block]
        self.assign(permuted)

    # ------------------------------------------------------------------ views

    def leading_view(self, dim: int, reuse: ClassStatistics | None = None) -> ClassStatistics:
        """These statistics read over their leading ``dim`` columns, without a copy: a solver
        given the view sees the leading ``dim x dim`` block of every class's scatter.

        Shared with these statistics (by reference, as they are at this call): the buffer and
        its stacked form, the labels, the slots and the forgetting factor, so the class masses
        and every scatter entry are read from the same memory. The view's own: its width and
        its assembly workspace (which depends on the width). A view reads; it is never taught
        (learn, grow and merge through these statistics).

        The buffer is reallocated when a class is added or the statistics outgrow its capacity,
        and the view keeps the buffer it was given: refresh it before each use by passing it
        back as ``reuse``, which rebinds it in place, O(1), and returns it (its workspace kept
        for the next assembly).

        """
        view = reuse
        if view is None:
            view = ClassStatistics.__new__(ClassStatistics)
            view._workspace = None  # own: the narrow-system workspace depends on the width
            view._bound = None  # own: a view is not checked nor taught
        # shared (rebound at every call: the source may have reallocated or replaced them)
        view.forgetting = self.forgetting
        view.labels = self.labels
        view.slot = self.slot
        view._buffer = self._buffer
        view._stacked = self._stacked  # a cache of the buffer: `stacked` checks its base
        view._dim = dim  # own
        return view

    # ---------------------------------------------------------------- learning

    @property
    def sparse_updates(self) -> bool:
        """Whether `update_one` may update only a sample's block (its ``support`` then helps)."""
        return self._dim > _SPARSE_MIN_DIM

    def plain_update(self, n_columns: int) -> float | None:
        """The range bound, when `update_one` of a sample with ``n_columns`` columns that may be
        non-zero would be one plain rank-1 update (no forgetting, no sparse block, no thread
        context) after `check_sample`'s fast check against it; None otherwise."""
        dim = self._dim
        if (
            self.forgetting != 1.0
            or dim >= _THREADED_DSYR_MIN_DIM
            or (dim > _SPARSE_MIN_DIM and 4 * n_columns <= dim)
        ):
            return None
        return self._bound

    def updated_one(self, load: float) -> None:
        """A sample of load ``load`` (`check_sample`'s) was added as `plain_update` allowed (the
        compiled ``learn_remembered``): the range bound follows, as `update_one` keeps it."""
        self._bound += load

    def update_one(
        self,
        c: int,
        vector: np.ndarray,
        weight: float = 1.0,
        support: np.ndarray | None = None,
        load: float | None = None,
    ) -> None:
        """Add one sample (``vector[0] == 1``, ``dim`` entries) of mass ``weight`` to slot ``c``.

        ``support`` (optional) lists the columns where ``vector`` may be non-zero (distinct);
        without it the non-zeros are found by a scan. ``load`` is what `check_sample` returned
        for the sample (it keeps the range bound up to date without a second pass).

        """
        bound = self._bound
        self._bound = None if bound is None or load is None else bound + load
        buffer = self._buffer
        if self.forgetting != 1.0:
            buffer[:, :, c] *= self.forgetting  # n^c, s^c, A^c <- lambda (n^c, s^c, A^c)
        dim = self._dim
        if dim > _SPARSE_MIN_DIM:
            touched = np.flatnonzero(vector) if support is None else support
            if 4 * len(touched) <= dim:
                # Only the k x k block moves: [1, x][1, x]^T is zero elsewhere. O(k^2): the
                # block's entries are addressed in the flat (column-major) buffer.
                capacity = buffer.shape[0]
                values = vector[touched]
                block = touched[:, None] + (touched * capacity + c * capacity * capacity)
                flat = buffer.reshape(-1, order="F")
                flat[block] += np.multiply.outer(weight * values, values)
                return
        if dim < _THREADED_DSYR_MIN_DIM:
            self._rank_one(c, dim, vector, weight)
        else:  # a threaded dsyr costs more than it saves (and much more on a busy machine)
            with one_blas_thread(dim):
                self._rank_one(c, dim, vector, weight)

    def _rank_one(self, c: int, dim: int, vector: np.ndarray, weight: float) -> None:
        """[n^c, s^c; s^c, A^c] += w [1, x][1, x]^T on the upper triangle of slot ``c``."""
        buffer = self._buffer
        if _native.rank_one is not None:  # one compiled dsyr, spare capacity or not
            _native.rank_one(buffer, c, dim, vector, weight)  # the update below
            return
        scatter = buffer[:, :, c]
        if scatter.shape[0] == dim:
            # [n^c, s^c; s^c, A^c] += w [1, x][1, x]^T: n^c += w, s^c += w x, A^c += w x x^T
            # (alpha, x, lower=0: upper, incx, offx, n, a, overwrite_a) by position: f2py parses
            # keyword arguments for ~0.4 us, as much as the update itself at small d
            blas.dsyr(weight, vector, 0, 1, 0, dim, scatter, 1)
        else:  # spare capacity: the block in use is not contiguous for BLAS
            scatter[:dim, :dim] += np.multiply.outer(weight * vector, vector)

    def update_many(self, c: int, matrix: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add the rows of ``matrix`` (in stream order, column 0 all ones) to class slot ``c``.

        ``weights`` are the rows' masses w_j (all 1 when ``None``); none may be 0, since every
        row counts as an arrival of the class for the forgetting.

        """
        n_rows = len(matrix)
        if n_rows == 0:
            return
        self._bound = None
        scatter = self.data[:, :, c]
        if self.forgetting == 1.0:
            mass = weights
        else:
            # Sample j of m gets mass w_j lambda^(m-1-j); the old statistics decay by lambda^m.
            mass = self.forgetting ** np.arange(n_rows - 1, -1, -1, dtype=float)
            if weights is not None:
                mass *= weights
            scatter *= self.forgetting**n_rows
        if self._dim > _SPARSE_MIN_DIM:
            touched = np.flatnonzero(matrix.any(axis=0))
            if 2 * len(touched) <= self._dim:
                # The batch touches k columns: only their k x k block moves, O(m k^2).
                matrix = matrix[:, touched]
                weighted = matrix if mass is None else matrix * mass[:, None]
                scatter[np.ix_(touched, touched)] += matrix.T @ weighted
                return
        weighted = matrix if mass is None else matrix * mass[:, None]
        scatter += matrix.T @ weighted  # sum_j m_j [1, x_j][1, x_j]^T

    def merge(self, other: ClassStatistics, columns: np.ndarray) -> None:
        """Add ``other``'s statistics in place; ``columns[j]`` is where other's column j goes.

        Statistics are additive (n^c, s^c and A^c of a union of samples are the sums), so this
        is exact. Classes of ``other`` that are new here are appended in ``other``'s order.

        """
        for label in other.labels:
            if label not in self.slot:
                self.add_class(label)
        self._bound = None
        block_index = np.ix_(columns, columns)
        for source, label in enumerate(other.labels):
            # other's upper triangle may land below the diagonal here: add the full symmetric.
            target = self.data[:, :, self.slot[label]]
            target[block_index] += symmetrize_upper(other.data[:, :, source])

    # ------------------------------------------------------------ range checks

    def check_sample(
        self, label: typing.Hashable, vector: np.ndarray, weight: float, name_of: ColumnNamer
    ) -> float:
        """Refuse (``ValueError``) a sample of class ``label`` and mass ``weight`` that would take
        the class's n^c or a feature's sum of squares beyond `STATISTICS_LIMIT`, or whose mass
        is below the smallest normal float; nothing changes either way. Returns the sample's
        load w |x|^2, for `update_one`.

        Every |A_ij| <= sqrt(A_ii A_jj) and |s_j| <= sqrt(n A_jj), so a bounded diagonal bounds
        the whole scatter: the statistics, and every solve, stay finite. The fast path keeps
        an upper bound of every diagonal entry and adds w |x|^2 to it (one dot product a
        sample); the class's exact diagonal is read only when the bound nears the limit.
        ``vector`` may be wider than the statistics (features not committed yet).

        """
        if weight < SMALLEST_WEIGHT:
            _refuse_tiny_weight(weight, "")
        # |x|^2 by BLAS ddot: an overflow gives inf (refused below) without numpy's warning
        load = blas.ddot(vector, vector) * weight
        bound = self._bound
        if bound is None:
            bound = self._bound = self._diagonal_peak()
        if bound + load <= STATISTICS_LIMIT:
            return load
        diagonal = self._class_diagonal(label, self.forgetting)
        with np.errstate(over="ignore"):
            totals = np.square(vector) * weight  # inf where it overflows: refused below
            if diagonal is not None:
                totals[: len(diagonal)] += diagonal
        if not totals.max() <= STATISTICS_LIMIT:
            _refuse_out_of_range(totals, name_of)
        return load

    def check_batch(
        self,
        matrix: np.ndarray,
        codes: np.ndarray,
        labels: list,
        weights: np.ndarray | None,
        name_of: ColumnNamer,
        rows: typing.Any,
    ) -> None:
        """`check_sample` for a mini-batch (rows of ``matrix`` in stream order, ``codes`` into
        ``labels``, masses ``weights`` or 1, row labels ``rows``): every class's statistics
        after the batch, with the forgetting's decay."""
        if matrix.size == 0:
            return
        if weights is not None:
            tiny = (weights > 0.0) & (weights < SMALLEST_WEIGHT)
            if tiny.any():
                row = int(np.argmax(tiny))
                _refuse_tiny_weight(float(weights[row]), f" (row {row_name(rows, row)!r})")
        magnitudes = np.abs(matrix)
        if magnitudes.max() > VALUE_LIMIT:
            row, column = np.unravel_index(int(np.argmax(magnitudes > VALUE_LIMIT)), matrix.shape)
            _refuse_out_of_range(
                np.where(np.arange(matrix.shape[1]) == column, np.inf, 0.0),
                name_of,
                f" (row {row_name(rows, row)!r})",
            )
        squares = matrix * matrix  # <= STATISTICS_LIMIT each: no overflow
        for code, label in enumerate(labels):
            in_class = codes == code
            n_rows = int(in_class.sum())
            if n_rows == 0:
                continue
            # sample j of the class's m rows has mass w_j lambda^(m-1-j)
            masses = self.forgetting ** np.arange(n_rows - 1, -1, -1, dtype=float)
            if weights is not None:
                masses = masses * weights[in_class]
            diagonal = self._class_diagonal(label, self.forgetting**n_rows)
            with np.errstate(over="ignore", invalid="ignore"):
                totals = masses @ squares[in_class]
                if diagonal is not None:
                    totals[: len(diagonal)] += diagonal
            if not totals.max() <= STATISTICS_LIMIT:
                _refuse_out_of_range(totals, name_of)

    def check_merge(self, other: ClassStatistics, columns: np.ndarray, name_of: ColumnNamer):
        """Refuse (``ValueError``) a `merge` of ``other`` (its column j going to ``columns[j]``,
        possibly beyond this ``dim``) whose summed statistics would go beyond the limit."""
        width = max(self._dim, int(columns.max()) + 1)
        for source, label in enumerate(other.labels):
            totals = np.zeros(width)
            totals[columns] = np.diagonal(other.data[:, :, source])
            diagonal = self._class_diagonal(label)
            if diagonal is not None:
                totals[: len(diagonal)] += diagonal
            if not totals.max() <= STATISTICS_LIMIT:
                _refuse_out_of_range(totals, name_of, f" (class {label!r} of the merged model)")

    def _class_diagonal(self, label: typing.Hashable, decay: float = 1.0) -> np.ndarray | None:
        """diag of class ``label``'s augmented scatter (n^c, then sum m_i x_ij^2), decayed."""
        slot = self.slot.get(label)
        if slot is None:
            return None
        diagonal = np.diagonal(self.data[:, :, slot])
        return diagonal * decay if decay != 1.0 else diagonal

    def _diagonal_peak(self) -> float:
        """The largest diagonal entry of all class scatters: every n^c and sum m_i x_ij^2."""
        if self.n_classes == 0:
            return 0.0
        return float(np.diagonal(self.data, axis1=0, axis2=1).max())

    # ------------------------------------------------------- systems (for _solver)

    def class_weights(self, reweight: bool) -> tuple[np.ndarray, np.ndarray]:
        """(w_k, w_rest) of every class's one-vs-rest system, as two arrays."""
        counts = self.counts
        rest = self.rest_counts()
        if reweight:
            pos = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)
            other = np.divide(1.0, rest, out=np.zeros_like(rest), where=rest > 0)
            return pos, other  # 1/n^k, 1/n^rest (0 for an empty side)
        return (counts > 0).astype(float), (rest > 0).astype(float)

    def rest_counts(self) -> np.ndarray:
        """n^rest of every class's system: the other classes' masses, summed directly."""
        counts = self.counts
        if self.n_classes == 2:
            return counts[::-1].copy()
        # n^rest_k = (n^0 + ... + n^(k-1)) + (n^(k+1) + ...): two sums of positive masses, no
        # cancellation (N - n^k could lose all the digits of a tiny rest), O(C) not O(C^2).
        before = np.zeros_like(counts)
        np.cumsum(counts[:-1], out=before[1:])  # n^0 + ... + n^(k-1)
        after = np.zeros_like(counts)
        np.cumsum(counts[:0:-1], out=after[-2::-1])  # n^(k+1) + ... + n^(C-1)
        return before + after

    def systems_share_matrix(self, reweight: bool) -> bool:
        """True when every one-vs-rest system has the same M (two classes, or no reweighting)."""
        return self.n_classes <= 2 or not reweight

    def mixing(self, reweight: bool, tau: float, eta: float) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients of M_k and r_k as combinations of the class statistics.

        ``matrix_mix[k, j]`` is w_k if j == k else w_rest (M_k = sum_j matrix_mix[k, j] A^j) and
        ``rhs_mix[k, j]`` the same with the targets tau + eta / tau - eta folded in.

        """
        target_pos, target_rest = tau + eta, tau - eta
        pos, rest = self.class_weights(reweight)
        same = np.eye(self.n_classes, dtype=bool)
        matrix_mix = np.where(same, pos[:, None], rest[:, None])
        rhs_mix = np.where(same, target_pos * pos[:, None], target_rest * rest[:, None])
        return matrix_mix, rhs_mix

    def assemble(self, k: int, reweight: bool, l2: float, first: int) -> np.ndarray:
        """M_k = w_k A^k + w_rest A^rest + b I over the columns ``first:`` (upper triangle)."""
        matrix_mix, _ = self.mixing(reweight, 0.0, 1.0)
        return self.matrix(matrix_mix[k], l2, first)

    def matrix(self, mix: np.ndarray, l2: float, first: int) -> np.ndarray:
        """sum_j mix_j A^j + b I over the columns ``first:``, a new Fortran array (upper
        triangle authoritative), from ONE matrix-vector product over the stacked scatters."""
        return self._square(self.stacked() @ mix, l2, first)  # sum_j mix_j A^j, column-major

    def one_vs_rest_matrices(self, matrix_mix: np.ndarray, l2: float, first: int):
        """M_k = sum_j mix_kj A^j + b I of every class k in turn (a generator), for the
        one-vs-rest mixing of `mixing` (mix_kj = w_k for j = k, w_rest for the others), each a
        new Fortran array over the columns ``first:`` (upper triangle authoritative).

        A class no heavier than its rest (w_k >= w_rest) gets M_k = w_rest T + (w_k - w_rest) A^k
        with the total scatter T = sum_j A^j computed once: two coefficients >= 0, so nothing
        cancels, and the C matrices read O(C d^2) numbers rather than O(C^2 d^2). A class
        heavier than its rest (at most one) is combined from every scatter, as `matrix` does:
        its T - A^k would cancel the digits of a small rest.

        """
        flat = self.stacked()
        total = None
        for k, mix in enumerate(matrix_mix):
            own, rest = mix[k], mix[k - 1]  # w_k, and w_rest (the coefficient of any other class)
            if own < rest:
                yield self.matrix(mix, l2, first)
                continue
            if total is None:
                total = flat @ np.ones(flat.shape[1])  # T = sum_j A^j
            combined = total * rest  # w_rest T
            combined = blas.daxpy(flat[:, k], combined, a=own - rest)  # + (w_k - w_rest) A^k
            yield self._square(combined, l2, first)

    def _square(self, combined: np.ndarray, l2: float, first: int) -> np.ndarray:
        """The column-major ``capacity^2`` vector ``combined`` as its square block over the
        columns ``first:dim`` plus b I, a Fortran array (``combined`` itself when it can)."""
        dim = self._dim
        capacity = self._buffer.shape[0]
        if first == 0 and capacity == dim:
            combined[:: dim + 1] += l2  # + b I (l2 is the paper's b)
            return combined.reshape(dim, dim, order="F")
        matrix = combined.reshape(capacity, capacity, order="F")[first:dim, first:dim]
        matrix = np.asfortranarray(matrix)
        matrix.ravel(order="F")[:: dim - first + 1] += l2  # + b I (l2 is the paper's b)
        return matrix

    def system(self, mix: np.ndarray, l2: float, first: int) -> tuple[np.ndarray, np.ndarray]:
        """M = sum_j mix[0, j] A^j + b I and the right-hand sides R[:, q] = sum_j mix[1 + q, j]
        s^j (over the columns ``first:``), both from ONE product with the stacked scatters.

        The augmented scatter's row 0 is [n^c, s^c], so the combination of the scatters with
        the coefficients ``mix[1 + q]`` holds r_q in its row 0: one matrix product gives M and
        every r (the wasted entries cost less than a second call at the small d where it
        matters). M is a new Fortran array (upper triangle authoritative); R may be a view.

        """
        flat = self.stacked()
        if self._dim <= _SPARSE_MIN_DIM:
            return self._narrow_system(flat, mix, l2, first)
        # wide: the d^2 wasted entries of the narrow way would cost a pass; use s^j
        return self.matrix(mix[0], l2, first), self.right_hand_sides_of(mix, first)

    def right_hand_sides_of(self, mix: np.ndarray, first: int) -> np.ndarray:
        """R[:, q] = sum_j mix[1 + q, j] s^j over the columns ``first:`` (as `system` gives)."""
        return self.sums(first) @ mix[1:].T

    def _narrow_system(self, flat: np.ndarray, mix: np.ndarray, l2: float, first: int):
        """`system` for narrow widths, into a workspace kept between calls: one product, one
        in-place addition, no new views (their cost is comparable to the arithmetic at small
        d). M and R are views of the workspace, valid until the next call."""
        key = (self._dim, first, mix.shape)
        space = self._workspace
        if space is None or space.flat is not flat or space.key != key:
            space = self._workspace = _Workspace.build(flat, self._dim, first, len(mix), key)
        # column 0: M column-major; column 1 + q: sum_j mix[1+q, j] A^j, whose row 0 is r_q.
        # (alpha, a, b, beta, c, trans_a, trans_b, overwrite_c) by position: half numpy's
        # matmul cost at these sizes. ``mix`` is C-ordered, so mix.T is F-contiguous.
        blas.dgemm(1.0, flat, mix.T, 0.0, space.combined, 0, 0, 1)
        ones = space.ones
        # + b I (l2 is the paper's b): (x, y, n, a, offx, incx, offy, incy), in place on M's
        # diagonal
        blas.daxpy(
            ones,
            space.flat_matrix,
            len(ones),
            l2,
            0,
            1,
            space.diagonal_start,
            space.diagonal_stride,
        )
        return space.matrix, space.rhs

    def sums(self, first: int) -> np.ndarray:
        """s^c of every class, one column per class (n^c on top when ``first == 0``)."""
        return self._buffer[0, first : self._dim, :]

    def right_hand_sides(self, reweight: bool, tau: float, eta: float, first: int) -> np.ndarray:
        """r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest, one row per class."""
        _, rhs_mix = self.mixing(reweight, tau, eta)
        return rhs_mix @ self.sums(first).T
