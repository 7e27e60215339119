"""The game state as plain data, and how it is made, hashed, saved and checked.

A state is a JSON-ready dict: `globals`, `ent` (every entity's fields, players first),
`players`, `rng` (the generator), `flow` (the frame stack), `pending` (the decision waited
for), `seq`, `over` and `result`. Its key order is part of the log's state hashes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from engine.model import Model
from engine.model.checks import initial_state
from engine.run.chance import initial_rng

SAVE_FORMAT = "daimyo-save/1"


def new_state(model: Model, players: int, seed: int) -> dict[str, Any]:
    """A new game's state, its flow at the start. `players` counts the people at the table; a
    ruleset whose manifest gives each of them several hands at this count
    (`players: {hands: {2: 2}}`) is played by more players of the rules, recorded in `seats`."""
    hands = model.combo.base.hands.get(players, 1)
    base = initial_state(model, players * hands)
    state = {"globals": base["globals"], "ent": base["ent"], "players": base["players"], "rng": initial_rng(seed),
             "flow": [{"n": model.root, "i": 0, "v": {}}], "pending": None, "seq": 0, "over": False,
             "result": None}
    if hands > 1:  # only then: other games' states and logs stay as they were
        state["seats"] = {pid: f"P{i % players + 1}" for i, pid in enumerate(state["players"])}
    return state


def controller(state: dict, p: Any) -> Any:
    """The person at the table who plays `p`: `p` itself, unless the ruleset gives each person
    several hands (the state's `seats`), when it is the one who makes p's decisions."""
    seats = state.get("seats")
    return seats.get(p, p) if seats and isinstance(p, str) else p


def seat_count(state: dict) -> int:
    """How many people play: the players, or with several hands each, the seats."""
    seats = state.get("seats")
    return len(set(seats.values())) if seats else len(state["players"])


def canonical(x: Any) -> str:
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def state_hash(state: dict) -> str:
    return hashlib.sha256(canonical(state).encode()).hexdigest()[:16]


def save_data(model: Model, state: dict) -> dict:
    return {"format": SAVE_FORMAT, "ruleset": model.combo.source, "options": model.combo.options,
            "players": seat_count(state), "fingerprint": model.fingerprint, "state": state}


def saved_state(model: Model, save: dict) -> dict:
    """The state inside a save, after checking that it belongs to `model` and is whole."""
    if save.get("format") != SAVE_FORMAT:
        raise ValueError(f"not a daimyo save (format {save.get('format')!r})")
    if save.get("fingerprint") != model.fingerprint:
        raise ValueError("this save was made with different rules (ruleset files or options changed)")
    state = save.get("state")
    check_state(model, state)
    return state


def check_state(model: Model, state: Any) -> None:
    """A saved state's shape, checked before play: a damaged save is an error, not a crash."""
    keys = {"globals": dict, "ent": dict, "players": list, "rng": int, "flow": list, "seq": int}
    if not isinstance(state, dict):
        raise ValueError("the save holds no game state")
    for key, kind in keys.items():
        if not isinstance(state.get(key), kind):
            raise ValueError(f"the saved state's `{key}` is missing or damaged")
    for frame in state["flow"]:
        if not (isinstance(frame, dict) and isinstance(frame.get("n"), int) and 0 <= frame["n"] < len(model.nodes)
                and isinstance(frame.get("i"), int) and isinstance(frame.get("v"), dict)):
            raise ValueError("the saved flow position is damaged")
    if any(p not in state["ent"] for p in state["players"]):
        raise ValueError("the saved players do not match the saved entities")
    seats = state.get("seats")
    if seats is not None and not (isinstance(seats, dict) and set(seats) == set(state["players"])
                                  and set(seats.values()) <= set(state["players"])):
        raise ValueError("the saved seats do not match the saved players")
