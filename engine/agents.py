"""Agents: everything that answers decisions goes through one interface.

    agent.choose(game_view, decision) -> index into decision.options

An agent sees only `view(state, player)` (what the rules let that player see) and the
decision addressed to it. The search agent also gets a `Game` it may clone, but it
determinizes first: hidden values are re-dealt from what the player could know, and
chance is re-seeded, so it never peeks at another player's secrets.
"""
from __future__ import annotations

import json
import math
import random
import time
from typing import Any, Protocol

from dsl.runtime import Ctx, RuleError
from engine.run.game import Decision, Game


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
    """Determinized Monte Carlo tree search (single-observer information-set MCTS).

    Every iteration deals a fresh determinization of what the deciding player cannot see
    (`determinize`), then walks one shared tree of decisions, everybody's, from the current
    one: UCB1 among the options legal in this deal (an option's "availability" counts the
    deals where it could be chosen), a new node, a random playout of at most `depth`
    decisions, and the outcome for each player backed up the path, each node scored for the
    player who chose it. Budget: `playouts` iterations, or `seconds` of wall time if given
    (at least one iteration per root option either way)."""

    name = "search"

    def __init__(self, seed: int = 0, playouts: int = 64, depth: int = 60, seconds: float | None = None,
                 exploration: float = 0.7):
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.depth = depth
        self.seconds = seconds
        self.c = exploration

    def choose(self, game: Game, decision: Decision) -> int:
        me = decision.player
        root = _Node()
        deadline = time.monotonic() + self.seconds if self.seconds else None
        n = len(decision.options)
        for t in range(max(self.playouts, n)):
            if deadline and t >= n and time.monotonic() > deadline:
                break
            self._iterate(root, determinize(game, me, self.rng))
        keys = [_key(o) for o in decision.options]
        return max(range(n), key=lambda i: (root.children[keys[i]].visits if keys[i] in root.children else -1,
                                            -i))

    def _iterate(self, root: _Node, sim: Game) -> None:
        path: list[tuple[_Node, str]] = []
        node = root
        try:
            while not sim.over:  # selection and expansion
                d = sim.decision
                keys = [_key(o) for o in d.options]
                for k in keys:
                    child = node.children.get(k)
                    if child is not None:
                        child.avail += 1
                untried = [i for i, k in enumerate(keys) if k not in node.children]
                if untried:
                    i = untried[self.rng.randrange(len(untried))]
                    child = node.children[keys[i]] = _Node()
                    child.avail = 1
                    sim.apply(d.options[i])
                    path.append((child, d.player))
                    break
                i = max(range(len(keys)), key=lambda j: node.children[keys[j]].ucb(self.c))
                node = node.children[keys[i]]
                sim.apply(d.options[i])
                path.append((node, d.player))
            steps = 0
            while not sim.over and steps < self.depth:  # playout
                d = sim.decision
                sim.apply(d.options[self.rng.randrange(len(d.options))])
                steps += 1
            rewards: dict[str, float] = {}
            for child, mover in path:  # backup, each node for the player who chose it
                if mover not in rewards:
                    rewards[mover] = outcome_value(sim, mover)
                child.visits += 1
                child.total += rewards[mover]
        except RuleError:
            for child, _mover in path:
                child.visits += 1


class _Node:
    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 0

    def ucb(self, c: float) -> float:
        if not self.visits:
            return math.inf
        return self.total / self.visits + c * math.sqrt(math.log(max(1, self.avail)) / self.visits)


def _key(option: Any) -> Any:
    """A hashable key for an option (options are JSON values)."""
    return option if isinstance(option, (str, int, float, bool)) or option is None else json.dumps(option)


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
