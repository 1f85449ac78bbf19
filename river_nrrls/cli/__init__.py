"""The ``river-nrrls`` command (also ``python -m river_nrrls``).

Subcommands live in the `COMMANDS` registry: a name mapped to a `Command` (a help
line, a function that adds the subcommand's options to its parser and a function that runs it).
A module adds a subcommand with `register_command`, called when the module is imported. The
`COMMAND_MODULES` are imported (those that exist) before the parser is built: ``evaluate``
(`river_nrrls.cli.evaluate`) and ``benchmark``, whose module belongs to another distribution
(`EXTERNAL_COMMANDS`: the paper's benchmark harness, ``river_nrrls_bench``, is not part of this
package); while it is not installed, a stand-in of the subcommand says how to install it.

A subcommand's ``run(args)`` returns the exit code. It reports a problem with the user's input
(a bad file, an unknown name) by raising `UsageError`: `main` prints its message as
one line on stderr and exits with code 2, never with a traceback; so does a ``MemoryError``.
`ProgressBar` and `positive_int` (an argparse type) serve every subcommand.

The names of ``evaluate`` that a script may want (`evaluate_models`, `read_csv`, the model
registry) are re-exported here (imported on first access).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import io
import os
import sys
import time
import typing

__all__ = [
    "COMMANDS",
    "COMMAND_MODULES",
    "EXTERNAL_COMMANDS",
    "Command",
    "ExternalCommand",
    "MODELS",
    "ModelSpec",
    "ProgressBar",
    "Result",
    "UsageError",
    "build_parser",
    "evaluate_models",
    "main",
    "positive_int",
    "read_csv",
    "register_command",
    "register_model",
]

PROG = "river-nrrls"


class UsageError(Exception):
    """A problem with the user's input: reported as one line on stderr, exit code 2."""


# ------------------------------------------------------------------------ subcommand registry


@dataclasses.dataclass(frozen=True)
class Command:
    """A subcommand: its help line, ``add_arguments(parser)`` and ``run(args) -> exit code``."""

    help: str
    add_arguments: typing.Callable[[argparse.ArgumentParser], None]
    run: typing.Callable[[argparse.Namespace], int]
    description: str | None = None


#: Subcommands by name, in the order they appear in ``--help``.
COMMANDS: dict[str, Command] = {}


class ExternalCommand(typing.NamedTuple):
    """A subcommand whose module belongs to another distribution, and how to install it."""

    module: str
    help: str
    install: str


#: Subcommands of other distributions, by name: their module registers them when it is
#: installed; otherwise a stand-in prints the instruction to install it.
EXTERNAL_COMMANDS: dict[str, ExternalCommand] = {
    "benchmark": ExternalCommand(
        module="river_nrrls_bench",
        help="reproduce the NR-RLS paper's comparison (the river-nrrls-bench package)",
        install=(
            "the paper's benchmark is the separate package river-nrrls-bench: from a clone of "
            "the repository, pip install ./benchmarks/paper (or run python "
            "benchmarks/paper/run.py)"
        ),
    ),
}

#: Modules imported (if they exist) before the parser is built; each registers its subcommand.
COMMAND_MODULES: tuple[str, ...] = (
    "river_nrrls.cli.evaluate",
    *(command.module for command in EXTERNAL_COMMANDS.values()),
)


def register_command(
    name: str,
    help: str,
    add_arguments: typing.Callable[[argparse.ArgumentParser], None],
    run: typing.Callable[[argparse.Namespace], int],
    description: str | None = None,
) -> None:
    """Add (or replace) the subcommand ``name``."""
    COMMANDS[name] = Command(help, add_arguments, run, description)


def _import_command_modules() -> None:
    for module in COMMAND_MODULES:
        # find_spec, not a caught ImportError: an import error *inside* a module must show.
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
    for name, external in EXTERNAL_COMMANDS.items():
        if name not in COMMANDS:
            _register_stand_in(name, external)


def _register_stand_in(name: str, external: ExternalCommand) -> None:
    """``name`` while its distribution is not installed: any arguments, one line saying how."""

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.set_defaults(takes_any_arguments=True)

    def run(args: argparse.Namespace) -> int:
        raise UsageError(external.install)

    register_command(
        name,
        f"{external.help}; not installed",
        add_arguments,
        run,
        description=f"{external.help}.\n\nNot installed: {external.install}.",
    )


# ------------------------------------------------------------------------ shared helpers


def positive_int(text: str) -> int:
    """An argparse ``type``: ``text`` as an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


#: The clock of `ProgressBar` (seconds; a test sets a fake one).
_clock = time.monotonic


class ProgressBar:
    """A one-line progress bar on a text stream (nothing at all when disabled).

    With a ``delay``, the bar appears only once the work has taken that many seconds since
    ``started`` (a `time.monotonic` reading; default: now), so that short work prints nothing.
    Without a ``total``, it counts the steps done (in ``unit``).

    """

    def __init__(
        self,
        label: str,
        total: int | None,
        stream: typing.TextIO | None,
        width: int = 30,
        *,
        delay: float = 0.0,
        started: float | None = None,
        unit: str = "",
    ):
        self.label = label
        self.total = total
        self.stream = stream
        self.width = width
        self.delay = delay
        self.started = _clock() if started is None else started
        self.unit = unit
        self.shown = delay <= 0.0  # whether the bar has appeared (or may: no delay)

    def update(self, done: int) -> None:
        """Redraw the bar at ``done`` of ``total`` steps (nothing without a stream, nor before
        the delay has passed)."""
        if self.stream is None:
            return
        if not self.shown:
            if _clock() - self.started < self.delay:
                return
            self.shown = True
        if self.total is None:
            unit = f" {self.unit}" if self.unit else ""
            self.stream.write(f"\r{self.label}: {done:,}{unit}")
        else:
            fraction = done / self.total if self.total else 1.0
            filled = round(fraction * self.width)
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {fraction:4.0%} {done}/{self.total}")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (nothing without a stream, nor if the bar never appeared)."""
        if self.stream is not None and self.shown:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------------- entry point


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    _import_command_modules()
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Exact online classifiers for imbalanced streams (NR-RLS) for river.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        subparser = subparsers.add_parser(
            name,
            help=command.help,
            description=command.description or command.help,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(subparser)
        subparser.set_defaults(run=command.run)
    return parser


def main(argv: typing.Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Usage errors (and running out of memory) print one line on stderr and give 2 (argparse's
    own errors print the usage too); the function returns instead of exiting, so that it can be
    called from Python.

    """
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown and not getattr(args, "takes_any_arguments", False):
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")  # as parse_args does
    except SystemExit as exit_:  # --help, or a usage error already printed by argparse
        if exit_.code is None:
            return 0
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        return args.run(args)
    except UsageError as error:
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return 2
    except MemoryError:  # whatever a command was doing: one line too, never a traceback
        print(f"{PROG} {args.command}: error: out of memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (``| head``): no traceback
        _silence_stdout()
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


# --------------------------------------------------------------- the names of ``evaluate``

_EVALUATE_NAMES = {"MODELS", "ModelSpec", "Result", "evaluate_models", "read_csv", "register_model"}

if typing.TYPE_CHECKING:  # pragma: no cover - static analysers see the names
    from .evaluate import MODELS, ModelSpec, Result, evaluate_models, read_csv, register_model


def __getattr__(name: str) -> typing.Any:
    """The names of `river_nrrls.cli.evaluate` re-exported here, imported on first access."""
    if name in _EVALUATE_NAMES:
        value = getattr(importlib.import_module(".evaluate", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _EVALUATE_NAMES)
