"""Speed of an OCSCA step on a wide sparse stream, against river's LogisticRegression.

Run:  python benchmarks/ocsca_speed.py            (writes benchmarks/results/ocsca_speed.md)
      python benchmarks/ocsca_speed.py --quick    (tiny streams, prints only)
      python benchmarks/ocsca_speed.py --before /path/to/old/checkout
                                        (also times the package found there: before/after)

About 2 minutes (twice that with ``--before``) on two cores.

The stream: D features, k = 200 non-zeros a sample (random columns, uniform values; the OCSCA
paper's face data has 50,000 features), 10 % positives (a noisy sparse linear concept), in
river's dict form. Every timed step is ``predict_one`` then ``learn_one`` (what
``evaluate.progressive_val_score`` does). Models:

* ``LR``: river's ``LogisticRegression``;
* ``OCSCA(LR)``: OCSCA around a ``LogisticRegression`` f0 trained on the warm-up prefix
  (``learn_base=False``, the paper: f0 is scored, in ``predict_one`` and in ``learn_one``, but
  never trained);
* ``OCSCA own``: OCSCA around a do-nothing base model (a constant probability): the cost of the
  adaptation itself, which should be O(k) per step, flat in D at fixed k;
* ``CSOGD``: `river_nrrls.baselines.CSOGDClassifier`, which shares OCSCA's encoding and linear
  helpers.

Every figure is measured in two worker processes, with one BLAS thread (``OPENBLAS_NUM_THREADS=1``
and friends, set before numpy is imported) and with the default threading, as
``benchmarks/speed.py`` does (the timing of ``benchmarks/_common.py``). Within a worker the
models take turns in every repeat, every model first learns an untimed warm-up prefix, and the
best repeat counts; every setting runs ``--rounds`` workers (2), the best figure counts.
``--before PATH`` runs the same workers a second time with ``PYTHONPATH=PATH``, so that
``import river_nrrls`` finds the package of another checkout (for instance the commit before a
change), and reports both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import THREAD_VARIABLES, environment_header, interleaved, table, write_results

RESULTS = Path(__file__).parent / "results" / "ocsca_speed.md"
NON_ZEROS = 200
WIDTHS = (2_000, 10_000, 50_000)
MODELS = ("LR", "OCSCA(LR)", "OCSCA own", "CSOGD")


def sparse_stream(n: int, d: int, k: int = NON_ZEROS, seed: int = 0, positives: float = 0.1):
    """n samples of k random non-zeros out of d features, ``positives`` of them positive."""
    import numpy as np

    rng = np.random.default_rng(seed)
    concept = rng.normal(size=d)
    rows, scores = [], []
    for _ in range(n):
        columns = rng.choice(d, size=k, replace=False)
        values = rng.random(k)
        rows.append({f"f{c}": float(v) for c, v in zip(columns.tolist(), values.tolist())})
        scores.append(float(concept[columns] @ values) + 0.3 * rng.normal())
    threshold = np.quantile(scores, 1 - positives)
    return rows, [score > threshold for score in scores]


def _models(warm) -> dict:
    from river import base, linear_model

    from river_nrrls import OCSCA
    from river_nrrls.baselines import CSOGDClassifier

    class Constant(base.Classifier):
        """A base model that does nothing: a constant probability, no learning."""

        def learn_one(self, x, y):
            pass

        def predict_proba_one(self, x):
            return {False: 0.9, True: 0.1}

    def trained_f0():
        f0 = linear_model.LogisticRegression()
        for x, y in zip(*warm):
            f0.learn_one(x, y, w=2.0 if y else 1.0)
        return f0

    return {
        "LR": linear_model.LogisticRegression,
        "OCSCA(LR)": lambda: OCSCA(trained_f0(), alpha=0.1, cost_pos=5.0, score="logit"),
        "OCSCA own": lambda: OCSCA(Constant(), alpha=0.1, cost_pos=5.0, score="proba"),
        "CSOGD": CSOGDClassifier,
    }


def _lookup_floor(rows, d: int, timed, repeats: int) -> float:
    """Microseconds to look a sample's k features up once in a dict of d features (their keys
    from the stream): the floor of any encoding of a dict sample, which grows with d only
    through the memory hierarchy (the dict outgrows the CPU caches)."""
    position = {}
    for x in rows:
        for name in x:
            position.setdefault(name, len(position))
    for j in range(d):  # the features the stream has not shown
        position.setdefault(f"f{j}", len(position))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for x in timed[0]:
            [position[name] for name in x]
        best = min(best, (time.perf_counter() - start) / len(timed[0]) * 1e6)
    return best


def worker(quick: bool) -> dict:
    import river_nrrls

    repeats = 1 if quick else 5
    widths = (2_000,) if quick else WIDTHS
    n_warm, n_timed = (100, 100) if quick else (2_000, 1_000)
    results = []
    for d in widths:
        rows, labels = sparse_stream(n_warm + n_timed, d, seed=d)
        warm = (rows[:n_warm], labels[:n_warm])
        timed = (rows[n_warm:], labels[n_warm:])
        best = interleaved(_models(warm), warm, timed, True, repeats)
        us = {name: us for name, (us, _) in best.items()}
        results.append({"d": d, "us": us, "lookups": _lookup_floor(rows, d, timed, repeats)})
    return {"widths": results, "package": str(Path(river_nrrls.__file__).parent)}


def _run_worker(quick: bool, threads: str | None, before: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if threads is not None:
        env.update(dict.fromkeys(THREAD_VARIABLES, threads))
    if before is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [before, env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--worker"] + (["--quick"] if quick else [])
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    line = next(line for line in output.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def _best(previous: dict | None, result: dict) -> dict:
    """The best figure of every model (and of the look-ups) over the rounds of workers."""
    if previous is None:
        return result
    for old, new in zip(previous["widths"], result["widths"]):
        old["us"] = {name: min(us, new["us"][name]) for name, us in old["us"].items()}
        old["lookups"] = min(old["lookups"], new["lookups"])
    return previous


def report(runs: dict) -> str:
    parts = []
    for setting, by_code in runs.items():
        rows = []
        for code, data in by_code.items():
            for entry in data["widths"]:
                us = entry["us"]
                rows.append(
                    [
                        f"{entry['d']:,}",
                        code,
                        *(f"{us[name]:.1f}" for name in MODELS),
                        *(f"{us[name] / us['LR']:.2f}x" for name in MODELS[1:]),
                        f"{entry['lookups']:.1f}",
                    ]
                )
        parts.append(
            f"## predict_one + learn_one per step (k = {NON_ZEROS} non-zeros), {setting}\n\n"
            + table(
                [
                    "D",
                    "code",
                    *(f"{name} (us)" for name in MODELS),
                    *(f"{name} / LR" for name in MODELS[1:]),
                    "k dict look-ups (us)",
                ],
                rows,
            )
        )
    return "\n\n".join(parts)


def _describe(checkout: str) -> str:
    """A checkout as its commit (``commit abc1234``), else as its path."""
    try:
        commit = subprocess.run(
            ["git", "-C", checkout, "rev-parse", "--short", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"`{checkout}`"
    return f"commit {commit}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny streams, print only")
    parser.add_argument("--before", help="a checkout whose river_nrrls is timed too")
    parser.add_argument("--rounds", type=int, default=2, help="worker runs per setting and code")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.quick)))
        return 0
    codes = {"after": None} if args.before is None else {"before": args.before, "after": None}
    settings = (("one BLAS thread", "1"), ("default threading", None))
    runs = {setting: {} for setting, _ in settings}
    for _ in range(1 if args.quick else args.rounds):  # the codes take turns too
        for setting, threads in settings:
            for code, path in codes.items():
                result = _run_worker(args.quick, threads, path)
                print(f"{setting}, {code}: {result['package']}", flush=True)
                runs[setting][code] = _best(runs[setting].get(code), result)
    body = report(runs)
    print(body)
    if not args.quick:
        code_note = (
            f'"before" is the package of {_describe(args.before)} (the code before the change), '
            '"after" this checkout\'s; '
            if args.before
            else ""
        )
        write_results(
            RESULTS,
            "# OCSCA speed on a wide sparse stream\n\n"
            "`python benchmarks/ocsca_speed.py"
            + (" --before <checkout of the previous commit>`" if args.before else "`")
            + f" ({environment_header()} The cores were shared with other jobs.) "
            f"{code_note}microseconds per prequential step (predict_one then learn_one), best of "
            f"{args.rounds} worker processes (the codes taking turns) x 5 repeats of 1,000 steps "
            "after 2,000 untimed warm-up steps, models interleaved. "
            '"OCSCA own" wraps a do-nothing base model: the cost of the adaptation itself. '
            '"k dict look-ups" is the time to look the sample\'s k = 200 keys up once in a '
            "dict of D features (keys as the stream gives them): the floor of any encoding of "
            "a dict sample, O(k) operations whose cost grows with D only because the dict "
            "outgrows the CPU caches (river's LogisticRegression pays it too, in its weight "
            "dict).\n\n" + body + "\n",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
