"""AutoNRRLS against the package's fixed models and river's trees, on streams it was not tuned on.

Run:  python benchmarks/auto_streams.py            (writes benchmarks/results/auto_streams.md)
      python benchmarks/auto_streams.py --quick    (the first 400 samples of each, prints only)
      python benchmarks/auto_streams.py --jobs 2   (two models at a time)

A full run takes about five minutes of one core. It checks the criteria of AutoNRRLS's choice
rule: on every stream AutoNRRLS within 0.01 prequential G-mean of the best fixed model of the
package, first in average rank among all the models, and on the drifting Agrawal streams at
least 0.93 and river's best tree + 0.05.

**The tuning set and the held-out set.** AutoNRRLS's defaults (its tree, the window's
``window_per_class``) were chosen by looking at the streams of `TUNING` only; the streams of
`HELD_OUT` were written down before any of them was run, and the defaults were not changed
after. Both are reported, separately.

**Streams** (binary, ``True`` the minority class; every seed fixed; the drifting ones made
imbalanced by keeping each positive with a probability, a seeded ``random.Random``):

* tuning: ``Agrawal 0->2`` (the README's: river's ``synth.ConceptDriftStream`` of Agrawal
  functions 0 then 2 at sample 3,000, width 100), ``Hyperplane`` (the AutoNRRLS docstring's:
  4 features all drifting by 0.01), ``Bupa`` (bundled, shuffled), ``Bupa-25`` and
  ``Ionosphere-25`` (25 positives kept, as the small held-out sets below);
* held-out, drifting synthetic: ``Agrawal 3->7`` (functions 3 then 7, features mapped to [0, 1],
  40 % of the positives kept), ``SEA 0->2`` (10 % label noise, 30 % of the positives kept),
  ``RandomRBFDrift`` (river's, 2 classes, 10 features, centroids moving 0.001 a sample, 30 %
  of the positives kept), ``Sine 0->2`` (its two rules, balanced), ``STAGGER 0->1->2`` (rules
  on three nominal codes, two sudden drifts 20 samples wide), ``LED digit 0`` (river's
  ``LEDDrift``, 7 segments of which 3 swap, 10 % noise; the positives are the digit 0: 10 %);
* held-out, rule-based: ``Mixed`` (river's: two booleans, two numbers, a rule on them);
* held-out, real imbalanced (the bundled sets, shuffled once with seed 42): ``German``,
  ``Pima``, ``Spambase`` (first 3,000), ``Wdbc``; and small sets with fewer than 30 positives,
  made deterministically by keeping 25 positives (a seeded ``random.sample`` of them) and every
  negative: ``German-25`` (725 samples), ``Australian-25`` (408), ``Pima-25`` (525),
  ``Mushroom-25`` (first 3,000 negatives: 3,025).

**Models**, each prequential (predict, then learn, every sample): the package's
``NRRLS()``, ``NRRLS(forgetting=0.999)``, ``PolynomialExtender(3) | NRRLS()``,
``PolynomialOrderSelector()``, ``PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99))``
and ``AutoNRRLS()``; river's ``HoeffdingTreeClassifier()``,
``HoeffdingAdaptiveTreeClassifier(seed=42)`` and ``ARFClassifier(seed=42)`` (10 trees).

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import concurrent.futures  # noqa: E402
import itertools  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import typing  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import compact_table, environment_header, gmean, write_results  # noqa: E402
from river import forest, stream, tree  # noqa: E402
from river.datasets import synth  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

from river_nrrls import (  # noqa: E402
    NRRLS,
    AutoNRRLS,
    PolynomialExtender,
    PolynomialOrderSelector,
    datasets,
)
from river_nrrls.datasets.synth import scale_agrawal  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "auto_streams.md"
SEED = 42
SMALL_POSITIVES = 25


# ----------------------------------------------------------------------------- streams


def _kept(samples: typing.Iterable, keep: float, seed: int, n: int) -> list:
    """The first ``n`` samples of ``samples`` whose label is negative or that are positives
    kept with probability ``keep`` (a seeded ``random.Random``); labels as bools."""
    rng = random.Random(seed)
    kept = ((x, bool(y)) for x, y in samples if not y or rng.random() < keep)
    return list(itertools.islice(kept, n))


def _drift(first, second, position: int, width: int, seed: int):
    return synth.ConceptDriftStream(first, second, position=position, width=width, seed=seed)


def agrawal_readme(n: int) -> list:
    drifting = _drift(
        synth.Agrawal(classification_function=0, seed=1),
        synth.Agrawal(classification_function=2, seed=2),
        3000,
        100,
        3,
    )
    return [(x, bool(y)) for x, y in drifting.take(n)]


def hyperplane_docstring(n: int) -> list:
    generator = synth.Hyperplane(seed=1, n_features=4, n_drift_features=4, mag_change=0.01)
    return [(x, bool(y)) for x, y in generator.take(n)]


def shuffled(name: str, n: int | None = None) -> list:
    dataset = datasets.load(name)
    samples = list(stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=SEED))
    return samples[:n]


def small(name: str, negatives: int | None = None) -> list:
    """Every negative (the first ``negatives``) and ``SMALL_POSITIVES`` positives drawn with a
    seeded ``random.sample``, in the shuffled set's order."""
    samples = shuffled(name)
    positives = [i for i, (_, y) in enumerate(samples) if y]
    chosen = set(random.Random(SEED).sample(positives, SMALL_POSITIVES))
    negative_rows = [i for i, (_, y) in enumerate(samples) if not y][:negatives]
    rows = sorted(chosen | set(negative_rows))
    return [samples[i] for i in rows]


def agrawal_heldout(n: int) -> list:
    drifting = _drift(
        synth.Agrawal(classification_function=3, seed=11),
        synth.Agrawal(classification_function=7, seed=12),
        n // 2,
        n // 20,
        13,
    )
    return [(scale_agrawal(x), y) for x, y in _kept(drifting, 0.4, 14, n)]


def sea(n: int) -> list:
    drifting = _drift(
        synth.SEA(variant=0, noise=0.1, seed=21),
        synth.SEA(variant=2, noise=0.1, seed=22),
        n // 2,
        n // 20,
        23,
    )
    return _kept(drifting, 0.3, 24, n)


def rbf(n: int) -> list:
    generator = synth.RandomRBFDrift(
        seed_model=31, seed_sample=32, n_classes=2, n_features=10, n_centroids=20,
        change_speed=0.001, n_drift_centroids=10,
    )  # fmt: skip
    return _kept(((x, y == 1) for x, y in generator), 0.3, 33, n)


def sine(n: int) -> list:
    drifting = _drift(
        synth.Sine(classification_function=0, seed=41),
        synth.Sine(classification_function=2, seed=42),
        n // 2,
        n // 20,
        43,
    )
    return [(x, bool(y)) for x, y in drifting.take(n)]


def stagger(n: int) -> list:
    third = n // 3
    drifting = _drift(
        synth.STAGGER(classification_function=0, seed=51),
        _drift(
            synth.STAGGER(classification_function=1, seed=52),
            synth.STAGGER(classification_function=2, seed=53),
            third,
            20,
            54,
        ),
        third,
        20,
        55,
    )
    return [(x, bool(y)) for x, y in drifting.take(n)]


def led(n: int) -> list:
    generator = synth.LEDDrift(seed=61, noise_percentage=0.1, n_drift_features=3)
    return [(x, y == 0) for x, y in generator.take(n)]


def mixed(n: int) -> list:
    generator = synth.Mixed(seed=71, classification_function=1)
    return [({k: float(v) for k, v in x.items()}, bool(y)) for x, y in generator.take(n)]


class Spec(typing.NamedTuple):
    family: str
    build: typing.Callable[[], list]


TUNING = {
    "Agrawal 0->2": Spec("drifting, rule-based", lambda: agrawal_readme(6000)),
    "Hyperplane": Spec("drifting", lambda: hyperplane_docstring(3000)),
    "Bupa": Spec("real", lambda: shuffled("bupa")),
    "Bupa-25": Spec("real, small", lambda: small("bupa")),
    "Ionosphere-25": Spec("real, small", lambda: small("ionosphere")),
}
HELD_OUT = {
    "Agrawal 3->7": Spec("drifting, rule-based", lambda: agrawal_heldout(8000)),
    "SEA 0->2": Spec("drifting", lambda: sea(8000)),
    "RandomRBFDrift": Spec("drifting", lambda: rbf(6000)),
    "Sine 0->2": Spec("drifting, rule-based", lambda: sine(5000)),
    "STAGGER 0->1->2": Spec("drifting, rule-based", lambda: stagger(3000)),
    "LED digit 0": Spec("drifting", lambda: led(5000)),
    "Mixed": Spec("rule-based", lambda: mixed(4000)),
    "German": Spec("real", lambda: shuffled("german")),
    "Pima": Spec("real", lambda: shuffled("pima")),
    "Spambase": Spec("real", lambda: shuffled("spambase", 3000)),
    "Wdbc": Spec("real", lambda: shuffled("wdbc")),
    "German-25": Spec("real, small", lambda: small("german")),
    "Australian-25": Spec("real, small", lambda: small("australian")),
    "Pima-25": Spec("real, small", lambda: small("pima")),
    "Mushroom-25": Spec("real, small", lambda: small("mushroom", 3000)),
}
STREAMS = {**TUNING, **HELD_OUT}
AGRAWAL = ("Agrawal 0->2", "Agrawal 3->7")

OURS = {
    "NRRLS": lambda: NRRLS(),
    "NRRLS(0.999)": lambda: NRRLS(forgetting=0.999),
    "Poly(3) | NRRLS": lambda: PolynomialExtender(3) | NRRLS(),
    "Selector": lambda: PolynomialOrderSelector(),
    "Selector + grid": lambda: PolynomialOrderSelector(forgetting_grid=(1.0, 0.999, 0.99)),
}
TREES = {
    "HT": lambda: tree.HoeffdingTreeClassifier(),
    "HAT": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=SEED),
    "ARF": lambda: forest.ARFClassifier(seed=SEED),
}
MODELS = {**OURS, **TREES, "AutoNRRLS": lambda: AutoNRRLS()}


# ------------------------------------------------------------------------------- runs


def run(job: tuple) -> tuple:
    """``(stream, model, G-mean, CPU seconds)`` of one prequential pass (None -> False)."""
    stream_name, model_name, cap = job
    samples = STREAMS[stream_name].build()[:cap]
    model = MODELS[model_name]()
    labels = np.array([y for _, y in samples], dtype=bool)
    predictions = np.zeros(len(samples), dtype=bool)
    started = time.process_time()
    for i, (x, y) in enumerate(samples):
        predictions[i] = model.predict_one(x) is True
        model.learn_one(x, y)
    return stream_name, model_name, gmean(labels, predictions), time.process_time() - started


def ranks(row: dict) -> dict:
    """Every model's rank on one stream (1: the best; ties share their mean rank)."""
    ordered = sorted(row.values(), reverse=True)
    return {
        name: float(np.mean([i + 1 for i, v in enumerate(ordered) if v == value]))
        for name, value in row.items()
    }


def report(scores: dict, seconds: float, cap: int | None) -> str:
    """The results file: streams, G-means, ranks, and the criteria."""
    names = list(MODELS)
    lines = [
        "# AutoNRRLS on streams it was not tuned on",
        "",
        f"Written by `python benchmarks/auto_streams.py` in {seconds:.0f} s wall-clock "
        f"({environment_header()}). The script's docstring describes the streams and models; "
        "the tuning streams are those its defaults were chosen on, the held-out ones were not "
        "looked at before."
        + ("" if cap is None else f" **Quick run**: the first {cap} samples of each stream."),
        "",
    ]
    for title, group in (("Held-out streams", HELD_OUT), ("Tuning streams", TUNING)):
        rows, rank_rows = [], []
        for stream_name in group:
            row = scores[stream_name]
            best_ours = max(row[name] for name in OURS)
            best = max(row.values())
            cells = [f"**{row[n]:.3f}**" if row[n] == best else f"{row[n]:.3f}" for n in names]
            gap = row["AutoNRRLS"] - best_ours
            rows.append([stream_name, STREAMS[stream_name].family, *cells, f"{gap:+.3f}"])
            rank_rows.append(ranks(row))
        mean_ranks = {n: float(np.mean([r[n] for r in rank_rows])) for n in names}
        rows.append(["average rank", "", *[f"{mean_ranks[n]:.2f}" for n in names], ""])
        within = sum(
            scores[s]["AutoNRRLS"] >= max(scores[s][n] for n in OURS) - 0.01 for s in group
        )
        first = min(mean_ranks, key=mean_ranks.get)
        lines += [
            f"## {title}: prequential G-mean",
            "",
            compact_table(["stream", "family", *names, "Auto - best of ours"], rows),
            "",
            f"AutoNRRLS within 0.01 of the best fixed model of ours on {within} of {len(group)} "
            f"streams; first in average rank: {first} ({mean_ranks[first]:.2f}; AutoNRRLS "
            f"{mean_ranks['AutoNRRLS']:.2f}).",
            "",
        ]
    lines += ["## Drifting Agrawal", ""]
    for stream_name in AGRAWAL:
        row = scores[stream_name]
        best_tree = max(TREES, key=lambda n: row[n])
        lines.append(
            f"- {stream_name}: AutoNRRLS {row['AutoNRRLS']:.3f}; river's best tree "
            f"{best_tree} {row[best_tree]:.3f} (+0.05: {row[best_tree] + 0.05:.3f})."
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 samples a stream, no file")
    parser.add_argument("--jobs", type=int, default=1, help="models run at a time")
    args = parser.parse_args()
    cap = 400 if args.quick else None
    jobs = [(s, m, cap) for s in STREAMS for m in MODELS]
    jobs.sort(key=lambda job: job[1] not in ("ARF", "AutoNRRLS", "Selector + grid"))
    started = time.perf_counter()
    scores: dict = {s: {} for s in STREAMS}
    if args.jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(run, jobs))
    else:
        results = [run(job) for job in jobs]
    for stream_name, model_name, value, _ in results:
        scores[stream_name][model_name] = value
    text = report(scores, time.perf_counter() - started, cap)
    print(text)
    if not args.quick:
        write_results(RESULTS, text)


if __name__ == "__main__":
    main()
