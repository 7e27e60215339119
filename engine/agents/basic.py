"""The simple bots: uniformly random, and one-step lookahead on the ruleset's evaluation.
"""
from __future__ import annotations

import math
import random

from dsl.runtime import RuleError
from engine.agents.determinize import determinize
from engine.agents.evaluation import evaluate
from engine.run import Decision, Game


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
