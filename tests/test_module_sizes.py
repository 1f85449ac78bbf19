"""No module of the package is over `MAX_CODE_LINES` code lines (issue 36: one idea per module).

Code lines are those that are not blank, not comment-only and not part of a docstring (of the
module, a class or a function), as ``/work/tools/codelines.py`` counts them for the issue.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "river_nrrls"
MAX_CODE_LINES = 450
MODULES = sorted(PACKAGE.rglob("*.py"))
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def code_lines(source: str) -> int:
    """The lines of ``source`` that are not blank, comment-only or in a docstring."""
    docstring_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, _DOCUMENTED) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                end = first.end_lineno if first.end_lineno is not None else first.lineno
                docstring_lines.update(range(first.lineno, end + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in docstring_lines
    )


def test_the_count_leaves_out_blank_comment_and_docstring_lines():
    source = '''"""A module.

Its docstring."""

import math  # a comment after code counts


# a comment
class Circle:
    """A class."""

    def area(self, radius):
        """A function's
        docstring."""
        text = """a string that is not a docstring"""
        return math.pi * radius**2, text
'''
    assert code_lines(source) == 5


def test_the_package_has_modules():
    assert len(MODULES) > 20


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_is_over_the_limit(path):
    count = code_lines(path.read_text(encoding="utf-8"))
    assert count <= MAX_CODE_LINES, (
        f"{path.relative_to(PACKAGE.parent)} has {count} code lines (at most {MAX_CODE_LINES}): "
        "split it by what its parts own"
    )
