"""Sweep throughput for `daimyo bench`: games per second of `daimyo simulate` with J jobs.

    >>> from tools.bench_sweep import sweep_throughput
    >>> sweep_throughput("tests/rulesets/race", 3, 2000, 2)     # doctest: +SKIP
    {'combo': ..., 'jobs': 2, 'games': 2000, 'seconds': ..., 'games_per_s': ..., ...}

The sweep runs into a temporary results file (deleted afterwards) with the same code path
as the command: worker start-up, model loading, playing, SQLite writes. `games_per_s`
counts all of it; `steady_games_per_s` leaves out the time to the first result (process
start-up and rule loading), which is what a long sweep sees. `games_per_cpu_s` (parent and
workers together) does not depend on what else the machine is doing; `load_avg` says how
busy it was.
"""
from __future__ import annotations

import os
import resource
import tempfile
from typing import Any

from tools.simulate import run_sweep


def sweep_throughput(combo: str, players: int, games: int, jobs: int, *, bots: str = "random",
                     seed: int = 1) -> dict[str, Any]:
    """Run a `games`-game sweep of `combo` with `jobs` local processes and measure it."""
    cpu0 = _cpu_seconds()
    with tempfile.TemporaryDirectory(prefix="daimyo-bench-") as tmp:
        db = os.path.join(tmp, "bench.db")
        out = run_sweep(combo, players, games, jobs=jobs, bots=bots, seed=seed, db=db, progress=False)
    cpu = _cpu_seconds() - cpu0
    first = out.first_result_s or 0.0
    first_games = min(games, max(1, games // max(1, jobs * 16)))  # about one chunk arrived by then
    steady = (out.played - first_games) / (out.seconds - first) if out.seconds > first and out.played > first_games \
        else out.games_per_s
    return {"combo": combo, "players": players, "jobs": jobs, "games": out.played,
            "seconds": round(out.seconds, 3), "games_per_s": round(out.games_per_s, 1),
            "steady_games_per_s": round(steady, 1), "startup_s": round(first, 3),
            "cpu_s": round(cpu, 3), "games_per_cpu_s": round(out.played / cpu, 1) if cpu > 0 else None,
            "load_avg": round(os.getloadavg()[0], 2), "errors": out.errors,
            "worker_rss_mb": round((out.rss_last_kb or 0) / 1024, 1)}


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the sweep's workers, once reaped)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def sweep_scaling(combo: str, players: int, games: int, jobs: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
    """Throughput for each job count and the scaling ratio of the last to the first."""
    runs = {j: sweep_throughput(combo, players, games, j) for j in jobs}
    first, last = runs[jobs[0]], runs[jobs[-1]]
    return {"runs": runs,
            "scaling": round(last["games_per_s"] / first["games_per_s"], 2) if first["games_per_s"] else None,
            "steady_scaling": round(last["steady_games_per_s"] / first["steady_games_per_s"], 2)
            if first["steady_games_per_s"] else None}
