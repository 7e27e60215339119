"""Agents: everything that answers decisions goes through one interface.

    agent.choose(game_view, decision) -> index into decision.options

An agent sees only `view(state, player)` (what the rules let that player see) and the
decision addressed to it. The search agent also gets a `Game` it may clone, but it
determinizes first: hidden values are re-dealt from what the player could know, and
chance is re-seeded, so it never peeks at another player's secrets.
"""
from __future__ import annotations

import math
import random
import time
from typing import Any, Protocol

from dsl.runtime import Ctx, RuleError
from engine.game import Decision, Game


class Agent(Protocol):
    name: str

    def choose(self, game: Game, decision: Decision) -> int: ...


class RandomAgent:
    """Picks a legal option uniformly at random, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def choose(self, game: Game, decision: Decision) -> int:
        return self.rng.randrange(len(decision.options))


class HeuristicAgent:
    """One-step lookahead with the ruleset's `hints.evaluate` (or the score when absent):
    tries each option on a clone, runs the game on until the next decision of anybody,
    and keeps the best. Chance in the lookahead uses a re-seeded generator."""

    name = "heuristic"

    def __init__(self, seed: int = 0, max_options: int = 24):
        self.rng = random.Random(seed)
        self.max_options = max_options

    def choose(self, game: Game, decision: Decision) -> int:
        n = len(decision.options)
        candidates = list(range(n))
        if n > self.max_options:
            candidates = self.rng.sample(candidates, self.max_options)
        best, best_value = candidates[0], -math.inf
        for i in candidates:
            sim = determinize(game, decision.player, self.rng)
            try:
                sim.apply(decision.options[i])
            except RuleError:
                continue
            v = evaluate(sim, decision.player) + self.rng.random() * 1e-6  # random tie-break
            if v > best_value:
                best, best_value = i, v
        return best


class SearchAgent:
    """Determinized Monte Carlo tree search (flat UCB at the root over playouts).

    Each playout determinizes the game for the deciding player, applies one root option,
    then plays random moves to the end (or `depth` decisions) and scores the position with
    `evaluate`. Budget: `playouts` per decision, or `seconds` if given."""

    name = "search"

    def __init__(self, seed: int = 0, playouts: int = 64, depth: int = 60, seconds: float | None = None):
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.depth = depth
        self.seconds = seconds

    def choose(self, game: Game, decision: Decision) -> int:
        n = len(decision.options)
        visits = [0] * n
        totals = [0.0] * n
        deadline = time.monotonic() + self.seconds if self.seconds else None
        me = decision.player
        for t in range(max(self.playouts, n)):
            if deadline and time.monotonic() > deadline and t >= n:
                break
            if t < n:
                i = t
            else:
                i = max(range(n), key=lambda k: totals[k] / visits[k] + 1.4 * math.sqrt(math.log(t) / visits[k]))
            sim = determinize(game, me, self.rng)
            try:
                sim.apply(decision.options[i])
                steps = 0
                while not sim.over and steps < self.depth:
                    d = sim.decision
                    sim.apply(d.options[self.rng.randrange(len(d.options))])
                    steps += 1
                value = outcome_value(sim, me)
            except RuleError:
                value = -1.0
            visits[i] += 1
            totals[i] += value
        return max(range(n), key=lambda k: (visits[k], totals[k] / max(1, visits[k])))


def determinize(game: Game, player: str, rng: random.Random) -> Game:
    """A full game for `player` to search in, consistent with what `player` can see.

    Chance is re-seeded, so future dice and shuffles are unknown to the searcher. Every
    list the player cannot see (other hands, face-down cards, the deck's order) is pooled
    by the kind of entity it holds and re-dealt at random, keeping each list's length and
    every visible item in place: the searcher sees "some unseen cards", never which.
    Hidden single values (a sealed bid) stay as they are; rulesets that keep secrets in
    single values should keep them in lists of ids if their bots must not peek."""
    sim = game.clone()
    sim.reseed(rng.getrandbits(64))
    _redeal_hidden_lists(sim, player, rng)
    return sim


def _redeal_hidden_lists(sim: Game, player: str, rng: random.Random) -> None:
    m = sim.model
    state = sim.state
    places: list[list] = []
    for name, vis in m.globals_visible.items():
        if vis != "all" and isinstance(state["globals"].get(name), list):
            places.append(state["globals"][name])
    for eid, fields in state["ent"].items():
        k = m.kinds["player"] if eid in state["players"] else m.kinds.get(m.kind_of.get(eid, ""))
        if k is None:
            continue
        owner = eid if k.name == "player" else (fields.get(k.owner) if k.owner else None)
        for f, v in fields.items():
            vis = k.visible.get(f, "all")
            if isinstance(v, list) and v and (vis == "none" or (vis == "owner" and owner != player)):
                places.append(v)
    pools: dict[str, list] = {}
    for lst in places:
        for x in lst:
            if isinstance(x, str) and x in m.kind_of:
                pools.setdefault(m.kind_of[x], []).append(x)
    for pool in pools.values():
        rng.shuffle(pool)
    for lst in places:
        for i, x in enumerate(lst):
            if isinstance(x, str) and x in m.kind_of:
                lst[i] = pools[m.kind_of[x]].pop()


def evaluate(game: Game, player: str) -> float:
    m = game.model
    if game.over and game.result:
        return 1e6 if player in game.result["winners"] else -1e6
    fn = m.evaluate or m.score
    if fn is None:
        return 0.0
    try:
        return float(fn(Ctx(game.state, m, game, {"player": player})))
    except (RuleError, TypeError, ValueError):
        return 0.0


def outcome_value(game: Game, player: str) -> float:
    """1 for a win (shared by the tied), else a 0..1 rank-based value; unfinished games
    are scored by evaluate() relative to the best opponent."""
    if game.over and game.result:
        winners = game.result["winners"]
        if player in winners:
            return 1.0 / len(winners)
        ranking = game.result["ranking"]
        return 0.5 * (1 - ranking.index(player) / max(1, len(ranking) - 1))
    mine = evaluate(game, player)
    others = [evaluate(game, p) for p in game.state["players"] if p != player]
    best_other = max(others) if others else 0.0
    return 0.5 + 0.5 * math.tanh((mine - best_other) / 10.0)


AGENTS = {"random": RandomAgent, "heuristic": HeuristicAgent, "search": SearchAgent}


def make_agent(kind: str, seed: int) -> Any:
    if kind not in AGENTS:
        raise ValueError(f"unknown bot `{kind}`; choose from {', '.join(AGENTS)}")
    return AGENTS[kind](seed=seed)
