"""Import cost of river_nrrls against river's own ``river.linear_model``.

Run:  python benchmarks/import_time.py            (writes benchmarks/results/import_time.md)
      python benchmarks/import_time.py --repeats 3 (quicker, prints only)

Every measurement is a fresh interpreter (``python -c``), so nothing is cached in the process;
the statements take turns in every repeat (the machine's noise hits them alike), and the table
reports the median wall time of the whole process, the median of ``-X importtime``'s cumulative
time of the top-level import, and the ratio to ``import river.linear_model``. The baseline
``python -c pass`` is the interpreter's own start-up.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "python -c pass": "pass",
    "import river.linear_model": "import river.linear_model",
    "import river_nrrls": "import river_nrrls",
    "river_nrrls.NRRLS": "import river_nrrls; river_nrrls.NRRLS",
    "river_nrrls.datasets": "import river_nrrls; river_nrrls.datasets",
}
BASELINE = "import river.linear_model"
RESULTS = pathlib.Path(__file__).parent / "results" / "import_time.md"


def _wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def _importtime(code: str) -> float:
    """Sum of the cumulative times (s) of the top-level imports ``-X importtime`` reports."""
    stderr = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], check=True, capture_output=True, text=True
    ).stderr
    total = 0
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and not match.group(2).startswith(" "):  # a top-level import
            total += int(match.group(1))
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    for code in STATEMENTS.values():  # warm the file system cache once
        _wall(code)
    wall = {name: [] for name in STATEMENTS}
    cumulative = {name: [] for name in STATEMENTS}
    for _ in range(args.repeats):
        for name, code in STATEMENTS.items():
            wall[name].append(_wall(code))
            cumulative[name].append(_importtime(code))
    base_wall = statistics.median(wall[BASELINE])
    base_cumulative = statistics.median(cumulative[BASELINE])
    lines = [
        f"Python {sys.version.split()[0]}, {args.repeats} fresh processes per statement, "
        "interleaved; medians.",
        "",
        "| statement | process wall (s) | ratio | -X importtime (s) | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in STATEMENTS:
        w, c = statistics.median(wall[name]), statistics.median(cumulative[name])
        lines.append(
            f"| `{name}` | {w:.3f} | {w / base_wall:.2f} | {c:.3f} | {c / base_cumulative:.2f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.repeats >= 10:
        RESULTS.write_text(
            "# Import time\n\n`python benchmarks/import_time.py` (ratios to "
            f"`{BASELINE}`).\n\n{table}\n"
        )


if __name__ == "__main__":
    main()
