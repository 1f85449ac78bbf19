"""AutoNRRLS's choice over a stream: the evidence rule against the plain race.

Run:  python benchmarks/auto_choice.py            (writes benchmarks/results/auto_choice.md and
                                                  auto_choice.png)
      python benchmarks/auto_choice.py --quick    (the first 600 samples, prints only)

Three streams of ``benchmarks/auto_streams.py``: from its tuning set ``Agrawal 0->2`` (the
README's drifting Agrawal, 6,000 samples, the drift centred at 3,000) and ``Ionosphere-25`` (250
samples, 25 positives); from its held-out set ``German-25`` (725 samples, 25 positives). Two models,
prequential (predict, then learn): ``AutoNRRLS()`` (its default choice: the simplest candidate
until another's lead is significant, ``evidence=2``) and ``AutoNRRLS(evidence=None)`` (the
plain race: the best windowed score leads). Recorded after every sample: the leader
(``best_candidate``) and the prequential G-mean so far. Needs matplotlib for the plot (the
``bench`` extra); without it the table is still written.

"""

from __future__ import annotations

import _common

_common.limit_blas_threads()  # before numpy: small matrices

import argparse  # noqa: E402
import sys  # noqa: E402
import typing  # noqa: E402
from pathlib import Path  # noqa: E402

from _common import compact_table, environment_header, write_results  # noqa: E402
from auto_plot import leader_name  # noqa: E402
from auto_streams import STREAMS  # noqa: E402
from river import metrics  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

from river_nrrls import AutoNRRLS  # noqa: E402

RESULTS = Path(__file__).parent / "results"
STORIES = ("Agrawal 0->2", "Ionosphere-25", "German-25")
DRIFTS = {"Agrawal 0->2": 3000}  # where ConceptDriftStream centres the drift
RULES = {"evidence=2 (default)": 2.0, "evidence=None (plain race)": None}


class Trace(typing.NamedTuple):
    leaders: list  # the leader's name (`auto_plot.leader_name`) after every sample
    gmeans: list  # the prequential G-mean after every sample


def trace(samples: list, evidence: float | None) -> Trace:
    model, metric = AutoNRRLS(evidence=evidence), metrics.GeometricMean()
    leaders, gmeans = [], []
    for x, y in samples:
        y_pred = model.predict_one(x)
        if y_pred is not None:
            metric.update(y, y_pred)
        model.learn_one(x, y)
        leaders.append(leader_name(model.best_candidate))
        gmeans.append(metric.get())
    return Trace(leaders, gmeans)


def switches(leaders: list) -> int:
    return sum(a != b for a, b in zip(leaders, leaders[1:]))


def plot(traces: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(2, len(STORIES), figsize=(15, 6), sharex="col")
    for column, stream_name in enumerate(STORIES):
        runs = traces[stream_name]
        names = sorted({name for run in runs.values() for name in run.leaders})
        for rule, run in runs.items():
            steps = range(1, len(run.leaders) + 1)
            axes[0][column].step(steps, [names.index(n) for n in run.leaders], label=rule)
            axes[1][column].plot(steps, run.gmeans, label=rule)
        if stream_name in DRIFTS:
            for row in axes:
                row[column].axvline(DRIFTS[stream_name], color="grey", linestyle=":", linewidth=1)
        axes[0][column].set_yticks(range(len(names)), names)
        axes[0][column].set_title(f"{stream_name}: the leader")
        axes[1][column].set_title(f"{stream_name}: prequential G-mean so far")
        axes[1][column].set_xlabel("samples")
        axes[1][column].set_ylim(0.3, 1.0)
    axes[0][0].legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="600 samples, print only")
    args = parser.parse_args()
    traces: dict = {}
    rows = []
    for stream_name in STORIES:
        samples = STREAMS[stream_name].build()[: 600 if args.quick else None]
        traces[stream_name] = {rule: trace(samples, z) for rule, z in RULES.items()}
        for rule, run in traces[stream_name].items():
            rows.append(
                [stream_name, rule, f"{run.gmeans[-1]:.3f}", switches(run.leaders), run.leaders[-1]]
            )
    headers = ["stream", "rule", "G-mean", "leader changes", "last leader"]
    text = "\n".join(
        [
            "# AutoNRRLS's choice over a stream",
            "",
            f"Written by `python benchmarks/auto_choice.py` ({environment_header()})",
            "",
            compact_table(headers, rows),
            "",
            "![The leader and the G-mean over the stream](auto_choice.png)",
            "",
        ]
    )
    print(text)
    if not args.quick:
        write_results(RESULTS / "auto_choice.md", text)
        if plot(traces, RESULTS / "auto_choice.png"):
            print(f"written to {RESULTS / 'auto_choice.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
