"""The game log: what happened, as JSON-ready entries (docs/log-format.md).

`Recorder` keeps the entries and hands each to a listener (the terminal's printer, a log file
writer). A silent game (a sweep, a bot's lookahead) records only its start and end, but still
passes `say` lines to a listener. `player_log` is the log as one player may read it.
"""
from __future__ import annotations

from collections.abc import Callable

from engine.run.views import hide


class Recorder:
    __slots__ = ("entries", "logging", "on_log")

    def __init__(self, entries: list[dict] | None = None, on_log: Callable[[dict], None] | None = None,
                 logging: bool = True):
        self.entries: list[dict] = entries if entries is not None else []
        self.on_log = on_log
        self.logging = logging

    @property
    def silent(self) -> bool:
        """No log and no listener: rules may skip building account text."""
        return not self.logging and self.on_log is None

    def record(self, entry: dict) -> None:
        if not self.logging and entry["t"] not in ("start", "end"):
            if entry["t"] == "say" and self.on_log is not None:
                self.on_log(entry)
            return
        self.entries.append(entry)
        if self.on_log is not None:
            self.on_log(entry)


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
