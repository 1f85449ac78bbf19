"""Conditioning of NR-RLS on Toh's reduced polynomial (RM) features: the sum against the mean.

For a few bundled data sets (inputs already in [0, 1]) and RM orders r = 1..6, this runs
``PolynomialExtender(r, aggregate=...) | NRRLS()`` prequentially (predict, then learn, every
sample, in file order) and reports:

- ``K``: the number of columns of NR-RLS's system (the RM terms plus NR-RLS's intercept);
- ``cond(M)``: the 2-norm condition number of the final normal matrix
  ``M = A+/n+ + A-/n- + b I`` (b = 1e-4, the intercept column included), computed here from the
  expanded matrix, independently of NR-RLS's internals;
- ``chol``: whether LAPACK's Cholesky (``dpotrf``) factorises that final ``M`` in double
  precision; when it does not, a solver must fall back to something else (NRRLS falls back to a
  minimum-norm least-squares solve, which is much slower and no longer the TER solution);
- ``cond(DMD)``: the same after symmetric diagonal equilibration (``D = diag(M)^-1/2``), that
  is, the ill-conditioning that is *not* mere column scaling; a double-precision solve can
  lose up to ``log10(cond(DMD))`` of its 16 digits;
- ``rel.err``: the relative difference between NR-RLS's final weights and an independent
  LAPACK solve of the same system after that equilibration. Where ``eps * cond(DMD)`` is small
  it bounds NR-RLS's error; where it is near 1 (the sum at high orders) the TER solution is not
  determined in double precision at all and the figure only measures how much two solvers
  disagree;
- ``G-mean``: the prequential G-mean over the whole stream;
- ``time``: seconds for the prequential run.

``sum`` is the paper's RM; ``mean`` divides the sum by the data set's number of features
(``PolynomialExtender(aggregate="mean", n_features=l)``), a deviation from the paper.

Then, for each data set and variant, `river_nrrls.PolynomialOrderSelector` chooses r
online among 1..6 on prequential G-mean; its own prequential G-mean and the order it ends on
are reported with the best order in hindsight.

Run ``python benchmarks/poly_conditioning.py`` (``--datasets Pima Bupa`` to choose); it prints
the tables and writes ``benchmarks/results/poly_conditioning.md``. BLAS is limited to one thread
(the systems are small; several threads on a busy machine only slow them down).
"""

from __future__ import annotations

import _common

_common.limit_blas_threads()

import argparse  # noqa: E402
import pathlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import compact_table, environment_header, write_results  # noqa: E402
from river import metrics  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

import river_nrrls  # noqa: E402
from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector, datasets  # noqa: E402

ORDERS = (1, 2, 3, 4, 5, 6)
DEFAULT_DATASETS = ("Bupa", "Pima", "Heart", "Wdbc", "Ionosphere", "Sonar")
B = 1e-4
MEASURES = ("cond(M)", "cond(DMD)", "chol", "rel.err", "G-mean", "time")
RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "poly_conditioning.md"


def extender(order: int, variant: str, n_features: int) -> PolynomialExtender:
    if variant == "mean":
        return PolynomialExtender(order, aggregate="mean", n_features=n_features)
    return PolynomialExtender(order)


def prequential(dataset, model) -> tuple[float, float]:
    """Predict then learn every sample; return (G-mean, seconds)."""
    metric = metrics.GeometricMean()
    start = time.perf_counter()
    for x, y in dataset:
        y_pred = model.predict_one(x)
        if y_pred is not None:
            metric.update(y, y_pred)
        model.learn_one(x, y)
    return float(metric.get()), time.perf_counter() - start


def final_system(expanded: pd.DataFrame, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TER normal equations of class True with NR-RLS's intercept column (b on it too)."""
    matrix = np.column_stack([np.ones(len(expanded)), expanded.to_numpy()])
    system = B * np.eye(matrix.shape[1])
    rhs = np.zeros(matrix.shape[1])
    for mask, target in ((labels, 1.0), (~labels, -1.0)):  # tau = 0, eta = 1
        part = matrix[mask]
        system += part.T @ part / len(part)  # A^c / n^c
        rhs += target * part.sum(axis=0) / len(part)  # target_c s^c / n^c
    return system, rhs


def equilibrated_solve(system: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    scale = 1.0 / np.sqrt(np.diag(system))  # D = diag(M)^-1/2
    scaled = system * scale[:, None] * scale[None, :]
    return scale * np.linalg.solve(scaled, scale * rhs)


def run_order(name: str, order: int, variant: str) -> dict:
    dataset = datasets.load(name)
    rows = list(dataset)
    labels = np.array([y for _, y in rows], dtype=bool)
    model = extender(order, variant, dataset.n_features) | NRRLS(l2=B)
    gmean, seconds = prequential(rows, model)
    expanded = model["PolynomialExtender"].transform_many(pd.DataFrame([x for x, _ in rows]))
    system, rhs = final_system(expanded, labels)
    nrrls = model["NRRLS"]
    learnt = nrrls.weights[True]
    weights = np.array([nrrls.intercepts[True]] + [learnt[c] for c in expanded.columns])
    reference = equilibrated_solve(system, rhs)
    scale = 1.0 / np.sqrt(np.diag(system))
    _, info = lapack.dpotrf(system, lower=0, clean=0)
    return {
        "dataset": name,
        "l": dataset.n_features,
        "r": order,
        "K": system.shape[0],
        "variant": variant,
        "cond(M)": float(np.linalg.cond(system)),
        "cond(DMD)": float(np.linalg.cond(system * scale[:, None] * scale[None, :])),
        "chol": "yes" if info == 0 else "no",
        "rel.err": float(np.linalg.norm(weights - reference) / np.linalg.norm(reference)),
        "G-mean": gmean,
        "time": seconds,
    }


def run_selector(name: str, variant: str, per_order: list[dict]) -> dict:
    dataset = datasets.load(name)
    selector = PolynomialOrderSelector(
        orders=ORDERS, extender=extender(1, variant, dataset.n_features)
    )
    gmean, seconds = prequential(dataset, selector)
    # The selector's final order is, by construction, the best prequential G-mean of the
    # per-order runs (ties to the lower order): recomputing it from those runs checks that.
    best = max(per_order, key=lambda row: (row["G-mean"], -row["r"]))
    return {
        "dataset": name,
        "variant": variant,
        "selector G-mean": gmean,
        "final r": selector.best_order,
        "best r (per-order runs)": best["r"],
        "its G-mean": best["G-mean"],
        "r = 1 G-mean": next(row["G-mean"] for row in per_order if row["r"] == 1),
        "time": seconds,
    }


def findings(orders: pd.DataFrame, selectors: pd.DataFrame) -> list[str]:
    """A few figures computed from the tables (so that the text never goes stale)."""
    by = orders.set_index(["dataset", "r", "variant"])
    higher = [
        (by.loc[(d, r, "mean"), "G-mean"], by.loc[(d, r, "sum"), "G-mean"])
        for d, r, v in by.index
        if v == "sum" and r >= 2
    ]
    wins = sum(mean > total for mean, total in higher)
    ties = sum(mean == total for mean, total in higher)
    lines = []
    for variant in ("sum", "mean"):
        part = orders[orders["variant"] == variant]
        top = part.loc[part["cond(M)"].idxmax()]
        lines.append(
            f"- `{variant}`: largest cond(M) {top['cond(M)']:.2e} ({top['dataset']}, r = "
            f"{top['r']}); largest cond(DMD) {part['cond(DMD)'].max():.2e}; "
            f"largest rel.err {part['rel.err'].max():.1e}; Cholesky of the final M fails in "
            f"{int((part['chol'] == 'no').sum())} of {len(part)} runs; "
            f"{int((part['rel.err'] > 1e-6).sum())} runs have rel.err > 1e-6."
        )
    lines.append(
        f"- G-mean, r >= 2: `mean` higher than `sum` in {wins} of {len(higher)} "
        f"(data set, r) pairs, equal in {ties}, lower in {len(higher) - wins - ties}."
    )
    gaps = selectors["its G-mean"] - selectors["selector G-mean"]
    gains = selectors["selector G-mean"] - selectors["r = 1 G-mean"]
    lines.append(
        f"- Selector: {gaps.min():.4f} to {gaps.max():.4f} below the best order's G-mean; "
        f"above the linear model (r = 1) in {int((gains > 0).sum())} of {len(selectors)} runs "
        f"(change {gains.min():+.4f} to {gains.max():+.4f})."
    )
    return lines


def markdown(frame: pd.DataFrame, formats: dict) -> str:
    rows = [
        [formats.get(col, "{}").format(row[col]) for col in frame.columns]
        for _, row in frame.iterrows()
    ]
    return compact_table(list(frame.columns), rows)


FORMATS = {
    "cond(M)": "{:.2e}",
    "cond(DMD)": "{:.2e}",
    "rel.err": "{:.1e}",
    "G-mean": "{:.4f}",
    "time": "{:.2f}",
    "selector G-mean": "{:.4f}",
    "its G-mean": "{:.4f}",
    "r = 1 G-mean": "{:.4f}",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args()

    order_rows, selector_rows = [], []
    for name in args.datasets:
        for variant in ("sum", "mean"):
            rows = [run_order(name, order, variant) for order in ORDERS]
            order_rows.extend(rows)
            selector_rows.append(run_selector(name, variant, rows))
            for row in rows:
                print(markdown(pd.DataFrame([row]), FORMATS).splitlines()[-1], flush=True)
    orders = pd.DataFrame(order_rows)
    # side by side: sum against mean for every (data set, r)
    wide = orders.pivot_table(
        index=["dataset", "l", "r", "K"],
        columns="variant",
        values=list(MEASURES),
        aggfunc="first",
        sort=False,
    )
    side = pd.DataFrame(
        {
            "dataset": [index[0] for index in wide.index],
            "l": [index[1] for index in wide.index],
            "r": [index[2] for index in wide.index],
            "K": [index[3] for index in wide.index],
            **{
                f"{measure} {variant}": wide[(measure, variant)].to_numpy()
                for measure in MEASURES
                for variant in ("sum", "mean")
            },
        }
    )
    side_formats = {
        f"{measure} {variant}": FORMATS.get(measure, "{}")
        for measure in MEASURES
        for variant in ("sum", "mean")
    }
    selectors = pd.DataFrame(selector_rows)
    orders_table = markdown(side, side_formats)
    selector_table = markdown(selectors, FORMATS)
    print()
    print(orders_table)
    print()
    print(selector_table)
    print()
    print("\n".join(findings(orders, selectors)))

    text = "\n".join(
        [
            "# NR-RLS on RM polynomial features: conditioning, sum against mean",
            "",
            "Generated by `benchmarks/poly_conditioning.py` "
            f"(river_nrrls {river_nrrls.__version__}; {environment_header()})",
            "",
            "Prequential runs (predict, then learn) over each whole bundled data set in file "
            "order, `PolynomialExtender(r) | NRRLS()` with b = 1e-4. `sum` is the paper's RM; "
            '`mean` is `PolynomialExtender(r, aggregate="mean", n_features=l)` (a deviation '
            "from the paper). cond(M) is the 2-norm condition number of the final TER normal "
            "matrix (intercept column included) and cond(DMD) the same after diagonal "
            "equilibration (the ill-conditioning that column scaling does not explain); chol "
            "says whether LAPACK's Cholesky factorises M; rel.err is the relative difference "
            "between NR-RLS's final weights and an equilibrated LAPACK solve of the same "
            "system: an error bound where eps * cond(DMD) is small, mere disagreement between "
            "two solvers where it is near 1 (the TER solution is then not determined in double "
            "precision); time is the prequential run in seconds (single BLAS thread, shared "
            "machine: indicative only).",
            "",
            "## Per order",
            "",
            orders_table,
            "",
            "## Online choice of r (PolynomialOrderSelector, orders 1..6, prequential G-mean)",
            "",
            "The selector's G-mean is an honest prequential score of the whole procedure. Its "
            "final order is by construction the order with the best prequential G-mean (the "
            "column recomputed from the per-order runs is a consistency check); that order's "
            "G-mean is known only in hindsight.",
            "",
            selector_table,
            "",
            "## Findings (computed)",
            "",
            *findings(orders, selectors),
            "",
        ]
    )
    write_results(args.output, text)


if __name__ == "__main__":
    main()
