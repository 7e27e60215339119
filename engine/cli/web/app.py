"""The ASGI app: the lobby, the game page, the replay viewer, and one websocket per page.

A page's first websocket message names its token; the token alone decides what the page may
see and do (a seat, the hot-seat table, a spectator). After that the server pushes the game
as that seat may see it whenever it changes, and accepts small JSON messages:
`{"type": "act", "n": decision, "i": option}`, `confirm`, `reset` (secret choices) and, at a
hot-seat table, `become` (the next person has taken the screen). Anything else, anything too
large or not JSON, and any stale or illegal action gets an `error` message; the game is
untouched.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from engine.base.diagnostics import Diagnostics
from engine.cli.web.hub import Hub, LobbyError
from engine.cli.web.present import decision_data, dumps, seat_account, seat_state, table_data
from engine.cli.web.replays import Replays
from engine.cli.web.rooms import Room
from engine.loading.package import bundled_ids, bundled_root, read_package
from rulesets import DEFAULT_RULESET

STATIC = resources.files("engine.cli.web") / "static"
MAX_MESSAGE = 2048          # bytes in one websocket message from a page
MAX_BODY = 8 * 1024 * 1024  # bytes in an uploaded save or log


class Page:
    """One open page: its role, the seat whose eyes it is, and how much of the account it has."""

    def __init__(self, room: Room, role: tuple):
        self.room = room
        self.role = role
        self.seat: str | None = role[1] if role[0] == "seat" else None
        self.account_seat: Any = False  # the seat the page's account was redacted for
        self.sent_log = 0
        self.room_error: str | None = None  # the game stopped (a broken ruleset): shown on the page

    def seats(self) -> list[str]:
        if self.role[0] == "seat":
            return [self.role[1]]
        return self.room.humans if self.role[0] == "table" else []

    def message(self) -> dict:
        """The page's next update (call with the room's lock held)."""
        room = self.room
        handover = None
        if self.role[0] == "table":
            d = room.game.decision
            if d is not None and d.player in room.humans and d.player != self.seat:
                handover, self.seat = d.player, None  # nothing secret until the next person says so
        seat = self.seat
        draft = room.drafts.get(seat) if seat else None
        msg = {"type": "state", "you": seat, "handover": handover,
               **seat_state(room.game, seat, decision_for=seat is not None and draft is None)}
        if draft is not None and not draft.review:
            # Only the next question of the draft: its state may already show what follows the
            # choices (a reveal, a draw), which the seat must not see before it confirms them.
            msg["decision"] = decision_data(draft.game, draft.game.decision, seat)
        if self.account_seat != seat:
            self.account_seat, self.sent_log, reset = seat, 0, True
        else:
            reset = False
        log = room.game.log
        msg["account"] = {"reset": reset, "lines": seat_account(room.game, seat, self.sent_log)}
        self.sent_log = len(log)
        msg["draft"] = {"choices": [label for _, label in draft.choices], "review": draft.review} if draft else None
        msg["error"] = self.room_error
        return msg


def create_app(hub: Hub) -> Starlette:
    replays = Replays()

    async def index(request: Request) -> Response:
        return FileResponse(str(STATIC / "lobby.html"))

    async def game_page(request: Request) -> Response:
        return FileResponse(str(STATIC / "game.html"))

    async def replay_page(request: Request) -> Response:
        return FileResponse(str(STATIC / "replay.html"))

    async def rulesets(request: Request) -> Response:
        out = []
        for pid in bundled_ids():
            pkg = read_package(bundled_root() / pid, Diagnostics())
            if pkg is not None:
                out.append({"id": pkg.id, "name": pkg.name, "players": list(pkg.players), "extends": pkg.extends,
                            "default": pkg.id == DEFAULT_RULESET,
                            "options": {k: {"values": v.get("values"), "default": v.get("default")}
                                        for k, v in pkg.options.items()}})
        return JSONResponse(out)

    async def body_json(request: Request) -> Any:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise LobbyError(f"too large (more than {MAX_BODY // 1024 // 1024} MB)")
        try:
            return json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError):
            raise LobbyError("not JSON")

    def links(room: Room) -> dict:
        return {"id": room.id, "links": {role: f"/g/{room.id}#{tok}" for role, tok in room.links().items()},
                "seats": room.kinds, "players": room.players}

    async def create(request: Request) -> Response:
        try:
            body = await body_json(request)
            if not isinstance(body, dict):
                raise LobbyError("send a JSON object: {combo, players, options, seats}")
            players = body.get("players")
            if players is not None and (not isinstance(players, int) or isinstance(players, bool)):
                raise LobbyError("players must be a whole number")
            room = await asyncio.to_thread(hub.create, body.get("combo"), players, body.get("options") or {},
                                           body.get("seats") or [], int(body.get("seed") or 1))
        except (LobbyError, ValueError, TypeError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        hub.start(room)
        return JSONResponse(links(room))

    async def import_save(request: Request) -> Response:
        try:
            body = await body_json(request)
            room = await asyncio.to_thread(hub.open_save, body)
        except LobbyError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        hub.start(room)
        return JSONResponse(links(room))

    async def export_save(request: Request) -> Response:
        room = hub.rooms.get(request.path_params["gid"])
        if room is None or room.role(request.query_params.get("t")) != ("admin",):
            return JSONResponse({"error": "no such game, or not the game's admin link"}, status_code=403)
        return Response(json.dumps(hub.export(room)), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="daimyo-{room.id}.json"'})

    async def export_log(request: Request) -> Response:
        room = hub.rooms.get(request.path_params["gid"])
        if room is None or room.role(request.query_params.get("t")) != ("admin",):
            return JSONResponse({"error": "no such game, or not the game's admin link"}, status_code=403)
        from engine.run.state import canonical
        with room.lock:
            text = "".join(canonical(e) + "\n" for e in room.game.log)
        return Response(text, media_type="application/x-ndjson")

    async def open_replay(request: Request) -> Response:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                return JSONResponse({"error": "the log is too large"}, status_code=400)
        try:
            rid, total = await asyncio.to_thread(replays.open, raw.decode("utf-8", "replace"), hub.model)
        except LobbyError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return JSONResponse({"id": rid, "decisions": total})

    async def replay_step(request: Request) -> Response:
        try:
            k = int(request.path_params["k"])
            msg = await asyncio.to_thread(replays.at, request.path_params["rid"], k)
        except (LobbyError, ValueError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return Response(dumps(msg), media_type="application/json")

    async def socket(ws: WebSocket) -> None:
        await ws.accept()
        room = hub.rooms.get(ws.path_params["gid"])
        try:
            hello = json.loads(await asyncio.wait_for(ws.receive_text(), 20))
        except (TimeoutError, ValueError, WebSocketDisconnect, KeyError):
            await ws.close(4400)
            return
        role = room.role(hello.get("token")) if room and isinstance(hello, dict) else None
        if role is None:
            await ws.send_text(dumps({"type": "error", "fatal": True,
                                      "message": "this link is not valid: no such game, or a wrong token"}))
            await ws.close(4403)
            return
        page = Page(room, role)
        changed = asyncio.Event()
        loop = asyncio.get_running_loop()
        listener = lambda: loop.call_soon_threadsafe(changed.set)  # noqa: E731
        room.listeners.append(listener)
        await ws.send_text(dumps({"type": "hello", "role": role[0], "seats": page.seats(), "game": room.id,
                                  **table_data(room.model, *room.table_seats())}))
        changed.set()

        async def sender() -> None:
            while True:
                await changed.wait()
                changed.clear()
                page.room_error = hub.errors.get(room.id)
                msg = await asyncio.to_thread(_locked, room, page.message)
                await ws.send_text(dumps(msg))

        task = asyncio.create_task(sender())
        try:
            while True:
                text = await ws.receive_text()
                reply = await asyncio.to_thread(handle, room, page, text)
                if reply:
                    await ws.send_text(dumps({"type": "error", "message": reply}))
                elif reply is None:
                    changed.set()
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            task.cancel()
            with contextlib.suppress(ValueError):
                room.listeners.remove(listener)

    routes = [Route("/", index), Route("/g/{gid}", game_page), Route("/replay", replay_page),
              Route("/api/rulesets", rulesets), Route("/api/games", create, methods=["POST"]),
              Route("/api/games/import", import_save, methods=["POST"]),
              Route("/api/games/{gid}/save", export_save), Route("/api/games/{gid}/log", export_log),
              Route("/api/replays", open_replay, methods=["POST"]),
              Route("/api/replays/{rid}/{k:int}", replay_step),
              WebSocketRoute("/ws/{gid}", socket),
              Mount("/static", StaticFiles(directory=str(STATIC)), name="static")]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for room in hub.rooms.values():  # resumed games: their bots play on
            hub.start(room)
        yield
        await hub.stop()

    return Starlette(routes=routes, lifespan=lifespan)


def _locked(room: Room, fn: Any) -> Any:
    with room.lock:
        return fn()


def handle(room: Room, page: Page, text: str) -> str | None:
    """One message from a page: an error to send back, or None when it was taken."""
    if len(text) > MAX_MESSAGE:
        return f"message refused: larger than {MAX_MESSAGE} bytes"
    try:
        msg = json.loads(text)
    except ValueError:
        return "message refused: not JSON"
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        return "message refused: expected an object with a `type`"
    kind = msg["type"]
    if kind == "become":
        if page.role[0] != "table" or msg.get("seat") not in room.humans:
            return "message refused: this page cannot take that seat"
        with room.lock:
            d = room.game.decision
            if d is None or d.player != msg["seat"]:
                return f"it is not {msg['seat']}'s turn"
            page.seat = msg["seat"]
        return None
    if kind not in ("act", "confirm", "reset"):
        return f"message refused: unknown type `{kind[:20]}`"
    if page.seat is None:
        return "this page watches the game: it cannot decide" if page.role[0] != "table" \
            else "hand the screen over first"
    if kind == "act":
        return room.act(page.seat, msg.get("n"), msg.get("i"))
    if kind == "confirm":
        return room.confirm(page.seat)
    return room.reset(page.seat)
