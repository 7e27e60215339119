"""The simple bots: uniformly random, and a lookahead on the ruleset's evaluation hints.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from dsl.runtime import Ctx, RuleError
from engine.agents.determinize import determinize
from engine.agents.evaluation import relative_value
from engine.run import Decision, Game


class RandomAgent:
    """Picks a legal option uniformly at random, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def choose(self, game: Game, decision: Decision) -> int:
        return self.rng.randrange(len(decision.options))

    def pick(self, pending: dict) -> int:
        """`choose` from the pending decision alone, for `Game.play_out` (the same draw)."""
        return self.rng.randrange(len(pending["options"]))


def preferences(game: Game, decision: Decision) -> list[float] | None:
    """The ruleset's `hints.prefer` for each option (None when the ruleset declares none).
    Evaluate it on a determinization: a preference must not read what the seat cannot see."""
    prefer = game.model.hints.get("prefer")
    if prefer is None:
        return None
    out = []
    for option in decision.options:
        try:
            out.append(float(prefer(Ctx(game.state, game.model, game, {"player": decision.player, "item": option}))))
        except (RuleError, TypeError, ValueError):
            out.append(0.0)
    return out


class HeuristicAgent:
    """Tries options on determinized copies and keeps the one whose position is best.

    For each option (the `width` most preferred when there are more), in `samples` deals of
    what the seat cannot see: apply it, let the game run on for up to `horizon` more decisions
    (played at random, stopping at the ruleset's hints.until steps, by default when the deciding
    step comes round again), and score the
    position with `relative_value` (the ruleset's hints.evaluate, less the best opponent's)
    plus the option's hints.prefer. Ties are broken at random."""

    name = "heuristic"

    def __init__(self, seed: int = 0, width: int = 24, samples: int = 0, horizon: int = -1):
        self.rng = random.Random(seed)
        self.width = width
        self.samples = samples  # 0: the ruleset's hints.samples, else 1
        self.horizon = horizon  # -1: the ruleset's hints.horizon, else 0

    def choose(self, game: Game, decision: Decision) -> int:
        if len(decision.options) == 1:
            return 0
        values = self.values(game, decision)
        return max(values, key=lambda i: values[i])

    def values(self, game: Game, decision: Decision) -> dict[int, float]:
        """What each tried option is worth (option index -> value; random tie-break included)."""
        n = len(decision.options)
        me = decision.player
        seen = determinize(game, me, self.rng)
        prefs = preferences(seen, decision) or [0.0] * n
        candidates = list(range(n))
        if n > self.width:  # the most promising first, chance among equals
            order = sorted(candidates, key=lambda i: (-prefs[i], self.rng.random()))
            candidates = order[:self.width]
        samples = self.samples or int(game.model.hints.get("samples", 1))
        horizon = self.horizon if self.horizon >= 0 else int(game.model.hints.get("horizon", 0))
        out = {}
        for i in candidates:
            total = 0.0
            for _ in range(samples):
                total += self._try(game, decision, i, horizon)
            out[i] = total / samples + prefs[i] + self.rng.random() * 1e-6  # random tie-break
        return out

    def _try(self, game: Game, decision: Decision, i: int, horizon: int) -> float:
        sim = determinize(game, decision.player, self.rng)
        stops = game.model.hints.get("until") or (decision.step,)
        try:
            sim.apply(decision.options[i])
            sim.play_out(random_moves(self.rng, horizon, stops))
        except RuleError:
            return -math.inf
        return relative_value(sim, decision.player)


def random_moves(rng: random.Random, limit: int, stops: tuple | list = ()) -> Callable[[dict], int | None]:
    """A `pick` for `Game.play_out`: uniformly random moves from `rng`, for at most `limit`
    decisions, and none at a decision of one of the steps `stops`."""
    left = limit

    def pick(pending: dict) -> int | None:
        nonlocal left
        if left <= 0 or pending["step"] in stops:
            return None
        left -= 1
        return rng.randrange(len(pending["options"]))
    return pick


def greedy_choice(game: Game, decision: Decision, rng: random.Random, width: int = 6) -> Any:
    """A cheap heuristic move for search playouts: one deal, `width` options (most preferred
    first), each applied once on a copy and scored by relative_value. The game is already a
    determinization, so no re-deal is needed here."""
    n = len(decision.options)
    if n == 1:
        return 0
    prefs = preferences(game, decision) or [0.0] * n
    order = sorted(range(n), key=lambda i: (-prefs[i], rng.random()))[:width]
    best, best_value = order[0], -math.inf
    for i in order:
        sim = game.clone()
        try:
            sim.apply(decision.options[i])
        except RuleError:
            continue
        v = relative_value(sim, decision.player) + prefs[i] + rng.random() * 1e-6
        if v > best_value:
            best, best_value = i, v
    return best
