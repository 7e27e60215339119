"""Agents: everything that answers decisions goes through one interface.

    agent.choose(game_view, decision) -> index into decision.options

An agent sees only `view(state, player)` (what the rules let that player see) and the
decision addressed to it. The search agent also gets a `Game` it may clone, but it
determinizes first: hidden values are re-dealt from what the player could know, and
chance is re-seeded, so it never peeks at another player's secrets.
"""
from __future__ import annotations

from typing import Any, Protocol

from engine.agents.basic import HeuristicAgent, RandomAgent
from engine.agents.determinize import determinize
from engine.agents.evaluation import evaluate, outcome_value
from engine.agents.search import SearchAgent
from engine.run import Decision, Game

__all__ = ["AGENTS", "Agent", "HeuristicAgent", "RandomAgent", "SearchAgent", "determinize", "evaluate",
           "make_agent", "outcome_value"]


class Agent(Protocol):
    name: str

    def choose(self, game: Game, decision: Decision) -> int: ...


AGENTS = {"random": RandomAgent, "heuristic": HeuristicAgent, "search": SearchAgent}


def make_agent(kind: str, seed: int) -> Any:
    if kind not in AGENTS:
        raise ValueError(f"unknown bot `{kind}`; choose from {', '.join(AGENTS)}")
    return AGENTS[kind](seed=seed)
