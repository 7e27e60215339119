"""`daimyo play`: run a game with bots and/or people at the terminal, printing its account."""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from dsl.runtime import RuleError
from engine.agents import SpecError, check_spec, seat_agent, split_specs
from engine.base.console import EPILOG, parse_options, report
from engine.base.diagnostics import Diagnostics
from engine.base.files import output_problem, write_atomic
from engine.base.text import safe_text
from engine.cli import help_of
from engine.cli.human import status_line
from engine.model import Model, build
from engine.run.game import Game
from engine.run.state import SaveError, canonical, read_save
from rulesets import DEFAULT_RULESET as DEFAULT_COMBO


class LogWriter:
    """Appends log entries to a JSON-lines file as they happen, so a crash loses nothing
    already played, and echoes the account (text from the rules, control characters escaped;
    a line of it can never pass for the engine's own lines such as the winner)."""

    def __init__(self, path: str | None, echo: bool, names: dict[str, str], out: TextIO):
        self.fh = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115 - closed by close()
        self.echo = echo
        self.names = names
        self.out = out

    def __call__(self, entry: dict) -> None:
        if self.fh:
            self.fh.write(canonical(entry) + "\n")
        if not self.echo:
            return
        t = entry["t"]
        if t == "say":
            print("  " + safe_text(str(entry["text"])).replace("\n", "\n    "), file=self.out)
        elif t == "step":
            print(f"\n== {safe_text(str(entry['title']), newlines=False)}", file=self.out)

    def close(self) -> None:
        if self.fh:
            self.fh.close()


def play(args: argparse.Namespace) -> int:
    diags = Diagnostics()
    save = None
    if args.load:
        try:
            save = read_save(args.load)
        except SaveError as e:
            print(f"daimyo: cannot load `{safe_text(args.load, newlines=False)}`: {e}", file=sys.stderr)
            return 1
        combo, options, players = save["ruleset"], save["options"], save["players"]
    else:
        combo = args.combo or DEFAULT_COMBO
        options = parse_options(args.option)
        players = args.players
    model = build(combo, options, players, diags)
    if model is None and players is None and not diags.errors:
        return 1
    if players is None and model is not None:
        players = model.combo.player_range[0]
        model = build(combo, options, players, diags)
    if model is None:
        if save is not None:
            print(f"daimyo: cannot load `{args.load}`: the rules it was saved with (`{safe_text(combo)}`) "
                  "cannot be loaded:", file=sys.stderr)
        report(diags)
        return 1
    spec = args.seats if args.seats is not None or save is None else ",".join(save.get("seats") or [])
    seats = _seats(spec or None, args.bots, players)
    if isinstance(seats, str):
        print(f"daimyo: error: {seats}", file=sys.stderr)
        return 2
    log_for = _log_for(args.log_for, players)
    if isinstance(log_for, str):
        print(f"daimyo: error: {log_for}", file=sys.stderr)
        return 2
    for flag, path in (("--save", args.save), ("--log", args.log), ("--log-for", log_for[1] if log_for else None)):
        problem = output_problem(path) if path is not None else None
        if problem:  # found now, not after the game
            print(f"daimyo: cannot use {flag} `{safe_text(str(path), newlines=False)}`: {problem}", file=sys.stderr)
            return 1
    names = _names(model, players)
    out = sys.stdout
    try:
        writer = LogWriter(args.log, not args.quiet, names, out)
    except OSError as e:
        print(f"daimyo: cannot use --log `{args.log}`: {e.strerror or e}", file=sys.stderr)
        return 1
    try:
        if save is not None:
            try:
                game = Game.from_save(model, save)
            except SaveError as e:
                print(f"daimyo: cannot continue `{safe_text(args.load, newlines=False)}`: {e}", file=sys.stderr)
                return 1
            game.on_log = writer
        else:
            if not args.quiet:
                print(f"{safe_text(model.name)} ({_opts(model)}), {players} players, seed {args.seed}", file=out)
            game = Game.new(model, players, args.seed, on_log=writer)
        status = _drive(game, seats, names, args)
        if status is not None:
            return status
    except RuleError as e:
        print(f"daimyo: the rules failed during play:\n{safe_text(str(e))}", file=sys.stderr)
        return 1
    finally:
        writer.close()
    if args.save and not _save_at_end(game, args.save, seats):
        return 1
    if log_for:
        who, path = log_for
        try:
            write_atomic(path, "".join(canonical(e) + "\n" for e in game.player_log(who)))
        except OSError as e:
            print(f"daimyo: cannot write --log-for `{path}`: {e.strerror or e}", file=sys.stderr)
            return 1
    print_table(game, names, out)
    return 0


def _drive(game: Game, seats: list[str], names: dict[str, str], args: argparse.Namespace) -> int | None:
    """Play until the game is over; an exit status when it stops early (quit, end of input, Ctrl-C)."""
    from engine.cli.human import Unsaved, ask, hand_over
    # Bots seeded as in simulate and tournament (seat_agent): same seed and seats, same game.
    agents = {f"P{i + 1}": (None if kind == "human" else seat_agent(kind, args.seed, i))
              for i, kind in enumerate(seats)}
    people = sum(1 for kind in seats if kind == "human")
    numbering: dict = {}
    last_person = None
    calm = _Calm()
    try:
        with calm:
            while not game.over:
                d = game.decision
                agent = agents[d.player]
                if agent is None:
                    if people > 1 and d.player != last_person and \
                            not hand_over(names.get(d.player, d.player), sys.stdin, sys.stdout):
                        return _stop_unsaved(game, args.save, seats)
                    last_person = d.player
                    try:
                        choice = ask(game, d, names, args.save, seats=seats, numbering=numbering)
                    except Unsaved:
                        return 1
                    if choice is None:  # saved and quit
                        return 0
                    option = d.options[choice]
                else:
                    option = d.options[agent.choose(game, d)]
                with calm.busy():  # Ctrl-C waits for the move to finish: the game stays whole
                    game.apply(option)
    except KeyboardInterrupt:
        return _interrupted(game, args.save, seats, people > 0)
    return None


class _Calm:
    """Ctrl-C while the engine applies a move is held until the move is done, so the game can
    always be saved whole; at any other moment (a prompt, a bot thinking) it stops at once."""

    def __init__(self) -> None:
        self.applying = False
        self.held = False
        self.previous: Any = None

    def __enter__(self) -> _Calm:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._on_interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def _on_interrupt(self, signum: int, frame: Any) -> None:
        if self.applying:
            self.held = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        self.applying = True
        try:
            yield
        finally:
            self.applying = False
        if self.held:
            self.held = False
            raise KeyboardInterrupt


def _stop_unsaved(game: Game, path: str | None, seats: list[str]) -> int:
    if path and _save_at_end(game, path, seats):
        return 0
    print("daimyo: end of input: this game was NOT saved (start with --save FILE to keep it)", file=sys.stderr)
    return 1


def _interrupted(game: Game, path: str | None, seats: list[str], person: bool) -> int:
    """Ctrl-C: save to --save when given; otherwise a person is offered a file to save to."""
    print("\ninterrupted", file=sys.stderr)
    if game.decision is None:  # stopped inside the engine: there is no decision to resume at
        print("daimyo: the game was interrupted between decisions and cannot be saved here", file=sys.stderr)
        return 130
    if path:
        return 130 if _save_at_end(game, path, seats) else 1
    while person:
        print("Save the game before quitting? Type a file name (or press Enter to quit without saving): ",
              end="", flush=True)
        try:
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            line = ""
        name = line.strip()
        if not name:
            break
        problem = output_problem(name)
        if problem:
            print(f"  cannot save there: {problem}")
            continue
        if _save_at_end(game, name, seats):
            return 130
    print("daimyo: the game was NOT saved", file=sys.stderr)
    return 130


def _save_at_end(game: Game, path: str, seats: list[str]) -> bool:
    try:
        write_atomic(path, json.dumps(game.save(seats)))
    except OSError as e:
        print(f"daimyo: cannot save to `{path}`: {e.strerror or e}", file=sys.stderr)
        return False
    print(f"saved to {path}; continue with: daimyo play --load {path}", file=sys.stderr)
    return True


def _log_for(spec: str | None, players: int) -> tuple[str, str] | str | None:
    """`--log-for PLAYER=FILE` as (player, file); a text saying what is wrong otherwise."""
    if spec is None:
        return None
    who, eq, path = spec.partition("=")
    who = who.strip()
    valid = [f"P{i + 1}" for i in range(players)]
    if not eq or not path.strip() or not who:
        return f"--log-for needs PLAYER=FILE, e.g. --log-for P2=p2.jsonl (got `{spec}`)"
    if who not in valid:
        return f"--log-for names `{who}`, which is not a player here ({', '.join(valid)})"
    return who, path


def _seats(spec: str | None, bots: str, players: int) -> list[str] | str:
    """The bot spec (or `human`) of each seat; an error message when a spec is wrong."""
    kinds = split_specs(spec) if spec else []
    for k in [bots, *kinds]:
        if k == "human":
            continue
        try:
            check_spec(k)
        except SpecError as e:
            return str(e) + ("" if k == bots else " (or human)")
    if len(kinds) > players:
        return f"--seats names {len(kinds)} seats for {players} players"
    return kinds + [bots] * (players - len(kinds))


def _names(model: Model, players: int) -> dict[str, str]:
    """Display names of every player of the rules: with several hands each, "P3 (Green, played by P1)"."""
    names = model.player_names
    hands = players * model.combo.base.hands.get(players, 1)
    out = {}
    for i in range(hands):
        label = [names[i]] if i < len(names) else []
        if hands > players:
            label.append(f"played by P{i % players + 1}")
        out[f"P{i + 1}"] = f"P{i + 1} ({', '.join(label)})" if label else f"P{i + 1}"
    return out


def _opts(model: Model) -> str:
    return ", ".join(f"{k}={v}" for k, v in model.combo.options.items()) or "no options"


def print_table(game: Game, names: dict[str, str], out: TextIO) -> None:
    res = game.result or {}
    scores = res.get("scores", {})
    ties = res.get("tiebreaks", {})
    print("\nFinal table", file=out)
    for rank, p in enumerate(res.get("ranking", []), 1):
        extra = f"  (tie-break {', '.join(map(str, ties[p]))})" if ties.get(p) else ""
        status = status_line(game, p)
        print(f"  {rank}. {safe_text(names.get(p, p), False):<16} {scores.get(p)}{extra}"
              f"{'  ' + status if status else ''}", file=out)
    winners = res.get("winners", [])
    label = "Winner" if len(winners) == 1 else "Winners (tied)"
    print(f"{label}: {', '.join(safe_text(names.get(w, w), False) for w in winners)}", file=out)


def add_parser(sub: argparse._SubParsersAction) -> None:
    pl = sub.add_parser("play", help=help_of("play"), epilog=EPILOG,
                        description="Play COMBO. Seats are bots unless --seats names human ones. Prints a readable "
                        "account of the game and the final table.")
    pl.add_argument("combo", metavar="COMBO", nargs="?", default=None)
    pl.add_argument("--players", type=int, default=None, help="number of players (default: the ruleset's minimum)")
    pl.add_argument("--seed", type=int, default=1)
    pl.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="e.g. side=moon")
    pl.add_argument("--seats", default=None, help="comma-separated seats: human or a bot spec (random, heuristic, "
                    "search, search:time=0.5,rollout=heuristic; docs/agents.md)")
    pl.add_argument("--bots", default="random", help="bot spec for seats not given by --seats (default random)")
    pl.add_argument("--log", metavar="FILE", help="write the JSON-lines log of the game here")
    pl.add_argument("--log-for", metavar="PLAYER=FILE", help="also write PLAYER's copy of the log: other "
                    "players' secret choices and hidden orders removed (e.g. P2=p2.jsonl)")
    pl.add_argument("--save", metavar="FILE", help="save the game here at the end, when a person quits or "
                    "input ends, and on Ctrl-C (the save records who sits in each seat)")
    pl.add_argument("--load", metavar="FILE", help="continue a saved game; people stay people and bots stay "
                    "bots unless --seats says otherwise")
    pl.add_argument("--quiet", action="store_true", help="print only the final table")
    pl.set_defaults(func=play)
