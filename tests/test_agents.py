"""Agents behind one interface: the heuristic and search bots must actually play better
than random on a game where better play is obvious, and must not peek at hidden lists."""
from __future__ import annotations

import random
from pathlib import Path

from engine.agents import HeuristicAgent, RandomAgent, SearchAgent, determinize
from engine.model import load
from engine.run.game import Game

RACE = str(Path(__file__).resolve().parent / "rulesets" / "race")


def wins(agent_factory, games: int = 20) -> int:
    model = load(RACE, players=2)
    won = 0
    for seed in range(games):
        g = Game.new(model, 2, seed, log=False)
        agents = {"P1": agent_factory(seed), "P2": RandomAgent(seed + 1000)}
        while not g.over:
            d = g.decision
            g.apply(d.options[agents[d.player].choose(g, d)])
        won += g.result["winners"] == ["P1"]
    return won


def test_random_agent_is_about_even() -> None:
    assert 4 <= wins(RandomAgent) <= 16


def test_heuristic_agent_beats_random() -> None:
    assert wins(HeuristicAgent) >= 16


def test_search_agent_beats_random() -> None:
    assert wins(lambda s: SearchAgent(seed=s, playouts=24)) >= 14


def test_determinize_redeals_lists_the_player_cannot_see() -> None:
    model = load(RACE, players=2)
    g = Game.new(model, 2, 1)
    # secret_pick is visible to its owner only; give P2 a hidden list of ids.
    g.state["ent"]["P2"]["secret_pick"] = ["t1", "t2", "t3", "t4", 7]
    g.state["ent"]["P1"]["secret_pick"] = ["t1"]
    seen = set()
    for s in range(10):
        sim = determinize(g, "P1", random.Random(s))
        seen.add(tuple(sim.state["ent"]["P2"]["secret_pick"]))
        assert sim.state["ent"]["P1"]["secret_pick"] == ["t1"], "the searcher's own hidden list stays"
        assert sim.state["ent"]["P2"]["secret_pick"][4] == 7, "values that are not ids stay in place"
        hidden = sim.state["ent"]["P2"]["secret_pick"]
        assert sorted(map(str, hidden)) == sorted(map(str, g.state["ent"]["P2"]["secret_pick"]))
    assert len(seen) > 1, "another player's hidden list must be re-dealt"
    assert g.state["ent"]["P2"]["secret_pick"][0] == "t1", "determinizing never touches the real game"
