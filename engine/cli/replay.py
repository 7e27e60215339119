"""`daimyo replay`: re-run a JSON-lines log and check that every line comes out the same."""
from __future__ import annotations

import argparse
import sys

from dsl.runtime import RuleError
from engine.base.console import add_format_option, print_json
from engine.base.diagnostics import Diagnostics
from engine.base.text import safe_text
from engine.cli import help_of
from engine.model import build
from engine.run.chance import SEEDING
from engine.run.game import Game, IllegalMove
from engine.run.state import canonical, parse_json


class _Mismatch(Exception):
    pass


MAX_LOG_BYTES = 100_000_000  # a log file; the longest bundled game logs a few megabytes


def read_log(path: str) -> tuple[list[str], list[dict]] | str:
    """The lines of a log and their entries, or a message naming the file and line that is wrong."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_LOG_BYTES + 1)
    except OSError as e:
        return f"{path}: cannot read: {e.strerror or e}"
    if len(raw) > MAX_LOG_BYTES:
        return f"{path}: the file is larger than {MAX_LOG_BYTES:,} bytes; no game log is that large"
    chunks = raw.split(b"\n")
    if chunks and chunks[-1] == b"":
        chunks.pop()  # the newline that ends the last line
    if not chunks:
        return f"{path}: empty log"
    lines: list[str] = []
    entries: list[dict] = []
    for n, chunk in enumerate(chunks, 1):
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as e:
            return f"{path}:{n}: not a JSON-lines log: byte {e.start + 1} of this line is not UTF-8 text"
        try:
            entry = parse_json(line, "this line")
        except ValueError as e:
            return f"{path}:{n}: not a JSON-lines log: {e}"
        if not isinstance(entry, dict) or not isinstance(entry.get("t"), str):
            return f"{path}:{n}: a log entry is a JSON object with a `t` (its type)"
        lines.append(line.rstrip("\r"))
        entries.append(entry)
    return lines, entries


def _start_problem(start: dict) -> str | None:
    """What is wrong with a log's `start` entry, naming the field; None when it is whole."""
    if start.get("t") != "start":
        return "the first line must be the `start` entry"
    checks = (("ruleset", lambda v: isinstance(v, str) and v, "the combo it was played with"),
              ("options", lambda v: isinstance(v, dict) and all(
                  isinstance(x, (str, int, float, bool)) for x in v.values()), "a mapping of options"),
              ("players", lambda v: isinstance(v, list) and 0 < len(v) <= 16
               and v == [f"P{i + 1}" for i in range(len(v))], "the list of players P1, P2, ..."),
              ("seed", lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
              ("fingerprint", lambda v: isinstance(v, str), "the rules' fingerprint"))
    for key, ok, what in checks:
        if key not in start or not ok(start[key]):
            return f"the start entry's `{key}` is missing or damaged (it should be {what})"
    return None


def replay_file(path: str, quiet: bool = False) -> tuple[bool, str]:
    got = read_log(path)
    if isinstance(got, str):
        return False, got
    lines, entries = got
    start = entries[0]
    problem = _start_problem(start)
    if problem:
        return False, f"{path}:1: {problem}"
    if start.get("seeding") != SEEDING:
        return False, (f"{path}:1: this log's seed was turned into random draws another way "
                       f"(seeding {safe_text(str(start.get('seeding', 'before sha256/1')), False)!r}, this engine "
                       f"uses {SEEDING!r}); its chance outcomes cannot be replayed (docs/log-format.md)")
    seats = start.get("seats", len(start["players"]))  # `seats`: people who each play several hands
    if not isinstance(seats, int) or isinstance(seats, bool) or not 0 < seats <= len(start["players"]):
        return False, f"{path}:1: the start entry's `seats` is damaged (it should be the number of people)"
    diags = Diagnostics()
    model = build(start["ruleset"], start["options"], seats, diags)
    if model is None:
        return False, f"{path}:1: cannot load ruleset {safe_text(start['ruleset'], False)}:\n{diags.render()}"
    if model.fingerprint != start["fingerprint"]:
        return False, f"{path}:1: the rules differ from the ones this game was played with (fingerprint)"
    produced: list[str] = []
    pos = {"i": 0}

    def check(entry: dict) -> None:
        i = pos["i"]
        got = canonical(entry)
        if i >= len(lines):
            raise _Mismatch(f"{path}:{i + 1}: the game goes on past the end of the log")
        if got != lines[i]:
            raise _Mismatch(f"{path}:{i + 1}: the log does not match the game here\n"
                            f"  log:    {safe_text(lines[i][:300], False)}\n  replay: {safe_text(got[:300], False)}")
        produced.append(got)
        pos["i"] = i + 1
    try:
        game = Game.new(model, seats, start["seed"], on_log=check)
        while not game.over:
            i = pos["i"]
            if i >= len(entries):
                return False, f"{path}:{i + 1}: the log ends before the game does"
            e = entries[i]
            if e["t"] != "decision":
                raise _Mismatch(f"{path}:{i + 1}: expected the next decision ({game.decision.player} at "
                                f"`{game.decision.step}`), found a `{safe_text(e['t'], False)[:40]}` entry")
            if "choice" not in e:
                raise _Mismatch(f"{path}:{i + 1}: the decision has no `choice`")
            game.apply(e.get("choice"))
    except _Mismatch as m:
        return False, str(m)
    except IllegalMove as e:
        return False, f"{path}:{pos['i'] + 1}: illegal move in the log: {safe_text(str(e), False)}"
    except RuleError as e:
        return False, f"{path}:{pos['i'] + 1}: the rules failed while replaying: {safe_text(str(e))}"
    if pos["i"] != len(lines):
        return False, f"{path}:{pos['i'] + 1}: the log goes on after the game ended"
    res = game.result
    decisions = sum(1 for e in entries if e.get("t") == "decision")
    msg = (f"{path}: replayed {len(lines)} lines ({decisions} decisions): every line matches. "
           f"Winner(s): {', '.join(res['winners'])}; scores {res['scores']}")
    return True, msg


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("replay", help=help_of("replay"),
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
