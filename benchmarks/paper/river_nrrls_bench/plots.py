"""The PNG figures of ``river-nrrls benchmark``.

matplotlib is imported only when a figure is drawn (`river_nrrls_bench` checks that it
is installed before it starts). Figures are drawn on `matplotlib.figure.Figure` objects
with the Agg canvas, never through pyplot, so no global state or display is involved.
"""

from __future__ import annotations

import pathlib
import typing

import numpy as np

from .stats import Comparison

if typing.TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "plot_cd_diagram",
    "plot_gmean_per_dataset",
    "plot_long_stream",
    "plot_time_per_sample",
    "plot_weight_norms",
]

_COLOURS = {
    "NR-RLS": "black",
    "AR-RLS": "tab:red",
    "RLS": "tab:orange",
    "CW": "tab:green",
    "AROW": "tab:purple",
    "ACOG": "tab:brown",
    "PE": "tab:pink",
    "PA": "tab:gray",
    "LR": "tab:olive",
    "LR+ROS": "tab:cyan",
    "LR+RUS": "tab:blue",
    "HT": "magenta",
}
_MARKERS = "osD^v<>pP*Xhd"


def _figure(figsize: tuple[float, float]) -> Figure:
    from matplotlib.figure import Figure  # lazily: the package works without matplotlib

    return Figure(figsize=figsize)


def _colour(name: str, position: int) -> str:
    return _COLOURS.get(name, f"C{position % 10}")


def _save(figure: Figure, path: pathlib.Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata={"Software": None})


def plot_gmean_per_dataset(
    panels: typing.Sequence[tuple[str, list[str], list[str], np.ndarray, np.ndarray]],
    paper: dict[str, float],
    path: pathlib.Path,
) -> None:
    """One panel per feature set: mean G-mean (+- std) of every learner on every data set,
    with the paper's NR-RLS figure as a black cross.

    ``panels`` holds ``(title, data sets, learners, means N x k, stds N x k)``.
    """
    figure = _figure((13, 4.2 * len(panels)))
    axes = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (title, names, learners, means, stds) in zip(axes, panels):
        positions = np.arange(len(names))
        width = 0.8 / len(learners)
        for j, learner in enumerate(learners):
            offset = (j - (len(learners) - 1) / 2) * width
            emphasis = learner == "NR-RLS"
            ax.errorbar(
                positions + offset,
                means[:, j],
                yerr=stds[:, j],
                fmt=_MARKERS[j % len(_MARKERS)],
                color=_colour(learner, j),
                markersize=6 if emphasis else 4,
                elinewidth=0.6,
                label=learner,
                zorder=3 if emphasis else 2,
            )
        known = [i for i, name in enumerate(names) if name in paper]
        ax.scatter(
            positions[known] - 0.45,
            [paper[names[i]] for i in known],
            marker="x",
            s=60,
            color="black",
            linewidths=2,
            label="paper's NR-RLS",
            zorder=4,
        )
        ax.set_xticks(positions, names, rotation=30, ha="right")
        ax.set_ylabel("G-mean on the test half")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, ncol=len(labels), fontsize=8, loc="upper center")
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    figure.savefig(path, dpi=110, metadata={"Software": None})


def _cliques(average_ranks: np.ndarray, cd: float) -> list[tuple[int, int]]:
    """Maximal runs (first, last) of rank-sorted learners within CD of each other."""
    order = np.sort(average_ranks)
    runs = []
    for i in range(len(order)):
        j = int(np.searchsorted(order, order[i] + cd, side="right")) - 1
        if j > i and not any(a <= i and j <= b for a, b in runs):
            runs.append((i, j))
    return runs


def plot_cd_diagram(comparison: Comparison, title: str, path: pathlib.Path) -> None:
    """Demsar's critical-difference diagram: average ranks on an axis, learners whose ranks
    differ by less than the Nemenyi CD joined by a thick bar."""
    learners = np.array(comparison.learners)
    ranks = comparison.average_ranks
    order = np.argsort(ranks, kind="stable")
    k = len(learners)
    half = (k + 1) // 2
    figure = _figure((10, 1.6 + 0.32 * half))
    ax = figure.subplots()
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-(half + 1.5), 2.2)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for tick in range(1, k + 1):
        ax.vlines(tick, 0, 0.15, color="black", linewidth=1)
        ax.text(tick, 0.3, str(tick), ha="center", va="bottom", fontsize=9)
    # The CD bar, top left.
    ax.hlines(1.5, 1, 1 + comparison.cd, color="black", linewidth=2)
    ax.vlines([1, 1 + comparison.cd], 1.35, 1.65, color="black", linewidth=1)
    ax.text(1 + comparison.cd / 2, 1.75, f"CD = {comparison.cd:.2f}", ha="center", fontsize=9)
    for position, index in enumerate(order):
        left = position < half
        level = -(position + 1.0) if left else -(k - position + 0.0)
        x_text = 0.6 if left else k + 0.4
        ax.plot([ranks[index], ranks[index], x_text], [0, level, level], color="black", lw=0.8)
        label = f"{learners[index]} ({ranks[index]:.2f})"
        weight = "bold" if learners[index] == "NR-RLS" else "normal"
        ax.text(
            x_text,
            level + 0.12,
            label,
            ha="left" if left else "right",
            va="bottom",
            fontsize=9,
            fontweight=weight,
        )
    sorted_ranks = ranks[order]
    for line, (a, b) in enumerate(_cliques(ranks, comparison.cd)):
        y = -0.35 - 0.22 * line
        ax.hlines(y, sorted_ranks[a] - 0.03, sorted_ranks[b] + 0.03, color="tab:blue", lw=3)
    ax.set_title(
        f"{title}: Friedman p = {comparison.friedman_p:.2g}, Nemenyi alpha = "
        f"{comparison.alpha} over {comparison.n_datasets} data sets",
        fontsize=10,
    )
    _save(figure, path)


def plot_weight_norms(curves: dict[str, np.ndarray], dataset: str, path: pathlib.Path) -> None:
    """Fig. 2(a): the L2 norm of the weights after every sample."""
    figure = _figure((7, 4.2))
    ax = figure.subplots()
    samples = curves["samples"]
    ax.plot(samples, curves["TER"], color="tab:green", lw=5, alpha=0.45, label="TER (batch)")
    ax.plot(samples, curves["NR-RLS"], color="black", lw=1.2, label="NR-RLS")
    ax.plot(samples, curves["AR-RLS"], color="tab:red", lw=1.2, ls="--", label="AR-RLS")
    ax.plot(samples, curves["RLS"], color="tab:orange", lw=1.2, ls=":", label="RLS")
    ax.set_xlabel("samples seen")
    ax.set_ylabel("||w||_2 (intercept included)")
    ax.set_title(
        f"{dataset}: weight norm after every sample "
        f"(max |w_NR-RLS - w_TER| / |w_TER| = {curves['max_rel_diff'][0]:.1e})",
        fontsize=9,
    )
    ax.legend()
    ax.grid(alpha=0.3)
    _save(figure, path)


def _rolling_median(values: np.ndarray, window: int) -> np.ndarray:
    if len(values) < window:
        return values
    windows = np.lib.stride_tricks.sliding_window_view(values, window)
    return np.concatenate([np.full(window - 1, np.nan), np.median(windows, axis=1)])


def plot_time_per_sample(times: dict[str, np.ndarray], dataset: str, path: pathlib.Path) -> None:
    """Fig. 2(c): time per sample against samples seen (rolling median over 50 samples), on a
    linear axis (IR-RLS grows linearly, NR-RLS flat) and on a log axis (NR-RLS's level)."""
    figure = _figure((12, 4.2))
    axes = figure.subplots(1, 2)
    samples = times["samples"]
    styles = {
        "IR-RLS": ("tab:blue", "-"),
        "NR-RLS": ("black", "-"),
        "NR-RLS learn only": ("grey", ":"),
    }
    for ax, scale in zip(axes, ("linear", "log")):
        for name, (colour, style) in styles.items():
            ax.plot(
                samples,
                _rolling_median(times[name] * 1e3, 50),
                color=colour,
                ls=style,
                lw=1.3,
                label={"NR-RLS": "NR-RLS (learn + solve weights)"}.get(name, name),
            )
        ax.set_xlabel("samples seen")
        ax.set_ylabel("milliseconds per sample (rolling median of 50)")
        ax.set_yscale(scale)
        ax.set_title(f"{scale} scale", fontsize=10)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend()
    figure.suptitle(f"{dataset} (shuffled): time to learn a sample and have current weights")
    _save(figure, path)


def plot_long_stream(
    checkpoints: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    window: int,
    path: pathlib.Path,
) -> None:
    """Prequential G-mean along the long stream: cumulative (left) and per window (right).

    ``checkpoints`` maps a learner to ``(samples seen, cumulative G-mean, window G-mean)``.
    """
    figure = _figure((12, 4.2))
    left, right = figure.subplots(1, 2)
    for position, (name, (samples, cumulative, windowed)) in enumerate(checkpoints.items()):
        colour = _colour(name, position)
        left.plot(samples, cumulative, color=colour, lw=1.3, label=name)
        right.plot(samples, windowed, color=colour, lw=1.0, label=name)
    left.set_title("cumulative prequential G-mean")
    right.set_title(f"prequential G-mean over the last {window:,} samples")
    for ax in (left, right):
        ax.set_xlabel("samples seen")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    left.set_ylabel("G-mean")
    right.legend(fontsize=8)
    _save(figure, path)
