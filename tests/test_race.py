"""The race's shared pieces (river_nrrls/_race.py), used by PolynomialOrderSelector and
AutoNRRLS: the window, the leader and its ties, the block clock, the parameter checks."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from river import metrics

from river_nrrls._race import BlockClock, check_orders, check_positive, leader, update_score


@pytest.mark.parametrize("window", [1, 7, 50])
def test_windowed_score_is_the_metric_of_the_last_samples(window):
    rng = np.random.default_rng(window)
    pairs = [(bool(a), bool(b)) for a, b in rng.integers(0, 2, size=(120, 2))]
    weights = rng.choice([0.5, 1.0, 2.0], size=len(pairs)).tolist()
    score, recent = metrics.BalancedAccuracy(), collections.deque()
    for i, ((y, y_pred), w) in enumerate(zip(pairs, weights)):
        update_score(score, recent, window, y, y_pred, {"w": w})
        reference = metrics.BalancedAccuracy()
        start = max(0, i + 1 - window)
        for (y_r, p_r), w_r in zip(pairs[start : i + 1], weights[start : i + 1]):
            reference.update(y_r, p_r, w=w_r)
        assert score.get() == pytest.approx(reference.get(), abs=1e-12)
        assert len(recent) == min(i + 1, window)


def test_no_window_keeps_every_sample():
    score, recent = metrics.Accuracy(), collections.deque()
    for y in (True, False, True):
        update_score(score, recent, None, y, True, {})
    assert score.get() == pytest.approx(2 / 3) and not recent


def test_the_leader_and_its_ties():
    assert leader(["a", "b", "c"], [0.5, 0.7, 0.7], True) == "b"  # ties: the first
    assert leader(["a", "b", "c"], [0.5, 0.5, 0.5], True) == "a"
    assert leader(["a", "b", "c"], [0.5, 0.2, 0.2], False) == "b"  # smaller is better
    assert leader(["a", "b"], [float("nan"), 0.1], True) == "a"  # (NaN never beats)


def test_block_clock():
    clock = BlockClock(3)
    starts = []
    for _ in range(7):
        starts.append(clock.starts())
        clock.advance()
    assert starts == [True, False, False, True, False, False, True]


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2", None])
def test_check_positive_refuses(value):
    with pytest.raises(ValueError, match="lazy_block"):
        check_positive("lazy_block", value)


def test_check_orders():
    assert check_orders([3, 1, 2]) == (1, 2, 3)
    for bad in ((), (1, 1), (0,), (1.0,), (True,), 3):
        with pytest.raises(ValueError, match="orders"):
            check_orders(bad)
