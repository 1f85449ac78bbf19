"""`ClassStatistics.permute` and `ClassStatistics.leading_view`: the two interfaces through which
the order selector renumbers the model's columns and solves each order on its leading block."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import kernel_path  # noqa: F401  (a fixture)

from river_nrrls._solver import SystemSolver
from river_nrrls._stats import ClassStatistics, symmetrize_upper
from river_nrrls._systems import system

pytestmark = pytest.mark.usefixtures("kernel_path")


def _statistics(dim: int, n_classes: int, seed: int = 0, grown: bool = True) -> ClassStatistics:
    """Statistics of a random stream over ``dim`` columns (``grown``: from one column up, so the
    buffer has spare capacity)."""
    rng = np.random.default_rng(seed)
    stats = ClassStatistics(dim=1 if grown else dim)
    for label in range(n_classes):
        stats.add_class(label)
    stats.grow(dim)
    for i in range(6 * dim if n_classes else 0):
        vector = np.concatenate(([1.0], rng.normal(size=dim - 1) * rng.random(dim - 1) * 3))
        stats.update_one(i % n_classes, vector, float(rng.uniform(0.5, 2.0)))
    return stats


@pytest.mark.parametrize("grown", [True, False])
@pytest.mark.parametrize("n_classes", [0, 1, 3])
def test_permute_reindexes_every_symmetric_scatter(n_classes, grown):
    stats = _statistics(9, n_classes, grown=grown)
    before = [symmetrize_upper(stats.scatter(c)) for c in range(n_classes)]
    order = np.random.default_rng(1).permutation(9)
    stats.permute(order)
    assert stats.dim == 9
    for c, scatter in enumerate(before):
        expected = scatter[np.ix_(order, order)]
        np.testing.assert_array_equal(np.triu(stats.scatter(c)), np.triu(expected))


def _independent(stats: ClassStatistics, dim: int) -> ClassStatistics:
    """Statistics of ``dim`` columns built apart from ``stats``: their leading block."""
    block = ClassStatistics(dim=dim, forgetting=stats.forgetting)
    for label in stats.labels:
        block.add_class(label)
    block.assign(stats.data[:dim, :dim, :])
    return block


@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("reweight", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("dims", [(12, 7), (90, 70), (90, 20)])
def test_a_solver_on_a_leading_view_solves_the_block(dims, n_classes, reweight, first):
    full, dim = dims
    stats = _statistics(full, n_classes, seed=dim)
    view = stats.leading_view(dim)
    assert view.dim == dim and view.labels == stats.labels
    assert np.shares_memory(view.data, stats.data)  # no copy
    solve = SystemSolver(l2=0.1, tau=0.2, eta=1.0, reweight=reweight, first=first, forgetting=1)
    check = SystemSolver(l2=0.1, tau=0.2, eta=1.0, reweight=reweight, first=first, forgetting=1)
    for _ in range(2):  # the second solve reuses the view's own workspace
        np.testing.assert_array_equal(
            solve.solve(view), check.solve(_independent(stats, dim)), strict=True
        )
    assert stats.dim == full  # the source keeps its width


def test_a_refreshed_view_follows_its_source():
    stats = _statistics(6, 2)
    view = stats.leading_view(4)
    stats.add_class("new")
    stats.grow(40)  # beyond the capacity: the buffer is reallocated
    assert not np.shares_memory(view.buffer, stats.buffer)  # not refreshed yet
    assert stats.leading_view(5, reuse=view) is view
    assert view.dim == 5 and view.n_classes == 3
    assert np.shares_memory(view.data, stats.buffer)
    np.testing.assert_array_equal(view.data, stats.data[:5, :5, :])
    solver = SystemSolver(l2=0.1, tau=0.0, eta=1.0, reweight=True, first=0, forgetting=1.0)
    np.testing.assert_array_equal(solver.solve(view)[:2], solver.solve(_independent(stats, 5))[:2])


def test_views_keep_their_own_workspace():
    stats = _statistics(10, 2)
    narrow, wide = stats.leading_view(4), stats.leading_view(8)
    mix = np.array([[1.0, 0.5], [1.0, -0.5]])
    matrix_4, _ = system(narrow, mix, 0.1, 0)
    matrix_8, _ = system(wide, mix, 0.1, 0)
    assert matrix_4.shape == (4, 4) and matrix_8.shape == (8, 8)
    system(stats, mix, 0.1, 0)
    assert system(narrow, mix, 0.1, 0)[0].shape == (4, 4)  # not the source's nor the other's
