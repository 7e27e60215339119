"""The front door: the `daimyo` command, one module per subcommand.

It owns the command line and everything a person sees at the terminal: `validate`,
`describe`, `play` (with `human` for a person's seat), `replay`, `scenario`, `new`, `lsp` and `serve`
(the browser front end, engine/cli/web), each in its own
module with an `add_parser(sub)` that declares its arguments. It may import every engine layer
below it. The tools (tools/) sit beside it: they register their own subcommands through the
`daimyo.commands` entry point group, so neither side imports the other.

Only the command that runs is imported (with what it needs): the others appear in the parser by
their name and help line from `COMMANDS`, which is all `daimyo --help` shows of them. The entry
points are read only when the command is not one of ours (a tool, a typo, `daimyo --help`).
Importing every command module, the agents, the web server and importlib.metadata cost a fifth
of a cold `daimyo validate` (docs/performance.md).

Exit status: 0 success, 1 the input is wrong, 2 the command line is wrong.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from engine import __version__
from engine.base.console import EPILOG
from engine.base.files import package_dir

# Each command: its module engine/cli/NAME.py (with `add_parser(sub)` and the function it runs)
# and its help line, in the order `daimyo --help` lists them. The module takes its help line
# from here (`help_of`), so the two cannot drift apart.
COMMANDS: dict[str, str] = {
    "validate": "check rulesets: schema, DSL, references, board graph",
    "describe": "what a ruleset combo amounts to",
    "play": "play a game (bots, hot-seat or both)",
    "replay": "re-run a log and check every line",
    "scenario": "run rule scenarios (see docs/scenarios.md)",
    "serve": "play in the browser: a local web server with a lobby and live boards",
    "new": "write a new variant or board package that validates and has a test",
    "lsp": "language server for editors (stdio): diagnostics, completion, hover, go to definition",
}
ENTRY_POINTS = "daimyo.commands"  # where other packages (our tools/, plug-ins) register subcommands


def help_of(command: str) -> str:
    """The help line of one of our commands (what `daimyo --help` lists beside its name)."""
    return COMMANDS[command]


def package_folder(name: str) -> str:
    """Where an installed data package (schemas, rulesets, daimyo_docs) is on disk."""
    try:
        if name in ("schemas", "rulesets"):  # plain package folders: no importlib.resources (~15 ms)
            return str(package_dir(name))
        from importlib import resources
        return str(resources.files(name))
    except (ModuleNotFoundError, TypeError, OSError):  # (OSError: a namespace path with a non-folder entry)
        return "?"


def manual_folder() -> str:
    """The docs/ folder: installed as `daimyo_docs`, or beside the source in a checkout."""
    checkout = Path(__file__).resolve().parents[2] / "docs"
    if (checkout / "authoring.md").is_file():
        return str(checkout)
    return package_folder("daimyo_docs")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    code = _run(args)
    if argv is None and getattr(args.func, "__module__", None) in FAST_EXIT and _run_as_command():
        _exit_now(code)
    return code


# Commands that write nothing but stdout and stderr: run as a command, they end without the
# interpreter's teardown (freeing every object of the loaded rulesets costs a tenth of a cold
# `daimyo validate`). Never when main() is called in-process (tests, tools): they get a return.
FAST_EXIT = ("engine.cli.validate", "engine.cli.describe")  # their modules


def _run_as_command() -> bool:
    """Whether this process is the `daimyo` command (or `python -m engine.cli`)."""
    prog = os.path.basename(sys.argv[0] if sys.argv else "")
    return not sys.flags.interactive and (prog.removesuffix(".exe") == "daimyo" or
                                          sys.argv[0].endswith(os.path.join("engine", "cli", "__main__.py")))


def _exit_now(code: int) -> None:
    """Flush what was printed, then leave at once (os._exit skips teardown and atexit)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: the reader has gone
            stream.flush()
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
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


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `daimyo` parser. With the command line `argv` whose first word names one of our
    commands, only that command's module is imported and its arguments declared (the others
    are listed by name and help line); without, every command and tool is declared in full."""
    p = argparse.ArgumentParser(prog="daimyo", description="A rules-as-data engine for the Shogun family of "
                                "board games: validate rulesets, play, replay, test and benchmark them.",
                                epilog=f"{EPILOG} Manual: {manual_folder()} (start with README.md there, "
                                "authoring.md for a first variant). JSON Schemas for editors: "
                                f"{package_folder('schemas')}.")
    p.add_argument("--version", action="version", version=f"daimyo {__version__}")
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, help_line in COMMANDS.items():
        if chosen is None or name == chosen:
            import_module(f"engine.cli.{name}").add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)  # listed, never parsed: its module is not needed
    if chosen is None:
        from importlib import metadata  # ~25 ms to import and scan: only when a tool may run

        for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
            entry.load()(sub)
    return p
