"""`daimyo play`: run a game with bots and/or people at the terminal, printing its account."""
from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from dsl.runtime import RuleError
from engine.agents import SpecError, check_spec, make_agent, split_specs
from engine.base.console import EPILOG, parse_options, report
from engine.base.diagnostics import Diagnostics
from engine.base.files import write_atomic
from engine.cli.human import status_line
from engine.model import Model, build
from engine.run.game import Game
from engine.run.state import canonical
from rulesets import DEFAULT_RULESET as DEFAULT_COMBO


class LogWriter:
    """Appends log entries to a JSON-lines file as they happen, so a crash loses nothing
    already played."""

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
            print(f"  {entry['text']}", file=self.out)
        elif t == "step":
            print(f"\n== {entry['title']}", file=self.out)

    def close(self) -> None:
        if self.fh:
            self.fh.close()


def play(args: argparse.Namespace) -> int:
    diags = Diagnostics()
    save = None
    if args.load:
        try:
            with open(args.load, encoding="utf-8") as fh:
                save = json.load(fh)
            if not isinstance(save, dict):
                raise ValueError("not a daimyo save (it is not a JSON object)")
            combo, options, players = save["ruleset"], save["options"], int(save["players"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"daimyo: cannot load `{args.load}`: {e}", file=sys.stderr)
            return 1
    else:
        combo = args.combo or DEFAULT_COMBO
        options = parse_options(args.option)
        players = args.players
    model = build(combo, options, players, diags)
    if model is None and players is None and not diags.errors:
        return 1
    if players is None and model is not None:
        players = model.combo.base.players[0]
        model = build(combo, options, players, diags)
    if model is None:
        report(diags)
        return 1
    seats = _seats(args.seats, args.bots, players)
    if isinstance(seats, str):
        print(f"daimyo: error: {seats}", file=sys.stderr)
        return 2
    names = _names(model, players)
    out = sys.stdout
    writer = LogWriter(args.log, not args.quiet, names, out)
    try:
        if save is not None:
            try:
                game = Game.from_save(model, save)
            except ValueError as e:
                print(f"daimyo: cannot continue `{args.load}`: {e}", file=sys.stderr)
                return 1
            game.on_log = writer
        else:
            if not args.quiet:
                print(f"{model.name} ({_opts(model)}), {players} players, seed {args.seed}", file=out)
            game = Game.new(model, players, args.seed, on_log=writer)
        agents = {f"P{i + 1}": (None if kind == "human" else make_agent(kind, args.seed * 1000 + i))
                  for i, kind in enumerate(seats)}
        while not game.over:
            d = game.decision
            agent = agents[d.player]
            if agent is None:
                from engine.cli.human import ask
                choice = ask(game, d, names, args.save)
                if choice is None:  # saved and quit
                    return 0
                game.apply(d.options[choice])
            else:
                game.apply(d.options[agent.choose(game, d)])
    except RuleError as e:
        print(f"daimyo: the rules failed during play:\n{e}", file=sys.stderr)
        return 1
    finally:
        writer.close()
    if args.save:
        write_atomic(args.save, json.dumps(game.save()))
    if args.log_for:
        who, _, path = args.log_for.partition("=")
        write_atomic(path, "".join(canonical(e) + "\n" for e in game.player_log(who)))
    print_table(game, names, out)
    return 0


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
    names = model.player_names
    return {f"P{i + 1}": (f"P{i + 1} ({names[i]})" if i < len(names) else f"P{i + 1}") for i in range(players)}


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
        print(f"  {rank}. {names.get(p, p):<16} {scores.get(p)}{extra}{'  ' + status if status else ''}", file=out)
    winners = res.get("winners", [])
    label = "Winner" if len(winners) == 1 else "Winners (tied)"
    print(f"{label}: {', '.join(names.get(w, w) for w in winners)}", file=out)


def add_parser(sub: argparse._SubParsersAction) -> None:
    pl = sub.add_parser("play", help="play a game (bots, hot-seat or both)", epilog=EPILOG,
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
    pl.add_argument("--save", metavar="FILE", help="save the game here at the end (and when a human saves)")
    pl.add_argument("--load", metavar="FILE", help="continue a saved game")
    pl.add_argument("--quiet", action="store_true", help="print only the final table")
    pl.set_defaults(func=play)
