"""The front door: the `daimyo` command, one module per subcommand.

It owns the command line and everything a person sees at the terminal: `validate`,
`describe`, `play` (with `human` for a person's seat), `replay`, `scenario` and `serve` (the
browser front end, engine/cli/web), each in its own
module with an `add_parser(sub)` that declares its arguments. It may import every engine layer
below it. The tools (tools/) sit beside it: they register their own subcommands through the
`daimyo.commands` entry point group, so neither side imports the other.

Exit status: 0 success, 1 the input is wrong, 2 the command line is wrong.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata

from engine import __version__
from engine.base.console import EPILOG
from engine.cli import describe, play, replay, scenario, serve, validate

COMMANDS = (validate, describe, play, replay, scenario, serve)  # in the order `daimyo --help` lists them
ENTRY_POINTS = "daimyo.commands"  # where other packages (our tools/, plug-ins) register subcommands


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file the user named cannot be read or written: say which, no traceback
        where = f" `{e.filename}`" if e.filename else ""
        print(f"daimyo: cannot use{where}: {e.strerror or e}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="daimyo", description="A rules-as-data engine for the Shogun family of "
                                "board games: validate rulesets, play, replay, test and benchmark them.",
                                epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"daimyo {__version__}")
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        entry.load()(sub)
    return p
