"""The replay viewer's server side: a log opened, and the game at any decision of it.

A log (docs/log-format.md) is replayed from its `start` line by applying each decision's
choice; the board at decision k is the game just before decision k+1 was taken, as a
spectator sees it (a log is the referee's copy: the viewer still shows only public values).
"""
from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from dsl.runtime import RuleError
from engine.cli.web.hub import LobbyError
from engine.cli.web.present import account_lines, seat_state, table_data
from engine.run.game import Game, IllegalMove
from engine.run.log import player_log

MAX_REPLAYS = 50


class Replays:
    def __init__(self) -> None:
        self.open_logs: dict[str, tuple[Any, dict, list]] = {}  # id -> (model, start entry, choices)

    def open(self, text: str, model_for: Callable[..., Any]) -> tuple[str, int]:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            entries = [json.loads(ln) for ln in lines]
        except ValueError as e:
            raise LobbyError(f"not a daimyo log (a line is not JSON: {e})")
        if not entries or not isinstance(entries[0], dict) or entries[0].get("t") != "start":
            raise LobbyError("not a daimyo log: its first line is not a `start` entry")
        start = entries[0]
        try:
            model = model_for(start["ruleset"], dict(start["options"]), len(start["players"]))
        except (KeyError, TypeError) as e:
            raise LobbyError(f"the log's start line is damaged ({e})")
        choices = [e["choice"] for e in entries if isinstance(e, dict) and e.get("t") == "decision"]
        if any(c == "?" for c in choices):
            raise LobbyError("this is one player's copy of a log (secret choices removed): it cannot be replayed")
        if len(self.open_logs) >= MAX_REPLAYS:
            self.open_logs.pop(next(iter(self.open_logs)))
        rid = secrets.token_hex(6)
        self.open_logs[rid] = (model, start, choices)
        return rid, len(choices)

    def at(self, rid: str, k: int) -> dict:
        """The game after the first `k` decisions, as a spectator sees it."""
        if rid not in self.open_logs:
            raise LobbyError("no such replay (open the log again)")
        model, start, choices = self.open_logs[rid]
        k = max(0, min(k, len(choices)))
        try:
            game = Game.new(model, len(start["players"]), int(start.get("seed", 0)))
            for c in choices[:k]:
                game.apply(c)
        except (IllegalMove, RuleError) as e:
            raise LobbyError(f"the log does not replay under these rules: {e}")
        msg = {"type": "state", "you": None, "handover": None, **seat_state(game, None, decision_for=False),
               "account": {"reset": True, "lines": account_lines(player_log(game.log, None))},  # type: ignore[arg-type]
               "draft": None, "k": k, "total": len(choices)}
        msg["table"] = table_data(model, list(game.state["players"]), ["?"] * len(game.state["players"]))
        return msg
