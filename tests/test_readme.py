"""The README shows what really happens.

- Its Quick start has exactly two commands, and the second is what CI runs (a line of
  ``.ci/run``, followed only by ruff, mypy and the compiled code's sanitizer and other-Python
  runs).
- The output shown for ``river-nrrls evaluate`` is what the command prints (every column but
  the time and memory, which depend on the machine).
- Every Python example is followed by the output it prints: each one runs on its own, in a
  fresh namespace, and must print exactly that; so do the examples that moved from the README
  to the guide's pages (`EXAMPLE_PAGES`).
- Every ``river-nrrls evaluate`` run shown on a page of the docs or the README (`CLI_PAGES`,
  found by looking) shows what the command prints, likewise.

After a change of the models' predictions, ``python -m tests.test_readme --refresh`` (from the
repository's root) re-runs every shown ``evaluate`` command, the Quick start's included, and
every Python example, and writes what they print into the pages (`refresh`).
- The README stays a front page: at most `MAX_LINES` lines.
- The comparison excerpt has the figures of the committed benchmark results.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from river_nrrls import cli

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: Pages of the docs whose Python examples show their output, as the README's do.
EXAMPLE_PAGES = ("docs/guide/river.md",)
#: A shown run: the ``sh`` block of one ``river-nrrls evaluate`` command, then its output.
CLI_RUN = re.compile(r"```sh\nriver-nrrls (evaluate[^\n]*)\n```\n\n```text\n(.*?)```", re.S)
#: The pages (the README and the docs) that show ``river-nrrls evaluate`` runs.
CLI_PAGES = tuple(
    str(path.relative_to(ROOT))
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    if CLI_RUN.search(path.read_text(encoding="utf-8"))
)
#: The most lines of the README (river's has about 210).
MAX_LINES = 250

#: A Python example and, right after it, the text block of what it prints.
EXAMPLE = re.compile(r"```python\n((?:(?!```).)*?)```\n\n```text\n(.*?)```", re.S)


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _quick_start_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", _section("Quick start"), flags=re.S)


def test_quick_start_has_exactly_two_commands():
    commands = _quick_start_commands()
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert install_and_run == (
        "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/river-nrrls evaluate"
    )
    assert install_and_test == (
        'python3 -m venv .venv && .venv/bin/pip install -q ".[test]" && .venv/bin/python -m pytest'
    )


def test_ci_runs_the_readme_test_command_then_only_the_checks():
    """.ci/run runs the README's test command verbatim; after it, only ruff, mypy (the habits
    of .pre-commit-config.yaml), the sanitizer run and the other Pythons' run of the kernel and
    estimator tests (issue: compiled core)."""
    ci_lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    test_command = _quick_start_commands()[1]
    assert test_command in ci_lines
    after = ci_lines[ci_lines.index(test_command) + 1 :]
    assert after == [
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy river_nrrls",
        "bash .ci/sanitize",
        "bash .ci/other-pythons",
    ]


def _without_time_and_memory(text: str) -> list[list[str]]:
    lines = text.strip().splitlines()
    return [lines[0].split()] + [line.split()[:4] for line in lines[1:]]


def _printed(argv: list[str]) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(argv) == 0
    return printed.getvalue()


def test_quick_start_output_is_what_evaluate_prints():
    printed = _printed(["evaluate"])
    assert _without_time_and_memory(printed) == _without_time_and_memory(
        _quick_start_output().group(1)
    )


def _cli_runs() -> list[tuple[str, str, str]]:
    """``(page, command, shown)`` of every run shown on `CLI_PAGES`."""
    runs = []
    for page in CLI_PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        runs += [(page, command, shown) for command, shown in CLI_RUN.findall(text)]
    return runs


def test_the_docs_show_runs_of_evaluate():
    commands = [command for _, command, _ in _cli_runs()]
    assert "evaluate" in commands and any("--csv" in command for command in commands)
    assert "docs/getting-started.md" in CLI_PAGES


def _quick_start_output() -> re.Match[str]:
    shown = re.search(r"```text\n(.*?)```", _section("Quick start"), re.S)
    assert shown is not None
    return shown


@pytest.mark.parametrize("number", range(len(_cli_runs())))
def test_a_run_shown_in_the_docs_is_what_evaluate_prints(number, monkeypatch):
    page, command, shown = _cli_runs()[number]
    monkeypatch.chdir(ROOT)  # the paths of the commands are the repository's
    printed = _printed(shlex.split(command))
    assert _without_time_and_memory(printed) == _without_time_and_memory(shown), page


def _examples() -> list[tuple[str, str]]:
    return EXAMPLE.findall(README)


def _page_examples() -> list[tuple[str, str, str]]:
    """``(page, code, shown)`` of every example of the README and `EXAMPLE_PAGES`."""
    examples = [("README.md", code, shown) for code, shown in _examples()]
    for page in EXAMPLE_PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        examples += [(page, code, shown) for code, shown in EXAMPLE.findall(text)]
    return examples


def test_every_python_example_shows_its_output():
    blocks = re.findall(r"```python\n", README)
    assert len(_examples()) == len(blocks) >= 2  # no Python block without its output
    moved = [page for page, _, _ in _page_examples() if page != "README.md"]
    assert len(moved) >= 2  # the pipelines and sample weights examples of the guide


def test_readme_is_a_front_page():
    assert len(README.splitlines()) <= MAX_LINES


@pytest.mark.parametrize("number", range(len(_page_examples())))
def test_python_example_prints_what_the_readme_shows(number):
    page, code, shown = _page_examples()[number]
    assert _example_prints(code, f"{page} example {number + 1}") == shown


def _example_prints(code: str, name: str) -> str:
    """What a Python example prints, run on its own in a fresh namespace."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, name, "exec"), {})
    return printed.getvalue()


def _table(text: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header line starts with ``header``."""
    block = text.split(header, 1)[1].split("\n\n", 1)[0]
    rows = block.splitlines()[2:]  # after the rest of the header line and the separator
    return [[cell.strip().strip("*") for cell in row.strip("|").split("|")] for row in rows]


def test_comparison_excerpt_has_the_committed_figures():
    results = (ROOT / "benchmarks" / "results" / "paper" / "README.md").read_text("utf-8")
    polynomial_part, inputs_part = results.split("**Inputs**", 1)
    header = "| place | learner |"
    # learner: (average G-mean, average rank) in each table of the results
    polynomial = {row[1]: (row[2], row[3]) for row in _table(polynomial_part, header)}
    inputs = {row[1]: (row[2], row[3]) for row in _table(inputs_part, header)}
    excerpt = _table(_section("How it compares"), "| learner |")
    assert len(excerpt) >= 5
    for learner, *figures in excerpt:
        name = learner.split(",")[0].strip()
        assert name in polynomial, f"{name}: not a learner of the results"
        assert figures == [*polynomial[name], *inputs[name]], name


def _with_output(block: re.Match[str], output: str) -> str:
    """The matched command or example and its text block, the block's text now ``output``."""
    start, end = block.span(2)
    return block.string[block.start() : start] + output + block.string[end : block.end()]


def refresh() -> list[str]:
    """Write what the shown commands and examples print now into the pages: every ``river-nrrls
    evaluate`` run of `CLI_PAGES`, the README's Quick start and the Python examples of the
    README and `EXAMPLE_PAGES`; the pages changed."""
    changed = []
    for page in sorted({"README.md", *CLI_PAGES, *EXAMPLE_PAGES}):
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = CLI_RUN.sub(lambda run: _with_output(run, _printed(shlex.split(run.group(1)))), text)
        new = EXAMPLE.sub(lambda ex: _with_output(ex, _example_prints(ex.group(1), "example")), new)
        if page == "README.md":
            quick_start = new.index("\n## Quick start\n")
            shown = _quick_start_output().group(1)
            start = new.index(shown, quick_start)
            new = new[:start] + _printed(["evaluate"]) + new[start + len(shown) :]
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


if __name__ == "__main__":
    import os
    import sys

    if sys.argv[1:] != ["--refresh"]:
        sys.exit("usage: python -m tests.test_readme --refresh  (from the repository's root)")
    os.chdir(ROOT)  # the paths of the shown commands are the repository's
    print("\n".join(refresh()) or "every page shows what its commands and examples print")
