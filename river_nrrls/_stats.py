"""Per-class sufficient statistics of the total-error-rate (TER) least squares: their storage,
learning (rank-1, sparse and batch updates, with forgetting), growth and merging.

For every class ``c`` the state is its (decayed, weighted) sample mass ``n^c = sum_i m_i``, its
scatter ``A^c = sum_i m_i x_i x_i^T`` and its sum ``s^c = sum_i m_i x_i``, ``m_i`` being sample
``i``'s mass: its weight ``w_i`` (1 by default) times lambda to the number of later arrivals of
its class (algorithms page, "Sufficient statistics and the exact solve"). All three live in one
augmented scatter: column 0 is a constant 1 prepended to every sample, so that

    scatter^c = sum_i m_i [1, x_i] [1, x_i]^T = [[n^c, s^c^T], [s^c, A^c]]

and one symmetric rank-1 update (BLAS ``dsyr``) learns a sample. The scatters of all classes are
stored as one Fortran-ordered ``(D, D, C)`` array, ``data[:, :, c]`` being class ``c``'s. That
array is the leading block of a buffer whose capacity grows geometrically (by half), as river's
``BayesianLinearRegression`` grows its dense index, so a stream in which features keep emerging
does not reallocate D x D x C numbers at every new feature. A sample with k non-zero entries
out of D updates only the k x k block of its class's scatter (O(k^2), not O(D^2)).

Only the upper triangle of each scatter is kept up to date (``dsyr`` updates it in place, the
sparse update writes both triangles of its block); readers use LAPACK routines that read the
upper triangle, or `symmetrize_upper`. What is made of the statistics is not this module's
business: the range checks that guard them are ``_ranges.py``'s, the one-vs-rest systems M_k and
r_k assembled from them ``_systems.py``'s, and their solvers ``_solver.py``'s.

"""

from __future__ import annotations

import typing

import numpy as np

from . import _native
from ._threads import ONE_THREAD_MIN_DIM, one_blas_thread

__all__ = ["ClassStatistics", "batch_masses", "symmetrize_upper"]

# Below this width a BLAS rank-1 update of the whole scatter is cheaper than finding the
# non-zeros and updating their block.
_SPARSE_MIN_DIM = 64
# From this width OpenBLAS's dsyr wakes its threads (below it, it runs on one, whatever the
# setting), so `update_one` runs it inside `one_blas_thread` from here on: below it the
# context's setter calls would only cost.
_THREADED_DSYR_MIN_DIM = max(100, ONE_THREAD_MIN_DIM)


def batch_masses(forgetting: float, n_rows: int, weights: np.ndarray | None) -> np.ndarray:
    """The masses of a mini-batch's ``n_rows`` rows of one stream once it is learnt: row j's
    w_j lambda^(m-1-j), the m - 1 - j later rows decaying it (w_j = 1 when ``weights`` is
    None)."""
    masses = forgetting ** np.arange(n_rows - 1, -1, -1, dtype=float)
    if weights is not None:
        masses *= weights
    return masses


def symmetrize_upper(matrix: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of ``matrix``."""
    upper = np.triu(matrix)
    return upper + np.triu(upper, 1).T


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
        #: Scratch arrays of `river_nrrls._systems.system` for these statistics, kept between
        #: assemblies (its own format; each view has its own); not pickled.
        self.workspace: typing.Any = None
        # >= every diagonal entry (every n^c and sum m_i x_ij^2); None: recompute when needed
        self._bound: float | None = 0.0

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_stacked"] = None  # a view: rebuilt on use, not pickled as a copy
        state["workspace"] = None
        state["_bound"] = None  # derived: recomputed at the next check
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state.pop("_workspace", None)  # an earlier version's name of `workspace` (never kept)
        self.__dict__.update(state)
        for name in ("_stacked", "workspace", "_bound"):  # a pickle of an earlier version
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

    def sums(self, first: int) -> np.ndarray:
        """s^c of every class, one column per class (n^c on top when ``first == 0``; a view)."""
        return self._buffer[0, first : self._dim, :]

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
            view.workspace = None  # own: the assembly's workspace depends on the width
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
        context) after the range check's fast test against it (`river_nrrls._ranges`); None
        otherwise."""
        dim = self._dim
        if (
            self.forgetting != 1.0
            or dim >= _THREADED_DSYR_MIN_DIM
            or (dim > _SPARSE_MIN_DIM and 4 * n_columns <= dim)
        ):
            return None
        return self._bound

    def updated_one(self, load: float) -> None:
        """A sample of load ``load`` (what `river_nrrls._ranges.check_sample` gives) was added
        as `plain_update` allowed (the compiled ``learn_remembered``): the range bound follows,
        as `update_one` keeps it."""
        assert self._bound is not None  # (`plain_update` gave a bound)
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
        without it the non-zeros are found by a scan. ``load`` is what
        `river_nrrls._ranges.check_sample` returned for the sample (it keeps the range bound up
        to date without a second pass).

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
        # [n^c, s^c; s^c, A^c] += w [1, x][1, x]^T on the upper triangle: one compiled dsyr,
        # spare capacity or not (or its twin)
        if dim < _THREADED_DSYR_MIN_DIM:
            _native.rank_one(buffer, c, dim, vector, weight)
        else:  # a threaded dsyr costs more than it saves (and much more on a busy machine)
            with one_blas_thread(dim):
                _native.rank_one(buffer, c, dim, vector, weight)

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
            mass = batch_masses(self.forgetting, n_rows, weights)
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

    # ------------------------------------------------------ range bound (for _ranges)

    def diagonal_bound(self) -> float:
        """An upper bound of every diagonal entry of every class scatter (every n^c and
        sum m_i x_ij^2), kept up to date by `update_one` (`river_nrrls._ranges` checks a
        sample's load against it); recomputed when an update could not follow it."""
        bound = self._bound
        if bound is None:
            bound = self._bound = self._diagonal_peak()
        return bound

    def class_diagonal(self, label: typing.Hashable, decay: float = 1.0) -> np.ndarray | None:
        """diag of class ``label``'s augmented scatter (n^c, then sum m_i x_ij^2) times
        ``decay``; None for a class not seen yet."""
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
