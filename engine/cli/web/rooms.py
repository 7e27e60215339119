"""A room: one game on the server, its seats, their tokens, and the only way to change it.

The room is the authority (as boardgame.io's master): an action names the decision it
answers (`n`) and the option's index; the room checks the seat's right to act, that the
decision is still pending and the index legal, then applies it through `Game.apply`. One
lock per room serialises everything that reads or changes the game, so two seats acting at
once, or a bot thinking while a page is drawn, cannot corrupt it.

Secret choices (a plan, a bid) are gathered on a private draft copy of the game (`clone`),
so a person can review and change them; only on confirmation are they applied, in order, to
the real game.
"""
from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.agents import seat_agent
from engine.model import Model
from engine.run.game import Game, IllegalMove
from engine.run.state import controller, seat_count

HUMAN = "human"


def new_token() -> str:
    return secrets.token_urlsafe(18)  # 144 random bits: unguessable


@dataclass
class Draft:
    """A seat's secret choices so far, made on a private copy of the game."""

    game: Game
    seat: str
    choices: list[tuple[Any, str]] = field(default_factory=list)  # (option, its label)

    @property
    def review(self) -> bool:
        """All of this run of secret choices is made: the seat now confirms or starts over."""
        d = self.game.decision
        return d is None or not d.secret or d.player != self.seat


class Room:
    """One game with its seats. `kinds[i]` is `human` or a bot spec for seat i; `tokens` maps
    each token to its role: ("seat", P), ("table",) for hot-seat, ("watch",), ("admin",)."""

    def __init__(self, gid: str, model: Model, game: Game, kinds: list[str], tokens: dict[str, tuple],
                 seed: int = 0):
        self.id = gid
        self.model = model
        self.game = game
        self.kinds = kinds
        self.tokens = tokens
        self.lock = threading.Lock()
        self.drafts: dict[str, Draft] = {}
        # The people at the table (with several hands each, fewer than the players of the rules).
        self.players: list[str] = [f"P{i + 1}" for i in range(seat_count(game.state))]
        # Bots seeded as in play, simulate and tournament (seat_agent): the same seat plays the same.
        self.agents = {p: seat_agent(k, seed, i) for i, (p, k) in enumerate(zip(self.players, kinds, strict=True))
                       if k != HUMAN}
        self.version = 0
        self.listeners: list[Callable[[], None]] = []
        self.saved_log = 0  # how many log entries the store already holds

    # ---- who may do what ----

    @property
    def humans(self) -> list[str]:
        return [p for p, k in zip(self.players, self.kinds, strict=True) if k == HUMAN]

    def table_seats(self) -> tuple[list[str], list[str]]:
        """Every player of the rules (each hand gets its colour on the board) with the kind of the
        person who plays it."""
        hands = list(self.game.state["players"])
        return hands, [self.kinds[self.players.index(controller(self.game.state, p))] for p in hands]

    def role(self, token: Any) -> tuple | None:
        return self.tokens.get(token) if isinstance(token, str) else None

    def links(self) -> dict[str, str]:
        """Role name -> token (seat ids, `table`, `watch`, `admin`)."""
        return {(r[1] if r[0] == "seat" else r[0]): t for t, r in self.tokens.items()}

    # ---- changes ----

    def _changed(self) -> None:
        self.version += 1
        for fn in list(self.listeners):
            fn()

    def pending_for(self, seat: str) -> Any:
        """The decision `seat` faces now: on its draft if it has one, else the game's."""
        draft = self.drafts.get(seat)
        return draft.game.decision if draft else self.game.decision

    def act(self, seat: str, n: Any, i: Any) -> str | None:
        """Take option `i` of decision `n` for `seat`. Returns an error message, or None."""
        if not isinstance(n, int) or not isinstance(i, int) or isinstance(n, bool) or isinstance(i, bool):
            return "malformed action: `n` and `i` must be whole numbers"
        with self.lock:
            draft = self.drafts.get(seat)
            if draft is not None and draft.review:
                return "your secret choices are made: confirm them, or start over to change them"
            d = draft.game.decision if draft else self.game.decision
            if d is None:
                return "no decision is pending" + (" (the game is over)" if self.game.over else "")
            if d.player != seat:
                return "it is not your turn to decide"
            if n != d.number:
                return f"that choice is stale: decision {n} is no longer asked (now: decision {d.number})"
            if not 0 <= i < len(d.options):
                return f"no option {i} at decision {n}"
            option = d.options[i]
            if d.secret:
                if draft is None:
                    draft = self.drafts[seat] = Draft(self.game.clone(), seat)
                from engine.cli.web.present import option_text
                label = option_text(draft.game, option)
                try:
                    draft.game.apply(option)
                except IllegalMove as e:
                    return str(e)
                draft.choices.append((option, label))
            else:
                try:
                    self.game.apply(option)
                except IllegalMove as e:
                    return str(e)
            self._changed()
        return None

    def confirm(self, seat: str) -> str | None:
        """Apply `seat`'s drafted secret choices to the game, in order."""
        with self.lock:
            draft = self.drafts.get(seat)
            if draft is None:
                return "there are no secret choices to confirm"
            if not draft.review:
                return "finish your secret choices first (or start over)"
            del self.drafts[seat]
            for option, _ in draft.choices:
                d = self.game.decision
                if d is None or d.player != seat or option not in d.options:
                    self._changed()
                    return "the game moved on before your choices were confirmed; choose again"
                self.game.apply(option)
            self._changed()
        return None

    def reset(self, seat: str) -> str | None:
        with self.lock:
            if self.drafts.pop(seat, None) is None:
                return "there are no secret choices to start over"
            self._changed()
        return None

    def step_bot(self) -> bool:
        """Let the bot whose turn it is take one decision. False when it is nobody's or a person's."""
        with self.lock:
            d = self.game.decision
            if d is None or d.player not in self.agents:
                return False
            i = self.agents[d.player].choose(self.game, d)
            self.game.apply(d.options[i])
            self._changed()
        return True

    def bot_turn(self) -> bool:
        d = self.game.decision
        return d is not None and d.player in self.agents
