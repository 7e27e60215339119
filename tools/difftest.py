"""`daimyo difftest`: play the same seeded games on the direct flow runner and on the reference
machine, and compare their logs byte for byte.

The engine runs the flow directly (engine/run/direct.py); the frame-by-frame machine it
replaced is kept as the reference (`FlowMachine.run_frames`). A game is a seed and random bots
drawing from `random.Random(seed)`; its log (every decision with the state hash it was made in,
every chance outcome, every line of the account, the result) is written as JSON lines by both,
and any difference is reported with the seed and the first line that differs.
"""
from __future__ import annotations

import argparse
import multiprocessing
import random
import signal
from typing import Any

from engine.base.console import EPILOG, add_format_option, parse_options, print_json, usage_error
from engine.base.diagnostics import Diagnostics
from engine.model import Model, build
from engine.run.game import Game
from engine.run.state import canonical
from tools.bench import DEFAULT_COMBOS, _available
from tools.simulate import Progress

BLOCK = 25  # games per task handed to a worker


def game_log(model: Model, players: int, seed: int, reference: bool) -> list[str]:
    """The log of one seeded game between random bots, as JSON lines (as `daimyo play --log` writes them)."""
    rng = random.Random(seed)
    game = Game.new(model, players, seed, defer=True)
    game.reference = reference
    game.run()
    while not game.over:
        options = game.decision.options
        game.apply(options[rng.randrange(len(options))])
    return [canonical(entry) for entry in game.log]


def first_difference(a: list[str], b: list[str]) -> dict[str, Any] | None:
    """Where two logs part (0-based line), with both lines; None if they are the same."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return {"line": i, "direct": x[:400], "reference": y[:400]}
    if len(a) != len(b):
        i = min(len(a), len(b))
        return {"line": i, "direct": a[i][:400] if i < len(a) else "(end of log)",
                "reference": b[i][:400] if i < len(b) else "(end of log)"}
    return None


def _block(combo: str, options: dict, players: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Play `seeds` on both machines; one row per game that differs (or fails)."""
    model = build(combo, options, players, Diagnostics())
    out = []
    for seed in seeds:
        try:
            diff = first_difference(game_log(model, players, seed, False), game_log(model, players, seed, True))
        except Exception as e:  # a game that fails is a finding, not a crash of the tool
            diff = {"error": f"{type(e).__name__}: {e}"[:400]}
        if diff is not None:
            out.append({"seed": seed, **diff})
    return out


def _quiet_worker() -> None:
    """Ctrl-C is for the parent, which reports what was compared and stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (as the pool stops them)


def _stopped(signum: int, frame: Any) -> None:
    # `kill` stops a run as Ctrl-C does: a run started in the background (`&`) ignores Ctrl-C's
    # SIGINT, so SIGTERM is how one is stopped, and it must report what it compared too.
    raise KeyboardInterrupt


def _task(task: tuple[dict, str, int, list[int]]) -> list[dict[str, Any]]:
    options, combo, players, seeds = task
    return _block(combo, options, players, seeds)


def player_counts(combo: str, options: dict, asked: int | None) -> list[int]:
    """The player counts to play `combo` at: `asked`, or every count it allows."""
    model = build(combo, options, None, Diagnostics())
    if model is None:
        raise SystemExit(f"daimyo difftest: {combo} does not load; `daimyo validate {combo}` says why")
    lo, hi = model.combo.player_range
    if asked is not None and not lo <= asked <= hi:
        raise SystemExit(f"daimyo difftest: {combo} is for {lo} to {hi} players, not {asked}")
    return [asked] if asked is not None else list(range(lo, hi + 1))


def run_difftest(args: argparse.Namespace) -> int:
    if args.games < 1:
        return usage_error("--games must be 1 or more")
    if args.jobs < 1:
        return usage_error("--jobs must be 1 or more")
    first = getattr(args, "first_seed", 1)
    if first < 1:
        return usage_error("--first-seed must be 1 or more")
    options = parse_options(args.option or [])
    combos = args.combo or [c for c in DEFAULT_COMBOS if _available(c)]
    tables = [(combo, n) for combo in combos for n in player_counts(combo, options, args.players)]
    last = first + args.games - 1
    tasks = [(combo, n, list(range(s, min(s + BLOCK, last + 1))))
             for combo, n in tables for s in range(first, last + 1, BLOCK)]
    bar = Progress(len(tables) * args.games, 0, enabled=not args.no_progress)
    found: dict[tuple[str, int], list] = {t: [] for t in tables}
    played: dict[tuple[str, int], list[int]] = {t: [] for t in tables}  # the seeds compared
    interrupted = False
    with multiprocessing.Pool(args.jobs, initializer=_quiet_worker) as pool:  # leaving it stops the workers
        before = signal.signal(signal.SIGTERM, _stopped)
        try:
            for (combo, n, seeds), differ in zip(tasks, pool.imap(_task, [(options, *t) for t in tasks]), strict=True):
                found[(combo, n)].extend(differ)
                played[(combo, n)].extend(seeds)
                bar.update(len(seeds))
        except KeyboardInterrupt:  # a long run stopped by hand still reports the games it compared
            interrupted = True
        finally:
            signal.signal(signal.SIGTERM, before)
    bar.close()
    rows = [{"combo": combo, "players": n, "games": len(played[(combo, n)]),
             "seeds": _spans(played[(combo, n)]), "differ": len(found[(combo, n)]),
             "first": found[(combo, n)][:3]} for combo, n in tables]
    bad = sum(r["differ"] for r in rows)
    done = sum(r["games"] for r in rows)
    if args.format == "json":
        print_json({"options": options, "games_per_table": args.games, "first_seed": first,
                    "interrupted": interrupted, "tables": rows, "differ": bad})
    else:
        for r in rows:
            status = "identical" if not r["differ"] else f"{r['differ']} DIFFER"
            print(f"{r['combo']} ({r['players']} players): {r['games']} games (seeds {r['seeds'] or 'none'}), {status}")
            for f in r["first"]:
                print(f"  seed {f['seed']}: " + (f["error"] if "error" in f else
                                                 f"line {f['line']}\n    direct:    {f['direct']}\n"
                                                 f"    reference: {f['reference']}"))
        stopped = f" (interrupted: {done} of {len(tables) * args.games} games)" if interrupted else ""
        print(f"{done} games on both machines{stopped}: " + ("every log identical" if not bad else f"{bad} differ"))
    return 1 if bad else 130 if interrupted else 0


def _spans(seeds: list[int]) -> str:
    """Seeds as runs: `1-475`, or `1-25, 51-75` where a block in between was not compared."""
    runs: list[list[int]] = []
    for s in sorted(seeds):
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "difftest", help="compare the direct flow runner with the reference machine, log for log",
        epilog=EPILOG,
        description="Play seeded games between random bots on the engine's direct flow runner and on the "
                    "reference frame machine, and compare the logs byte for byte. Without COMBO: the "
                    "combos `daimyo bench` measures; without --players: every player count of each.")
    p.add_argument("combo", nargs="*", metavar="COMBO")
    p.add_argument("--players", type=int, default=None, help="one player count (default: all the combo allows)")
    p.add_argument("--games", type=int, default=100, help="seeded games per combo and player count (default 100)")
    p.add_argument("--first-seed", type=int, default=1, metavar="N",
                   help="the first seed (default 1): seeds N, N+1, ... so that a long run can go on where "
                        "another stopped")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="ruleset option for every combo (repeatable)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_format_option(p)
    p.set_defaults(func=run_difftest)
