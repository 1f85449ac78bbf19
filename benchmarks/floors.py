"""How low NR-RLS's step can go, and where compiled code took it: two floors, one BLAS thread.

Run:  python benchmarks/floors.py            (under a minute; writes benchmarks/results/floors.md)
      python benchmarks/floors.py --quick    (fewer repeats, prints only: a smoke test)

1. At d = 22 (the direct path), the bare arithmetic of the two-class step in Python calls
   (`_BareStep`: the same BLAS and LAPACK calls as NR-RLS's Python path, without any
   validation, feature growth or river API) against NR-RLS (its compiled kernels,
   ``river_nrrls/_kernels.pyx``), NR-RLS on its Python paths (the kernels switched off) and
   river's ``LogisticRegression`` on the same 400 prequential steps, taking turns: how close to
   river's speed a Python implementation of the direct solve can come at all, and what the
   kernels bring. Every NR-RLS variant and the bare step must predict the same (checked).
2. At d = 512 (the stale-factor path), the kernels a step calls (`_Kernels`), each timed alone
   and weighted by its calls per step, then all of them in a step's order with nothing else,
   against NR-RLS's and river's ``LogisticRegression``'s steps on the same 600 samples: what
   the step costs without any Python around it.

Best of several repeats, microseconds; the machine is shared, so read the ratios within a table.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import platform
import sys
import time
from pathlib import Path

import overhead
from overhead import _PRECISIONS, _best_us, _prequential, publish
from speed import make_stream, table
from threadpoolctl import threadpool_limits

RESULTS = Path(__file__).parent / "results" / "floors.md"


class _BareStep:
    """The arithmetic of NR-RLS's narrow two-class step and nothing else: the measure of how far
    down a Python implementation of the direct path can go (benchmark only, not the package).

    The same math as `NRRLS()` with its defaults (TER weights, intercept, tau = 0, l2 = 1e-4):
    the augmented scatters [1, x][1, x]^T of the two classes side by side, M and r from ONE
    BLAS product with them, one LAPACK ``dposv``, the score w . [1, x], and a rank-1 update for
    the learn, with the encoded vector reused when ``learn_one`` follows ``predict_one`` on the
    same values. No validation of any kind (types, finiteness, ranges, labels, shapes), no
    feature growth, no class beyond two, no river API beyond the two methods.

    """

    def __init__(self, features: list, l2: float = 1e-4):
        import numpy as np

        self.size = len(features) + 1  # D = d + 1 (the constant column first)
        self.scatters = np.zeros((self.size, self.size, 2), order="F")  # one per class
        self.combined = np.zeros((self.size**2, 2), order="F")
        self.mix = np.zeros((2, 2))
        self.l2 = l2
        self.labels: list = []
        self.weights = None
        self.last = None

    def _vector(self, x: dict):
        import numpy as np

        keys, values = tuple(x), tuple(x.values())
        last = self.last
        if last is not None and last[0] == keys and last[1] == values:
            return last[2]
        vector = np.fromiter((1.0, *values), float, self.size)
        self.last = (keys, values, vector)
        return vector

    def predict_one(self, x: dict):
        from scipy.linalg import blas, lapack

        vector = self._vector(x)
        if self.weights is None:
            n_0, n_1 = self.scatters[0, 0, 0], self.scatters[0, 0, 1]
            w_0, w_1 = 1.0 / n_0, 1.0 / n_1  # 1/n^0, 1/n^1
            mix = self.mix
            mix[0, 0], mix[0, 1], mix[1, 0], mix[1, 1] = w_0, w_1, w_0, -w_1
            # column 0: M = w_0 A^0 + w_1 A^1; column 1: w_0 A^0 - w_1 A^1, whose row 0 is r
            # (the scatters' upper triangles are kept: their row 0 is [n^c, s^c])
            size = self.size
            stacked = self.scatters.reshape(size * size, 2, order="F")  # a view (not kept: a
            # copy of the model would keep a view of the original's scatters)
            blas.dgemm(1.0, stacked, mix.T, 0.0, self.combined, 0, 0, 1)
            matrix = self.combined[:, 0].reshape(size, size, order="F")
            matrix.ravel(order="F")[:: size + 1] += self.l2
            rhs = self.combined[::size, 1].copy()  # row 0 of column 1, r = w_0 s^0 - w_1 s^1
            _, self.weights, _ = lapack.dposv(matrix, rhs, 0, 1)
        return self.labels[0 if blas.ddot(self.weights, vector) >= 0.0 else 1]

    def learn_one(self, x: dict, y) -> None:
        from scipy.linalg import blas

        vector = self._vector(x)
        if y not in self.labels:
            self.labels.append(y)
        slot = self.labels.index(y)
        blas.dsyr(1.0, vector, 0, 1, 0, self.size, self.scatters[:, :, slot], 1)
        self.weights = None


@contextlib.contextmanager
def python_paths():
    """NR-RLS with its compiled kernels switched off (``river_nrrls._native``): the Python
    paths that a machine without a C compiler takes."""
    from river_nrrls import _native

    saved = {name: getattr(_native, name) for name in _native.__all__}
    for name in saved:
        setattr(_native, name, None)
    try:
        yield
    finally:
        for name, kernel in saved.items():
            setattr(_native, name, kernel)


def narrow_floor(repeats: int = 7) -> list:
    """NR-RLS (compiled kernels), NR-RLS on its Python paths, the bare arithmetic of its step in
    Python calls (`_BareStep`) and river's LogisticRegression on the same 400 prequential steps
    at d = 22 after 1,000 samples, taking turns; one BLAS thread. All but LR must predict the
    same (checked)."""
    from river import linear_model

    from river_nrrls import NRRLS

    rows, labels = make_stream(1400, 22, seed=22)
    python = "NRRLS on its Python paths (kernels off)"
    models = {
        "NRRLS, predict_one + learn_one": NRRLS(),
        python: NRRLS(),
        "the arithmetic alone in Python calls (_BareStep: no validation)": _BareStep(list(rows[0])),
        "river LogisticRegression, predict_one + learn_one": linear_model.LogisticRegression(),
    }
    for model in models.values():
        for x, y in zip(rows[:1000], labels[:1000]):
            model.learn_one(x, y)
    predictions = {}
    best = dict.fromkeys(models, float("inf"))
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeats):
            for name, model in models.items():
                run = copy.deepcopy(model)
                predict, learn, said = run.predict_one, run.learn_one, []
                with python_paths() if name == python else contextlib.nullcontext():
                    start = time.perf_counter()
                    for x, y in zip(rows[1000:], labels[1000:]):
                        said.append(predict(x))
                        learn(x, y)
                    best[name] = min(best[name], (time.perf_counter() - start) / 400 * 1e6)
                predictions[name] = said
    *same, lr = models
    if any(predictions[name] != predictions[same[0]] for name in same):
        raise AssertionError("the NRRLS variants and the bare step do not predict the same")
    return [[name, f"{us:.1f}", f"{us / best[lr]:.2f}x"] for name, us in best.items()]


def wide_floor(repeats: int = 3) -> list:
    """The BLAS kernels of NR-RLS's stale-factor step at d = 512 (one BLAS thread), each timed
    alone and times its calls per step (k: the CG iterations per step NR-RLS needs on the same
    steps), then all of them in a step's order with nothing else (`_Kernels.step`), against
    NR-RLS's and river's LogisticRegression's steps on the same 600 samples, taking turns."""
    from river import linear_model

    from river_nrrls import NRRLS

    rows, labels = make_stream(1024 + 600, 512, seed=512)
    model, lr = NRRLS(), linear_model.LogisticRegression()
    for warmed in (model, lr):
        for x, y in zip(rows[:1024], labels[:1024]):
            warmed.learn_one(x, y)
    rows, labels = rows[1024:], labels[1024:]
    _, run = _prequential(model, rows, labels)  # the iterations, and a P^-1 as NR-RLS keeps it
    counters = run._solver.counters
    iterations = counters["iterations"] / max(1, counters["stale"])
    kernels = _Kernels(run, iterations)
    best = {"NRRLS": float("inf"), "kernels": float("inf"), "LR": float("inf")}
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeats):
            for name in best:
                if name == "NRRLS":
                    best[name] = min(best[name], _prequential(model, rows, labels)[0])
                    continue
                step = kernels.step if name == "kernels" else _lr_step(copy.deepcopy(lr))
                start = time.perf_counter()
                for x, y in zip(rows, labels):
                    step(x, y)
                best[name] = min(best[name], (time.perf_counter() - start) / len(rows) * 1e6)
        out = []
        for name, calls, call in kernels.parts():
            us = _best_us(call, 300)
            out.append([name, f"{calls:.2f}", f"{us:.1f}", f"{calls * us:.0f}"])
    total = sum(float(row[3]) for row in out)
    lr_us = best["LR"]
    out.append(["sum of the above", "", "", f"{total:.0f} ({total / lr_us:.2f}x LR)"])
    for name, label in (
        ("kernels", "the same kernels in a step's order, nothing else"),
        ("NRRLS", "NRRLS, predict_one + learn_one"),
    ):
        out.append([label, "", "", f"{best[name]:.0f} ({best[name] / lr_us:.2f}x LR)"])
    out.append(["river LogisticRegression, predict_one + learn_one", "", "", f"{lr_us:.0f}"])
    return out


def _lr_step(model):
    def step(x, y):
        model.predict_one(x)
        model.learn_one(x, y)

    return step


class _Kernels:
    """The BLAS kernels of a stale-factor step, on copies of a run's arrays (benchmark only):
    the dict to a vector, the assembly of M, 1 + k products with M (the initial residual and
    one per CG iteration) and k + 1 with P^-1 (the preconditioned residuals, each with its
    conversions to and from single precision), the Sherman-Morrison update of P^-1 (a product
    and a rank-1 update) and the rank-1 update of a class scatter. A fractional k alternates
    between its floor and ceiling so that the mean is k."""

    def __init__(self, run, iterations: float):
        import numpy as np

        from river_nrrls import _stale
        from river_nrrls._systems import combined_matrix

        stats = run._stats
        self.flat = stats.stacked().copy(order="F")
        self.buffer = stats.buffer.copy(order="F")
        self.size = stats.dim
        self.mix = np.array((0.01, 0.1))
        self.matrix = np.asfortranarray(combined_matrix(stats, self.mix, 1e-4, 0))
        self.assembled = np.empty_like(self.matrix)
        self.inverse = run._solver.stale.inverse.copy(order="F")  # single where accurate
        self.scatter = np.asfortranarray(self.matrix.copy())
        self.vector = np.random.default_rng(0).random(self.size)
        self.iterations = iterations
        self.done = 0.0  # iterations run so far, against steps * k
        self.steps = 0
        self.dtype = self.inverse.dtype
        # P^-1's symmetric product and rank-1 update, as the solver picks them by its dtype
        self.product, self.update, _ = _stale._KERNELS[self.dtype.char]

    def _assemble(self):
        """M as the solver assembles it: its upper triangle in one compiled call where the
        kernels are built, else one product with the stacked scatters."""
        from river_nrrls import _native

        if _native.pair_matrix is None:
            return (self.flat @ self.mix).reshape(self.size, self.size, order="F")
        w_0, w_1 = self.mix.tolist()
        _native.pair_matrix(self.buffer, self.size, 0, w_0, w_1, 1e-4, self.assembled)
        return self.assembled

    def _precondition(self, vector):
        return self.product(1.0, self.inverse, vector.astype(self.dtype)).astype(float)

    def step(self, x: dict, y) -> None:
        import numpy as np
        from scipy.linalg import blas

        np.fromiter(x.values(), float, len(x))
        matrix = self._assemble()
        vector = self.vector
        blas.dsymv(1.0, matrix, vector)
        self._precondition(vector)
        self.steps += 1
        count = int(self.steps * self.iterations - self.done)
        self.done += count
        for _ in range(count):
            blas.dsymv(1.0, matrix, vector)
            self._precondition(vector)
        narrow = vector.astype(self.dtype)
        self.product(1.0, self.inverse, narrow)
        self.update(-1e-12, narrow, 0, 1, 0, len(narrow), self.inverse, 1)
        blas.dsyr(1e-12, vector, 0, 1, 0, self.size, self.scatter, 1)

    def parts(self):
        import numpy as np
        from scipy.linalg import blas

        x = {f"x{j}": 0.5 for j in range(self.size - 1)}
        narrow = self.vector.astype(self.dtype)
        from river_nrrls import _native

        kind = _PRECISIONS[self.dtype.char]
        assembly = (
            "assemble M (one product with the stacked scatters)"
            if _native.pair_matrix is None
            else "assemble M's upper triangle (compiled: pair_matrix)"
        )
        return [
            ("dict to vector (numpy.fromiter)", 1, lambda: np.fromiter(x.values(), float, len(x))),
            (assembly, 1, self._assemble),
            (
                "product with M (dsymv)",
                1 + self.iterations,
                lambda: blas.dsymv(1.0, self.matrix, self.vector),
            ),
            (
                f"product with P^-1 ({kind}, conversions included)",
                2 + self.iterations,
                lambda: self._precondition(self.vector),
            ),
            (
                f"rank-1 update of P^-1 ({kind})",
                1,
                lambda: self.update(-1e-12, narrow, 0, 1, 0, len(narrow), self.inverse, 1),
            ),
            (
                "rank-1 update of a class scatter (dsyr)",
                1,
                lambda: blas.dsyr(1e-12, self.vector, 0, 1, 0, self.size, self.scatter, 1),
            ),
        ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no results file")
    quick = parser.parse_args(argv).quick
    if quick:
        overhead.REPEATS = 2  # the timeit repeats of _best_us

    import numpy as np
    import river

    header = (
        "# How low a step can go\n\nCommand: `python benchmarks/floors.py`. "
        f"Python {platform.python_version()}, numpy {np.__version__}, river {river.__version__}, "
        f"{platform.machine()}, shared machine: compare within a table. Best of several repeats, "
        "microseconds."
    )
    parts = [header]
    parts.append(
        "## The narrow step: NR-RLS, its Python paths and their bare arithmetic, 400 prequential "
        "steps at "
        "d = 22 after 1,000 samples, one BLAS thread\n\n"
        + table(["step", "us", "vs LR"], narrow_floor(2 if quick else 7))
    )
    parts.append(
        "## The wide step: the BLAS kernels of a stale-factor step at d = 512, each timed "
        "alone, times its calls per step (k = NR-RLS's CG iterations per step on the same 600 "
        "steps), then in a step's order, one BLAS thread\n\n"
        + table(["kernel", "calls / step", "us / call", "us / step"], wide_floor(1 if quick else 3))
    )
    return publish(parts, quick, RESULTS)


if __name__ == "__main__":
    sys.exit(main())
