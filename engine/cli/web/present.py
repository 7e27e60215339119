"""What a page is sent: the board's drawing data, and the game as one seat may see it.

Everything here reads the game through its narrow interface (`view`, `decision`,
`player_log`) and the ruleset's `display` section; nothing names a game. A seat's payload is
built only from `game.view(seat)` and the log as redacted for that seat, so another seat's
secrets cannot reach it. What a game wants shown is declared in `display` (docs/ruleset-format.md):
`board.owner`/`board.fields` (what a space shows), `counters` (a player's public panel),
`own` (a seat's private fields: hand, plan), `zones` (the table's other zones) and `names`.
"""
from __future__ import annotations

import json
from typing import Any

from engine.cli.human import _show as option_text
from engine.cli.human import status_line
from engine.model import PLAYER_KIND, Model
from engine.model.layout import compute_layout, region_colors, separate
from engine.run.game import Decision, Game
from engine.run.state import controller

PLAYER_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2",
                 "#111111", "#bcbd22"]
BOX_W, BOX_H = 118, 62  # room a space needs on the page (name, owner, a few lines of pieces)


def display_of(model: Model) -> dict:
    """The ruleset's `display` section as plain data (the keys the web page reads)."""
    return model.resolved.data.get("display") or {}


_BOARDS: dict[int, tuple[Model, dict | None]] = {}  # id(model) -> drawing data (a Model is unhashable)


def _board_data(model: Model) -> dict | None:
    got = _BOARDS.get(id(model))
    if got is None or got[0] is not model:
        got = _BOARDS[id(model)] = (model, _draw(model))
    return got[1]


def _draw(model: Model) -> dict | None:
    board = model.board
    if board is None:
        return None
    pos = compute_layout(board)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    scale = max(1.0, 140 * len(board.spaces) ** 0.5 / span)
    centers = {s: [(x - min(xs)) * scale, (y - min(ys)) * scale] for s, (x, y) in pos.items()}
    separate(centers, {s: (BOX_W, BOX_H) for s in centers}, gap=10)
    minx = min(c[0] for c in centers.values()) - BOX_W
    miny = min(c[1] for c in centers.values()) - BOX_H
    colors = region_colors(board)
    spaces = [{"id": s, "x": round(centers[s][0] - minx), "y": round(centers[s][1] - miny),
               "region": board.region_of.get(s, ""), "color": colors.get(board.region_of.get(s, ""), "#dddddd")}
              for s in board.spaces]
    links = [[a, b, kind] for kind in sorted(board.neighbors_by_kind) for a, b in board.links(kind)]
    regions = {r: {"name": board.region_info.get(r, {}).get("name", r), "color": colors[r]} for r in board.regions}
    return {"spaces": spaces, "links": links, "regions": regions,
            "width": max(s["x"] for s in spaces) + BOX_W, "height": max(s["y"] for s in spaces) + BOX_H,
            "box": [BOX_W, BOX_H]}


def table_data(model: Model, players: list[str], kinds: list[str]) -> dict:
    """What never changes during a game: the board drawing, seat names and colours, display hints."""
    names = model.player_names
    disp = display_of(model)
    return {
        "title": model.name,
        "options": model.combo.options,
        "players": [{"id": p, "name": names[i] if i < len(names) else p, "kind": kinds[i],
                     "color": PLAYER_COLORS[i % len(PLAYER_COLORS)]} for i, p in enumerate(players)],
        "board": _board_data(model),
        "display": {"owner": (disp.get("board") or {}).get("owner", "owner"),
                    "fields": (disp.get("board") or {}).get("fields"),
                    "counters": disp.get("counters"), "own": _own_fields(model, disp), "zones": disp.get("zones"),
                    "names": disp.get("names") or {}},
    }


def account_lines(entries: list[dict]) -> list[str]:
    """The readable account, as the terminal prints it: titled steps and the rules' `say` lines."""
    out = []
    for e in entries:
        if e["t"] == "say":
            out.append(e["text"])
        elif e["t"] == "step":
            out.append(f"== {e['title']}")
    return out


def seat_account(game: Game, seat: str | None, start: int) -> list[str]:
    """Account lines from log entry `start` on, redacted for `seat` (None: a spectator)."""
    from engine.run.log import player_log
    return account_lines(player_log(game.log[start:], seat))  # type: ignore[arg-type]


def _own_fields(model: Model, disp: dict) -> list[str]:
    if disp.get("own") is not None:
        return list(disp["own"])
    k = model.kinds[PLAYER_KIND]
    return [f for f in k.fields if k.visible.get(f, "all") == "owner"]


def decision_data(game: Game, d: Decision, seat: str) -> dict:
    """The pending decision for the seat that must take it: each option with its label and,
    where it is on the table, the space or card to click."""
    model = game.model
    board = model.board
    own = game.view(seat)["ent"].get(seat, {})
    held = set()
    for f in _own_fields(model, display_of(model)):
        v = own.get(f)
        if isinstance(v, (list, dict)):
            held.update(x for x in v if isinstance(x, str))
    opts = []
    for i, o in enumerate(d.options):
        item: dict[str, Any] = {"i": i, "text": option_text(game, o)}
        if isinstance(o, str) and board is not None and o in board.index:
            item["space"] = o
        elif isinstance(o, str) and o in held:
            item["card"] = o
        opts.append(item)
    numeric = bool(d.options) and all(isinstance(o, int) and not isinstance(o, bool) for o in d.options)
    return {"n": d.number, "player": d.player, "prompt": d.prompt, "secret": d.secret, "step": d.step,
            "options": opts, "number": [min(d.options), max(d.options)] if numeric else None,
            "values": d.options if numeric else None}


def labels_for(game: Game, seat: str | None, view: dict) -> dict[str, str]:
    """Card faces for the seat's own visible items (what `display.label` says of them)."""
    if seat is None:
        return {}
    out = {}
    own = view["ent"].get(seat, {})
    for f in _own_fields(game.model, display_of(game.model)):
        v = own.get(f)
        items = v if isinstance(v, list) else list(v) if isinstance(v, dict) else []
        for x in items:
            if isinstance(x, str) and x != "?" and x in game.model.kind_of and x not in out:
                text = option_text(game, x)
                if text != x:
                    out[x] = text
    return out


def seat_state(game: Game, seat: str | None, decision_for: bool) -> dict:
    """The game as `seat` may see it: its view, whose turn it is, its status line, and the
    pending decision when it is this seat's to take."""
    view = game.view(seat)
    d = game.decision
    pending = view["pending"]
    out: dict[str, Any] = {
        "view": view, "seq": view["seq"], "over": game.over, "result": game.result if game.over else None,
        "waiting": pending["player"] if pending else ("someone" if d is not None else None),
        "status": {},
        "labels": labels_for(game, seat, view),
        "decision": decision_data(game, d, seat) if decision_for and d is not None and d.player == seat else None,
    }
    for p in game.state["players"]:
        if controller(game.state, p) == seat or game.over:  # it reads the whole state: a seat's own, until the end
            out["status"][p] = status_line(game, p)
    return out


def dumps(msg: dict) -> str:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=str)
