"""The data of the paper's Fig. 2 for ``river-nrrls benchmark``.

- Fig. 2(a): the L2 norm of the NR-RLS weights after every sample, next to the norm of the batch
  TER solution on the same prefix (they coincide: NR-RLS *is* TER at every step) and to the
  AR-RLS and RLS weights (which drift away from it).
- Fig. 2(c): the time to learn a sample and have up-to-date weights, against the number of
  samples seen: Theta(n_t d^2) for IR-RLS (grows), Theta(d^2) + one O(d^3) solve for NR-RLS
  (flat).
"""

from __future__ import annotations

import time

import numpy as np

from river_nrrls import ARRLS, IRRLS, NRRLS

from .protocol import B, as_dicts, fit_ter, load_matrix

__all__ = ["time_per_sample", "weight_norms"]


def _shuffled(dataset: str, n_samples: int | None, seed: int):
    X, y, names = load_matrix(dataset)
    order = np.random.default_rng(seed).permutation(len(y))[:n_samples]
    return X[order], y[order], list(names)


def _full_weights(model, names: list[str]) -> np.ndarray:
    """[intercept, w_1, ..., w_d] of the class True (zeros before any sample of a class)."""
    weights = model.weights.get(True, {})
    return np.array([model.intercepts.get(True, 0.0)] + [weights.get(f, 0.0) for f in names])


def weight_norms(dataset: str, seed: int, n_samples: int | None = None) -> dict[str, np.ndarray]:
    """L2 norms of the weights after every sample of a shuffled data set (the linear model).

    Returns arrays ``samples`` (1..n), ``NR-RLS``, ``TER`` (batch on the prefix), ``AR-RLS``,
    ``RLS``, and ``max_rel_diff``: the largest ``|w_NRRLS - w_TER| / |w_TER|`` over the stream
    (a single number, in an array). The norms are taken once both classes have been seen.
    """
    X, y, names = _shuffled(dataset, n_samples, seed)
    models = {"NR-RLS": NRRLS(l2=B), "AR-RLS": ARRLS(l2=B), "RLS": NRRLS(l2=B, reweight=False)}
    rows = as_dicts(X, names)
    curves: dict[str, list[float]] = {name: [] for name in (*models, "TER")}
    samples, max_rel_diff = [], 0.0
    for t, (x, label) in enumerate(zip(rows, y.tolist()), start=1):
        for model in models.values():
            model.learn_one(x, label)
        if y[:t].all() or not y[:t].any():
            continue  # one class only so far
        ter = fit_ter(X[:t], y[:t])  # batch TER on the prefix x_1..x_t
        nrrls = _full_weights(models["NR-RLS"], names)
        max_rel_diff = max(max_rel_diff, float(np.linalg.norm(nrrls - ter) / np.linalg.norm(ter)))
        samples.append(t)
        curves["TER"].append(float(np.linalg.norm(ter)))
        for name, model in models.items():
            curves[name].append(float(np.linalg.norm(_full_weights(model, names))))
    result = {name: np.asarray(values) for name, values in curves.items()}
    result["samples"] = np.asarray(samples)
    result["max_rel_diff"] = np.asarray([max_rel_diff])
    return result


def time_per_sample(dataset: str, seed: int, n_samples: int) -> dict[str, np.ndarray]:
    """Wall seconds to learn each sample of a shuffled data set and have current weights.

    ``IR-RLS``: ``learn_one`` (it re-runs its recursion over every stored sample and so always
    holds current weights). ``NR-RLS``: ``learn_one`` (a rank-1 update of the statistics) plus a
    prediction, which solves the weights (one Cholesky); ``NR-RLS learn only``: the update alone.
    """
    X, y, names = _shuffled(dataset, n_samples, seed)
    rows = as_dicts(X, names)
    labels = y.tolist()
    times: dict[str, list[float]] = {"IR-RLS": [], "NR-RLS": [], "NR-RLS learn only": []}
    irrls, nrrls, nrrls_learn = IRRLS(l2=B), NRRLS(l2=B), NRRLS(l2=B)
    clock = time.perf_counter
    for x, label in zip(rows, labels):
        start = clock()
        irrls.learn_one(x, label)
        times["IR-RLS"].append(clock() - start)
        start = clock()
        nrrls.learn_one(x, label)
        nrrls.predict_one(x)  # solves the weights (cached until the next sample)
        times["NR-RLS"].append(clock() - start)
        start = clock()
        nrrls_learn.learn_one(x, label)
        times["NR-RLS learn only"].append(clock() - start)
    result = {name: np.asarray(values) for name, values in times.items()}
    result["samples"] = np.arange(1, len(rows) + 1)
    return result
