"""`daimyo tournament`: bots against bots, seats rotated, win rates and ratings.

    daimyo tournament shogun --players 4 --agents heuristic,random --games 100
    daimyo tournament shogun --players 4 --agents search,heuristic --games 20 --format json

Each table of agents is a `simulate` sweep with seats rotated (run_sweep: same worker pool,
seeds, SQLite store, progress bar, resume and Ray backend). With fewer agents than seats the
last agent fills the rest (`heuristic,random` with 4 players: one heuristic against three
random); with more, every set of `--players` agents plays its own rotated sweep. Results:
each agent's win rate over the seats it played, with a 95% Wilson interval, and a
Bradley-Terry rating on the Elo scale fitted to every pair of differently named agents in
every game (the better ranked one wins the pair).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import signal
import sys
from collections import defaultdict
from typing import Any

from engine.base.console import EPILOG, parse_options
from tools.report import wilson
from tools.simulate import DEFAULT_DB, SweepError, parse_bots, run_sweep
from tools.store import Store

RATING_BASE = 1500.0


def tables(agents: list[str], players: int) -> list[tuple[str, ...]]:
    """The seatings to play: one when the agents fit the table (the last one repeated to fill
    it), else every set of `players` agents."""
    if len(agents) <= players:
        return [tuple(agents + [agents[-1]] * (players - len(agents)))]
    return list(itertools.combinations(agents, players))


def bradley_terry(pairs: dict[tuple[str, str], float], names: list[str], iterations: int = 500) -> dict[str, float]:
    """Elo-scale ratings (mean 1500) from pairwise wins: pairs[(a, b)] = times a beat b (halves
    for ties). A half win each way per pair met keeps a never-beaten agent finite."""
    wins: dict[tuple[str, str], float] = defaultdict(float, pairs)
    met = {frozenset(p) for p in pairs if p[0] != p[1]}
    for p in met:
        a, b = tuple(p)
        wins[(a, b)] += 0.5
        wins[(b, a)] += 0.5
    gamma = {n: 1.0 for n in names}
    for _ in range(iterations):
        new = {}
        for i in names:
            w = sum(wins[(i, j)] for j in names if j != i)
            d = sum((wins[(i, j)] + wins[(j, i)]) / (gamma[i] + gamma[j]) for j in names if j != i)
            new[i] = w / d if d > 0 and w > 0 else gamma[i]
        mean_log = sum(math.log(v) for v in new.values()) / len(new)
        gamma = {n: v / math.exp(mean_log) for n, v in new.items()}
    return {n: RATING_BASE + 400.0 * math.log10(gamma[n]) for n in names}


def standings(rows: list[dict], names: list[str]) -> dict:
    """Win rates (ties count for every tied player), seats played and ratings from game rows."""
    seat_games: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    fair: dict[str, float] = defaultdict(float)
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    games = failed = 0
    for row in rows:
        if row["error"] or not row["ranking"]:
            failed += 1
            continue
        games += 1
        seat_of = {f"P{i + 1}": spec for i, spec in enumerate(row["seats"])}
        n = len(seat_of)
        for p, spec in seat_of.items():
            seat_games[spec] += 1
            fair[spec] += 1.0 / n
            wins[spec] += p in row["winners"]
        ranking, winners = row["ranking"], set(row["winners"])
        for i, a in enumerate(ranking):
            for b in ranking[i + 1:]:
                sa, sb = seat_of[a], seat_of[b]
                if sa == sb:
                    continue
                if a in winners and b in winners:
                    pairs[(sa, sb)] += 0.5
                    pairs[(sb, sa)] += 0.5
                else:
                    pairs[(sa, sb)] += 1.0
    ratings = bradley_terry(dict(pairs), names) if len(names) > 1 else {n: RATING_BASE for n in names}
    table = []
    for spec in names:
        n = seat_games[spec]
        lo, hi = wilson(wins[spec], n)
        table.append({"agent": spec, "seat_games": n, "wins": wins[spec], "rate": wins[spec] / n if n else None,
                      "ci95": [lo, hi], "fair": fair[spec] / n if n else None, "rating": round(ratings[spec], 1)})
    table.sort(key=lambda r: -r["rating"])
    return {"games": games, "failed": failed, "agents": table}


def run_tournament(combo: str, players: int | None, agents: str, games: int, **sweep_args: Any) -> dict:
    """Play (or resume) every table's sweep and return the standings; SweepError when it cannot start."""
    from engine.agents import split_specs
    names = list(dict.fromkeys(split_specs(agents)))
    if not names:
        raise SweepError("--agents needs at least one bot")
    if players is None:
        from engine.base.diagnostics import Diagnostics
        from engine.model import build
        diags = Diagnostics()
        model = build(combo, sweep_args.get("options") or {}, None, diags)
        if model is None or diags.errors:
            raise SweepError(f"cannot load `{combo}`:\n{diags.render()}")
        players = model.combo.player_range[0]
    parse_bots(",".join(names), max(players, len(names)))  # every spec checked before any game
    db = sweep_args.get("db", DEFAULT_DB)
    outcomes = []
    for seats in tables(names, players):
        outcomes.append(run_sweep(combo, players, games, bots=",".join(seats), rotate=True, **sweep_args))
        if outcomes[-1].status != "done":
            break
    store = Store(db, readonly=True)
    try:
        rows = [r for o in outcomes for r in store.games(o.sweep_id) if r["game"] < games]
    finally:
        store.close()
    result = standings(rows, names)
    result.update(combo=combo, players=players, db=db, sweeps=[o.sweep_id for o in outcomes],
                  status="done" if all(o.status == "done" for o in outcomes) else outcomes[-1].status,
                  seconds=round(sum(o.seconds for o in outcomes), 3), played=sum(o.played for o in outcomes))
    return result


def render(result: dict) -> str:
    head = (f"Tournament: {result['combo']}, {result['players']} players, seats rotated: {result['games']} games "
            f"({result['failed']} failed) in {result['db']} (sweeps {', '.join(map(str, result['sweeps']))})")
    lines = [head, "", "Win rate per agent (ties count for every tied player; 95% Wilson interval) and "
             "Bradley-Terry rating (Elo scale, mean 1500)", ""]
    rows = [["agent", "seat-games", "wins", "win rate", "95% CI", "fair share", "rating"]]
    for r in result["agents"]:
        rate = "-" if r["rate"] is None else f"{r['rate']:.1%}"
        fair = "-" if r["fair"] is None else f"{r['fair']:.1%}"
        rows.append([r["agent"], str(r["seat_games"]), str(r["wins"]), rate,
                     f"{r['ci95'][0]:.1%}-{r['ci95'][1]:.1%}", fair, f"{r['rating']:.0f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                                       strict=True))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    if result["status"] != "done":
        lines.append(f"\ntournament {result['status']}: rerun the same command to resume")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tournament", help="bots against bots with seats rotated: win rates and ratings", epilog=EPILOG,
        description="Play G seat-rotated games of COMBO for each table of --agents and report each agent's win "
        "rate (95% interval) and a Bradley-Terry rating. Games are stored in the same SQLite file as `daimyo "
        "simulate` (read them with `daimyo report`); rerunning the command resumes. Agents are bot specs such "
        "as heuristic or search:time=0.5,rollout=heuristic (docs/agents.md).")
    p.add_argument("combo", metavar="COMBO")
    p.add_argument("--players", type=int, default=None, help="players per game (default: the ruleset's minimum)")
    p.add_argument("--agents", required=True, metavar="SPEC[,SPEC...]",
                   help="the bots; fewer than the players: the last fills the other seats")
    p.add_argument("--games", type=int, default=100, metavar="G", help="games per table (default 100)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="J",
                   help="worker processes (default: the CPU count; with ray: tasks in flight)")
    p.add_argument("--seed", type=int, default=1, help="tournament seed; game g uses a seed derived from (seed, g)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="ruleset option, e.g. side=moon")
    p.add_argument("--db", default="tournament.db", metavar="FILE", help="SQLite results file (default tournament.db)")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local processes (default) or a Ray cluster (pip install 'daimyo[ray]')")
    p.add_argument("--address", default=None, metavar="ADDR", help="with --backend ray: the cluster to join")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_tournament)


def cmd_tournament(args: argparse.Namespace) -> int:
    jobs = args.jobs if args.jobs is not None else (0 if args.backend == "ray" else (os.cpu_count() or 1))
    if args.backend == "local" and jobs < 1:
        print("daimyo: error: --jobs must be 1 or more", file=sys.stderr)
        return 2
    if args.games < 1:
        print("daimyo: error: --games must be 1 or more", file=sys.stderr)
        return 2
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _sigterm)  # `kill` commits what was played, like Ctrl-C
    try:
        result = run_tournament(args.combo, args.players, args.agents, args.games, jobs=jobs, seed=args.seed,
                                options=parse_options(args.option), db=args.db, backend=args.backend,
                                address=args.address, progress=not args.no_progress)
    except SweepError as e:
        print(f"daimyo: {e}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(json.dumps(result, indent=1) if args.format == "json" else render(result))
    return 130 if result["status"] == "interrupted" else 0


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
