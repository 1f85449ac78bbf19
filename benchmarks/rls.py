"""RLSRegressor against river's regressors (and padasip's FilterRLS): speed and accuracy.

Run:  python benchmarks/rls.py            (a few minutes; writes benchmarks/results/rls.md)
      python benchmarks/rls.py --quick    (fewer samples and repeats, prints only)

1. Time per sample of a prequential step (``predict_one`` then ``learn_one``) on a dense
   random stream of d features, d = 8, 22, 128, 512, after a warm-up: the best of several
   repeats of a block of steps, in microseconds, with the ratios to river's
   ``LinearRegression`` and ``BayesianLinearRegression`` measured in the same run; with one BLAS
   thread, then again with the BLAS libraries' default threads (a second process, since the
   thread count is set before numpy loads). padasip's ``FilterRLS`` (the textbook P-matrix
   recursion, arrays in and out) gets the dict-to-array conversion in its time.
2. Prequential MAE and RMSE (``evaluate.progressive_val_score``) on river's bundled
   ``TrumpApproval``, ``ChickWeights``, ``WaterFlow`` (its one datetime as the hour, one-hot but
   for hour 0, and the day of the week) and the drifting ``synth.FriedmanDrift`` (gradual
   drift, 5,000 samples), with and without a ``StandardScaler`` in front.

statsmodels' ``RecursiveLS`` (optional: skipped when statsmodels is not installed) is a batch
state-space fit of a whole array, not a per-sample learner: its rows give the time of that
fit divided by the number of samples (no dicts, no per-sample call; not timed at d = 512,
where it takes over a second a sample), and its prequential
predictions use the filtered coefficients of the samples before each one (ordinary least
squares, a diffuse start, no forgetting, no regularisation). The machine is shared: read the
ratios, which come from the same run.
"""

from __future__ import annotations

import sys

import _common

# One BLAS thread for every model (before numpy is imported): on a shared 2-core machine extra
# threads only slow the small matrices down (see conftest.py), and all models get the same. The
# second speed table (--default-threads, a child process) keeps the libraries' defaults.
DEFAULT_THREADS = "--default-threads"
if DEFAULT_THREADS not in sys.argv:
    _common.limit_blas_threads()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import environment_header, interleaved, table, write_results  # noqa: E402
from river import base, datasets, evaluate, linear_model, metrics, preprocessing  # noqa: E402
from river.datasets import synth  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from river_nrrls import RLSRegressor  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "rls.md"

try:
    import padasip
except ImportError:  # optional
    padasip = None

try:
    from statsmodels.regression.recursive_ls import RecursiveLS
except ImportError:  # optional
    RecursiveLS = None


def _recursive_ls(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """statsmodels' RecursiveLS of [1, X] -> y; the prequential predictions (0 first)."""
    import warnings

    design = np.column_stack((np.ones(len(X)), X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filtered = RecursiveLS(y, design).fit().recursive_coefficients.filtered
    predictions = np.zeros(len(y))
    predictions[1:] = np.einsum("ij,ji->i", design[1:], filtered[:, :-1])
    return np.nan_to_num(predictions, nan=0.0, posinf=0.0, neginf=0.0)


class PadasipRLS(base.Regressor):
    """padasip's FilterRLS behind river's predict_one/learn_one (fixed, known features; a
    constant 1 for the intercept; P_0 = I / l2 with l2 = 1, forgetting mu)."""

    def __init__(self, features: list, forgetting: float = 1.0):
        self.features = list(features)
        self.forgetting = forgetting
        self.filter = padasip.filters.FilterRLS(
            len(features) + 1, mu=forgetting, eps=1.0, w="zeros"
        )

    def _array(self, x: dict) -> np.ndarray:
        return np.array([1.0] + [float(x.get(f, 0.0)) for f in self.features])

    def predict_one(self, x: dict) -> float:
        return float(self.filter.predict(self._array(x)))

    def learn_one(self, x: dict, y: float) -> None:
        self.filter.adapt(float(y), self._array(x))


def _models(features: list | None, drifting: bool) -> dict:
    models = {
        "river LinearRegression": lambda: linear_model.LinearRegression(),
        "river BayesianLinearRegression": lambda: linear_model.BayesianLinearRegression(),
        "river BayesianLinearRegression(smoothing=0.99)": lambda: (
            linear_model.BayesianLinearRegression(smoothing=0.99)
        ),
        "river BayesianLinearRegression(smoothing=0.9)": lambda: (
            linear_model.BayesianLinearRegression(smoothing=0.9)
        ),
        "RLSRegressor": lambda: RLSRegressor(),
        "RLSRegressor(forgetting=0.99)": lambda: RLSRegressor(forgetting=0.99),
        "RLSRegressor(forgetting=0.9)": lambda: RLSRegressor(forgetting=0.9),
    }
    if padasip is not None and features is not None:
        models["padasip FilterRLS(mu=1)"] = lambda: PadasipRLS(features)
        models["padasip FilterRLS(mu=0.99)"] = lambda: PadasipRLS(features, 0.99)
    return models


# ------------------------------------------------------------------------------ speed


def _dense_stream(d: int, n: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    coefficients = rng.normal(size=d)
    y = X @ coefficients + 0.1 * rng.normal(size=n)
    names = [f"x{j}" for j in range(d)]
    return [(dict(zip(names, row)), float(target)) for row, target in zip(X.tolist(), y)]


def speed(quick: bool) -> list[list]:
    """The models take turns on the same block of samples, repeat after repeat (so that the
    load of a shared machine hits them alike), each from its state after the warm-up; the best
    repeat of each counts."""
    rows = []
    sizes = {8: (200, 15), 22: (200, 15), 128: (100, 7), 512: (20, 5)}  # (block, repeats)
    for d, (size, repeats) in sizes.items():
        if quick:
            size, repeats = max(5, size // 10), 2
        samples = _dense_stream(d, size + 50)
        features = [f"x{j}" for j in range(d)]
        models = {
            name: make
            for name, make in _models(features, drifting=False).items()
            if not ("smoothing" in name and d == 512 and quick)
        }
        warm = tuple(zip(*samples[:50], strict=True))
        block = tuple(zip(*samples[50:], strict=True))
        best = interleaved(models, warm, block, True, repeats)
        times = {name: us for name, (us, _) in best.items()}
        if RecursiveLS is not None and d <= 128:  # d = 512: over a second a sample
            X = np.array([list(x.values()) for x, _ in samples])
            y = np.array([target for _, target in samples])
            best = math.inf
            for _ in range(2 if quick or d > 22 else 5):
                start = time.perf_counter()
                _recursive_ls(X, y)
                best = min(best, time.perf_counter() - start)
            times["statsmodels RecursiveLS (batch fit / n)"] = best / len(samples) * 1e6
        linear = times["river LinearRegression"]
        bayesian = times["river BayesianLinearRegression"]
        for name, us in times.items():
            rows.append([d, name, f"{us:,.1f}", f"{us / linear:.2f}", f"{us / bayesian:.2f}"])
        print(f"d = {d}: " + ", ".join(f"{k} {v:,.1f} us" for k, v in times.items()), flush=True)
    return rows


# --------------------------------------------------------------------------- accuracy


def _water(x: dict) -> dict:
    hour = x["Time"].hour
    features = {"weekday": float(x["Time"].weekday())}
    if hour:
        features[f"hour_{hour}"] = 1.0
    return features


def _datasets(quick: bool) -> dict:
    friedman = 1000 if quick else 5000
    return {
        "TrumpApproval": (lambda: datasets.TrumpApproval(), None),
        "ChickWeights": (lambda: datasets.ChickWeights(), None),
        "WaterFlow": (
            lambda: ((_water(x), y) for x, y in datasets.WaterFlow()),
            ["weekday"] + [f"hour_{h}" for h in range(1, 24)],
        ),
        "FriedmanDrift (gradual)": (
            lambda: synth.FriedmanDrift(
                drift_type="gra", position=(friedman // 3, friedman // 2), seed=42
            ).take(friedman),
            list(range(10)),
        ),
    }


def accuracy(quick: bool) -> list[list]:
    rows = []
    for dataset, (make_stream, features) in _datasets(quick).items():
        if features is None:
            features = list(next(iter(make_stream()))[0])
        for name, make in _models(features, drifting=True).items():
            for scaled in (False, True):
                if scaled and name.startswith("padasip"):
                    continue
                model = make()
                if scaled:
                    model = preprocessing.StandardScaler() | model
                metric = metrics.MAE() + metrics.RMSE()
                try:
                    evaluate.progressive_val_score(make_stream(), model, metric)
                    mae, rmse = (f"{m.get():,.4f}" for m in metric)
                except (ValueError, OverflowError, np.linalg.LinAlgError) as error:
                    mae = rmse = f"fails ({type(error).__name__})"
                label = f"StandardScaler + {name}" if scaled else name
                rows.append([dataset, label, mae, rmse])
        if RecursiveLS is not None:
            samples = list(make_stream())
            X = np.array([[float(x.get(f, 0.0)) for f in features] for x, _ in samples])
            y = np.array([float(target) for _, target in samples])
            predictions = _recursive_ls(X, y)
            metric = metrics.MAE() + metrics.RMSE()
            for truth, prediction in zip(y.tolist(), predictions.tolist()):
                metric.update(truth, prediction)
            mae, rmse = (f"{m.get():,.4f}" for m in metric)
            rows.append([dataset, "statsmodels RecursiveLS", mae, rmse])
        print(f"{dataset}: done", flush=True)
    return rows


def speed_with_default_threads(quick: bool) -> list[list]:
    """`speed` in a child process whose BLAS libraries keep their default thread counts."""
    environment = {k: v for k, v in os.environ.items() if k not in _common.THREAD_VARIABLES}
    command = [sys.executable, __file__, DEFAULT_THREADS] + (["--quick"] if quick else [])
    output = subprocess.run(
        command, env=environment, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: prints only")
    parser.add_argument(DEFAULT_THREADS, action="store_true", help="(internal) speed only")
    arguments = parser.parse_args()
    quick = arguments.quick
    if arguments.default_threads:  # the child of speed_with_default_threads: rows as JSON
        rows = speed(quick)
        print(json.dumps(rows))
        return
    started = time.perf_counter()
    speed_rows = speed(quick)
    print("the same with the default BLAS threads ...", flush=True)
    threaded_rows = speed_with_default_threads(quick)
    accuracy_rows = accuracy(quick)
    versions = (
        environment_header()
        + (" padasip 1.2.2" if padasip is not None else " padasip not installed")
        + (
            ", statsmodels " + __import__("statsmodels").__version__
            if RecursiveLS is not None
            else ", statsmodels not installed"
        )
    )
    text = "\n\n".join(
        [
            "# RLSRegressor against river's regressors",
            f"Command: `python benchmarks/rls.py`. {versions}; a shared machine (2 cores, other "
            "jobs running): compare within a table, through the ratios.",
            "## Time per prequential step (predict_one + learn_one), dense random stream",
            "One BLAS thread. The models take turns on the same block of samples (200 at "
            "d = 8 and 22, 100 at 128, 20 at 512, after 50 of warm-up), 15, 15, 7 and 5 times; "
            "the best turn counts. Microseconds per sample; ratios to river's LinearRegression "
            "(LR) and BayesianLinearRegression (BLR) in the same run (< 1: faster).",
            table(["d", "model", "us / sample", "ratio to LR", "ratio to BLR"], speed_rows),
            "### The same with the BLAS libraries' default threads",
            "A second process, without the thread variables (the machine has "
            f"{os.cpu_count()} cores).",
            table(["d", "model", "us / sample", "ratio to LR", "ratio to BLR"], threaded_rows),
            "## Prequential MAE / RMSE",
            "FriedmanDrift: gradual drift, 5,000 samples. WaterFlow: the hour (one-hot, hour 0 "
            "the baseline) and the day of the week. Lower is better.",
            table(["data set", "model", "MAE", "RMSE"], accuracy_rows),
        ]
    )
    print(text)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if not quick:
        write_results(RESULTS, text + "\n")


if __name__ == "__main__":
    main()
