"""The game log: what happened, as JSON-ready entries (docs/log-format.md).

`Recorder` keeps the entries and hands each to a listener (the terminal's printer, a log file
writer). A silent game (a sweep, a bot's lookahead) records only its start and end, but still
passes `say` lines to a listener. `player_log` is the log as one player may read it.
"""
from __future__ import annotations

from collections.abc import Callable

from engine.run.views import hide


class Recorder:
    __slots__ = ("_on_log", "entries", "logging", "silent")

    def __init__(self, entries: list[dict] | None = None, on_log: Callable[[dict], None] | None = None,
                 logging: bool = True):
        self.entries: list[dict] = entries if entries is not None else []
        self.logging = logging  # fixed for the game's life: set only here
        self.on_log = on_log

    @property
    def on_log(self) -> Callable[[dict], None] | None:
        return self._on_log

    @on_log.setter
    def on_log(self, listener: Callable[[dict], None] | None) -> None:
        self._on_log = listener
        # No log and no listener: rules may skip building account text. An attribute, not a
        # property: rules ask it for every line of account text they might build.
        self.silent = not self.logging and listener is None

    def record(self, entry: dict) -> None:
        if not self.logging and entry["t"] not in ("start", "end"):
            if entry["t"] == "say" and self._on_log is not None:
                self._on_log(entry)
            return
        self.entries.append(entry)
        if self._on_log is not None:
            self._on_log(entry)


def player_log(log: list[dict], player: str) -> list[dict]:
    """The log as `player` may see it: other players' secret choices, shuffled orders and
    state hashes (which would let a player test guesses about hidden values) removed."""
    out = []
    for e in log:
        e = dict(e)
        e.pop("state", None)
        if e["t"] == "decision" and e.get("secret") and e["player"] != player:
            e["choice"] = "?"
        elif e["t"] == "chance" and e["kind"] == "shuffle":
            e["value"] = hide(e["value"])
        out.append(e)
    return out
