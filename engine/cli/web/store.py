"""Games that outlive the server: each room's seats, tokens, save and log, in SQLite.

A room's state is stored as `Game.save()` (the same JSON a terminal save holds, plus its
`seats`), and its log entry by entry, appended as the game goes, so the account survives a
restart without rewriting it each move.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

from engine.run.state import canonical

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (id TEXT PRIMARY KEY, meta TEXT NOT NULL, save TEXT NOT NULL,
                                  created REAL NOT NULL DEFAULT (julianday('now')));
CREATE TABLE IF NOT EXISTS log (game TEXT NOT NULL, i INTEGER NOT NULL, entry TEXT NOT NULL,
                                PRIMARY KEY (game, i));
"""


class Store:
    """A SQLite file of games (":memory:" keeps them for this process only)."""

    def __init__(self, path: str):
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            fresh = not Path(path).exists()
        self.db = sqlite3.connect(path, check_same_thread=False)
        if path != ":memory:" and fresh:
            os.chmod(path, 0o600)  # it holds every seat's token and secrets
        if path != ":memory:":  # a crash may lose the last moves, never mix a state with another's log
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()

    def put(self, gid: str, meta: dict, save: dict, fresh: list[dict], start: int) -> None:
        """Store the game's state and its new log entries (`fresh`, numbered from `start`), in one
        transaction: the state and the log on disk always belong together."""
        with self.lock, self.db:
            self.db.execute("INSERT INTO games(id, meta, save) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE "
                            "SET meta = excluded.meta, save = excluded.save", (gid, json.dumps(meta), json.dumps(save)))
            self.db.executemany("INSERT OR REPLACE INTO log(game, i, entry) VALUES (?, ?, ?)",
                                [(gid, i, canonical(e)) for i, e in enumerate(fresh, start)])

    def all(self) -> list[tuple[str, dict, dict, list[dict]]]:
        """Every stored game: (id, meta, save, log), oldest first."""
        with self.lock:
            rows = self.db.execute("SELECT id, meta, save FROM games ORDER BY created, id").fetchall()
            out = []
            for gid, meta, save in rows:
                log = [json.loads(e) for (e,) in self.db.execute(
                    "SELECT entry FROM log WHERE game = ? ORDER BY i", (gid,))]
                out.append((gid, json.loads(meta), json.loads(save), log))
        return out

    def close(self) -> None:
        self.db.close()
