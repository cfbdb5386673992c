"""Command line interface: ``itemsampling <command> ...``.

Each command lives in its own module, which provides ``register(subparsers)``; the module is
imported only when the parser is built, so the estimator commands work without torch. Other
distributions add commands through the entry-point group ``itemsampling.commands`` (the
compendium's ``itemsampling study``, from ``itemsampling-study``): each entry point names a module
with the same ``register``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import entry_points

#: modules that contribute sub-commands, in the order they appear in ``--help``
COMMAND_MODULES = (
    "itemsampling.commands.estimate",
    "itemsampling.commands.correct",
    "itemsampling.commands.compare",
    "itemsampling.commands.protocols",
    "itemsampling.commands.data",
    "itemsampling.commands.train",
    "itemsampling.commands.profile",
    "itemsampling.commands.ranks",
    "itemsampling.commands.evaluate_adaptive",
)
#: the entry-point group through which other distributions add commands
COMMAND_GROUP = "itemsampling.commands"


def command_modules() -> list[str]:
    """This package's command modules, then those of the installed plugins, by entry-point name."""
    plugins = sorted(entry_points(group=COMMAND_GROUP), key=lambda point: point.name)
    return [*COMMAND_MODULES, *(point.value for point in plugins)]


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with one sub-parser per command module that is installed."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="itemsampling",
        description="Estimate global top-K recommendation metrics from item-sampled evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in command_modules():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not part of this installation
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``itemsampling`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"itemsampling {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
