"""The package ships ``py.typed``: its annotations must type-check in users' code.

mypy runs, as a user would run it on their own code, on every Python block of the README
(extracted here, at test time) and on a module that hands every bundled data set to river's
typed APIs. The package is imported from the source tree with ``--follow-imports=silent``: its
own modules are analysed for their types but, as for an installed package, not reported on.

"""

from __future__ import annotations

import ast
import builtins
import pathlib
import re
import subprocess
import sys
import typing

import pytest

from river_nrrls import datasets

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: Code that defines the names a README block uses without defining them (the README takes
#: them from the text around the block), as a user's own code would.
PREAMBLE = {
    "model": "model = NRRLS()",
    "x": "x, y = next(iter(datasets.Pima()))",
    "y": "x, y = next(iter(datasets.Pima()))",
    "left": "left = NRRLS()",
    "right": "right = NRRLS()",
    "left_pipeline": "left_pipeline = PolynomialExtender(degree=2) | NRRLS()",
    "right_pipeline": "right_pipeline = PolynomialExtender(degree=2) | NRRLS()",
}
PREAMBLE_IMPORTS = "from river_nrrls import NRRLS, PolynomialExtender, datasets"

#: Errors that river's own annotations give on code river runs, keyed by a line of the README
#: block: river's `progressive_val_score` takes ``(x, y, kwargs)`` triples (its loop unpacks
#: ``x, y, *kwargs``) but its ``dataset`` annotation is river's ``Dataset``, an iterable of
#: pairs. The message pins this package's own part: x is ``dict[Hashable, float]``, which fits.
RIVER_ERRORS = {
    "weighted = ((x, y, {": (
        'Argument 1 to "progressive_val_score" has incompatible type '
        '"Generator[tuple[dict[Hashable, float], bool, dict[str, float]], None, None]"; '
        'expected "Iterable[tuple[dict[Hashable, Any], Any]]"  [arg-type]'
    ),
}

#: Every bundled data set, and an `Imbalanced` stream, where river's typed APIs take streams.
DATASETS_MODULE = "\n".join(
    [
        "from river import evaluate, metrics, stream",
        "from river.base.typing import Dataset, Stream",
        "from river.datasets import synth",
        "from river_nrrls import NRRLS, datasets",
        "from river_nrrls.datasets.synth import Imbalanced",
        "",
        "every: list[Dataset] = [",
        *(f"    datasets.{name}()," for name in datasets.NAMES),
        "    Imbalanced(synth.SEA(seed=1), pos_rate=0.1, seed=2),",
        "]",
        "for dataset in every:",
        "    evaluate.progressive_val_score(dataset, NRRLS(), metrics.GeometricMean())",
        "samples: Stream = iter(datasets.Pima())",
        "x, y = next(samples)",
        # river's `shuffle` is annotated for iterators (its examples pass data sets)
        "shuffled = stream.shuffle(iter(datasets.Sonar()), buffer_size=208, seed=42)",
        "model = NRRLS()",
        "for x, y in shuffled:",
        "    model.learn_one(x, y)",
        "first = next(iter(datasets.Pima()))[0]['glucose'] + 1.0",
        "",
    ]
)


class Block(typing.NamedTuple):
    line: int  # README line of the block's first line of code
    code: str


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        line = text.count("\n", 0, match.start(1)) + 1
        blocks.append(Block(line, match.group(1)))
    return blocks


def undefined_names(code: str) -> list[str]:
    """Names a block reads but neither assigns, imports nor defines (builtins aside)."""
    tree = ast.parse(code)
    defined, read = set(), []
    augmented = {  # ``a += b`` needs an ``a``: its target is read, not defined
        id(node.target) for node in ast.walk(tree) if isinstance(node, ast.AugAssign)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) or id(node) in augmented:
                read.append(node.id)
            else:
                defined.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):  # a function's parameters
            defined.add(node.arg)
    names = dict.fromkeys(name for name in read if name not in defined)
    return [name for name in names if not hasattr(builtins, name)]


def preamble(code: str) -> list[str]:
    missing = undefined_names(code)
    unknown = [name for name in missing if name not in PREAMBLE]
    assert not unknown, f"README block uses {unknown}: add their definition to PREAMBLE"
    if not missing:
        return []
    return [PREAMBLE_IMPORTS, *dict.fromkeys(PREAMBLE[name] for name in missing)]


def run_mypy(files: list[pathlib.Path], cache: pathlib.Path) -> list[str]:
    """mypy's error lines (``path:line: error: message  [code]``) on ``files``."""
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            # The README shows alternatives by binding one name to several models in turn.
            "--allow-redefinition-new",
            "--local-partial-types",
            "--no-error-summary",
            "--no-pretty",
            "--cache-dir",
            str(cache),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,  # the package is imported from the source tree
    )
    assert completed.returncode in (0, 1), completed.stdout + completed.stderr  # 2: crash
    return [line for line in completed.stdout.splitlines() if ": error: " in line]


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory) -> dict[str, list[str]]:
    """``{file name: [error line]}`` of one mypy run on every README block and the data sets'
    module."""
    folder = tmp_path_factory.mktemp("typing")
    files = []
    for block in readme_blocks():
        lines = preamble(block.code)
        # The block's lines keep their README numbers: the preamble sits on one line.
        prefix = "; ".join(lines)
        path = folder / f"readme_line_{block.line}.py"
        path.write_text(f"{prefix}\n" + block.code, encoding="utf-8")
        files.append(path)
    path = folder / "bundled_datasets.py"
    path.write_text(DATASETS_MODULE, encoding="utf-8")
    files.append(path)
    errors: dict[str, list[str]] = {file.name: [] for file in files}
    for line in run_mypy(files, folder / ".mypy_cache"):
        name, _, message = line.partition(":")
        errors[pathlib.Path(name).name].append(message)
    return errors


def test_readme_has_python_blocks():
    blocks = readme_blocks()
    assert len(blocks) >= 2  # the README's examples (each run by tests/test_readme.py)
    assert any("datasets.Pima()" in block.code for block in blocks)
    assert sorted(undefined_names("a = b + len(c)\nimport d\nd.e(a)\nf += a")) == ["b", "c", "f"]


@pytest.mark.slow  # mypy runs (a minute with a cold cache)
@pytest.mark.parametrize("block", readme_blocks(), ids=lambda block: f"line{block.line}")
def test_readme_block_type_checks(block, mypy_errors):
    errors = mypy_errors[f"readme_line_{block.line}.py"]
    expected = [message for key, message in RIVER_ERRORS.items() if key in block.code]
    # mypy's line l of the file is README line block.line + l - 2 (the preamble's line first)
    found = [
        f"README line {block.line + int(error.split(':')[0]) - 2}: "
        + error.split(": error: ", 1)[1]
        for error in errors
    ]
    assert [message for message in found if not any(e in message for e in expected)] == []
    for message in expected:  # river's known error is still there (else drop it from the list)
        assert any(message in error for error in found), found


@pytest.mark.slow  # mypy runs
def test_bundled_datasets_fit_river_stream_types(mypy_errors):
    """Every data set is a river ``Dataset`` (iterable of ``dict[FeatureName, Any]`` pairs)
    and its samples a ``Stream`` (``dict[str, float]`` samples were not: dict is invariant)."""
    assert mypy_errors["bundled_datasets.py"] == []
