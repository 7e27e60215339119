"""`Game`: one game in progress, and the one narrow interface every front end drives.

    >>> from engine import load, Game
    >>> g = Game.new(load("shogun", players=4), players=4, seed=7)
    >>> d = g.decision          # who must choose what, with the legal options
    >>> g.apply(d.options[0])   # the machine runs on to the next decision

The interface: `decision` (the pending choice: player, options, prompt), `apply(option)`,
`view(player)`, `over` and `result`, plus `save`/`from_save`, `clone`, `log` and
`player_log`. Agents, the terminal, the simulator and tests all use only these. The parts
behind it live beside this module: the state (`state`), the flow machine (`machine`),
chance (`chance`), views (`views`) and the log (`log`).
"""
from __future__ import annotations

import json
import marshal
from collections.abc import Callable, Iterable
from typing import Any

from dsl.runtime import copy_value
from engine.base.text import safe_text
from engine.model import Model
from engine.run.chance import MASK64, SEEDING, Chance
from engine.run.direct import check_index
from engine.run.log import Recorder, player_log
from engine.run.machine import FlowMachine
from engine.run.state import new_state, save_data, saved_state, state_hash
from engine.run.views import view


class IllegalMove(Exception):
    """An option that is not among the pending decision's legal options; the state is unchanged."""


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
            text = safe_text(str(self._game.model.nodes[frame["n"]].prompt(self._game._ctx(frame["v"]))))
        return text  # not stored: reading a prompt never changes the state

    def __repr__(self) -> str:
        return (f"Decision(player={self.player!r}, step={self.step!r}, number={self.number}, "
                f"options={len(self.options)})")

    def to_json(self) -> dict:
        return {"player": self.player, "options": self.options, "prompt": self.prompt, "step": self.step,
                "secret": self.secret, "n": self.number}


if not __file__.endswith(".py"):  # the compiled engine: bots read a decision's fields as members (game.pxd)
    fields_as_members(Decision)  # noqa: F821 - declared in dsl/cfields.pxd, for the compiled module only


class Game(FlowMachine):
    """One game in progress. Drive it with `decision` and `apply`; it runs itself otherwise."""

    def __init__(self, model: Model, state: dict, log: list | None = None,
                 on_log: Callable[[dict], None] | None = None, logging: bool = True):
        super().__init__(model, state, Recorder(log, on_log, logging))

    # ---- creating ----

    @classmethod
    def new(cls, model: Model, players: int, seed: int = 0, *, log: bool = True,
            on_log: Callable[[dict], None] | None = None, forced: Iterable[dict] = (),
            defer: bool = False) -> Game:
        """A new game, run up to its first decision (not at all with `defer`: call run()).
        `players` counts the people at the table (see `engine.run.state.new_state`)."""
        game = cls(model, new_state(model, players, seed), on_log=on_log, logging=log)
        game.forced = list(forced)
        start = {"t": "start", "ruleset": model.combo.source, "options": model.combo.options,
                 "players": list(game.state["players"]), "seed": seed, "seeding": SEEDING,
                 "fingerprint": model.fingerprint}
        if "seats" in game.state:
            start["seats"] = players
        game.recorder.record(start)
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
        state = self.state
        p = state["pending"]
        if p is None:
            raise IllegalMove("no decision is pending" + (" (the game is over)" if self.over else ""))
        if option not in p["options"]:
            raise IllegalMove(f"{_short(option)} is not a legal option for {p['player']} at `{p['step']}`; "
                              f"legal: {', '.join(_short(o) for o in p['options'][:12])}"
                              f"{' ...' if len(p['options']) > 12 else ''}")
        recorder = self.recorder
        entry = None
        if not self.silent and recorder.logging:  # a game without a log records no decisions (Recorder.record)
            entry = {"t": "decision", "n": p["n"], "player": p["player"], "step": p["step"], "choice": option}
            if p["secret"]:
                entry["secret"] = True
            entry["state"] = state_hash(state)  # the state the choice was made in: replay checks it
        frame = state["flow"].pop()
        body, var = self._direct.chosen[frame["n"]]
        state["pending"] = None
        state["seq"] += 1
        if entry is not None:
            recorder.record(entry)
        if option is not None and body >= 0:
            v = dict(frame["v"])
            v[var] = option
        else:
            body, v = -1, None
        if self.reference:
            self.run(body, v)
        else:  # (`run` written out: the compiled engine looks a method up by name, at every decision)
            self._direct.run(body, v)

    def play_out(self, pick: Callable[[dict], int | None]) -> None:
        """Play on, taking option number `pick(pending)` at each decision, until the game is
        over or `pick` returns None (the game then waits at that decision, as after `apply`).

        `pending` is the decision as the state holds it: `player`, `options`, `step`,
        `secret`, `n` (and `prompt`, None in a silent game); `pick` reads it and changes
        nothing. The game is the one that `apply` of the same options gives. In a silent game
        (no log and no listener: a sweep's, a bot's copy) the flow does not even stop at the
        decisions `pick` answers, which makes a game of random moves about a sixth cheaper
        (docs/performance.md); `pick` must then leave the game alone (no `clone`, `save` or
        `apply` of it: its flow is not written down until it stops). An answer that is not the
        index of an option raises ValueError, and what `pick` raises is raised; either way
        the game waits, whole, at that decision."""
        direct = self.silent and not self.reference
        self.pick_error = None
        try:
            while True:
                p = self.state["pending"]
                if p is None:
                    return
                i = pick(p)
                if i is None:
                    return
                check_index(i, len(p["options"]))
                if direct:
                    self.pick = pick
                self.apply(p["options"][i])
                if direct and self.pick is None:  # the flow stopped where `pick` did not answer
                    if self.pick_error is not None:
                        raise self.pick_error
                    return
        finally:
            self.pick = self.pick_error = None

    def view(self, player: str | None) -> dict:
        """The state as `player` may see it (None: a spectator who sees only public values)."""
        return view(self.model, self.state, player)

    # ---- log ----

    @property
    def log(self) -> list[dict]:
        return self.recorder.entries

    @log.setter
    def log(self, entries: list[dict]) -> None:
        self.recorder.entries = entries

    @property
    def on_log(self) -> Callable[[dict], None] | None:
        return self.recorder.on_log

    @on_log.setter
    def on_log(self, listener: Callable[[dict], None] | None) -> None:
        self.recorder.on_log = listener
        self.silent = self.recorder.silent

    @property
    def logging(self) -> bool:
        return self.recorder.logging

    def player_log(self, player: str) -> list[dict]:
        """The log as `player` may see it (see engine.run.log.player_log)."""
        return player_log(self.log, player)

    def state_hash(self) -> str:
        return state_hash(self.state)

    # ---- chance ----

    @property
    def forced(self) -> list[dict]:
        """Scripted chance outcomes (scenarios, tests), used before any draw of the same kind."""
        return self.dice.forced

    @forced.setter
    def forced(self, outcomes: list[dict]) -> None:
        self.dice.forced = outcomes

    def reseed(self, rng_state: int) -> None:
        """Replace the random generator's state (a searcher's copy must not know future chance)."""
        self.state["rng"] = rng_state & MASK64
        self.dice = Chance(self.state)

    # ---- save, load, clone ----

    def clone(self) -> Game:
        """An independent copy (no log) for search: changes to it never touch this game."""
        try:  # the state is plain data: marshal makes the same deep copy in C, in 60% of the time
            state = marshal.loads(marshal.dumps(self.state))
        except ValueError:  # pragma: no cover - a value marshal does not know: copy it in Python
            state = copy_value(self.state)
        return Game(self.model, state, log=[], logging=False)

    def save(self, seats: list[str] | None = None) -> dict:
        """The game as a save (JSON-ready): rules, state and checksum; `seats` records who plays
        each seat (human, random, ...) so that people stay people when it is continued."""
        return save_data(self.model, self.state, seats)

    @classmethod
    def from_save(cls, model: Model, save: dict) -> Game:
        return cls(model, copy_value(saved_state(model, save)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.state == other.state


def _short(x: Any) -> str:
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= 40 else s[:37] + "..."
