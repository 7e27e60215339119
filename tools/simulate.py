"""`daimyo simulate`: many bot games in parallel, results in an SQLite file.

    daimyo simulate shogun --players 4 --games 2000 --jobs 4 --db shogun.db
    daimyo report shogun.db

Reproducible: game g of a sweep is played with seed `game_seed(--seed, g)` and bots seeded
from that, so its row is the same whichever process (or Ray node) played it and however
many there were. Resumable: rows are committed in batches, and a rerun of the same command
with the same --db skips the games already stored (Ctrl-C, a kill, a crash lose at most
the last uncommitted batch). Each worker loads the rules once and plays game after game,
keeping nothing between games, so memory stays flat however long the sweep.

Python API: `run_sweep(...)` (what the command calls) and `play_game(...)` (one row).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from engine.base.console import EPILOG, add_format_option, parse_options, rate_text
from tools.store import Store, SweepSpec

DEFAULT_DB = "simulate.db"
DEFAULT_MAX_DECISIONS = 200_000
COMMIT_ROWS = 200        # commit after this many new rows...
COMMIT_SECONDS = 2.0     # ...or this long after the last commit, whichever comes first


# --------------------------------------------------------------------------- seeds and seats

def game_seed(sweep_seed: int, game: int) -> int:
    """The seed of game number `game` of a sweep: a 63-bit hash of (sweep seed, game), so
    neighbouring games share nothing and the value fits an SQLite integer."""
    digest = hashlib.sha256(f"daimyo-sweep/{int(sweep_seed)}/{int(game)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seat_bots(bots: tuple[str, ...] | list[str], rotate: bool, game: int) -> list[str]:
    """The bot kind at each seat for game `game`: with `rotate`, the list turns by one seat per
    game, so every bot sits in every seat equally often and seat advantage cancels out."""
    n = len(bots)
    if not rotate:
        return list(bots)
    return [bots[(s + game) % n] for s in range(n)]


# --------------------------------------------------------------------------- one game

def play_game(model: Any, players: int, bots: tuple[str, ...] | list[str], rotate: bool, sweep_seed: int,
              game: int, max_decisions: int = DEFAULT_MAX_DECISIONS) -> dict:
    """Play game number `game` of a sweep to the end and return its row (see tools.store)."""
    from dsl.runtime import RuleError
    from engine.agents import seat_agent
    from engine.run.game import Game

    seed = game_seed(sweep_seed, game)
    seats = seat_bots(bots, rotate, game)
    row: dict[str, Any] = {"game": game, "seed": seed, "seats": seats, "scores": None, "tiebreaks": None,
                           "ranking": None, "winners": None, "length": 0, "counts": {}, "error": None}
    decisions: dict[str, int] = {}
    length = 0
    g = None
    try:
        g = Game.new(model, players, seed, log=False)
        agents = {f"P{i + 1}": seat_agent(kind, seed, i) for i, kind in enumerate(seats)}
        held = RoundFigures(g)
        # A bot that decides from the decision alone (`pick`: the random bot) answers inside
        # the flow (`Game.play_out`); the others get the game, at a stop, through `choose`.
        picks = {seat: getattr(agent, "pick", None) for seat, agent in agents.items()}

        def pick(pending: dict) -> int | None:
            nonlocal length
            answer = picks[pending["player"]]
            if answer is None or length >= max_decisions:
                return None
            held.sample(g)
            i = answer(pending)
            length += 1
            decisions[pending["step"]] = decisions.get(pending["step"], 0) + 1
            return i

        while not g.over:
            g.play_out(pick)
            if g.over:
                break
            if length >= max_decisions:
                row["error"] = f"unfinished after {max_decisions} decisions"
                break
            held.sample(g)
            d = g.decision
            g.apply(d.options[agents[d.player].choose(g, d)])
            length += 1
            decisions[d.step] = decisions.get(d.step, 0) + 1
    except RuleError as e:
        row["error"] = f"rule error: {e}"
    except Exception as e:  # an engine bug must not end a 10,000-game sweep; the row says what happened
        row["error"] = f"{type(e).__name__}: {e}"
    counts = dict(g.counts) if g is not None else {}
    counts.update({f"decision:{k}": v for k, v in decisions.items()})
    if g is not None and g.over and row["error"] is None:
        counts.update(breakdown_tags(g))
        counts.update(held.tags())
    row["counts"] = counts
    row["length"] = length
    if g is not None and g.over and g.result and row["error"] is None:
        res = g.result
        row.update(scores=res["scores"], tiebreaks=res.get("tiebreaks") or {}, ranking=res["ranking"],
                   winners=res["winners"])
    return row


def breakdown_tags(game: Any) -> dict[str, int]:
    """The ruleset's `hints.breakdown` figures of each player at the end of a game, as count
    keys `by:NAME=VALUE@PLAYER` (value 1), so the store needs no new column. A figure that
    fails to evaluate is left out."""
    from dsl.runtime import Ctx, RuleError
    tags: dict[str, int] = {}
    for name, fn in (game.model.hints.get("breakdown") or {}).items():
        for p in game.state["players"]:
            try:
                value = fn(Ctx(game.state, game.model, game, {"player": p}))
            except (RuleError, TypeError, ValueError):
                continue
            tags[f"by:{name}={value}@{p}"] = 1
    return tags


class RoundFigures:
    """The ruleset's `hints.round_breakdown` figures of each player, round by round.

    A figure that changes during a round (Shogun's special card is taken after the planning
    and handed back at the round's end) cannot be read at the end of the game, nor at one
    fixed moment, so it is sampled before every decision: the value a player held in round r
    is the last value other than none seen while the round counter (times the `hints.round`
    step ran; without it the whole game is one round) stood at r. `tags` turns them into
    count keys `byround:NAME=VALUE@PLAYER` -> rounds held, so the store needs no new column."""

    def __init__(self, game: Any):
        self.figures = game.model.hints.get("round_breakdown") or {}
        self.round_step = game.model.hints.get("round")
        self.held: dict[tuple[str, int, str], str] = {}  # (figure, round, player) -> value
        self._c: Any = None  # one context for every figure of this game, as the flow machine keeps one
        self._fast = [(name, getattr(fn, "fast", fn)) for name, fn in self.figures.items()]

    def sample(self, game: Any) -> None:
        if not self.figures:
            return
        c = self._c
        if c is None or c.state is not game.state:
            from dsl.runtime import Ctx
            c = self._c = Ctx(game.state, game.model, game)
        r = game.counts.get(self.round_step, 0) if self.round_step else 0
        meter, held = c.meter, self.held
        for p in game.state["players"]:
            c.vars = {"player": p}  # figures only read: one scope serves every figure of a player
            for name, fast in self._fast:
                meter.used = 0  # each figure its own budget, as a fresh context had
                try:
                    value = fast(c)  # bare: a failure is located (as the rule's wrapper would) only if caught
                except Exception as e:
                    if _skipped(e):
                        continue
                    raise
                if value is not None:
                    held[(name, r, p)] = str(value)

    def tags(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (name, _r, p), value in self.held.items():
            key = f"byround:{name}={value}@{p}"
            out[key] = out.get(key, 0) + 1
        return out


def _skipped(e: Exception) -> bool:
    """Whether a figure that raised `e` is left out: a failure of its rule text (as its
    wrapper reports it), not an engine bug."""
    from dsl.rule import rule_error
    from dsl.runtime import RuleError
    return isinstance(rule_error(e), (RuleError, TypeError, ValueError))


# --------------------------------------------------------------------------- workers

_MODELS: dict[str, Any] = {}  # per process: the compiled rules, loaded once


def _model_key(combo: str, options: dict, players: int) -> str:
    return json.dumps([combo, options, players], sort_keys=True)


def _model(combo: str, options: dict, players: int, fingerprint: str) -> Any:
    key = _model_key(combo, options, players)
    model = _MODELS.get(key)
    if model is None:
        from engine.model import load
        model = load(combo, options, players)
        if model.fingerprint != fingerprint:
            raise RuntimeError("the rules changed on disk while the sweep was starting (fingerprint "
                               f"{model.fingerprint}, expected {fingerprint}); rerun the command")
        _MODELS.clear()  # one ruleset per worker at a time keeps memory flat across sweeps
        _MODELS[key] = model
    return model


def rss_kb() -> int:
    """This process's resident memory now, in KiB (peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError, AttributeError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak // 1024 if sys.platform == "darwin" else peak


def play_chunk(task: dict) -> tuple[list[dict], int, int]:
    """Play the games `task["games"]` of a sweep; (rows, worker pid, worker RSS in KiB).
    Module-level and argument-only so that spawned processes and Ray workers can run it."""
    model = _model(task["combo"], task["options"], task["players"], task["fingerprint"])
    rows = [play_game(model, task["players"], task["bots"], task["rotate"], task["seed"], g,
                      task["max_decisions"]) for g in task["games"]]
    return rows, os.getpid(), rss_kb()


def _worker_init() -> None:
    # The parent handles Ctrl-C (commit, then stop the workers): workers ignore it. A forked
    # worker would inherit the parent's SIGTERM handler; terminate() must simply end it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


START_METHODS = ("fork", "spawn", "forkserver")


def start_method(requested: str | None = None) -> str:
    """How worker processes start. Default: `fork` on Linux when this process runs no other
    thread (workers then inherit the compiled rules: no start-up cost), else `spawn`. The
    worker code is spawn-safe either way, and the rows do not depend on the method."""
    if requested:
        return requested
    import threading
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _local_results(tasks: list[dict], jobs: int, method: str = "spawn") -> Iterator[tuple[list[dict], int, int]]:
    if jobs <= 1:
        for task in tasks:
            yield play_chunk(task)
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    # An executor (not multiprocessing.Pool) so that a worker that dies is an error, not a hang.
    pool = ProcessPoolExecutor(jobs, mp_context=mp.get_context(method), initializer=_worker_init)
    queue = list(reversed(tasks))
    running: set = set()
    try:
        while queue or running:
            while queue and len(running) < 2 * jobs:  # a little ahead of the workers, never the whole sweep
                running.add(pool.submit(play_chunk, queue.pop()))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    yield future.result()
                except BrokenProcessPool as e:
                    raise SweepError("a worker process died (out of memory? killed?). When calling run_sweep "
                                     "from a script, guard it with `if __name__ == \"__main__\":`") from e
    finally:
        for future in running:
            future.cancel()
        # Stop the workers now rather than after their current chunk (3.11 has no public way).
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _ray_results(tasks: list[dict], jobs: int, address: str | None) -> Iterator[tuple[list[dict], int, int]]:
    try:
        import ray
    except ImportError as e:
        raise SweepError("the ray backend needs Ray: pip install 'daimyo[ray]'") from e
    started_here = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        ray.init(**kwargs)
        started_here = True
    in_flight: list = []
    try:
        remote = ray.remote(num_cpus=1)(play_chunk)
        width = jobs if jobs > 0 else max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = list(reversed(tasks))
        while queue or in_flight:
            while queue and len(in_flight) < 2 * width:  # a little ahead of the workers, never the whole sweep
                in_flight.append(remote.remote(queue.pop()))
            ready, in_flight = ray.wait(in_flight, num_returns=1)
            yield ray.get(ready[0])
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()


# --------------------------------------------------------------------------- progress bar

class Progress:
    """A one-line progress bar on stderr: games done, games/s, time left. On a terminal it
    redraws in place (at most 10 times a second); otherwise it prints a line every 10 s."""

    def __init__(self, total: int, done: int, stream: TextIO | None = None, enabled: bool = True):
        self.total = total
        self.start_done = done
        self.done = done
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > done
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = -1  # `done` at the last draw
        if self.enabled and self.tty:
            self.stream.write(f"{done}/{total} games: starting...")
            self.stream.flush()

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if self.last == 0.0:
            self.last = now  # the first figures are noise (workers starting): wait one interval
            return
        if now - self.last < (0.1 if self.tty else 10.0) and self.done < self.total:
            return
        self.last = now
        self._draw(now)

    def line(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        new = self.done - self.start_done
        elapsed = max(now - self.t0, 1e-9)
        rate = new / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        frac = self.done / self.total if self.total else 1.0
        width = 24
        filled = int(frac * width)
        bar = "#" * filled + "-" * (width - filled)
        return (f"[{bar}] {self.done}/{self.total} games {frac:4.0%}  {rate_text(rate, 'game')}  "
                f"left {_clock(left)}  elapsed {_clock(elapsed)}")

    def _draw(self, now: float) -> None:
        self.drawn = self.done
        text = self.line(now)
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            if self.drawn != self.done:
                self._draw(time.monotonic())
            if self.tty:
                self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    if seconds == float("inf") or seconds != seconds:
        return "?"
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


# --------------------------------------------------------------------------- the sweep

class SweepError(Exception):
    """A sweep that cannot start (bad arguments, rules that do not load); the message says why."""


@dataclass
class SweepOutcome:
    db: str
    sweep_id: int
    label: str
    requested: int
    stored: int         # rows of the sweep in the file now
    played: int         # games played by this run
    seconds: float
    status: str         # done | stopped | interrupted (| failed, in the runs table only)
    jobs: int
    backend: str
    rss_first_kb: int | None
    rss_last_kb: int | None
    errors: int = 0
    first_result_s: float | None = None

    @property
    def games_per_s(self) -> float:
        return self.played / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        rss = ""
        if self.rss_first_kb and self.rss_last_kb:
            rss = (f"; worker memory {self.rss_first_kb / 1024:.1f} MB after its first batch, "
                   f"{self.rss_last_kb / 1024:.1f} MB after its last")
        head = {"done": "sweep complete", "stopped": "sweep stopped early (rerun the command to resume)",
                "interrupted": "sweep interrupted (rerun the command to resume)"}[self.status]
        errs = f"; {self.errors} game(s) failed (see the error column)" if self.errors else ""
        return (f"{head}: {self.label}: {self.stored}/{self.requested} games stored in {self.db} "
                f"(sweep {self.sweep_id}); this run played {self.played} in {self.seconds:.1f} s, "
                f"{rate_text(self.games_per_s, 'game')} with {self.jobs} job(s) ({self.backend}){rss}{errs}")


def parse_bots(spec: str, players: int) -> tuple[str, ...]:
    """`random` (every seat) or `heuristic,random,search:time=0.5` (one bot spec per seat; a
    shorter list repeats its last). Each spec is checked here, before any game starts."""
    from engine.agents import SpecError, check_spec, split_specs
    kinds = split_specs(spec)
    if not kinds:
        raise SweepError("--bots needs at least one bot kind")
    for k in kinds:
        try:
            check_spec(k)
        except SpecError as e:
            raise SweepError(str(e)) from None
    if len(kinds) > players:
        raise SweepError(f"--bots names {len(kinds)} seats for {players} players")
    return tuple(kinds + [kinds[-1]] * (players - len(kinds)))


def rules_of(model: Any) -> dict:
    """What can fire in a ruleset: step names, trigger ids and events (for 'never fired' flags)."""
    triggers = sorted(tid for lst in model.triggers.values() for tid, _, _ in lst)
    return {"steps": sorted(model.steps), "triggers": triggers, "events": sorted(model.symbols.events)}


def chunk_size(remaining: int, jobs: int) -> int:
    """Games per task: small enough to balance the load and to lose little on a kill, large
    enough that shipping the task costs nothing next to playing it."""
    return max(1, min(50, remaining // max(1, jobs * 16)))


def run_sweep(combo: str, players: int | None, games: int, *, jobs: int = 1, bots: str = "random",
              rotate: bool = False, seed: int = 1, options: dict | None = None, db: str = DEFAULT_DB,
              backend: str = "local", address: str | None = None, progress: bool = True,
              stop_after: int | None = None, max_decisions: int = DEFAULT_MAX_DECISIONS,
              chunk: int | None = None, stream: TextIO | None = None,
              start: str | None = None) -> SweepOutcome:
    """Run (or resume, or extend) a sweep and store its rows in `db`. Raises SweepError when
    it cannot start. Ctrl-C stops it cleanly: what was played is committed first."""
    from engine import __version__
    from engine.base.diagnostics import Diagnostics
    from engine.model import build

    if games < 0:
        raise SweepError("--games must be 0 or more")
    if backend not in ("local", "ray"):
        raise SweepError(f"unknown backend `{backend}`; choose local or ray")
    if start is not None and start not in START_METHODS:
        raise SweepError(f"unknown start method `{start}`; choose {', '.join(START_METHODS)}")
    diags = Diagnostics()
    model = build(combo, options or {}, players, diags)
    if model is not None and players is None:
        players = model.combo.player_range[0]
        model = build(combo, options or {}, players, diags)
    if model is None or diags.errors:
        raise SweepError(f"cannot load `{combo}`:\n{diags.render()}")
    assert players is not None
    bot_kinds = parse_bots(bots, players)
    opts = dict(model.combo.options)
    spec = SweepSpec(model.combo.name, opts, players, bot_kinds, rotate, int(seed), model.fingerprint)
    store = Store(db)
    try:
        sweep_id = store.sweep_id(spec, rules_of(model), __version__)
        done = store.done(sweep_id)
        todo = [g for g in range(games) if g not in done]
        label = f"{spec.combo} {players}p {','.join(bot_kinds)}"
        size = chunk or chunk_size(len(todo), jobs)
        base = {"combo": combo, "options": opts, "players": players, "bots": list(bot_kinds), "rotate": rotate,
                "seed": int(seed), "fingerprint": model.fingerprint, "max_decisions": max_decisions}
        tasks = [{**base, "games": todo[i:i + size]} for i in range(0, len(todo), size)]
        stored_before = len([g for g in done if g < games])
        bar = Progress(games, stored_before, stream, enabled=progress)
        run_id = store.start_run(sweep_id, backend, jobs)
        if backend == "ray":
            results: Iterable = _ray_results(tasks, jobs, address)
        else:
            # This process (jobs=1) and forked workers reuse the rules compiled above.
            _MODELS.clear()
            _MODELS[_model_key(combo, opts, players)] = model
            results = _local_results(tasks, jobs, start_method(start))
        played = errors = 0
        first_rss: dict[int, int] = {}
        last_rss: dict[int, int] = {}
        pending: list[dict] = []
        status = "done"
        t0 = time.monotonic()
        first_result = None
        last_commit = t0
        try:
            for rows, pid, rss in results:
                if first_result is None:
                    first_result = time.monotonic() - t0
                first_rss.setdefault(pid, rss)
                last_rss[pid] = rss
                pending.extend(rows)
                played += len(rows)
                errors += sum(1 for r in rows if r["error"])
                bar.update(len(rows))
                now = time.monotonic()
                if len(pending) >= COMMIT_ROWS or now - last_commit >= COMMIT_SECONDS:
                    store.add_games(sweep_id, pending)
                    store.commit()
                    pending = []
                    last_commit = now
                if stop_after is not None and played >= stop_after and played < len(todo):
                    status = "stopped"
                    break
        except KeyboardInterrupt:
            status = "interrupted"
        except Exception:
            status = "failed"
            raise
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # stops the workers (pool.terminate / ray.cancel) before we write the last batch
            store.add_games(sweep_id, pending)
            store.commit()
            seconds = time.monotonic() - t0
            bar.close()
            store.finish_run(run_id, played, seconds, status, max(first_rss.values(), default=None),
                             max(last_rss.values(), default=None))
        stored = len([g for g in store.done(sweep_id) if g < games])
        return SweepOutcome(db, sweep_id, label, games, stored, played, seconds, status, jobs, backend,
                            max(first_rss.values(), default=None), max(last_rss.values(), default=None), errors,
                            first_result)
    finally:
        store.close()


# --------------------------------------------------------------------------- command line

def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate", help="run many bot games in parallel and store the results (SQLite)", epilog=EPILOG,
        description="Play G bot games of COMBO in parallel processes (or on a Ray cluster) and store one row per "
        "game in an SQLite file. Game g uses a seed derived from (--seed, g): the rows are the same whatever "
        "--jobs is. Rerunning the same command with the same --db resumes an interrupted sweep (or extends it "
        "to more games). See docs/simulate.md; read the results with `daimyo report FILE`.")
    p.add_argument("combo", metavar="COMBO")
    p.add_argument("--players", type=int, default=None, help="number of players (default: the ruleset's minimum)")
    p.add_argument("--games", type=int, required=True, metavar="G", help="number of games in the sweep")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="J",
                   help="worker processes (default: the CPU count; with ray: tasks in flight, default: the "
                   "cluster's CPUs)")
    p.add_argument("--bots", default="random", metavar="KIND[,KIND...]",
                   help="bot for every seat, or one per seat: random, heuristic, search, with settings as in "
                   "search:time=0.5,rollout=heuristic (see docs/agents.md; default random)")
    p.add_argument("--rotate", action="store_true",
                   help="rotate the --bots list one seat per game, so each bot plays each seat equally often")
    p.add_argument("--seed", type=int, default=1, help="sweep seed; game g uses a seed derived from (seed, g)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="ruleset option, e.g. side=moon")
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"SQLite results file (default {DEFAULT_DB})")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local processes (default) or a Ray cluster (pip install 'daimyo[ray]')")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="with --backend ray: the cluster to join (e.g. auto, or host:6379); default: start a local Ray")
    p.add_argument("--max-decisions", type=int, default=DEFAULT_MAX_DECISIONS, metavar="N",
                   help="a game still running after N decisions is stored as unfinished "
                   f"(default {DEFAULT_MAX_DECISIONS:,})")
    p.add_argument("--chunk", type=int, default=None, metavar="N", help="games per task (default: automatic)")
    p.add_argument("--start-method", choices=START_METHODS, default=None,
                   help="how worker processes start (default: fork on Linux, else spawn)")
    p.add_argument("--stop-after", type=int, default=None, metavar="N", help=argparse.SUPPRESS)  # tests: stop early
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_format_option(p)
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the old spelling of --format json
    p.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    jobs = args.jobs if args.jobs is not None else (0 if args.backend == "ray" else (os.cpu_count() or 1))
    if args.backend == "local" and jobs < 1:
        print("daimyo: error: --jobs must be 1 or more", file=sys.stderr)
        return 2
    if args.chunk is not None and args.chunk < 1:
        print("daimyo: error: --chunk must be 1 or more", file=sys.stderr)
        return 2
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _sigterm)  # `kill` commits what was played, like Ctrl-C
    try:
        outcome = run_sweep(args.combo, args.players, args.games, jobs=jobs, bots=args.bots, rotate=args.rotate,
                            seed=args.seed, options=parse_options(args.option), db=args.db, backend=args.backend,
                            address=args.address, progress=not args.no_progress, stop_after=args.stop_after,
                            max_decisions=args.max_decisions, chunk=args.chunk, start=args.start_method)
    except SweepError as e:
        print(f"daimyo: {e}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json or args.format == "json":
        print(json.dumps({"db": outcome.db, "sweep": outcome.sweep_id, "stored": outcome.stored,
                          "requested": outcome.requested, "played": outcome.played,
                          "seconds": round(outcome.seconds, 3), "games_per_s": round(outcome.games_per_s, 2),
                          "jobs": outcome.jobs, "backend": outcome.backend, "status": outcome.status,
                          "errors": outcome.errors, "rss_first_kb": outcome.rss_first_kb,
                          "rss_last_kb": outcome.rss_last_kb}))
    else:
        print(outcome.summary())
    return 130 if outcome.status == "interrupted" else 0


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
