"""The NR-RLS paper's Algorithm 1: a recursive inverse per one-vs-rest system.

Kept for reproducing the paper (``NRRLS(solver="woodbury")``); the default solver solves the
normal equations from the sufficient statistics instead (algorithms page, "Sufficient statistics
and the exact solve"), which is cheaper
per sample and numerically sound.

For every one-vs-rest system ``k`` the recursion keeps ``R_k^{-1} = M_k^{-1}``. When a sample of
class ``c`` arrives, each system's positive side (``k == c``) or rest side (``k != c``) changes
from ``(A_old, n_old)`` to ``(lambda-decayed A_old + w x x^T, n_new)``. The paper's two steps
(algorithms page, "NR-RLS: the paper's recursion", with its printing errors fixed) then give the
new inverse:

    step 4 (downdate):  G^{-1} = R^{-1} - R^{-1} (I + D R^{-1})^{-1} D R^{-1},
                        D = A_decayed / n_new - A_old / n_old  (= -beta S_old when lambda = 1)
    step 5 (rank one):  R^{-1} = G^{-1} - beta G^{-1} x x^T G^{-1} / (1 + beta x^T G^{-1} x),
                        beta = w / n_new   (w: the sample's weight, 1 in the paper)

The class means ``S = A / n`` of the paper are read from the shared statistics rather than kept
as a second copy; the targets' right-hand side ``z = z^- + z^+`` is formed before ``w = R^{-1} z``
(the printed pseudo-code lists them the other way round). The 0/0 of an empty class is 0.

"""

from __future__ import annotations

import warnings

import numpy as np

from ._solver import SystemSolver
from ._stats import ClassStatistics, symmetrize_upper
from ._systems import assemble, right_hand_sides, systems_share_matrix

__all__ = ["RecursiveInverse", "WoodburyAccuracyWarning", "grow_inverse", "RESIDUAL_TOLERANCE"]

#: Largest relative residual ||M w - r|| / (||M|| ||w|| + ||r||) accepted from the recursion.
#: A backward-stable solve gives about 1e-16 times the dimension; the recursion drifts from
#: M^-1 when a sample is badly scaled against the past (say 1e100 after values near 1), and
#: its weights are then meaningless.
RESIDUAL_TOLERANCE = 1e-6


class WoodburyAccuracyWarning(RuntimeWarning):
    """The woodbury recursion lost its accuracy: the weights were solved from the statistics."""


class RecursiveInverse:
    """``R_k^{-1}`` of every one-vs-rest system, updated by the paper's recursion.

    Parameters
    ----------
    l2
        Ridge constant (the paper's b) (must be positive: ``R_0^{-1} = I / b``).
    reweight
        Class weights 1/n (True) or 1 (False, plain RLS).
    first
        First column of the statistics that the systems use (1 skips the constant column when
        there is no intercept).
    tau, eta
        The targets tau + eta (class) and tau - eta (rest).

    It follows `river_nrrls._solver.Solver`'s interface: the estimator holds it as its solver.

    """

    sequential = True  # every sample updates the inverses: a mini-batch goes sample by sample

    def __init__(self, l2: float, reweight: bool, first: int, tau: float = 0.0, eta: float = 1.0):
        self.l2 = l2
        self.reweight = reweight
        self.first = first
        self.tau = tau
        self.eta = eta
        self.inverses: list[np.ndarray] = []  # one per system; a single one when systems share M

    def grow(self, dim: int) -> None:
        """New feature columns: M gains b on the diagonal, so R^{-1} gains 1/b (exact)."""
        self.inverses = [
            grow_inverse(inverse, dim - self.first, self.l2) for inverse in self.inverses
        ]

    def add_class(self, stats: ClassStatistics) -> None:
        """Create the systems of classes that were just added to ``stats`` (before they learn)."""
        if not self.inverses:
            self.inverses.append(np.eye(stats.dim - self.first) / self.l2)  # R_0^{-1} = I / b
        if systems_share_matrix(stats.n_classes, self.reweight):
            return
        if len(self.inverses) == 1:
            # Until now two classes shared one matrix: class 1's system starts as class 0's.
            self.inverses.append(self.inverses[0].copy())
        for k in range(len(self.inverses), stats.n_classes):
            matrix = assemble(stats, k, self.reweight, self.l2, self.first)
            self.inverses.append(np.linalg.inv(symmetrize_upper(matrix)))

    def invalidate(self, stats: ClassStatistics) -> None:
        """Recompute every R_k^{-1} from the statistics (after a merge: inverses do not add; a
        reset; new parameters)."""
        self.rebuild(stats)

    def rebuild(self, stats: ClassStatistics) -> None:
        """Recompute every R_k^{-1} from the statistics."""
        self.inverses = []
        if stats.n_classes == 0:
            return
        n_systems = 1 if systems_share_matrix(stats.n_classes, self.reweight) else stats.n_classes
        for k in range(n_systems):
            matrix = assemble(stats, k, self.reweight, self.l2, self.first)
            self.inverses.append(np.linalg.inv(symmetrize_upper(matrix)))

    def observe(
        self, stats: ClassStatistics, c: int, vector: np.ndarray, weight: float = 1.0
    ) -> None:
        """Update every system for one sample of class slot ``c`` and mass ``weight`` (w > 0);
        call before ``stats`` learns."""
        first, lam = self.first, stats.forgetting
        x = vector[first:]
        counts = stats.counts
        class_scatter = self._block(stats.data[:, :, c])  # A^c_{t-1}
        shared = systems_share_matrix(stats.n_classes, self.reweight)
        for k, inverse in enumerate(self.inverses):
            if shared or k == c:
                # The side that changes is class c: (A^c, n^c) -> (lambda A^c + w x x^T, ..).
                n_old = counts[c]
                a_old = class_scatter
                a_decayed = lam * a_old
                n_new = lam * n_old + weight
            else:
                # The rest side of class k's system: class c inside it decays, then gains w x.
                others = np.arange(stats.n_classes) != k
                n_old = counts[others].sum()
                a_old = self._block(stats.data[:, :, others].sum(axis=2))
                a_decayed = a_old - (1.0 - lam) * class_scatter
                n_new = n_old - (1.0 - lam) * counts[c] + weight
            weight_old = self._weight(n_old)
            weight_new = self._weight(n_new)  # beta_t = 1 / n_t (1 without reweighting)
            # D = A_decayed / n_new - A_old / n_old  (= -beta_t S_{t-1} when lambda = 1)
            downdate = weight_new * a_decayed - weight_old * a_old
            if np.any(downdate):
                inverse = _woodbury_step(inverse, downdate)  # step 4: G_t^{-1}
            # step 5: R_t^{-1}, the rank-one term beta_t w x x^T of a sample of mass w
            self.inverses[k] = _sherman_morrison(inverse, x, weight_new * weight)

    def _block(self, scatter: np.ndarray) -> np.ndarray:
        return symmetrize_upper(scatter)[self.first :, self.first :]

    def _weight(self, count: float) -> float:
        if not self.reweight:
            return 1.0 if count > 0 else 0.0
        return 1.0 / count if count > 0 else 0.0

    def solve(self, stats: ClassStatistics) -> np.ndarray:
        """w_k = R_k^{-1} z_k for every class (z formed first, then the product)."""
        tau, eta = self.tau, self.eta
        solution = np.zeros((stats.n_classes, stats.dim))
        if stats.n_classes == 0:
            return solution
        rhs = right_hand_sides(stats, self.reweight, tau, eta, self.first)  # z = z^- + z^+
        if len(self.inverses) == 1:
            solution[:, self.first :] = rhs @ self.inverses[0]  # R^{-1} symmetric
        else:
            for k, (inverse, r) in enumerate(zip(self.inverses, rhs)):
                solution[k, self.first :] = inverse @ r
        residual = self.relative_residual(stats, solution, rhs)
        if not residual <= RESIDUAL_TOLERANCE:
            warnings.warn(
                f"the woodbury recursion lost its accuracy (relative residual {residual:.1e} > "
                f"{RESIDUAL_TOLERANCE:.0e}; badly scaled samples?): the weights are solved from "
                "the statistics with a Cholesky factorisation instead, as solver='cholesky' does",
                WoodburyAccuracyWarning,
                stacklevel=4,
            )
            direct = SystemSolver(self.l2, tau, eta, self.reweight, self.first, stats.forgetting)
            return direct.solve(stats)
        return solution

    def relative_residual(self, stats: ClassStatistics, solution, rhs) -> float:
        """max_k ||M_k w_k - r_k|| / (||M_k|| ||w_k|| + ||r_k||), the recursion's backward error
        (infinity norms, which do not overflow on statistics within `STATISTICS_LIMIT`; a
        product that overflows gives an infinite residual)."""
        worst = 0.0
        if stats.dim == self.first:  # no column at all: nothing to check
            return worst
        n_systems = 1 if systems_share_matrix(stats.n_classes, self.reweight) else stats.n_classes
        for k in range(n_systems):
            matrix = symmetrize_upper(assemble(stats, k, self.reweight, self.l2, self.first))
            matrix_norm = float(np.abs(matrix).sum(axis=1).max())
            rows = range(stats.n_classes) if n_systems == 1 else [k]
            with np.errstate(over="ignore", invalid="ignore"):
                for j in rows:
                    w, r = solution[j, self.first :], rhs[j]
                    scale = matrix_norm * float(np.abs(w).max()) + float(np.abs(r).max())
                    error = float(np.abs(matrix @ w - r).max())
                    if scale > 0 or error > 0:
                        ratio = error / scale if scale > 0 else float("inf")
                        worst = max(worst, ratio if ratio == ratio else float("inf"))
        return worst


def _woodbury_step(inverse: np.ndarray, downdate: np.ndarray) -> np.ndarray:
    """(R + D)^{-1} = R^{-1} - R^{-1} (I + D R^{-1})^{-1} D R^{-1} (Woodbury, A = R, C = D)."""
    product = downdate @ inverse  # D R^{-1}
    correction = np.linalg.solve(np.eye(len(inverse)) + product, product)
    updated = inverse - inverse @ correction
    return (updated + updated.T) / 2.0


def _sherman_morrison(inverse: np.ndarray, x: np.ndarray, beta: float) -> np.ndarray:
    """(G + beta x x^T)^{-1} = G^{-1} - beta G^{-1} x x^T G^{-1} / (1 + beta x^T G^{-1} x)."""
    if beta == 0.0:
        return inverse
    gx = inverse @ x  # G^{-1} x
    updated = inverse - np.outer(gx, gx) * (beta / (1.0 + beta * (x @ gx)))
    return (updated + updated.T) / 2.0


def grow_inverse(inverse: np.ndarray, dim: int, l2: float) -> np.ndarray:
    """``P`` extended to ``dim`` columns: past samples had zeros there, so ``P`` gains ``1/b``."""
    old = len(inverse)
    if dim <= old:
        return inverse
    grown = np.zeros((dim, dim), order="F")
    grown[:old, :old] = inverse
    grown.flat[old * (dim + 1) :: dim + 1] = 1.0 / l2  # P_0 = I / b on the new diagonal
    return grown
