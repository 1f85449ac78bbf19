"""The README's Quick start is what CI runs, and its usage snippet works."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_quick_start_has_exactly_two_commands():
    commands = _quick_start_commands()
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert "river-nrrls evaluate" in install_and_run and "pip install" in install_and_run
    assert '".[test]"' in install_and_test and "pytest" in install_and_test


def test_ci_runs_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _quick_start_commands()[1] in ci_lines


def test_usage_snippet_runs():
    text = (ROOT / "README.md").read_text()
    snippet = text.split("## Usage", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(snippet, "README usage", "exec"), namespace)  # noqa: S102 - our own README
    model = namespace["model"]
    assert set(model.weights) == {True, False}
