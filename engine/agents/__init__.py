"""Agents: everything that answers decisions goes through one interface.

    agent.choose(game_view, decision) -> index into decision.options

An agent sees only `view(state, player)` (what the rules let that player see) and the
decision addressed to it. The search and heuristic agents also get a `Game` they may clone,
but they determinize first: hidden values are re-dealt from what the player could know, and
chance is re-seeded, so they never peek at another player's secrets.

Bots are named by specs (`search:time=0.5`, see engine/agents/spec.py and docs/agents.md);
`make_agent(spec, seed)` builds one, the same way for every front door.
"""
from __future__ import annotations

import hashlib
from typing import Any, Protocol

from engine.agents.basic import HeuristicAgent, RandomAgent
from engine.agents.determinize import determinize
from engine.agents.evaluation import evaluate, outcome_value, relative_value
from engine.agents.search import SearchAgent
from engine.agents.spec import Param, SpecError, describe, parse_spec, split_specs
from engine.run import Decision, Game

__all__ = ["AGENTS", "SETTINGS", "Agent", "HeuristicAgent", "RandomAgent", "SearchAgent", "SpecError",
           "check_spec", "determinize", "evaluate", "make_agent", "outcome_value", "relative_value",
           "seat_agent", "seat_seed", "spec_help", "split_specs"]


class Agent(Protocol):
    name: str

    def choose(self, game: Game, decision: Decision) -> int: ...


AGENTS = {"random": RandomAgent, "heuristic": HeuristicAgent, "search": SearchAgent}

# The settings each kind takes on the command line: `kind:key=value,...`.
SETTINGS: dict[str, dict[str, Param]] = {
    "random": {},
    "heuristic": {
        "width": Param(int, 24, "most options tried per decision (the most preferred by hints.prefer)", low=1,
                       high=10_000),
        "samples": Param(int, 0, "deals each option is tried in (0: the ruleset's hints.samples, else 1)", low=0,
                         high=64),
        "horizon": Param(int, -1, "decisions played on at random after an option before judging it "
                         "(-1: the ruleset's hints.horizon, else 0)", low=-1, high=1000),
    },
    "search": {
        "iterations": Param(int, 1000, "tree-search iterations per decision (at most)", low=1, high=10_000_000),
        "time": Param(float, 0.8, "seconds per decision (at most; 0: no time limit)", low=0, high=3600),
        "rollout": Param(str, "random", "how playouts choose moves", choices=("random", "heuristic")),
        "depth": Param(int, 10, "decisions per playout before the position is judged", low=0, high=100_000),
        "c": Param(float, 0.7, "UCB1 exploration constant", low=0, high=100),
        "prior": Param(int, 4, "virtual visits each root option starts with, worth the heuristic bot's value of it "
                       "(0: none)", low=0, high=1000),
    },
}


def check_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """(kind, settings) of a bot spec; SpecError with a clear message when it is wrong."""
    return parse_spec(spec, SETTINGS)


def make_agent(spec: str, seed: int) -> Any:
    """A bot from its spec (`random`, `search:time=0.5,rollout=heuristic`) and a seed."""
    kind, settings = check_spec(spec)
    agent = AGENTS[kind](seed=seed, **settings)
    agent.name = spec.strip()
    return agent


def seat_seed(game_seed: int, seat: int) -> int:
    """The seed of the bot in seat `seat` (0-based) of the game with seed `game_seed`: a 63-bit
    hash, so seats share nothing and the value fits an SQLite integer."""
    digest = hashlib.sha256(f"daimyo-agent/{game_seed}/{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seat_agent(spec: str, game_seed: int, seat: int) -> Any:
    """The bot for one seat of a game: every front door (play, serve, simulate, tournament)
    builds its bots here, so the same spec, game seed and seat give the same bot, which makes
    the same moves."""
    return make_agent(spec, seat_seed(game_seed, seat))


def spec_help() -> str:
    """Every kind with its settings and defaults (for --help and docs)."""
    return describe(SETTINGS)
