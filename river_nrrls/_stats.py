"""Per-class sufficient statistics of the total-error-rate (TER) least squares.

For every class ``c`` the state is its (decayed, weighted) sample mass ``n^c = sum_i m_i``, its
scatter ``A^c = sum_i m_i x_i x_i^T`` and its sum ``s^c = sum_i m_i x_i``, ``m_i`` being sample
``i``'s mass: its weight ``w_i`` (1 by default) times lambda to the number of later arrivals of
its class (algorithms page, "Sufficient statistics and the exact solve"). All three live in one
augmented scatter: column 0 is a constant 1
prepended to every sample, so that

    scatter^c = sum_i m_i [1, x_i] [1, x_i]^T = [[n^c, s^c^T], [s^c, A^c]]

and one symmetric rank-1 update (BLAS ``dsyr``) learns a sample. The scatters of all classes are
stored as one Fortran-ordered ``(D, D, C)`` array, ``data[:, :, c]`` being class ``c``'s.

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

Only the upper triangle of each scatter is kept up to date (``dsyr`` updates it in place);
readers use LAPACK routines that read the upper triangle, or `symmetrize_upper`.

"""

from __future__ import annotations

import typing

import numpy as np
from scipy.linalg import blas, lapack

__all__ = ["ClassStatistics", "solve_spd", "symmetrize_upper"]


def symmetrize_upper(matrix: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of ``matrix``."""
    upper = np.triu(matrix)
    return upper + np.triu(upper, 1).T


def solve_spd(matrix: np.ndarray, rhs: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """Solve ``matrix @ w = rhs`` for a symmetric positive (semi-)definite ``matrix``.

    Only the upper triangle of ``matrix`` is read. Cholesky (LAPACK ``potrf``/``potrs``) is the
    normal path. If it fails from rounding (badly scaled columns, such as the high powers of a
    polynomial model), the system is equilibrated, ``D M D (D^-1 w) = D r`` with
    ``D = diag(M)^(-1/2)``, which leaves the solution unchanged and often restores a usable
    condition number, and factorised again. Only if that fails too (a numerically singular
    matrix, e.g. ``b = 0``) is the minimum-norm least-squares solution returned. ``ridge`` is a
    lower bound of the smallest eigenvalue (the b of ``M = ... + b I``): when it is positive a
    successful factorisation cannot give an overflowing solution, and that check is skipped.

    """
    factor, info = lapack.dpotrf(matrix, lower=0, clean=0)
    if info == 0:
        solution, info = lapack.dpotrs(factor, rhs, lower=0)
        if info == 0 and (ridge > 1e-200 or np.isfinite(solution).all()):
            return solution
    return _solve_spd_fallback(symmetrize_upper(matrix), rhs)


def _solve_spd_fallback(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    diagonal = np.diag(matrix).copy()
    if np.all(diagonal > 0) and np.isfinite(diagonal).all():
        scale = 1.0 / np.sqrt(diagonal)  # D = diag(M)^(-1/2)
        scaled_rhs = rhs * (scale[:, None] if rhs.ndim == 2 else scale)
        factor, info = lapack.dpotrf(matrix * np.outer(scale, scale), lower=0, clean=0)
        if info == 0:
            solution, info = lapack.dpotrs(factor, scaled_rhs, lower=0)
            if info == 0 and np.isfinite(solution).all():
                return solution * (scale[:, None] if rhs.ndim == 2 else scale)  # w = D z
    return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


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
        self.data = np.zeros((dim, dim, 0), order="F")

    @property
    def dim(self) -> int:
        return self.data.shape[0]

    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def counts(self) -> np.ndarray:
        """n^c of every class (a view)."""
        return self.data[0, 0, :]

    def scatter(self, c: int) -> np.ndarray:
        """Class ``c``'s augmented scatter (a view; upper triangle authoritative)."""
        return self.data[:, :, c]

    # ------------------------------------------------------------------ growth

    def add_class(self, label: typing.Hashable) -> int:
        """Register a new class with empty statistics and return its slot."""
        dim = self.dim
        grown = np.zeros((dim, dim, self.n_classes + 1), order="F")
        grown[:, :, : self.n_classes] = self.data
        self.data = grown
        self.slot[label] = self.n_classes
        self.labels.append(label)
        return self.slot[label]

    def grow(self, dim: int) -> None:
        """Append zero rows/columns up to ``dim`` columns: exact, past samples had zeros there."""
        old = self.dim
        if dim <= old:
            return
        grown = np.zeros((dim, dim, self.n_classes), order="F")
        grown[:old, :old, :] = self.data
        self.data = grown

    # ---------------------------------------------------------------- learning

    def update_one(self, c: int, vector: np.ndarray, weight: float = 1.0) -> None:
        """Add one sample (``vector[0] == 1``, ``dim`` entries) of mass ``weight`` to slot ``c``."""
        scatter = self.data[:, :, c]
        if self.forgetting != 1.0:
            scatter *= self.forgetting  # n^c, s^c, A^c <- lambda (n^c, s^c, A^c)
        # [n^c, s^c; s^c, A^c] += w [1, x][1, x]^T: n^c += w, s^c += w x, A^c += w x x^T (upper)
        blas.dsyr(weight, vector, a=scatter, lower=0, overwrite_a=1)

    def update_many(self, c: int, matrix: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add the rows of ``matrix`` (in stream order, column 0 all ones) to class slot ``c``.

        ``weights`` are the rows' masses w_j (all 1 when ``None``); none may be 0, since every
        row counts as an arrival of the class for the forgetting.

        """
        n_rows = len(matrix)
        if n_rows == 0:
            return
        scatter = self.data[:, :, c]
        if self.forgetting == 1.0:
            if weights is None:
                scatter += matrix.T @ matrix
            else:
                scatter += matrix.T @ (matrix * weights[:, None])  # sum_j w_j [1, x_j][1, x_j]^T
            return
        # Sample j of m gets mass w_j lambda^(m-1-j); the old statistics decay by lambda^m.
        mass = self.forgetting ** np.arange(n_rows - 1, -1, -1, dtype=float)
        if weights is not None:
            mass *= weights
        scatter *= self.forgetting**n_rows
        scatter += matrix.T @ (matrix * mass[:, None])

    def merge(self, other: ClassStatistics, columns: np.ndarray) -> None:
        """Add ``other``'s statistics in place; ``columns[j]`` is where other's column j goes.

        Statistics are additive (n^c, s^c and A^c of a union of samples are the sums), so this
        is exact. Classes of ``other`` that are new here are appended in ``other``'s order.

        """
        for label in other.labels:
            if label not in self.slot:
                self.add_class(label)
        block_index = np.ix_(columns, columns)
        for source, label in enumerate(other.labels):
            # other's upper triangle may land below the diagonal here: add the full symmetric.
            target = self.data[:, :, self.slot[label]]
            target[block_index] += symmetrize_upper(other.data[:, :, source])

    # ----------------------------------------------------------------- solving

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
        return (1.0 - np.eye(self.n_classes)) @ counts

    def systems_share_matrix(self, reweight: bool) -> bool:
        """True when every one-vs-rest system has the same M (two classes, or no reweighting)."""
        return self.n_classes <= 2 or not reweight

    def _mixing(self, reweight: bool, tau: float, eta: float) -> tuple[np.ndarray, np.ndarray]:
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
        matrix_mix, _ = self._mixing(reweight, 0.0, 1.0)
        return self._matrix(matrix_mix[k], l2, first)

    def _matrix(self, mix: np.ndarray, l2: float, first: int) -> np.ndarray:
        dim = self.dim
        flat = self.data.reshape(dim * dim, self.n_classes, order="F")
        matrix = flat @ mix  # sum_j mix_j A^j, column-major
        if first == 0:
            matrix[:: dim + 1] += l2  # + b I (l2 is the paper's b)
            return matrix.reshape(dim, dim, order="F")
        matrix = np.asfortranarray(matrix.reshape(dim, dim, order="F")[first:, first:])
        matrix.ravel(order="F")[:: dim - first + 1] += l2  # + b I (l2 is the paper's b)
        return matrix

    def right_hand_sides(self, reweight: bool, tau: float, eta: float, first: int) -> np.ndarray:
        """r_k = (tau + eta) w_k s^k + (tau - eta) w_rest s^rest, one row per class."""
        _, rhs_mix = self._mixing(reweight, tau, eta)
        sums = self.data[0, first:, :]  # s^c (with n^c in front when first == 0)
        return rhs_mix @ sums.T

    def solve(self, l2: float, tau: float, eta: float, reweight: bool, first: int) -> np.ndarray:
        """Weights of every one-vs-rest system, one row per class, ``dim`` columns.

        Columns before ``first`` (the constant when there is no intercept) get weight 0.

        """
        n_classes = self.n_classes
        if n_classes == 0 or self.dim == first:
            return np.zeros((n_classes, self.dim))
        if n_classes == 2:
            return self._solve_two(l2, tau, eta, reweight, first)
        matrix_mix, rhs_mix = self._mixing(reweight, tau, eta)
        sums = self.data[0, first:, :]  # s^c, one column per class (n^c first when first == 0)
        rhs = sums @ rhs_mix.T  # r_k = sum_j rhs_mix[k, j] s^j, one column per class
        if self.systems_share_matrix(reweight):
            # Two classes (or no reweighting): one matrix, one factorisation, every class's r.
            matrix = self._matrix(matrix_mix[0], l2, first)
            weights = solve_spd(matrix, rhs, ridge=l2).T
        else:
            weights = np.empty((n_classes, self.dim - first))
            for k in range(n_classes):
                matrix = self._matrix(matrix_mix[k], l2, first)
                weights[k] = solve_spd(matrix, rhs[:, k], ridge=l2)
        return self._full_width(weights, first)

    def _full_width(self, weights: np.ndarray, first: int) -> np.ndarray:
        """Rows of ``dim`` weights: the columns before ``first`` (the constant) get weight 0."""
        if first == 0:
            return weights
        solution = np.zeros((len(weights), self.dim))
        solution[:, first:] = weights
        return solution

    def _solve_two(self, l2: float, tau: float, eta: float, reweight: bool, first: int):
        """The two-class case of `solve` with the weights in Python scalars: the same
        result as the general path, with fewer numpy calls on the prediction hot path.

        Both one-vs-rest systems share M = w_0 A^0 + w_1 A^1 + b I; the right-hand sides are
        r_0 = (tau + eta) w_0 s^0 + (tau - eta) w_1 s^1 and r_1 the same with the roles swapped.

        """
        n_0, n_1 = self.data[0, 0, :].tolist()
        if reweight:
            w_0 = 1.0 / n_0 if n_0 > 0 else 0.0  # 1/n^0
            w_1 = 1.0 / n_1 if n_1 > 0 else 0.0  # 1/n^1
        else:
            w_0, w_1 = float(n_0 > 0), float(n_1 > 0)  # as class_weights: an empty side gets 0
        matrix = self._matrix(np.array((w_0, w_1)), l2, first)  # M = w_0 A^0 + w_1 A^1 + b I
        target_pos, target_rest = tau + eta, tau - eta
        mix = np.array(
            ((target_pos * w_0, target_rest * w_0), (target_rest * w_1, target_pos * w_1))
        )
        rhs = self.data[0, first:, :] @ mix  # column k: r_k
        return self._full_width(solve_spd(matrix, rhs, ridge=l2).T, first)
