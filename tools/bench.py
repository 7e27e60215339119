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
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import engine
from engine.agents.basic import RandomAgent
from engine.base.console import EPILOG, add_format_option, parse_options, rate_text
from engine.base.diagnostics import Diagnostics
from engine.base.diskcache import cache_folder
from engine.loading.package import bundled_ids, bundled_root
from engine.model import Model, build
from engine.model.verdicts import FORMAT as VERDICTS
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
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}, {engine_build()}"


def engine_build() -> str:
    """Whether the engine's hot modules run compiled (a regular install, setup.py) or as source."""
    compiled = sorted(name for name, module in list(sys.modules.items())
                      if name.split(".")[0] in ("engine", "dsl")
                      and str(getattr(module, "__file__", "")).endswith(tuple(EXTENSION_SUFFIXES)))
    return f"engine compiled ({len(compiled)} modules)" if compiled else "engine as Python source"


def cold_validate(runs: int = 3) -> dict[str, Any]:
    """`daimyo validate` of every bundled ruleset in fresh processes, as a user runs it.

    Each figure is the median of `runs` runs: wall-clock seconds (what the user waits; noisy
    when other processes share the cores) and CPU seconds of the process (user + system,
    steadier under load). Three cases (docs/performance.md, "The disk caches"):
    - `wall_s`, `cpu_s`: the same files validated again: what their builds found is kept;
    - `built_wall_s`, `built_cpu_s`: every combo built, its rule texts and YAML read from the
      caches (what a run costs after an edit of every package, or with the results cleared);
    - `first_wall_s`, `first_cpu_s`: one run with an empty cache folder (the first run after
      an install or a change of every rule text).
    """
    root = str(Path(engine.__file__).resolve().parent.parent)
    folders = [str(p.parent) for p in sorted(bundled_root().glob("*/ruleset.yaml"))]
    cmd = [sys.executable, "-m", "engine.cli", "validate", *folders]
    with tempfile.TemporaryDirectory(prefix="daimyo-bench-") as cache:
        # Bytecode kept (in the temporary folder) as an installed package has it, even where
        # PYTHONDONTWRITEBYTECODE is set: compiling the modules would cost ~0.15 s per run.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               "XDG_CACHE_HOME": cache, "PYTHONPYCACHEPREFIX": os.path.join(cache, "pyc")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        _timed(cmd, {**env, "DAIMYO_NO_CACHE": "1"})  # writes the bytecode only
        first = _timed(cmd, env)
        kept = cache_folder(VERDICTS, env)
        built = []
        for _ in range(runs):
            if kept is not None:
                shutil.rmtree(kept, ignore_errors=True)
            built.append(_timed(cmd, env))
        warm = [_timed(cmd, env) for _ in range(runs)]
    return {"first_wall_s": round(first[0], 3), "first_cpu_s": round(first[1], 3),
            "built_wall_s": _median(built, 0), "built_cpu_s": _median(built, 1),
            "wall_s": _median(warm, 0), "cpu_s": _median(warm, 1), "runs": runs}


def _median(times: list[tuple[float, float]], i: int) -> float:
    return round(sorted(t[i] for t in times)[len(times) // 2], 3)


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-500:])
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _available(combo: str) -> bool:
    ids = set(bundled_ids())
    return all(part in ids for part in combo.split("+"))


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system does not say)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def measure_combo(combo: str, players: int | None, seconds: float,
                  options: dict[str, Any] | None = None, stepwise: bool = False) -> dict[str, Any]:
    """Play random games of one combo for `seconds`; the row names what was measured."""
    options = dict(options or {})
    diags = Diagnostics()
    model = build(combo, options, players, diags)
    if model is None and players is None:
        return {"combo": combo, "options": options, "error": diags.render()[:500]}
    if players is None:
        lo, hi = model.combo.player_range
        players = max(lo, min(4, hi))
        model = build(combo, options, players, diags)
    if model is None:
        return {"combo": combo, "options": options, "players": players, "error": diags.render()[:500]}
    setup = {"bots": "random (uniform over the offered options, random.Random(1))", "log": False,
             "driven_by": "Game.apply, decision by decision" if stepwise else "Game.play_out",
             "seeds": "1, 2, ... one per game", "seconds": seconds,
             "clone_and_save": "mid-game state of seed 99, random.Random(2)"}
    return {"combo": model.combo.name, "options": dict(model.combo.options), "players": players,
            "setup": setup, **_play_rate(model, players, seconds, stepwise), **_clone_cost(model, players)}


def _play_rate(model: Model, players: int, seconds: float, stepwise: bool = False) -> dict[str, Any]:
    """Random games for `seconds`: played out with `Game.play_out`, as a sweep of random bots
    and the bots' random playouts are; with `stepwise`, decision by decision through
    `Game.apply`, as a front end drives a game. Both play the same games."""
    bot = RandomAgent(1)  # (its generator is random.Random(1): the same moves either way)
    games = decisions = 0
    t0 = time.perf_counter()
    seed = 0
    while time.perf_counter() - t0 < seconds or games == 0:
        seed += 1
        g = Game.new(model, players, seed, log=False)
        if stepwise:
            while not g.over:
                d = g.decision
                g.apply(d.options[bot.choose(g, d)])
        else:
            g.play_out(bot.pick)
        decisions += g.state["seq"]
        games += 1
    dt = time.perf_counter() - t0
    return {"games_per_s": round(games / dt, 2), "decisions_per_s": round(decisions / dt),
            "decisions_per_game": round(decisions / games), "games": games, "seconds": round(dt, 2)}


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


def _wants_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items()) or "none"


def run_bench(args: argparse.Namespace) -> int:
    as_json = _wants_json(args)
    options = parse_options(args.option or [])
    combos = [args.combo] if args.combo else [c for c in DEFAULT_COMBOS if _available(c)]
    results: dict[str, Any] = {"machine": machine(), "load_average": load_average(),
                               "asked": {"combo": args.combo, "players": args.players,
                                         "options": options, "seconds": args.seconds}}
    if not as_json:
        print(f"machine: {results['machine']}; load average {results['load_average']}")
    if not args.combo:
        cold = cold_validate()
        results["cold_validate_all_s"] = cold["wall_s"]
        results["cold_validate"] = cold
        if not as_json:
            print(f"cold validation of all bundled rulesets (`daimyo validate`, median of {cold['runs']}): "
                  f"{cold['wall_s']} s wall, {cold['cpu_s']} s CPU; every combo built (rule texts and "
                  f"YAML from the caches) {cold['built_wall_s']} s wall, {cold['built_cpu_s']} s CPU; "
                  f"with an empty cache {cold['first_wall_s']} s wall, {cold['first_cpu_s']} s CPU")
        if args.validate_only:
            results["load_average_after"] = load_average()
            if as_json:
                print(json.dumps(results, indent=2))
            return 0
    rows = []
    for combo in combos:
        row = measure_combo(combo, args.players, args.seconds, options, args.stepwise)
        rows.append(row)
        if not as_json:
            if "error" in row:
                print(f"{combo} (options: {_options_text(row['options'])}): cannot load:\n{row['error']}")
                continue
            print(f"{row['combo']} ({row['players']} players; options: {_options_text(row['options'])}): "
                  f"{rate_text(row['games_per_s'], 'game')}, "
                  f"{row['decisions_per_s']} decisions/s ({row['decisions_per_game']} per game, "
                  f"{row['games']} games in {row['seconds']} s), "
                  f"clone {row['clone_us']} us, save {row['save_us']} us ({row['save_kb']} KB)")
    if rows and not as_json:
        print(f"set-up: random bots, no log, one game per seed 1, 2, ..., "
              f"{'driven decision by decision (Game.apply)' if args.stepwise else 'played out (Game.play_out)'}; "
              f"clone and save of a mid-game state (seed 99)")
    results["rulesets"] = rows
    try:
        from tools.bench_sweep import sweep_throughput
    except ImportError:
        sweep_throughput = None
    if sweep_throughput is not None and not args.combo and _available("shogun"):
        for jobs in (1, 2):
            got = sweep_throughput("shogun", 4, 300, jobs)
            results[f"sweep_jobs{jobs}"] = got
            if not as_json:
                print(f"sweep shogun 4p, {jobs} job(s): {got}")
    results["load_average_after"] = load_average()
    if as_json:
        print(json.dumps(results, indent=2))
    return 1 if any("error" in r for r in rows) else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("bench", help="measure validation, decisions/s, clone cost, games/s", epilog=EPILOG,
                       description="Benchmarks on one core: games and decisions per second with random "
                                   "bots, the cost of a clone and a save, and cold validation. Without "
                                   "COMBO: each bundled base game and its largest expansion combos.")
    b.add_argument("combo", nargs="?", metavar="COMBO", help="the combo to measure (default: the bundled set)")
    b.add_argument("--players", type=int, default=None,
                   help="players at the table (default: 4, or the nearest count the combo allows)")
    b.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="ruleset option for every measured combo, e.g. tower=one_pool (repeatable)")
    b.add_argument("--seconds", type=float, default=3.0, help="time budget per measurement (default 3)")
    b.add_argument("--stepwise", action="store_true",
                   help="drive each game decision by decision through Game.apply, as a front end does, "
                        "instead of Game.play_out, as sweeps and bots' playouts do (the same games)")
    add_format_option(b)
    b.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the old spelling of --format json
    b.add_argument("--validate-only", action="store_true",
                   help="measure only the cold validation of every bundled ruleset")
    b.set_defaults(func=run_bench)
