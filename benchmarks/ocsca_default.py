"""OCSCA's default step: its misclassification cost against that of its base model f0 alone.

Run:  python benchmarks/ocsca_default.py           (writes benchmarks/results/ocsca_default.md)
      python benchmarks/ocsca_default.py --quick   (three streams, one order, prints only)

About 4 minutes on two busy cores (``--jobs``, default 2 processes).

Protocol (a river user's: issue 30 of the project):

* A stream is shuffled (seeded; two orders), its first third trains the base model f0 in one
  online pass WITHOUT costs, and the other two thirds are the cost-sensitive stream: a missed
  positive costs C+ = 5, a false alarm C- = 1.
* On those two thirds, progressive validation (each sample predicted, then learnt) of the
  average misclassification cost (C+ FN + C- FP) / n of: f0 alone (frozen, as OCSCA keeps it)
  and OCSCA(f0) with ``cost_pos=5`` and one alpha (``score="auto"``: ``2 p - 1`` for river's
  classifiers, the decision value of NRRLS; ``intercept=False``) unless the variant says
  otherwise.
* Streams: river's bundled Phishing, Bananas, Shuttle (class 1 against the rest, 7 %
  positives, raw features of tens to hundreds) and ImageSegments (``window`` against the other
  six classes, raw features), and eight of this package's data sets with at most 0.65
  positives per negative (features scaled to [0, 1]); of a larger set, 3,000 samples drawn at
  random (seed 0). Positives are the minority class.
* Base models: river's LogisticRegression (``LR``), StandardScaler | LogisticRegression
  (``scaled LR``), GaussianNB, HoeffdingTreeClassifier, ARFClassifier (seed 1), and
  `river_nrrls.NRRLS`, all with their defaults.
* Variants: ``alpha="scale"`` (the default: alpha_t = 0.05 / mean(x . x)), the same with an
  intercept or with ``score="logit"``, the scale-free factor 0.05 replaced by 0.01 ... 0.3,
  and the constant alphas of the paper's Algorithm 1 (1.0, the previous default, then 0.1,
  0.01, 0.001).

f0 is frozen (OCSCA never trains it with ``learn_base=False``), so its outputs on the stream are
computed once and every variant reads them from a table: one pass of f0 per stream and base
model, whatever the number of variants. The script checks on the first pair that OCSCA gives
the same costs with the table as with f0 itself.

Reported: for every variant, over all (stream, base model, order) triples, the cost relative
to f0's (mean, geometric mean, median), the number of triples where OCSCA costs less than f0
and where it costs more than 5 % more; per stream and base model, the costs (mean of the two
orders). Timing figures are of a machine shared with other jobs.

"""

from __future__ import annotations

import argparse
import concurrent.futures
import math
import os
import random
import statistics
import time
import typing
from pathlib import Path

from _common import compact_table, environment_header, write_results
from river import base, forest, linear_model, naive_bayes, preprocessing, tree
from river import datasets as river_datasets

import river_nrrls.ocsca as ocsca_module
from river_nrrls import NRRLS, OCSCA, datasets

RESULTS = Path(__file__).parent / "results"

COST_POS, COST_NEG = 5.0, 1.0
SEEDS = (1, 2)
RIVER_STREAMS = ("Phishing", "Bananas", "Shuttle", "ImageSegments")
PACKAGE_STREAMS = (
    "Pima",
    "German",
    "SpectfHeart",
    "TicTacToe",
    "Ionosphere",
    "Wdbc",
    "BreastCancerWisconsin",
    "Spambase",
)
QUICK_STREAMS = ("Phishing", "Shuttle", "Pima")
#: A larger stream is cut to this many samples, drawn at random (seed 0) before its order.
MAX_SAMPLES = 3000

BASES = {
    "LR": linear_model.LogisticRegression,
    "scaled LR": lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression(),
    "GaussianNB": naive_bayes.GaussianNB,
    "HoeffdingTree": tree.HoeffdingTreeClassifier,
    "ARF": lambda: forest.ARFClassifier(seed=1),
    "NRRLS": NRRLS,
}


#: The factor of alpha="scale" in the package (alpha_t = factor / mean(x . x)).
DEFAULT_FACTOR = ocsca_module.SCALE_ALPHA


class OCSCAVariant(typing.NamedTuple):
    """One way to run OCSCA: its parameters and the factor of ``alpha="scale"``."""

    label: str
    params: dict
    factor: float = DEFAULT_FACTOR


DEFAULT = "scale (default)"
PREVIOUS = "alpha = 1"
VARIANTS = [
    OCSCAVariant(DEFAULT, {}),
    OCSCAVariant("scale, intercept", {"intercept": True}),
    OCSCAVariant("scale, logit", {"score": "logit"}),
    *(OCSCAVariant(f"scale, factor {f:g}", {}, factor=f) for f in (0.01, 0.1, 0.3)),
    *(OCSCAVariant(f"alpha = {alpha:g}", {"alpha": alpha}) for alpha in (1.0, 0.1, 0.01, 0.001)),
]


# ------------------------------------------------------------------ pieces


def load_stream(name: str, seed: int) -> list[tuple[dict, bool]]:
    """The samples of a stream, labels as bools (True: the minority class), in a seeded order."""
    if name == "Phishing":
        data = list(river_datasets.Phishing())
    elif name == "Bananas":
        data = list(river_datasets.Bananas())
    elif name == "Shuttle":
        data = [(x, y == 1) for x, y in river_datasets.Shuttle()]
    elif name == "ImageSegments":
        data = [(x, y == "window") for x, y in river_datasets.ImageSegments()]
    else:
        data = list(datasets.load(name))
    if len(data) > MAX_SAMPLES:
        data = random.Random(0).sample(data, MAX_SAMPLES)
    random.Random(seed).shuffle(data)
    return data


class FrozenTable(base.Classifier):
    """f0's outputs on the samples of the stream, read back by identity of the sample dict."""

    def __init__(self, f0: base.Classifier, samples: list[dict]):
        self.proba = {id(x): f0.predict_proba_one(x) for x in samples}
        self.decision = (
            {id(x): f0.decision_one(x) for x in samples} if hasattr(f0, "decision_one") else None
        )
        if self.decision is not None:
            self.decision_one = self._decision_one

    def learn_one(self, x: dict, y: bool) -> None:
        raise RuntimeError("f0 is frozen")

    def predict_proba_one(self, x: dict) -> dict:
        return self.proba[id(x)]

    def _decision_one(self, x: dict) -> dict:
        return self.decision[id(x)]


def progressive_cost(model, rest: list, learn: bool = True) -> float:
    """Average misclassification cost of predict-then-learn over ``rest``."""
    total = 0.0
    for x, y in rest:
        prediction = model.predict_one(x)
        if prediction != y:
            total += COST_POS if y else COST_NEG
        if learn:
            model.learn_one(x, y)
    return total / len(rest)


def ocsca_cost(f0, variant: OCSCAVariant, rest: list) -> float:
    ocsca_module.SCALE_ALPHA = variant.factor  # read at every step of alpha="scale"
    try:
        return progressive_cost(
            OCSCA(f0, cost_pos=COST_POS, cost_neg=COST_NEG, **variant.params), rest
        )
    finally:
        ocsca_module.SCALE_ALPHA = DEFAULT_FACTOR


def run_stream(name: str, seeds: tuple[int, ...], check: bool) -> list[dict]:
    """Every base model and variant on one stream, for every order."""
    rows = []
    for seed in seeds:
        data = load_stream(name, seed)
        third = len(data) // 3
        rest = data[third:]
        for base_name, factory in BASES.items():
            started = time.perf_counter()
            f0 = factory()
            for x, y in data[:third]:
                f0.learn_one(x, y)
            table = FrozenTable(f0, [x for x, _ in rest])
            costs = {"f0": progressive_cost(table, rest, learn=False)}
            for variant in VARIANTS:
                costs[variant.label] = ocsca_cost(table, variant, rest)
            if check and seed == seeds[0] and base_name == "LR":
                assert ocsca_cost(f0, VARIANTS[0], rest) == costs[DEFAULT], "the table differs"
                assert progressive_cost(f0, rest, learn=False) == costs["f0"]
            rows.append(
                {
                    "stream": name,
                    "base": base_name,
                    "seed": seed,
                    "n": len(data),
                    "n_true": sum(y for _, y in data),
                    "costs": costs,
                    "seconds": time.perf_counter() - started,
                }
            )
    return rows


# ----------------------------------------------------------------- reports


def summary(rows: list[dict]) -> list[dict]:
    """Per variant: the costs relative to f0's over all triples."""
    out = []
    for variant in VARIANTS:
        ratios = [
            row["costs"][variant.label] / row["costs"]["f0"]
            for row in rows
            if row["costs"]["f0"] > 0
        ]
        out.append(
            {
                "label": variant.label,
                "mean": statistics.fmean(ratios),
                "gmean": math.exp(statistics.fmean(math.log(max(r, 1e-9)) for r in ratios)),
                "median": statistics.median(ratios),
                "cheaper": sum(r < 1.0 for r in ratios),
                "dearer": sum(r > 1.05 for r in ratios),
                "n": len(ratios),
            }
        )
    return out


def markdown(rows: list[dict], seconds: float, command: str) -> str:
    table = summary(rows)
    n = table[0]["n"]
    streams = list(dict.fromkeys(row["stream"] for row in rows))
    lines = [
        "# OCSCA's default step against its base model alone",
        "",
        f"Written by `{command}` in {seconds:.0f} s ({environment_header()} The cores were "
        "shared with other jobs.) The "
        "protocol is in the script's docstring: f0 learns the first third of a shuffled stream "
        "without costs; on the other two thirds, progressive validation of the average "
        f"misclassification cost with C+ = {COST_POS:g}, C- = {COST_NEG:g}, of f0 alone (frozen) "
        "and of OCSCA(f0) with `cost_pos=5`. "
        f"{len(streams)} streams x {len(BASES)} base models x {len(set(r['seed'] for r in rows))}"
        f" orders = {n} triples.",
        "",
        "## Every variant: cost relative to f0 alone's",
        "",
        compact_table(
            [
                "variant",
                "mean",
                "geometric mean",
                "median",
                "cheaper than f0",
                "> 5 % dearer than f0",
            ]
        ),
    ]
    for entry in table:
        label = f"**{entry['label']}**" if entry["label"] == DEFAULT else entry["label"]
        lines.append(
            f"| {label} | {entry['mean']:.3f} | {entry['gmean']:.3f} | {entry['median']:.3f} | "
            f"{entry['cheaper']} of {n} | {entry['dearer']} of {n} |"
        )
    lines += [
        "",
        "`scale`: alpha_t = factor / mean(x . x) (factor 0.05 by default); `alpha = a`: the "
        "paper's constant alpha (1 was the default before). `intercept`: `intercept=True`; "
        '`logit`: `score="logit"` (f0\'s log-odds instead of 2 p - 1).',
        "",
        "## Per stream and base model",
        "",
        "Average misclassification cost over the orders: f0 alone, OCSCA with the default "
        '`alpha="scale"`, with the previous default alpha = 1 (bold: the lowest of the three); '
        "seconds: f0 and every variant, all the orders (shared machine).",
        "",
        compact_table(
            ["stream", "n (n+)", "base model", "f0", "scale (default)", "alpha = 1", "seconds"]
        ),
    ]
    for stream in streams:
        for base_name in BASES:
            chunk = [r for r in rows if r["stream"] == stream and r["base"] == base_name]
            if not chunk:
                continue
            means = {
                key: statistics.fmean(r["costs"][key] for r in chunk)
                for key in ("f0", DEFAULT, PREVIOUS)
            }
            best = min(means.values())
            cells = [f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in means.values()]
            seconds = sum(r["seconds"] for r in chunk)
            lines.append(
                f"| {stream} | {chunk[0]['n']} ({chunk[0]['n_true']}) | {base_name} | "
                + " | ".join(cells)
                + f" | {seconds:.1f} |"
            )
    default = next(e for e in table if e["label"] == DEFAULT)
    previous = next(e for e in table if e["label"] == PREVIOUS)
    lines += [
        "",
        "## Summary",
        "",
        f'* The default `alpha="scale"` costs less than f0 alone in {default["cheaper"]} of '
        f"{n} triples and more than 5 % more in {default['dearer']}; its cost is "
        f"{default['mean']:.2f} times f0's on average (geometric mean {default['gmean']:.2f}).",
        f"* The previous default alpha = 1: cheaper than f0 in {previous['cheaper']} of {n}, "
        f"more than 5 % dearer in {previous['dearer']}, {previous['mean']:.2f} times f0's cost "
        "on average.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="three streams, one order")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--output", type=Path, default=None, help="folder of the results file")
    args = parser.parse_args(argv)
    streams = QUICK_STREAMS if args.quick else RIVER_STREAMS + PACKAGE_STREAMS
    seeds = SEEDS[:1] if args.quick else SEEDS
    started = time.perf_counter()
    rows: list[dict] = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [
            pool.submit(run_stream, name, seeds, check=(i == 0)) for i, name in enumerate(streams)
        ]
        for future in futures:
            rows += future.result()
    seconds = time.perf_counter() - started
    command = "python benchmarks/ocsca_default.py" + (" --quick" if args.quick else "")
    text = markdown(rows, seconds, command)
    print(text)
    output = args.output if args.output is not None else (None if args.quick else RESULTS)
    if output is not None:
        write_results(output / "ocsca_default.md", text)


if __name__ == "__main__":
    main()
