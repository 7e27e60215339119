"""`daimyo`: the command-line front door. Exit 0 on success, 1 when the input is wrong,
2 on usage errors. Every subcommand has --help."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine import __version__
from engine.base.diagnostics import Diagnostics, Loc

EPILOG = "COMBO is a base ruleset and expansions joined by +, each a bundled id or a folder path " \
         "(e.g. shogun, shogun+tennos-court+chambers, ./my-variant)."


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

    v = sub.add_parser("validate", help="check rulesets: schema, DSL, references, board graph",
                       description="Validate ruleset packages (ids, folders or COMBOs). An expansion is "
                       "checked together with the rulesets it extends. Exit 0 clean, 1 on errors.", epilog=EPILOG)
    v.add_argument("targets", nargs="+", metavar="PATH_OR_ID")
    v.add_argument("--format", choices=["human", "json"], default="human")
    v.set_defaults(func=cmd_validate)

    d = sub.add_parser("describe", help="what a ruleset combo amounts to", epilog=EPILOG,
                       description="Summarize a combo: packages, options, flow outline; --resolved prints every "
                       "resolved entry with the file and line that set it.")
    d.add_argument("combo", metavar="COMBO")
    d.add_argument("--resolved", action="store_true", help="print the resolved ruleset with provenance")
    d.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--players", type=int, default=None)
    d.set_defaults(func=cmd_describe)

    pl = sub.add_parser("play", help="play a game (bots, hot-seat or both)", epilog=EPILOG,
                        description="Play COMBO. Seats are bots unless --seats names human ones. Prints a readable "
                        "account of the game and the final table.")
    pl.add_argument("combo", metavar="COMBO", nargs="?", default=None)
    pl.add_argument("--players", type=int, default=None, help="number of players (default: the ruleset's minimum)")
    pl.add_argument("--seed", type=int, default=1)
    pl.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="e.g. side=moon")
    pl.add_argument("--seats", default=None, help="comma-separated seat kinds: human,random,heuristic,search")
    pl.add_argument("--bots", default="random", help="kind of bot for seats not given by --seats (default random)")
    pl.add_argument("--log", metavar="FILE", help="write the JSON-lines log of the game here")
    pl.add_argument("--log-for", metavar="PLAYER=FILE", help="also write PLAYER's copy of the log: other "
                    "players' secret choices and hidden orders removed (e.g. P2=p2.jsonl)")
    pl.add_argument("--save", metavar="FILE", help="save the game here at the end (and when a human saves)")
    pl.add_argument("--load", metavar="FILE", help="continue a saved game")
    pl.add_argument("--quiet", action="store_true", help="print only the final table")
    pl.set_defaults(func=cmd_play)

    r = sub.add_parser("replay", help="re-run a log and check every line",
                       description="Re-run a game log. Every decision, chance outcome and state hash must match; "
                       "an altered log stops with exit 1 at the first line that differs.")
    r.add_argument("file", metavar="FILE")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_replay)

    s = sub.add_parser("scenario", help="run rule scenarios (see docs/scenarios.md)",
                       description="Run scenario files or folders of them. Exit 1 if any fails.")
    s.add_argument("paths", nargs="+", metavar="FILE")
    s.add_argument("--verbose", "-v", action="store_true", help="print each scenario's account")
    s.set_defaults(func=cmd_scenario)

    b = sub.add_parser("bench", help="measure validation, decisions/s, clone cost, games/s",
                       description="Benchmarks on one core. Without COMBO: every bundled base ruleset.")
    b.add_argument("combo", nargs="?", metavar="COMBO")
    b.add_argument("--players", type=int, default=None)
    b.add_argument("--seconds", type=float, default=3.0, help="time budget per measurement (default 3)")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.set_defaults(func=cmd_bench)

    from tools import register_cli  # tools add their own subcommands (simulate, report, map, docs)
    register_cli(sub)
    return p


# ---- helpers ----

def parse_options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(_usage(f"--option needs NAME=VALUE, got `{pair}`"))
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _usage(msg: str) -> int:
    print(f"daimyo: error: {msg}", file=sys.stderr)
    return 2


def report(diags: Diagnostics, fmt: str = "human", stream: Any = None) -> None:
    stream = stream or sys.stderr
    if fmt == "json":
        print(diags.to_json(), file=sys.stdout)
    elif len(diags):
        print(diags.render(), file=stream)
        n_err, n_warn = len(diags.errors), len(diags) - len(diags.errors)
        print(f"{n_err} error(s), {n_warn} warning(s)", file=stream)


def load_model(combo: str, options: dict, players: int | None, diags: Diagnostics):
    from engine.model import build
    return build(combo, options, players, diags)


# ---- validate ----

def cmd_validate(args: argparse.Namespace) -> int:
    from engine.model.validate import validate_targets
    diags, checked = validate_targets(args.targets)
    report(diags, args.format)
    if args.format == "human":
        status = "ok" if not diags.errors else "FAILED"
        print(f"validated {len(checked)} ruleset combination(s): {', '.join(checked)}: {status}",
              file=sys.stderr if diags.errors else sys.stdout)
    return 1 if diags.errors else 0


# ---- describe ----

def cmd_describe(args: argparse.Namespace) -> int:
    from engine.describe import describe
    diags = Diagnostics()
    text = describe(args.combo, parse_options(args.option), args.players, args.resolved, diags)
    if text is None:
        report(diags)
        return 1
    print(text)
    return 0


# ---- play ----

def cmd_play(args: argparse.Namespace) -> int:
    from engine.play import play
    return play(args)


# ---- replay ----

def cmd_replay(args: argparse.Namespace) -> int:
    from engine.replay import replay_file
    ok, message = replay_file(args.file, quiet=args.quiet)
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


# ---- scenario ----

def cmd_scenario(args: argparse.Namespace) -> int:
    from engine.scenario import run_paths
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        return _usage(f"no such file or folder: {', '.join(missing)}")
    outcomes = run_paths(args.paths)
    failed = 0
    for o in outcomes:
        if o.ok:
            print(f"ok    {o.file}: {o.title}")
        else:
            failed += 1
            print(f"FAIL  {o.file}: {o.title}")
            for loc, msg in o.failures:
                print(f"      {loc}: {msg}")
        if args.verbose and o.account:
            for line in o.account:
                print(f"        | {line}")
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


# ---- bench ----

def cmd_bench(args: argparse.Namespace) -> int:
    from tools.bench import run_bench
    return run_bench(args)


def write_atomic(path: str | Path, text: str) -> None:
    """Write a file so that a crash never leaves half of it: temp file, fsync, rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:  # report the file the user named, not our temporary one
        raise OSError(e.errno, e.strerror, str(path)) from None


def fail_loc(message: str, file: str = "") -> Diagnostics:
    d = Diagnostics()
    d.add("E100", message, Loc(file))
    return d


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
