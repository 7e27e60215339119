"""The game machine: plain-data state, the flow stack, decisions, chance, triggers, modifiers.

    >>> from engine.model import load
    >>> from engine.game import Game
    >>> g = Game.new(load("shogun", players=4), players=4, seed=7)
    >>> d = g.decision          # who must choose what, with the legal options
    >>> g.apply(d.options[0])   # the machine runs on to the next decision

The state is JSON-ready data (`Game.state`): globals, entities, players, the random
generator, the flow stack and the pending decision. Everything else (the compiled rules)
lives in the `Model` and never changes during play.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

from dsl.runtime import Ctx, RuleError, copy_value
from engine.model import PLAYER_KIND, Model
from engine.modifiers import apply_modifiers

SAVE_FORMAT = "daimyo-save/1"
MASK64 = (1 << 64) - 1


class IllegalMove(Exception):
    """An option that is not among the pending decision's legal options; the state is unchanged."""


class Rng:
    """splitmix64: one 64-bit integer of state, kept in the game state so saves carry it.
    `below(n)` takes the draw modulo n; the bias (under 1e-17 for board-game sizes) is
    far below anything a sweep could detect."""

    __slots__ = ("s", "state")

    def __init__(self, state: dict):
        self.state = state
        self.s = state["rng"]

    def _next(self) -> int:
        s = (self.s + 0x9E3779B97F4A7C15) & MASK64
        self.s = s
        self.state["rng"] = s
        z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self._next() % n

    def random(self) -> float:
        return (self._next() >> 11) * (1.0 / (1 << 53))


class Decision:
    """What the game waits for: `player` must pick one of `options` (at `step`, decision
    `number`). `prompt` is the text for a person; in a silent game it is rendered only when
    read, since bots never read it."""

    __slots__ = ("_game", "_pending", "number", "options", "player", "secret", "step")

    def __init__(self, game: Game, pending: dict):
        self._game = game
        self._pending = pending
        self.player: str = pending["player"]
        self.options: list = pending["options"]
        self.step: str = pending["step"]
        self.secret: bool = pending["secret"]
        self.number: int = pending["n"]

    @property
    def prompt(self) -> str:
        text = self._pending["prompt"]
        if text is None:  # the choice's frame is on top of the flow while it is pending
            frame = self._game.state["flow"][-1]
            text = self._game.model.nodes[frame["n"]].prompt(self._game._ctx(frame["v"]))
        return text  # not stored: reading a prompt never changes the state

    def __repr__(self) -> str:
        return (f"Decision(player={self.player!r}, step={self.step!r}, number={self.number}, "
                f"options={len(self.options)})")

    def to_json(self) -> dict:
        return {"player": self.player, "options": self.options, "prompt": self.prompt, "step": self.step,
                "secret": self.secret, "n": self.number}


class Game:
    """One game in progress. Drive it with `decision` and `apply`; it runs itself otherwise."""

    def __init__(self, model: Model, state: dict, log: list | None = None,
                 on_log: Callable[[dict], None] | None = None, logging: bool = True):
        self.model = model
        self.state = state
        self.log: list[dict] = log if log is not None else []
        self.on_log = on_log
        self.logging = logging
        self.forced: list[dict] = []  # scripted chance outcomes (scenarios, tests)
        self.counts: dict[str, int] = {}  # how often each step, trigger and event ran (for reports)
        self._rng = Rng(state)
        self._sched: list[tuple[str, dict]] = []

    @property
    def silent(self) -> bool:
        """No log and no listener: rules may skip building account text."""
        return not self.logging and self.on_log is None

    # ---- creating ----

    @classmethod
    def new(cls, model: Model, players: int, seed: int = 0, *, log: bool = True,
            on_log: Callable[[dict], None] | None = None, forced: Iterable[dict] = (),
            defer: bool = False) -> Game:
        """A new game, run up to its first decision (not at all with `defer`: call run()).
        `players` counts the people at the table; a ruleset whose manifest gives each of them
        several hands at this count (`players: {hands: {2: 2}}`) is played by more players."""
        hands = model.combo.base.hands.get(players, 1)
        ids = [f"P{i + 1}" for i in range(players * hands)]
        state: dict[str, Any] = {
            "globals": copy_value(model.globals),
            "ent": {},
            "players": ids,
            "rng": _seed(seed),
            "flow": [{"n": model.root, "i": 0, "v": {}}],
            "pending": None,
            "seq": 0,
            "over": False,
            "result": None,
        }
        if hands > 1:  # only then: other games' states and logs stay as they were
            state["seats"] = {pid: f"P{i % players + 1}" for i, pid in enumerate(ids)}
        pk = model.kinds[PLAYER_KIND]
        for pid in ids:
            state["ent"][pid] = copy_value(pk.fields)
        for k in model.kinds.values():
            if k.name == PLAYER_KIND or not k.fields:
                continue
            for iid in k.items:
                state["ent"][str(iid)] = copy_value(k.fields)
        game = cls(model, state, on_log=on_log, logging=log)
        game.forced = list(forced)
        start = {"t": "start", "ruleset": model.combo.source, "options": model.combo.options, "players": ids,
                 "seed": seed, "fingerprint": model.fingerprint}
        if hands > 1:
            start["seats"] = players
        game._emit_log(start)
        if not defer:
            game.run()
        return game

    # ---- the public driving interface ----

    @property
    def over(self) -> bool:
        return bool(self.state["over"])

    @property
    def decision(self) -> Decision | None:
        p = self.state["pending"]
        if p is None:
            return None
        return Decision(self, p)

    @property
    def result(self) -> dict | None:
        return self.state["result"]

    def apply(self, option: Any) -> None:
        """Take `option` for the pending decision and run on to the next one.
        Raises IllegalMove (state unchanged) if it is not a legal option."""
        p = self.state["pending"]
        if p is None:
            raise IllegalMove("no decision is pending" + (" (the game is over)" if self.over else ""))
        if option not in p["options"]:
            raise IllegalMove(f"{_short(option)} is not a legal option for {p['player']} at `{p['step']}`; "
                              f"legal: {', '.join(_short(o) for o in p['options'][:12])}"
                              f"{' ...' if len(p['options']) > 12 else ''}")
        entry = {"t": "decision", "n": p["n"], "player": p["player"], "step": p["step"], "choice": option}
        if p["secret"]:
            entry["secret"] = True
        if self.logging:
            entry["state"] = self.state_hash()  # the state the choice was made in: replay checks it
        frame = self.state["flow"].pop()
        node = self.model.nodes[frame["n"]]
        self.state["pending"] = None
        self.state["seq"] += 1
        self._emit_log(entry)
        if option is not None and node.body >= 0:
            self._push(node.body, frame["v"], {node.var: option})
        self.run()

    def run(self) -> None:
        """Advance the flow until a decision is pending or the game is over."""
        state = self.state
        stack = state["flow"]
        nodes = self.model.nodes
        while state["pending"] is None and not state["over"]:
            if not stack:
                self._finish()
                return
            frame = stack[-1]
            node = nodes[frame["n"]]
            kind = node.kind
            if kind == "seq":
                i = frame["i"]
                if i < len(node.children):
                    frame["i"] = i + 1
                    self._push(node.children[i], frame["v"])
                else:
                    stack.pop()
            elif kind == "effect":
                stack.pop()
                self._call_effect(node.fn, dict(frame["v"]))
            elif kind == "call":
                stack.pop()
                args = {k: fn(self._ctx(frame["v"])) for k, fn in node.args.items()}
                self._push(self.model.steps[node.step], {}, args)
            elif kind == "step":
                if frame["i"] == 0:
                    frame["i"] = 1
                    self.counts[node.label] = self.counts.get(node.label, 0) + 1
                    if node.title:
                        title = node.title_fn(self._ctx(frame["v"])) if node.title_fn else node.title
                        self._emit_log({"t": "step", "step": node.label, "title": title})
                    if node.body >= 0:
                        self._push(node.body, frame["v"])
                else:
                    stack.pop()
            elif kind == "repeat" or kind == "for":
                if "x" not in frame:
                    got = node.fn(self._ctx(frame["v"]))
                    if kind == "repeat":
                        if not isinstance(got, int) or got < 0 or got > 1_000_000:
                            raise RuleError(f"repeat needs a whole number from 0, got {got!r}", node.loc)
                        got = list(range(1, got + 1))
                    elif isinstance(got, dict):
                        got = list(got)
                    elif not isinstance(got, list):
                        raise RuleError(f"`for` needs a list, got {got!r}", node.loc)
                    frame["x"] = copy_value(got)
                i = frame["i"]
                if i < len(frame["x"]):
                    frame["i"] = i + 1
                    value = frame["x"][i]
                    if node.var_global:
                        state["globals"][node.var] = value
                        self._push(node.body, frame["v"])
                    else:
                        self._push(node.body, frame["v"], {node.var: value} if node.var else None)
                else:
                    stack.pop()
            elif kind == "while":
                if frame["i"] > 100_000:
                    raise RuleError("a `while` loop ran 100,000 times; it probably never ends", node.loc)
                if node.fn(self._ctx(frame["v"])):
                    frame["i"] += 1
                    self._push(node.body, frame["v"])
                else:
                    stack.pop()
            elif kind == "if":
                stack.pop()
                branch = node.body if node.fn(self._ctx(frame["v"])) else node.other
                if branch >= 0:
                    self._push(branch, frame["v"])
            elif kind == "choose":
                self._enter_choice(frame, node)
            else:  # pragma: no cover
                raise RuleError(f"unknown flow node {kind}", node.loc)

    # ---- flow helpers ----

    def _push(self, idx: int, parent_vars: dict, extra: dict | None = None) -> None:
        v = dict(parent_vars)
        if extra:
            v.update(extra)
        self.state["flow"].append({"n": idx, "i": 0, "v": v})

    def _ctx(self, vars: dict) -> Ctx:
        return Ctx(self.state, self.model, self, vars)

    def _call_effect(self, fn: Callable | None, vars: dict) -> None:
        if fn is None:
            return
        self._sched = []
        fn(self._ctx(vars))
        self._flush_schedule()

    def _flush_schedule(self) -> None:
        # Scheduled steps run next, in the order they were scheduled.
        sched, self._sched = self._sched, []
        for name, args in reversed(sched):
            self._push(self.model.steps[name], {}, args)

    def _enter_choice(self, frame: dict, node: Any) -> None:
        c = self._ctx(frame["v"])
        options = node.fn(c)
        if isinstance(options, dict):
            options = list(options)
        if not isinstance(options, list):
            raise RuleError(f"the options of `{node.var}` must be a list, got {options!r}", node.loc)
        options = copy_value(options)
        if node.optional:
            options.append(None)
        if not options or (len(options) == 1 and options[0] is None):
            self.state["flow"].pop()
            if node.other >= 0:
                self._push(node.other, frame["v"])
            return
        player = node.player(c)
        if player not in self.state["players"]:
            raise RuleError(f"choice `{node.var}`: {player!r} is not a player", node.loc)
        if len(options) == 1:  # nothing to decide: take it without asking
            self.state["flow"].pop()
            if node.body >= 0:
                self._push(node.body, frame["v"], {node.var: options[0]})
            return
        # A silent game (a sweep, a bot's lookahead) has no reader: the prompt is rendered on demand.
        prompt = None if self.silent else node.prompt(c)
        self.state["pending"] = {"player": controller(self.state, player), "options": options, "prompt": prompt,
                                 "step": node.label, "secret": node.secret, "n": self.state["seq"] + 1}

    def _finish(self) -> None:
        self.state["over"] = True
        self.state["pending"] = None
        m = self.model
        scores = {}
        for p in self.state["players"]:
            c = self._ctx({"player": p})
            key = [m.score(c) if m.score else 0] + [t(c) for t in m.tiebreak]
            scores[p] = key
        best = max(scores.values()) if scores else None
        ranking = sorted(self.state["players"], key=lambda p: scores[p], reverse=True)
        self.state["result"] = {
            "scores": {p: k[0] for p, k in scores.items()},
            "tiebreaks": {p: k[1:] for p, k in scores.items()} if m.tiebreak else {},
            "ranking": ranking,
            "winners": [p for p in ranking if scores[p] == best],
        }
        end = {"t": "end", "result": self.state["result"]}
        if self.logging:
            end["state"] = self.state_hash()
        self._emit_log(end)

    # ---- hooks called by primitives ----

    def chance(self, c: Ctx, kind: str, draw: Callable, forced_apply: Callable | None = None, **info: Any) -> Any:
        if self.forced and self.forced[0].get("kind") == kind:
            value = self.forced.pop(0)["value"]
            if forced_apply is not None:
                value = forced_apply(value)
        else:
            value = draw(self._rng)
        if self.logging:
            self._emit_log({"t": "chance", "kind": kind, "value": copy_value(value)})
        return value

    def say(self, c: Ctx, text: str) -> None:
        self._emit_log({"t": "say", "text": text})

    def end_game(self, c: Ctx) -> None:
        self.state["flow"].clear()
        self._sched = []

    def emit(self, c: Ctx, event: str, args: dict) -> None:
        self.counts[f"event:{event}"] = self.counts.get(f"event:{event}", 0) + 1
        for tid, when, do in self.model.triggers.get(event, ()):
            saved = c.vars
            c.vars = dict(args)
            try:
                if when is None or when(c):
                    self.counts[f"trigger:{tid}"] = self.counts.get(f"trigger:{tid}", 0) + 1
                    c.tick()
                    do(c)
            finally:
                c.vars = saved

    def schedule(self, c: Ctx, step: str, args: dict) -> None:
        self._sched.append((step, args))

    def modify(self, c: Ctx, name: str, base: Any, args: dict) -> Any:
        return apply_modifiers(c, name, base, args)

    # ---- log ----

    def _emit_log(self, entry: dict) -> None:
        if not self.logging and entry["t"] not in ("start", "end"):
            if entry["t"] == "say" and self.on_log is not None:
                self.on_log(entry)
            return
        self.log.append(entry)
        if self.on_log is not None:
            self.on_log(entry)

    def player_log(self, player: str) -> list[dict]:
        """The log as `player` may see it: other players' secret choices, shuffled orders and
        state hashes (which would let a player test guesses about hidden values) removed."""
        return player_log(self.log, player)

    def state_hash(self) -> str:
        return hashlib.sha256(canonical(self.state).encode()).hexdigest()[:16]

    # ---- save, load, clone, view ----

    def clone(self) -> Game:
        """An independent copy (no log) for search: changes to it never touch this game."""
        g = Game(self.model, copy_value(self.state), log=[], logging=False)
        return g

    def reseed(self, rng_state: int) -> None:
        """Replace the random generator's state (a searcher's copy must not know future chance)."""
        self.state["rng"] = rng_state & MASK64
        self._rng = Rng(self.state)

    def save(self) -> dict:
        return {"format": SAVE_FORMAT, "ruleset": self.model.combo.source, "options": self.model.combo.options,
                "players": seat_count(self.state), "fingerprint": self.model.fingerprint,
                "state": self.state}

    @classmethod
    def from_save(cls, model: Model, save: dict) -> Game:
        if save.get("format") != SAVE_FORMAT:
            raise ValueError(f"not a daimyo save (format {save.get('format')!r})")
        if save.get("fingerprint") != model.fingerprint:
            raise ValueError("this save was made with different rules (ruleset files or options changed)")
        state = save.get("state")
        _check_state(model, state)
        return cls(model, copy_value(state))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.state == other.state

    def view(self, player: str | None) -> dict:
        """The state as `player` may see it (None: a spectator who sees only public values)."""
        return view(self.model, self.state, player)


def controller(state: dict, p: Any) -> Any:
    """The player at the table who plays `p`: `p` itself, unless the ruleset gives each player
    several hands (the state's `seats`), when it is the one who makes p's decisions."""
    seats = state.get("seats")
    return seats.get(p, p) if seats and isinstance(p, str) else p


def seat_count(state: dict) -> int:
    """How many people play: the players, or with several hands each, the seats."""
    seats = state.get("seats")
    return len(set(seats.values())) if seats else len(state["players"])


def view(model: Model, state: dict, player: str | None) -> dict:
    out = {
        "globals": {k: (v if model.globals_visible.get(k, "all") == "all" else _hide(v))
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
                shown[f] = _hide(v)
        out["ent"][eid] = shown
    return out


def _check_state(model: Model, state: Any) -> None:
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


def player_log(log: list[dict], player: str) -> list[dict]:
    out = []
    for e in log:
        e = dict(e)
        e.pop("state", None)
        if e["t"] == "decision" and e.get("secret") and e["player"] != player:
            e["choice"] = "?"
        elif e["t"] == "chance" and e["kind"] == "shuffle":
            e["value"] = _hide(e["value"])
        out.append(e)
    return out


def _hide(v: Any) -> Any:
    """A hidden value keeps only its size: a hand shows how many cards, not which."""
    if isinstance(v, list):
        return ["?"] * len(v)
    if isinstance(v, dict):
        return {"?": sum(x for x in v.values() if isinstance(x, int)) if all(
            isinstance(x, int) for x in v.values()) else len(v)}
    return "?"


def canonical(x: Any) -> str:
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def _seed(seed: int) -> int:
    # Spread small seeds over the whole 64-bit space.
    z = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64
    return z


def _short(x: Any) -> str:
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= 40 else s[:37] + "..."
