"""The search agent: information-set Monte Carlo tree search over determinizations.
"""
from __future__ import annotations

import json
import math
import random
import time
from typing import Any

from dsl.runtime import RuleError
from engine.agents.basic import HeuristicAgent, greedy_choice, random_moves
from engine.agents.determinize import determinize
from engine.agents.evaluation import outcome_value
from engine.run import Decision, Game


class SearchAgent:
    """Determinized Monte Carlo tree search (single-observer information-set MCTS).

    Every iteration deals a fresh determinization of what the deciding player cannot see
    (`determinize`), then walks one shared tree of decisions, everybody's, from the current
    one: UCB1 among the options legal in this deal (an option's "availability" counts the
    deals where it could be chosen), a new node, a playout of at most `depth` decisions
    (`rollout`: random moves, or the cheap greedy heuristic), and the outcome for each player
    backed up the path, each node scored for the player who chose it. Budget: `iterations`
    per decision, and never more than `time` seconds of wall time (checked before each
    iteration, so a decision takes at most `time` plus one iteration)."""

    name = "search"

    def __init__(self, seed: int = 0, iterations: int = 1000, time: float = 0.8, depth: int = 10,
                 rollout: str = "random", c: float = 0.7, prior: int = 4):
        self.rng = random.Random(seed)
        self.prior = prior
        self.judge = HeuristicAgent(seed=self.rng.getrandbits(32))
        self.iterations = iterations
        self.seconds = time
        self.depth = depth
        self.rollout = rollout
        self.c = c

    def choose(self, game: Game, decision: Decision) -> int:
        n = len(decision.options)
        if n == 1:
            return 0
        me = decision.player
        deadline = time.monotonic() + self.seconds if self.seconds > 0 else None
        root = _Node()
        keys = [_key(o) for o in decision.options]
        if self.prior:
            self._seed_root(root, game, decision, keys)
        for t in range(max(1, self.iterations)):
            if deadline and t and time.monotonic() > deadline:
                break
            self._iterate(root, determinize(game, me, self.rng))
        return max(range(n), key=lambda i: (root.children[keys[i]].visits if keys[i] in root.children else -1,
                                            root.children[keys[i]].mean() if keys[i] in root.children else 0.0,
                                            -i))

    def _seed_root(self, root: _Node, game: Game, decision: Decision, keys: list) -> None:
        """Progressive bias: each root option starts with `prior` virtual visits worth what the
        heuristic bot thinks of it (its evaluation and hints.prefer, in a re-dealt copy), so
        a short search plays at least as well as the heuristic, and a longer one corrects it."""
        values = self.judge.values(game, decision)
        scale = float(game.model.hints.get("scale", 10.0))
        for i, v in values.items():
            child = root.children.setdefault(keys[i], _Node())
            w = 0.5 + 0.5 * math.tanh(v / scale) if math.isfinite(v) else (1.0 if v > 0 else 0.0)
            child.visits += self.prior
            child.total += self.prior * w
            child.avail += self.prior

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
            if self.rollout == "heuristic":  # playout
                steps = 0
                while not sim.over and steps < self.depth:
                    d = sim.decision
                    sim.apply(d.options[greedy_choice(sim, d, self.rng)])
                    steps += 1
            else:
                sim.play_out(random_moves(self.rng, self.depth))
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

    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0

    def ucb(self, c: float) -> float:
        if not self.visits:
            return math.inf
        return self.total / self.visits + c * math.sqrt(math.log(max(1, self.avail)) / self.visits)


def _key(option: Any) -> Any:
    """A hashable key for an option (options are JSON values)."""
    return option if isinstance(option, (str, int, float, bool)) or option is None else json.dumps(option)
