"""The results store of simulation sweeps: one SQLite file, no server.

A *sweep* is what `daimyo simulate` was asked for (combo, options, players, bots, seed);
its games are numbered 0..G-1 and each game's seed is derived from (seed, number), so a
game row depends only on the sweep and its number, never on how many processes played it.
Rerunning the same command against the same file skips the games already stored: an
interrupted sweep resumes, and asking for more games extends it.

Schema (version 1, documented in docs/simulate.md):

    meta(key PRIMARY KEY, value)                    schema_version, created_by
    sweeps(id, key UNIQUE, combo, options, players, bots, rotate, seed, fingerprint,
           rules, created, engine_version)
    games(sweep_id, game, seed, seats, scores, tiebreaks, ranking, winners, length,
          counts, error, PRIMARY KEY (sweep_id, game))
    runs(id, sweep_id, backend, jobs, started, finished, games, seconds, status,
         rss_first_kb, rss_last_kb)
    VIEW results: games joined with their sweep's combo, options and players.

JSON columns hold canonical JSON (sorted keys, no spaces), so equal rows are equal text.
Writes are batched by the caller (`add_games` then `commit`); the file is in WAL mode, so
`daimyo report` can read it while a sweep is writing.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from engine.run.chance import SEEDING

SCHEMA_VERSION = 1

GAME_COLUMNS = ("game", "seed", "seats", "scores", "tiebreaks", "ranking", "winners", "length", "counts", "error")
JSON_COLUMNS = ("seats", "scores", "tiebreaks", "ranking", "winners", "counts")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,           -- hash of everything that determines the rows
    combo TEXT NOT NULL,                -- as resolved: base+expansions in load order
    options TEXT NOT NULL,              -- JSON map, every option with its resolved value
    players INTEGER NOT NULL,
    bots TEXT NOT NULL,                 -- JSON list of bot kinds, one per seat (before rotation)
    rotate INTEGER NOT NULL,            -- 1: game g seats bots[(seat + g) % players]
    seed INTEGER NOT NULL,              -- the sweep seed (--seed)
    fingerprint TEXT NOT NULL,          -- the resolved ruleset's fingerprint
    rules TEXT NOT NULL,                -- JSON {steps, triggers, events}: what could fire
    created REAL NOT NULL,
    engine_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
    game INTEGER NOT NULL,              -- 0-based game number within the sweep
    seed INTEGER NOT NULL,              -- the game's own seed, derived from (sweep seed, game)
    seats TEXT NOT NULL,                -- JSON list: bot kind of P1, P2, ...
    scores TEXT,                        -- JSON map player -> score (null if the game failed)
    tiebreaks TEXT,                     -- JSON map player -> list of tie-break values
    ranking TEXT,                       -- JSON list of players, best first
    winners TEXT,                       -- JSON list (several when tied)
    length INTEGER NOT NULL,            -- decisions taken (by bots) in the game
    counts TEXT NOT NULL,               -- JSON map: step / trigger:id / event:name / decision:step -> times
    error TEXT,                         -- null, or why the game did not finish
    PRIMARY KEY (sweep_id, game)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
    backend TEXT NOT NULL,
    jobs INTEGER NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    games INTEGER NOT NULL DEFAULT 0,   -- games played by this run
    seconds REAL,
    status TEXT NOT NULL,               -- running | done | stopped | interrupted | failed
    rss_first_kb INTEGER,               -- largest worker RSS after its first batch
    rss_last_kb INTEGER                 -- largest worker RSS after its last batch
);
CREATE VIEW IF NOT EXISTS results AS
    SELECT s.combo, s.options, s.players, s.id AS sweep_id, g.game, g.seed, g.seats, g.scores,
           g.tiebreaks, g.ranking, g.winners, g.length, g.counts, g.error
    FROM games g JOIN sweeps s ON s.id = g.sweep_id;
"""


def dumps(value: Any) -> str:
    """Canonical JSON: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class SweepSpec:
    """Everything that determines a sweep's rows."""

    combo: str
    options: dict
    players: int
    bots: tuple[str, ...]
    rotate: bool
    seed: int
    fingerprint: str

    @property
    def key(self) -> str:
        # SEEDING: games stored under an older seed derivation are other games, not this sweep's
        blob = dumps([self.combo, self.options, self.players, list(self.bots), self.rotate, self.seed,
                      self.fingerprint, SEEDING])
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass
class Sweep:
    id: int
    combo: str
    options: dict
    players: int
    bots: list[str]
    rotate: bool
    seed: int
    fingerprint: str
    rules: dict
    games: int  # rows stored

    @property
    def label(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        bots = ",".join(self.bots) if len(set(self.bots)) > 1 else self.bots[0]
        return f"{self.combo}{f' [{opts}]' if opts else ''} {self.players}p {bots}{' rotated' if self.rotate else ''}"


class Store:
    """An open results file. Not shared between processes: only the sweep's parent writes."""

    def __init__(self, path: str, readonly: bool = False):
        self.path = path
        if readonly:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
            return
        self.db = sqlite3.connect(path, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_DDL)
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema_version', ?), ('created_by', 'daimyo simulate')",
                            (str(SCHEMA_VERSION),))
            self.db.commit()
        elif int(row[0]) != SCHEMA_VERSION:
            raise ValueError(f"{path}: results schema version {row[0]}, this daimyo writes {SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    # ---- writing ----

    def sweep_id(self, spec: SweepSpec, rules: dict, engine_version: str) -> int:
        """The id of the sweep `spec`, created if new (two processes may race here: both get one id)."""
        self.db.execute(
            "INSERT OR IGNORE INTO sweeps (key, combo, options, players, bots, rotate, seed, fingerprint, rules, "
            "created, engine_version) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (spec.key, spec.combo, dumps(spec.options), spec.players, dumps(list(spec.bots)), int(spec.rotate),
             spec.seed, spec.fingerprint, dumps(rules), time.time(), engine_version))
        self.db.commit()
        return int(self.db.execute("SELECT id FROM sweeps WHERE key=?", (spec.key,)).fetchone()[0])

    def done(self, sweep_id: int) -> set[int]:
        """Game numbers already stored for a sweep."""
        return {r[0] for r in self.db.execute("SELECT game FROM games WHERE sweep_id=?", (sweep_id,))}

    def add_games(self, sweep_id: int, rows: Iterable[dict]) -> int:
        """Stage game rows (dicts as produced by tools.simulate.play_game); `commit` writes them."""
        values = [(sweep_id, *[dumps(r[c]) if c in JSON_COLUMNS and r[c] is not None else r[c]
                               for c in GAME_COLUMNS]) for r in rows]
        self.db.executemany(f"INSERT OR IGNORE INTO games (sweep_id, {', '.join(GAME_COLUMNS)}) "
                            f"VALUES ({', '.join('?' * (len(GAME_COLUMNS) + 1))})", values)
        return len(values)

    def commit(self) -> None:
        self.db.commit()

    def start_run(self, sweep_id: int, backend: str, jobs: int) -> int:
        cur = self.db.execute("INSERT INTO runs (sweep_id, backend, jobs, started, status) VALUES (?,?,?,?,?)",
                              (sweep_id, backend, jobs, time.time(), "running"))
        self.db.commit()
        return int(cur.lastrowid)

    def finish_run(self, run_id: int, games: int, seconds: float, status: str,
                   rss_first_kb: int | None, rss_last_kb: int | None) -> None:
        self.db.execute("UPDATE runs SET finished=?, games=?, seconds=?, status=?, rss_first_kb=?, rss_last_kb=? "
                        "WHERE id=?", (time.time(), games, seconds, status, rss_first_kb, rss_last_kb, run_id))
        self.db.commit()

    # ---- reading ----

    def sweeps(self) -> list[Sweep]:
        out = []
        for r in self.db.execute(
                "SELECT s.id, s.combo, s.options, s.players, s.bots, s.rotate, s.seed, s.fingerprint, s.rules, "
                "(SELECT count(*) FROM games g WHERE g.sweep_id = s.id) FROM sweeps s ORDER BY s.id"):
            out.append(Sweep(r[0], r[1], json.loads(r[2]), r[3], json.loads(r[4]), bool(r[5]), r[6], r[7],
                             json.loads(r[8]), r[9]))
        return out

    def games(self, sweep_id: int) -> Iterator[dict]:
        """The stored rows of a sweep in game order, JSON columns decoded."""
        cur = self.db.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE sweep_id=? ORDER BY game",
                              (sweep_id,))
        for r in cur:
            row = dict(zip(GAME_COLUMNS, r, strict=True))
            for c in JSON_COLUMNS:
                if row[c] is not None:
                    row[c] = json.loads(row[c])
            yield row

    def raw_games(self, sweep_id: int) -> list[tuple]:
        """The stored rows exactly as text, in game order (for comparing two files)."""
        return list(self.db.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE sweep_id=? ORDER BY game",
                                    (sweep_id,)))

    def runs(self, sweep_id: int) -> list[dict]:
        cols = ("backend", "jobs", "started", "finished", "games", "seconds", "status", "rss_first_kb", "rss_last_kb")
        return [dict(zip(cols, r, strict=True)) for r in self.db.execute(
            f"SELECT {', '.join(cols)} FROM runs WHERE sweep_id=? ORDER BY id", (sweep_id,))]
