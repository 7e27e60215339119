"""The hub: every room on the server, their bots, and their storage.

Rooms are created from a combo, options, a player count and seat kinds, or from a saved game
(a terminal save opens here too). Each room gets a bot runner: an asyncio task that lets the
bots decide, one decision at a time in a worker thread (so pages stay live while a bot
thinks), waits `bot_delay` seconds between moves so people can watch, and stores the game
after every change so a restarted server resumes it.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from typing import Any

from dsl.runtime import RuleError
from engine.agents import AGENTS
from engine.base.diagnostics import Diagnostics
from engine.cli.web.rooms import HUMAN, Room, new_token
from engine.cli.web.store import Store
from engine.model import Model, build
from engine.run.game import Game

MAX_ROOMS = 500


class LobbyError(Exception):
    """A game that cannot be created as asked (the message says why, in one line)."""


def check_kinds(kinds: Any, players: int) -> list[str]:
    if not isinstance(kinds, list) or not all(isinstance(k, str) and k for k in kinds):
        raise LobbyError("seats must be a list of seat kinds")
    kinds = [k.strip() for k in kinds] + [HUMAN] * (players - len(kinds))
    if len(kinds) != players:
        raise LobbyError(f"{len(kinds)} seats named for {players} players")
    for k in kinds:
        if k != HUMAN and k.partition(":")[0] not in AGENTS:
            raise LobbyError(f"unknown seat `{k}`: choose from human, {', '.join(AGENTS)}")
    return kinds


class Hub:
    def __init__(self, store: Store, bot_delay: float = 0.3):
        self.store = store
        self.bot_delay = bot_delay
        self.rooms: dict[str, Room] = {}
        self.models: dict[tuple, Model] = {}
        self.wakers: dict[str, asyncio.Event] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.errors: dict[str, str] = {}

    # ---- models ----

    def model(self, combo: str, options: dict, players: int | None) -> Model:
        key = (combo, json.dumps(options, sort_keys=True), players)
        if key not in self.models:
            diags = Diagnostics()
            model = build(combo, options, players, diags)
            if model is None:
                first = diags.errors[0] if diags.errors else None
                raise LobbyError(first.message if first else f"cannot build `{combo}`")
            self.models[key] = model
        return self.models[key]

    # ---- rooms ----

    def _room(self, model: Model, game: Game, kinds: list[str], seed: int, gid: str | None = None,
              tokens: dict | None = None) -> Room:
        if len(self.rooms) >= MAX_ROOMS:
            raise LobbyError(f"the server already holds {MAX_ROOMS} games")
        gid = gid or secrets.token_hex(4)
        room = Room(gid, model, game, kinds, tokens or {}, seed)
        if tokens is None:  # one link per person (a person may play several hands)
            room.tokens = {new_token(): ("seat", p) for p in room.humans}
            room.tokens.update({new_token(): ("table",), new_token(): ("watch",), new_token(): ("admin",)})
        self.rooms[gid] = room
        return room

    def create(self, combo: str, players: int | None, options: dict, kinds: Any, seed: int = 1) -> Room:
        if not isinstance(combo, str) or not combo:
            raise LobbyError("name a ruleset (e.g. shogun, or shogun+tennos-court)")
        if not isinstance(options, dict):
            raise LobbyError("options must be a map of name to value")
        model = self.model(combo, options, players)
        players = players or model.combo.player_range[0]
        if model.combo.players is None:
            model = self.model(combo, options, players)
        kinds = check_kinds(kinds, players)
        try:
            game = Game.new(model, players, seed)
        except RuleError as e:
            raise LobbyError(f"the rules failed at the start: {e}")
        room = self._room(model, game, kinds, seed)
        self.persist(room)
        return room

    def open_save(self, save: Any, kinds: Any = None) -> Room:
        """A room for a game saved at the terminal (or downloaded from here). People stay people:
        the save's `seats` (when it has them) say which seats are bots; otherwise all are people."""
        if not isinstance(save, dict) or not {"ruleset", "options", "players"} <= set(save):
            raise LobbyError("not a daimyo save (it needs ruleset, options and players)")
        try:
            players = int(save["players"])
            model = self.model(save["ruleset"], dict(save["options"]), players)
            game = Game.from_save(model, save)
        except (TypeError, ValueError) as e:
            raise LobbyError(f"cannot open this save: {e}")
        kinds = check_kinds(kinds if kinds is not None else save.get("seats") or [], players)
        room = self._room(model, game, kinds, int(save.get("seed", 1)) if isinstance(save.get("seed"), int) else 1)
        self.persist(room)
        return room

    def export(self, room: Room) -> dict:
        """The room's game as a terminal save, with its seat kinds."""
        with room.lock:
            save = room.game.save()
        save["seats"] = list(room.kinds)
        return save

    def meta(self, room: Room) -> dict:
        return {"combo": room.model.combo.source, "options": room.model.combo.options,
                "players": len(room.players), "kinds": room.kinds,
                "tokens": {t: list(r) for t, r in room.tokens.items()}}

    def persist(self, room: Room) -> None:
        with room.lock:  # a consistent copy; the (slower) write happens outside the game's lock
            save = room.game.save()
            fresh = room.game.log[room.saved_log:]
            start = room.saved_log
            room.saved_log += len(fresh)
        self.store.put(room.id, self.meta(room), save, fresh, start)

    def resume(self) -> int:
        """Reopen every stored game (after a restart); returns how many."""
        n = 0
        for gid, meta, save, log in self.store.all():
            try:
                model = self.model(meta["combo"], meta["options"], meta["players"])
                game = Game.from_save(model, save)
            except (LobbyError, ValueError, KeyError) as e:
                self.errors[gid] = f"cannot resume game {gid}: {e}"
                continue
            game.log = log
            room = self._room(model, game, meta["kinds"], 1, gid, {t: tuple(r) for t, r in meta["tokens"].items()})
            room.saved_log = len(log)
            n += 1
        return n

    # ---- bots ----

    def start(self, room: Room) -> None:
        """Start the room's bot runner (in the running event loop)."""
        loop = asyncio.get_running_loop()
        wake = self.wakers[room.id] = asyncio.Event()
        room.listeners.append(lambda: loop.call_soon_threadsafe(wake.set))
        self.tasks[room.id] = loop.create_task(self._run(room, wake))
        wake.set()

    async def _run(self, room: Room, wake: asyncio.Event) -> None:
        while True:
            await wake.wait()
            wake.clear()
            try:
                stored = time.monotonic()
                while room.bot_turn():
                    await asyncio.to_thread(room.step_bot)
                    if time.monotonic() - stored > 1.0:  # during a long run of bot moves, about once a second
                        await asyncio.to_thread(self.persist, room)
                        stored = time.monotonic()
                    if self.bot_delay:
                        await asyncio.sleep(self.bot_delay)
                await asyncio.to_thread(self.persist, room)
            except RuleError as e:  # a broken ruleset: stop this game, say why, keep the server
                self.errors[room.id] = f"the rules failed during play: {e}"
                room._changed()
                return

    async def stop(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        for task in self.tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
