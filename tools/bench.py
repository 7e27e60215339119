"""`daimyo bench`: the figures docs/performance.md reports, measured on one core.

- cold validation time of every bundled ruleset (a fresh process: imports, YAML, schemas,
  compilation, as a maintainer's CI run sees it);
- per ruleset: decisions per second and full games per second with random bots, and the
  cost of cloning a mid-game state and of saving it (with its size).
Benchmarks only measure; no test asserts a time.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from typing import Any

from engine.base.console import EPILOG, add_format_option, rate_text
from engine.base.diagnostics import Diagnostics
from engine.loading.package import bundled_ids
from engine.model import Model, build
from engine.run.game import Game

# Combos measured when none is named: each base game, plus the largest expansion combo.
DEFAULT_COMBOS = ["shogun", "shogun+tennos-court+military-leaders+chambers+samurai-cards",
                  "samurai-swords", "samurai-swords+samurai-swords-vp",
                  "samurai-swords+samurai-swords-objectives", "shogun-cards",
                  "shogun-cards+shogun-cards-advanced+shogun-cards-wagers"]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def cold_validate_seconds() -> float:
    """Validate all bundled rulesets in a fresh interpreter and time it."""
    code = ("import time; t=time.perf_counter(); from engine.model.validate import validate_targets; "
            "from engine.loading.package import bundled_root; import pathlib; "
            "ps=sorted(pathlib.Path(bundled_root()).glob('*/ruleset.yaml')); "
            "d,_=validate_targets([str(p.parent) for p in ps]); "
            "print(time.perf_counter()-t, len(d.errors))")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-500:])
    return wall


def _available(combo: str) -> bool:
    ids = set(bundled_ids())
    return all(part in ids for part in combo.split("+"))


def measure_combo(combo: str, players: int | None, seconds: float) -> dict[str, Any]:
    diags = Diagnostics()
    model = build(combo, {}, players, diags)
    if model is None and players is None:
        return {"combo": combo, "error": diags.render()[:500]}
    if players is None:
        lo, hi = model.combo.base.players
        players = max(lo, min(4, hi))
        model = build(combo, {}, players, diags)
    if model is None:
        return {"combo": combo, "error": diags.render()[:500]}
    return {"combo": combo, "players": players, **_play_rate(model, players, seconds), **_clone_cost(model, players)}


def _play_rate(model: Model, players: int, seconds: float) -> dict[str, Any]:
    rng = random.Random(1)
    games = decisions = 0
    t0 = time.perf_counter()
    seed = 0
    while time.perf_counter() - t0 < seconds or games == 0:
        seed += 1
        g = Game.new(model, players, seed, log=False)
        while not g.over:
            d = g.decision
            g.apply(d.options[rng.randrange(len(d.options))])
            decisions += 1
        games += 1
    dt = time.perf_counter() - t0
    return {"games_per_s": round(games / dt, 2), "decisions_per_s": round(decisions / dt),
            "decisions_per_game": round(decisions / games), "games": games}


def _clone_cost(model: Model, players: int) -> dict[str, Any]:
    rng = random.Random(2)
    g = Game.new(model, players, 99, log=False)
    total = 0
    while not g.over:  # play to the middle of a game
        total += 1
        d = g.decision
        g.apply(d.options[rng.randrange(len(d.options))])
    target = total // 2
    g = Game.new(model, players, 99, log=False)
    rng = random.Random(2)
    for _ in range(target):
        d = g.decision
        g.apply(d.options[rng.randrange(len(d.options))])
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        g.clone()
    clone_us = (time.perf_counter() - t0) / n * 1e6
    t0 = time.perf_counter()
    for _ in range(200):
        text = json.dumps(g.save())
    save_us = (time.perf_counter() - t0) / 200 * 1e6
    return {"clone_us": round(clone_us, 1), "save_us": round(save_us, 1), "save_kb": round(len(text) / 1024, 1)}


def run_bench(args: argparse.Namespace) -> int:
    args.json = args.json or args.format == "json"
    combos = [args.combo] if args.combo else [c for c in DEFAULT_COMBOS if _available(c)]
    results: dict[str, Any] = {"machine": machine()}
    if not args.combo:
        results["cold_validate_all_s"] = round(cold_validate_seconds(), 3)
        if not args.json:
            print(f"machine: {results['machine']}")
            print(f"cold validation of all bundled rulesets: {results['cold_validate_all_s']} s")
    rows = []
    for combo in combos:
        row = measure_combo(combo, args.players, args.seconds)
        rows.append(row)
        if not args.json:
            if "error" in row:
                print(f"{combo}: cannot load:\n{row['error']}")
                continue
            print(f"{combo} ({row['players']} players): {rate_text(row['games_per_s'], 'game')}, "
                  f"{row['decisions_per_s']} decisions/s ({row['decisions_per_game']} per game), "
                  f"clone {row['clone_us']} us, save {row['save_us']} us ({row['save_kb']} KB)")
    results["rulesets"] = rows
    try:
        from tools.bench_sweep import sweep_throughput
    except ImportError:
        sweep_throughput = None
    if sweep_throughput is not None and not args.combo and _available("shogun"):
        for jobs in (1, 2):
            got = sweep_throughput("shogun", 4, 300, jobs)
            results[f"sweep_jobs{jobs}"] = got
            if not args.json:
                print(f"sweep shogun 4p, {jobs} job(s): {got}")
    if args.json:
        print(json.dumps(results, indent=2))
    return 1 if any("error" in r for r in rows) else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("bench", help="measure validation, decisions/s, clone cost, games/s", epilog=EPILOG,
                       description="Benchmarks on one core. Without COMBO: every bundled base ruleset.")
    b.add_argument("combo", nargs="?", metavar="COMBO")
    b.add_argument("--players", type=int, default=None)
    b.add_argument("--seconds", type=float, default=3.0, help="time budget per measurement (default 3)")
    add_format_option(b)
    b.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the old spelling of --format json
    b.set_defaults(func=run_bench)
