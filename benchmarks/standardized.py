"""An online StandardScaler in front of the exact models: RLSRegressor and NRRLS.

Run:  python benchmarks/standardized.py            (under a minute; writes
                                                    benchmarks/results/standardized.md)
      python benchmarks/standardized.py --quick    (fewer samples and seeds, prints only)

1. Prequential MAE (``evaluate.progressive_val_score``) of ``RLSRegressor()``,
   ``preprocessing.StandardScaler() | RLSRegressor()`` and
   ``RLSRegressor(standardized_penalty=True)`` (the exact batch ``StandardScaler + Ridge`` of
   every prefix), for l2 = 1 (the default) and 100 and forgetting 1 and 0.99, on river's
   ``TrumpApproval`` and ``ChickWeights`` and on ``synth.Friedman`` (2,000 samples, seed 42:
   ten features uniform in [0, 1], five of them noise).
2. Prequential G-mean (river's ``metrics.GeometricMean``) of ``NRRLS()`` and
   ``preprocessing.StandardScaler() | NRRLS()`` on every data set of ``river_nrrls.datasets``,
   each shuffled (``stream.shuffle`` over the whole set, seeds 0 to 4: several files are
   grouped by class), averaged over the seeds, with the difference and how many seeds the
   scaler wins; and with z-scores from the whole set's moments, a fixed map (an oracle).
3. The time per prequential step of the three regressors at d = 8, 22 and 128 (the option
   solves O(d^3) per sample).
"""

from __future__ import annotations

import _common

_common.limit_blas_threads()

import argparse  # noqa: E402
import functools  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import environment_header, interleaved, table, write_results  # noqa: E402
from river import compose, datasets, evaluate, metrics, preprocessing, stream  # noqa: E402
from river.datasets import synth  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from river_nrrls import NRRLS, RLSRegressor  # noqa: E402
from river_nrrls import datasets as nrrls_datasets  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "standardized.md"


def _regression_sets(quick: bool) -> dict:
    friedman = 500 if quick else 2000
    return {
        "TrumpApproval": lambda: datasets.TrumpApproval(),
        "ChickWeights": lambda: datasets.ChickWeights(),
        f"Friedman ({friedman})": lambda: synth.Friedman(seed=42).take(friedman),
    }


def _regressors(l2: float, forgetting: float) -> dict:
    return {
        "RLSRegressor": lambda: RLSRegressor(l2=l2, forgetting=forgetting),
        "StandardScaler | RLSRegressor": lambda: (
            preprocessing.StandardScaler() | RLSRegressor(l2=l2, forgetting=forgetting)
        ),
        "RLSRegressor(standardized_penalty=True)": lambda: RLSRegressor(
            l2=l2, forgetting=forgetting, standardized_penalty=True
        ),
    }


def regression(quick: bool) -> list[list]:
    rows = []
    for dataset, make_stream in _regression_sets(quick).items():
        for l2 in (1.0, 100.0):
            for forgetting in (1.0, 0.99):
                maes = []
                for make in _regressors(l2, forgetting).values():
                    metric = metrics.MAE()
                    evaluate.progressive_val_score(make_stream(), make(), metric)
                    maes.append(metric.get())
                best = min(maes)
                cells = [f"**{mae:.4f}**" if mae == best else f"{mae:.4f}" for mae in maes]
                rows.append([dataset, l2, forgetting, *cells])
        print(f"{dataset}: done", file=sys.stderr, flush=True)
    return rows


def _units_stream(d: int, n: int, seed: int = 0) -> list:
    """Dense samples whose features have units from 1e-3 to 1e3, a noisy linear target."""
    rng = np.random.default_rng(seed)
    units = 10.0 ** rng.uniform(-3, 3, size=d)
    X = rng.normal(size=(n, d)) * units
    y = X @ (rng.normal(size=d) / units) + 0.1 * rng.normal(size=n)
    names = [f"x{j}" for j in range(d)]
    return [(dict(zip(names, row)), float(target)) for row, target in zip(X.tolist(), y)]


def speed(quick: bool) -> list[list]:
    """Microseconds per prequential step (predict_one + learn_one), the models taking turns on
    the same block (`interleaved`), the best repeat of each."""
    rows = []
    for d, (size, repeats) in {8: (200, 9), 22: (200, 9), 128: (50, 5)}.items():
        if quick:
            size, repeats = 10, 2
        samples = _units_stream(d, size + 50)
        warm = tuple(zip(*samples[:50], strict=True))
        block = tuple(zip(*samples[50:], strict=True))
        best = interleaved(_regressors(1.0, 1.0), warm, block, True, repeats)
        reference = best["RLSRegressor"][0]
        for name, (us, _) in best.items():
            rows.append([d, name, f"{us:,.1f}", f"{us / reference:.2f}"])
    return rows


def _fixed_scaler(dataset) -> compose.FuncTransformer:
    """z-scores with the moments of the whole data set (known in advance: a fixed map)."""
    frame = pd.DataFrame([x for x, _ in dataset])
    means, scales = frame.mean(), frame.std(ddof=0).replace(0.0, 1.0)

    def standardise(x: dict) -> dict:
        return {k: (v - means[k]) / scales[k] for k, v in x.items()}

    return compose.FuncTransformer(standardise)


def _behind(transformer: compose.FuncTransformer) -> compose.Pipeline:
    """A fresh NRRLS behind a stateless transformer."""
    return transformer | NRRLS()


def classification(quick: bool) -> list[list]:
    seeds = range(2 if quick else 5)
    names = nrrls_datasets.NAMES[:4] if quick else nrrls_datasets.NAMES
    rows = []
    for name in names:
        dataset = nrrls_datasets.load(name)
        fixed = _fixed_scaler(dataset)  # stateless: one for every seed
        makers = [
            NRRLS,
            lambda: preprocessing.StandardScaler() | NRRLS(),
            functools.partial(_behind, fixed),
        ]
        scores = np.empty((len(seeds), len(makers)))
        for i, seed in enumerate(seeds):
            for j, make in enumerate(makers):
                shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=seed)
                metric = metrics.GeometricMean()
                evaluate.progressive_val_score(shuffled, make(), metric)
                scores[i, j] = metric.get()
        plain, online, fixed = scores.mean(axis=0)
        wins = int((scores[:, 1] > scores[:, 0]).sum())
        rows.append(
            [
                name,
                f"{dataset.n_samples} x {dataset.n_features}",
                f"{plain:.4f}",
                f"{online:.4f}",
                f"{online - plain:+.4f}",
                f"{wins} of {len(seeds)}",
                f"{fixed:.4f}",
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: prints only")
    quick = parser.parse_args().quick
    started = time.perf_counter()
    speed_rows = speed(quick)
    regression_rows = regression(quick)
    classification_rows = classification(quick)
    text = "\n\n".join(
        [
            "# An online StandardScaler in front of the exact models",
            f"Command: `python benchmarks/standardized.py`. {environment_header()}",
            "## RLSRegressor: prequential MAE (lower is better; the best of a row in bold)",
            "`StandardScaler | RLSRegressor` is river's online scaler in front of the exact "
            "ridge; `standardized_penalty=True` is the exact batch `StandardScaler + Ridge` of "
            "every prefix (a penalty l2 s_j^2 on each raw weight, the intercept free).",
            table(
                [
                    "data set",
                    "l2",
                    "forgetting",
                    "RLSRegressor",
                    "StandardScaler | RLSRegressor",
                    "standardized_penalty=True",
                ],
                regression_rows,
            ),
            "## RLSRegressor: time per prequential step",
            "predict_one + learn_one on a dense random stream whose features have units from "
            "1e-3 to 1e3, one BLAS thread, after 50 samples of warm-up; the models take turns "
            "on the same block (200 samples at d = 8 and 22, 50 at d = 128; 9, 9 and 5 "
            "repeats), the best turn counts. A shared machine: read the ratios.",
            table(["d", "model", "us / step", "ratio to RLSRegressor"], speed_rows),
            "## NRRLS: prequential G-mean (higher is better)",
            "Every data set of `river_nrrls.datasets` (features min-max scaled to [0, 1] by the "
            "data sets themselves), shuffled with `stream.shuffle(dataset, "
            "buffer_size=dataset.n_samples, seed=s)` for seeds 0 to 4: the mean over the "
            "seeds, the difference and the seeds on which the scaler wins. The last column "
            "standardises with the moments of the whole data set (known in advance: a fixed "
            "map, which the model is exact for; an oracle here, for comparison only).",
            table(
                [
                    "data set",
                    "size",
                    "NRRLS",
                    "StandardScaler | NRRLS",
                    "difference",
                    "scaler better",
                    "fixed z-scores | NRRLS",
                ],
                classification_rows,
            ),
        ]
    )
    print(text)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if not quick:
        write_results(RESULTS, text + "\n")


if __name__ == "__main__":
    main()
