"""`daimyo replay`: re-run a JSON-lines log and check that every line comes out the same."""
from __future__ import annotations

import argparse
import json
import sys

from dsl.runtime import RuleError
from engine.base.console import add_format_option, print_json
from engine.base.diagnostics import Diagnostics
from engine.model import build
from engine.run.game import Game, IllegalMove
from engine.run.state import canonical


class _Mismatch(Exception):
    pass


def replay_file(path: str, quiet: bool = False) -> tuple[bool, str]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [ln.rstrip("\n") for ln in fh]
    except (OSError, UnicodeDecodeError) as e:
        return False, f"{path}: cannot read: {e}"
    if not lines:
        return False, f"{path}: empty log"
    try:
        entries = [json.loads(ln) for ln in lines]
    except json.JSONDecodeError as e:
        return False, f"{path}:{e.lineno if hasattr(e, 'lineno') else 1}: not a JSON-lines log: {e.msg}"
    start = entries[0]
    if not isinstance(start, dict) or start.get("t") != "start":
        return False, f"{path}:1: the first line must be the `start` entry"
    diags = Diagnostics()
    try:
        model = build(start["ruleset"], start.get("options") or {}, len(start["players"]), diags)
    except (KeyError, TypeError):
        return False, f"{path}:1: the start entry lacks ruleset or players"
    if model is None:
        return False, f"{path}:1: cannot load ruleset {start.get('ruleset')}:\n{diags.render()}"
    if model.fingerprint != start.get("fingerprint"):
        return False, f"{path}:1: the rules differ from the ones this game was played with (fingerprint)"
    produced: list[str] = []
    pos = {"i": 0}

    def check(entry: dict) -> None:
        i = pos["i"]
        got = canonical(entry)
        if i >= len(lines):
            raise _Mismatch(f"{path}:{i + 1}: the game goes on past the end of the log")
        if got != lines[i]:
            raise _Mismatch(f"{path}:{i + 1}: the log does not match the game here\n  log:    {lines[i][:300]}\n"
                            f"  replay: {got[:300]}")
        produced.append(got)
        pos["i"] = i + 1
    try:
        game = Game.new(model, len(start["players"]), int(start.get("seed", 0)), on_log=check)
        while not game.over:
            i = pos["i"]
            if i >= len(entries):
                return False, f"{path}:{i + 1}: the log ends before the game does"
            e = entries[i]
            if e.get("t") != "decision":
                raise _Mismatch(f"{path}:{i + 1}: expected the next decision ({game.decision.player} at "
                                f"`{game.decision.step}`), found a `{e.get('t')}` entry")
            game.apply(e.get("choice"))
    except _Mismatch as m:
        return False, str(m)
    except IllegalMove as e:
        return False, f"{path}:{pos['i'] + 1}: illegal move in the log: {e}"
    except RuleError as e:
        return False, f"{path}:{pos['i'] + 1}: the rules failed while replaying: {e}"
    if pos["i"] != len(lines):
        return False, f"{path}:{pos['i'] + 1}: the log goes on after the game ended"
    res = game.result
    decisions = sum(1 for e in entries if e.get("t") == "decision")
    msg = (f"{path}: replayed {len(lines)} lines ({decisions} decisions): every line matches. "
           f"Winner(s): {', '.join(res['winners'])}; scores {res['scores']}")
    return True, msg


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("replay", help="re-run a log and check every line",
                       description="Re-run a game log. Every decision, chance outcome and state hash must match; "
                       "an altered log stops with exit 1 at the first line that differs.")
    r.add_argument("file", metavar="FILE")
    r.add_argument("--quiet", action="store_true")
    add_format_option(r)
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ok, message = replay_file(args.file, quiet=args.quiet)
    if args.format == "json":
        print_json({"file": args.file, "ok": ok, "message": message})
        return 0 if ok else 1
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
