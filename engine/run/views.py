"""Views: the state as one player (or a spectator) may see it.

Visibility is declared per field in the ruleset (all, owner, none) and per global; a hidden
value keeps only its size, so a hand shows how many cards, not which. Agents, the terminal
and every other front end see a game only through `view`.
"""
from __future__ import annotations

from typing import Any

from dsl.runtime import copy_value
from engine.model import PLAYER_KIND, Model
from engine.run.state import controller


def view(model: Model, state: dict, player: str | None) -> dict:
    """The state as `player` may see it (None: a spectator who sees only public values)."""
    out = {
        "globals": {k: (v if model.globals_visible.get(k, "all") == "all" else hide(v))
                    for k, v in state["globals"].items()},
        "ent": {},
        "players": list(state["players"]),
        "over": state["over"],
        "result": state["result"],
        "flow": [model.nodes[f["n"]].label for f in state["flow"]],
        "pending": state["pending"] if state["pending"] and (
            state["pending"]["player"] == player or not state["pending"]["secret"]) else None,
        "seq": state["seq"],
    }
    kinds = model.kinds
    kind_of = model.kind_of
    for eid, fields in state["ent"].items():
        k = kinds[PLAYER_KIND] if eid in state["players"] else kinds.get(kind_of.get(eid, ""))
        if k is None:
            out["ent"][eid] = copy_value(fields)
            continue
        owner = eid if k.name == PLAYER_KIND else (fields.get(k.owner) if k.owner else None)
        shown = {}
        for f, v in fields.items():
            vis = k.visible.get(f, "all")
            if vis == "all" or (vis == "owner" and owner is not None and controller(state, owner) == player):
                shown[f] = copy_value(v)
            else:
                shown[f] = hide(v)
        out["ent"][eid] = shown
    return out


def hide(v: Any) -> Any:
    """A hidden value keeps only its size: a hand shows how many cards, not which."""
    if isinstance(v, list):
        return ["?"] * len(v)
    if isinstance(v, dict):
        return {"?": sum(x for x in v.values() if isinstance(x, int)) if all(
            isinstance(x, int) for x in v.values()) else len(v)}
    return "?"
