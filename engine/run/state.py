"""The game state as plain data, and how it is made, hashed, saved and checked.

A state is a JSON-ready dict: `globals`, `ent` (every entity's fields, players first),
`players`, `rng` (the generator), `flow` (the frame stack), `pending` (the decision waited
for), `seq`, `over` and `result`. Its key order is part of the log's state hashes.
"""
from __future__ import annotations

import hashlib
import json
import marshal
from typing import Any

from engine.model import Model
from engine.model.checks import initial_state
from engine.run.chance import initial_rng

SAVE_FORMAT = "daimyo-save/1"
# A frame's counter (a child's position, a loop's round): far above any the flow reaches (a
# `repeat` runs at most a million rounds), and within a C integer, which the compiled engine's
# flow items take it as (engine/run/direct.pxd): a save may not hold more.
MAX_FRAME_COUNTER = 1 << 32


def new_state(model: Model, players: int, seed: int) -> dict[str, Any]:
    """A new game's state, its flow at the start. `players` counts the people at the table; a
    ruleset whose manifest gives each of them several hands at this count
    (`players: {hands: {2: 2}}`) is played by more players of the rules, recorded in `seats`."""
    hands = model.combo.base.hands.get(players, 1)
    base = _initial(model, players * hands)
    state = {"globals": base["globals"], "ent": base["ent"], "players": base["players"], "rng": initial_rng(seed),
             "flow": [{"n": model.root, "i": 0, "v": {}}], "pending": None, "seq": 0, "over": False,
             "result": None}
    if hands > 1:  # only then: other games' states and logs stay as they were
        state["seats"] = {pid: f"P{i % players + 1}" for i, pid in enumerate(state["players"])}
    return state


def _initial(model: Model, players: int) -> dict[str, Any]:
    """A fresh copy of `initial_state(model, players)`, made once per model and count and kept
    marshalled: loading it makes the same plain data, texts still interned, in a fraction of
    the time building it takes (a percent of a short game)."""
    key = ("initial_state", players)
    packed = model.derived.get(key)
    if packed is None:
        packed = model.derived[key] = marshal.dumps(initial_state(model, players))
    return marshal.loads(packed)


def controller(state: dict, p: Any) -> Any:
    """The person at the table who plays `p`: `p` itself, unless the ruleset gives each person
    several hands (the state's `seats`), when it is the one who makes p's decisions. (Written
    out where a decision is offered, engine/run/direct.py `Offer.offer`: change both.)"""
    seats = state.get("seats")
    return seats.get(p, p) if seats and isinstance(p, str) else p


def seat_count(state: dict) -> int:
    """How many people play: the players, or with several hands each, the seats."""
    seats = state.get("seats")
    return len(set(seats.values())) if seats else len(state["players"])


# Game states and log entries are plain data the engine made (rules' values are copied into the
# state, never shared), so they hold no cycle: the encoder's check for one (a dict of every list
# and map it enters) is left out, 14% of the time of a state's hash, the same text.
_CANONICAL = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


def canonical(x: Any) -> str:
    """The one JSON text of a state or log entry (compact, UTF-8 as it is), for hashes and logs."""
    return _CANONICAL.encode(x)


# A state's hash is taken at every decision of a logged game (most of the time of a difftest or
# a replay): the text hashed is canonical's, written by orjson where that is the same text.
# orjson writes a number with a fraction or an exponent its own way (`0.00001` for `1e-05`), and
# every such number it writes holds `.`, `e+` or `e-`: a state whose text holds `.`, `+` or `e-`
# (in a number, or rarely in a text) is written by json. Both write NaN and the infinities,
# which no game state holds (`store_value`, `finite`), as `null`, so that the hash is the same
# whichever writes it. A state orjson refuses (a number beyond 64 bits, a key that is not a
# text, a lone surrogate) is json's too.
_HASHED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False, allow_nan=False)
try:
    from orjson import dumps as _fast_dumps
except ImportError:  # pragma: no cover - a platform without orjson's wheel: json alone
    _fast_dumps = None


def hashed_text(state: Any) -> bytes:
    """The UTF-8 text a state's hash is taken of: `canonical(state)`, NaN and infinities as null."""
    if _fast_dumps is not None:
        try:
            text = _fast_dumps(state)
        except TypeError:  # (orjson.JSONEncodeError)
            text = None
        # (`+` and `-` alone first: memchr, where looking for `e+` takes a hundred times longer)
        if text is not None and b"." not in text and b"+" not in text and (b"-" not in text or b"e-" not in text):
            return text
    try:
        return _HASHED.encode(state).encode()
    except ValueError:  # NaN or an infinity: null, as orjson writes them
        return _HASHED.encode(_null_for_non_finite(state)).encode()


def _null_for_non_finite(x: Any) -> Any:
    if type(x) is float:
        return x if x - x == 0 else None
    if type(x) is dict:
        return {k: _null_for_non_finite(v) for k, v in x.items()}
    if type(x) in (list, tuple):
        return [_null_for_non_finite(v) for v in x]
    return x


def state_hash(state: dict) -> str:
    return hashlib.sha256(hashed_text(state)).hexdigest()[:16]


MAX_SAVE_BYTES = 20_000_000  # a save file; a long game of the largest bundled combo is under 1 MB
MAX_JSON_DEPTH = 200  # nesting in a save or a log line (game states nest fewer than 20 levels)
MAX_JSON_DIGITS = 300  # digits of a number in a save or a log line
SEAT_KINDS = ("human", "random", "heuristic", "search")


class SaveError(ValueError):
    """A save file that cannot be continued; the message names the field that is wrong."""


def save_data(model: Model, state: dict, seats: list[str] | None = None) -> dict:
    """A save: the rules it belongs to, the state, a checksum of both, and (optionally) who sits
    in each seat, so that people stay people on `--load`."""
    data = {"format": SAVE_FORMAT, "ruleset": model.combo.source, "options": model.combo.options,
            "players": seat_count(state), "fingerprint": model.fingerprint, "state": state}
    data["checksum"] = save_checksum(data)
    if seats is not None:
        data["seats"] = list(seats)
    return data


def save_checksum(save: dict) -> str:
    """The checksum of a save's rules and state (not of `seats`, which a front end may change)."""
    covered = [save.get(k) for k in ("format", "ruleset", "options", "players", "fingerprint", "state")]
    return hashlib.sha256(canonical(covered).encode()).hexdigest()[:32]


def parse_json(text: str, what: str) -> Any:
    """JSON text as data, refusing what a game never writes: NaN and infinities, numbers of more
    than a few hundred digits, and nesting deeper than MAX_JSON_DEPTH. Raises ValueError."""
    depth = 0
    in_string = escaped = False
    for ch in text:  # a quick scan first: json's own parser recurses, and deep input crashes it
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep")
        elif ch in "]}":
            depth -= 1

    def constant(name: str) -> Any:
        raise ValueError(f"{what} holds `{name}`, which is not a number a game writes")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_JSON_DIGITS:
            raise ValueError(f"{what} holds a number of {len(digits):,} digits")
        return int(digits)
    try:
        return json.loads(text, parse_constant=constant, parse_int=integer)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply") from None


def read_save(path: str) -> dict:
    """Read a save file, size-capped and parsed safely; its contents are checked by `saved_state`."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SAVE_BYTES + 1)
    except OSError as e:
        raise SaveError(f"cannot read it: {e.strerror or e}") from None
    if len(raw) > MAX_SAVE_BYTES:
        raise SaveError(f"the file is larger than {MAX_SAVE_BYTES:,} bytes; no save is that large")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SaveError(f"not a daimyo save: byte {e.start} is not UTF-8 text") from None
    try:
        save = parse_json(text, "the save")
    except ValueError as e:
        raise SaveError(str(e)) from None
    if not isinstance(save, dict):
        raise SaveError("not a daimyo save (it is not a JSON object)")
    if save.get("format") != SAVE_FORMAT:
        raise SaveError(f"not a daimyo save: `format` is {_shown(save.get('format'))}, not {SAVE_FORMAT!r}")
    for key, kind, name in (("ruleset", str, "text"), ("options", dict, "a mapping"), ("players", int, "a number")):
        if not isinstance(save.get(key), kind) or isinstance(save.get(key), bool):
            raise SaveError(f"the save's `{key}` is missing or not {name}")
    if not all(isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in save["options"].items()):
        raise SaveError("the save's `options` must map names to plain values")
    if not 1 <= save["players"] <= 16:
        raise SaveError(f"the save's `players` is {save['players']}, not a player count")
    seats = save.get("seats")
    if seats is not None and not (isinstance(seats, list) and len(seats) == save["players"]
                                  and all(k in SEAT_KINDS for k in seats)):
        raise SaveError(f"the save's `seats` must list one of {', '.join(SEAT_KINDS)} for each of its "
                        f"{save['players']} players")
    return save


def _shown(x: Any) -> str:
    text = json.dumps(x, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def saved_state(model: Model, save: dict) -> dict:
    """The state inside a save, after checking that it belongs to `model` and is whole: a damaged
    or edited save is refused, never continued as a different game."""
    if not isinstance(save, dict) or save.get("format") != SAVE_FORMAT:
        raise SaveError(f"not a daimyo save (format {_shown(save.get('format') if isinstance(save, dict) else None)})")
    if save.get("fingerprint") != model.fingerprint:
        raise SaveError("this save was made with different rules (ruleset files or options changed)")
    if "checksum" not in save:
        raise SaveError("the save's `checksum` is missing: the file was damaged or edited")
    if save.get("checksum") != save_checksum(save):
        raise SaveError("the save's `checksum` does not match its contents: the file was damaged or edited")
    state = save.get("state")
    check_state(model, state, save.get("players"))
    return state


def check_state(model: Model, state: Any, players: Any = None) -> None:
    """A saved state checked against the model, field by field: a damaged save is an error
    naming the field, not a crash and not a different game."""
    keys = {"globals": dict, "ent": dict, "players": list, "rng": int, "flow": list, "pending": (dict, type(None)),
            "seq": int, "over": bool, "result": (dict, type(None))}
    if not isinstance(state, dict):
        raise SaveError("the save holds no game state (`state`)")
    for key, kind in keys.items():
        if not isinstance(state.get(key), kind) or (kind is int and isinstance(state.get(key), bool)):
            raise SaveError(f"the saved state's `state.{key}` is missing or damaged")
    extra = sorted(set(state) - set(keys) - {"seats"})  # `seats`: people who play several hands
    if extra:
        raise SaveError(f"the saved state has an unknown field `state.{extra[0]}`")
    n = len(state["players"])
    if players is not None and seat_count(state) != players:
        raise SaveError(f"the save says {players} players but its state has {seat_count(state)}")
    fresh = initial_state(model, n)
    if state["players"] != fresh["players"]:
        raise SaveError("the saved state's `state.players` is damaged")
    if not 0 <= state["rng"] < 1 << 64 or state["seq"] < 0:
        raise SaveError(f"the saved state's `state.{'rng' if state['seq'] >= 0 else 'seq'}` is out of range")
    if set(state["globals"]) != set(fresh["globals"]):
        raise SaveError(f"the saved globals do not match the rules: {_diff(state['globals'], fresh['globals'])}")
    if set(state["ent"]) != set(fresh["ent"]):
        raise SaveError(f"the saved entities do not match the rules: {_diff(state['ent'], fresh['ent'])}")
    for eid, fields in fresh["ent"].items():
        got = state["ent"][eid]
        if not isinstance(got, dict) or set(got) != set(fields):
            raise SaveError(f"the saved fields of `{eid}` (`state.ent.{eid}`) do not match the rules")
    for i, frame in enumerate(state["flow"]):
        if not (isinstance(frame, dict) and isinstance(frame.get("n"), int) and 0 <= frame["n"] < len(model.nodes)
                and isinstance(frame.get("i"), int) and 0 <= frame["i"] < MAX_FRAME_COUNTER
                and isinstance(frame.get("v"), dict)
                and set(frame) <= {"n", "i", "v", "x"} and isinstance(frame.get("x", []), list)):
            raise SaveError(f"the saved flow position (`state.flow[{i}]`) is damaged")
    seats = state.get("seats")
    if seats is not None and not (isinstance(seats, dict) and set(seats) == set(state["players"])
                                  and set(seats.values()) <= set(state["players"])):
        raise SaveError("the saved seats (`state.seats`) do not match the saved players")
    p = state["pending"]
    if p is not None and not (
            set(p) == {"player", "options", "prompt", "step", "secret", "n"} and p["player"] in state["players"]
            and isinstance(p["options"], list) and len(p["options"]) >= 2 and isinstance(p["step"], str)
            and isinstance(p["secret"], bool) and isinstance(p["n"], int) and state["flow"]
            and model.nodes[state["flow"][-1]["n"]].kind == "choose"):
        raise SaveError("the saved pending decision (`state.pending`) is damaged")
    if state["over"] != (state["result"] is not None) or (not state["over"] and p is None):
        raise SaveError("the saved state's `state.over`, `state.pending` and `state.result` disagree")


def _diff(got: dict, want: dict) -> str:
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    return f"`{missing[0]}` is missing" if missing else f"`{extra[0]}` is not in the rules"
