"""The benchmark scripts still run: each one's ``--quick`` mode, in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every benchmark script's quick mode

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "model"),
    [
        ("speed.py", "NRRLS"),
        ("ocsca_speed.py", "OCSCA"),
        ("rls.py", "RLSRegressor"),
        ("standardized.py", "standardized_penalty"),
        ("selector.py", "order-3 pipeline"),
        ("selector_exactness.py", "order 6"),
        ("selector_speed.py", "orders' solves"),
        ("accuracy.py", "stale factor"),
        ("auto_cost.py", "AutoNRRLS()"),
        ("auto.py", "TreePathFeatures() | NRRLS()"),
        ("auto_plot.py", "leader"),
        ("auto_choice.py", "leader changes"),
        ("which_model.py", "lr-wpos"),
        ("auto_streams.py", "AutoNRRLS"),
    ],
)
def test_quick_mode_runs_and_prints_a_table(script, model):
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert "| " in completed.stdout and model in completed.stdout


def test_common_tables_escape_pipes_and_keep_their_layouts(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    common = __import__("_common")
    assert common.table(["model", "us"], [["A | B", 1.5]]).splitlines() == [
        "| model  | us  |",
        "|--------|-----|",
        "| A \\| B | 1.5 |",
    ]
    assert common.compact_table(["a", "b"], [[1, "**2**"]]) == "| a | b |\n|---|---|\n| 1 | **2** |"
