"""Snapshots taken while other threads learn are states that existed.

A ``pickle.dumps`` or ``copy.deepcopy`` of a model with a lock (`NRRLS`, `RLSRegressor`) is
taken under the model's lock, so it is the model after some prefix of the stream that another
thread is teaching it: never a mixture of two steps. Each test lets one thread learn a stream
while others take snapshots, then replays the stream and checks that every snapshot equals the
model after some prefix, and that a model resumed from a snapshot goes on exactly as one that
was never interrupted.
"""

from __future__ import annotations

import copy
import pickle
import sys
import threading
import time

import numpy as np
import pytest
from kernel_paths import kernel_path  # noqa: F401  (a fixture: both kernel paths)

from river_nrrls import NRRLS, RLSRegressor


def _stream(n_samples: int, n_features: int, seed: int, regression: bool) -> list:
    """Samples whose features come and go (one emerges every 20 samples)."""
    rng = np.random.default_rng(seed)
    samples = []
    for t in range(n_samples):
        width = min(n_features, 2 + t // 20)
        x = {f"x{j}": float(v) for j, v in enumerate(rng.normal(size=width)) if v > -1.5}
        if regression:
            y: object = float(sum(x.values()) + rng.normal(scale=0.1))
        else:
            y = bool(sum(x.values()) + rng.normal() > 0.3)
        samples.append((x, y))
    return samples


def _fingerprint(model) -> bytes:
    """What a state determines: its samples' masses and its weights, as bytes."""
    if isinstance(model, RLSRegressor):
        parts = [model.n_samples, model.bias, *sorted(model.weights.items())]
    else:
        parts = [sorted(model.n_samples.items(), key=repr)]
        parts += [sorted(w.items()) for _, w in sorted(model.weights.items(), key=repr)]
    return repr(parts).encode()


MODELS = {
    "NRRLS": lambda: NRRLS(),
    "NRRLS-forgetting": lambda: NRRLS(forgetting=0.98),
    "RLSRegressor": lambda: RLSRegressor(),
    "RLSRegressor-forgetting": lambda: RLSRegressor(forgetting=0.98),
    "RLSRegressor-wide": lambda: RLSRegressor(l2=1e-2),
    "RLSRegressor-standardized": lambda: RLSRegressor(standardized_penalty=True),
}


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_every_snapshot_taken_while_another_thread_learns_is_a_prefix(name, how):
    wide = name.endswith("wide")
    regression = name.startswith("RLS")
    samples = _stream(240, 60 if wide else 8, seed=len(name), regression=regression)
    model = MODELS[name]()
    snapshots: list = []
    done = threading.Event()
    start = threading.Barrier(3)
    # threads switch every microsecond rather than every 5 ms: snapshots meet every step
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def learn() -> None:
        start.wait()
        for x, y in samples:
            model.learn_one(x, y)
            time.sleep(0)  # let the snapshots in between two steps too
        done.set()

    def snapshot() -> None:
        start.wait()
        while not done.is_set():
            if how == "pickle":
                snapshots.append(pickle.loads(pickle.dumps(model)))
            else:
                snapshots.append(copy.deepcopy(model))

    threads = [threading.Thread(target=learn)] + [
        threading.Thread(target=snapshot) for _ in range(2)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(snapshots) > 10

    replay = MODELS[name]()
    prefixes = {_fingerprint(replay): 0}
    for t, (x, y) in enumerate(samples, start=1):
        replay.learn_one(x, y)
        prefixes.setdefault(_fingerprint(replay), t)
    torn = [s for s in snapshots if _fingerprint(s) not in prefixes]
    assert not torn, f"{len(torn)} of {len(snapshots)} snapshots match no prefix"

    # a model resumed from the last snapshot goes on as the uninterrupted one
    resumed = snapshots[-1]
    start = prefixes[_fingerprint(resumed)]
    for x, y in samples[start:]:
        resumed.learn_one(x, y)
    assert _fingerprint(resumed) == _fingerprint(replay)


def test_a_snapshot_of_a_model_whose_lock_is_held_waits_for_the_call():
    model = NRRLS()
    model.learn_one({"a": 1.0}, True)
    taken = []
    with model._lock:  # (this test's own view of the call in progress)
        thread = threading.Thread(target=lambda: taken.append(pickle.dumps(model)))
        thread.start()
        thread.join(timeout=0.2)
        assert thread.is_alive() and not taken  # the snapshot waits for the lock
        model.learn_one({"a": -1.0}, False)
    thread.join()
    assert pickle.loads(taken[0]).n_samples == {True: 1.0, False: 1.0}
