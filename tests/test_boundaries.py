"""The package's boundaries: an object touches only its own private state.

Every module of ``river_nrrls`` is scanned for ``obj._name`` (and ``getattr(obj, "_name")``)
where ``obj`` is neither ``self``, ``cls`` nor ``super()``. Such a read is allowed only when
``_name`` is private state or a private method of a class defined in the same module (another
instance of the same class: merging two models, a statistics view, a model built from a block)
or one of river's own estimator protocol names, which river asks of any estimator. Anything
else is one object reaching into another's private state: the shared pieces offer interfaces.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).parent.parent / "river_nrrls"
MODULES = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))

# river's protocol: what river itself reads of any estimator or distribution
# (``Estimator._get_params``, ``Classifier._multiclass``, ``Estimator._supervised``,
# ``Estimator._raw_memory_usage`` as river's evaluate reads it, ``proba.Gaussian._from_state``
# as river's BayesianLinearRegression builds its predictive distribution)
RIVER_PROTOCOL = frozenset(
    ("_get_params", "_multiclass", "_supervised", "_raw_memory_usage", "_from_state")
)

# Reads that are not an object reaching into another's state, each with its reason
ALLOWED = {
    # a data descriptor stores its attribute in the instance's __dict__ (the descriptor
    # protocol: the descriptor owns that entry)
    ("_parameters.py", "instance.__dict__"),
    # a parameter change builds a trial of the same class and takes its validated state
    ("_parameters.py", "trial.__dict__"),
}


def _own_private_names(tree: ast.Module) -> set[str]:
    """The private attributes and methods that the module's classes define."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in ast.walk(node):
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.ctx, ast.Store)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                ):
                    names.add(item.attr)
                elif isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
                    names.add(item.id)  # class-level attributes (and slots' names)
    return {name for name in names if name.startswith("_")}


def foreign_private_reads(source: str) -> list[str]:
    """Every read of another object's private state in ``source`` (see the module docstring)."""
    tree = ast.parse(source)
    own = _own_private_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner, name = node.value, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            owner, name = node.args[0], node.args[1].value
        else:
            continue
        if not name.startswith("_") or name in RIVER_PROTOCOL or name in own:
            continue
        if name.startswith("__") and name.endswith("__") and name != "__dict__":
            continue
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        if isinstance(owner, ast.Name) and owner.id == "sys":
            continue  # Python's own API (``sys._is_gil_enabled`` of free-threaded builds)
        if isinstance(owner, ast.Name) and owner.id.startswith("_"):
            continue  # a private module's public name (``_native.refill``) or a private global
        found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", MODULES)
def test_no_module_reads_another_objects_private_state(module):
    source = (PACKAGE / module).read_text(encoding="utf-8")
    reads = foreign_private_reads(source)
    assert [read for read in reads if (module, read.split(": ", 1)[1]) not in ALLOWED] == []


@pytest.mark.parametrize(
    "source",
    [
        "def f(model):\n    return model._stats\n",  # another object's state
        "def f(model):\n    return getattr(model, '_solver')\n",
        "def f(model):\n    return model.__dict__\n",
        "class A:\n    def f(self, other):\n        return other.statistics._buffer\n",
        "class A:\n    def f(self, x):\n        return self.extenders[1]._transform_layout(x)\n",
        "def f(view):\n    view.__dict__.update({})\n",
    ],
)
def test_the_scan_finds_a_foreign_private_read(source):
    assert foreign_private_reads(source)


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    def __init__(self):\n        self._x = 1\n"
        "    def merge(self, other):\n        return other._x\n",  # same class: merging
        "class A(B):\n    def f(self):\n        return super()._adopt()\n",
        "def f(model):\n    return model._get_params()\n",  # river's protocol
        "from . import _native\n\ndef f():\n    return _native.refill\n",
    ],
)
def test_the_scan_allows_own_state_and_rivers_protocol(source):
    assert foreign_private_reads(source) == []
