"""Agents behind one interface: the heuristic and search bots must actually play better
than random on a game where better play is obvious, and must not peek at hidden lists."""
from __future__ import annotations

import json
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
    assert wins(lambda s: SearchAgent(seed=s, iterations=24, time=0)) >= 14


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


# --------------------------------------------------------------------------- specs

def test_agent_specs_take_settings_and_reject_bad_ones() -> None:
    import pytest

    from engine.agents import SpecError, make_agent, split_specs
    a = make_agent("search:iterations=200,rollout=heuristic", 1)
    assert (a.iterations, a.rollout, a.seconds) == (200, "heuristic", 0.8)
    assert make_agent("search:time=0.5", 1).seconds == 0.5
    assert make_agent("heuristic:samples=3", 1).samples == 3
    assert split_specs("heuristic,search:time=0.5,rollout=random,random") == [
        "heuristic", "search:time=0.5,rollout=random", "random"]
    for bad, says in [("genius", "unknown bot `genius`"), ("search:time=fast", "takes float"),
                      ("search:rollout=smart", "one of random, heuristic"), ("random:x=1", "has no setting `x`"),
                      ("search:iterations=0", "between"), ("search:time", "key=value")]:
        with pytest.raises(SpecError, match=says):
            make_agent(bad, 1)


def test_search_time_per_decision_is_bounded() -> None:
    import time

    from engine.agents import make_agent
    model = load("shogun", players=4)
    g = Game.new(model, 4, 5, log=False)
    bot = make_agent("search:time=0.2,iterations=100000", 1)
    for _ in range(3):
        d = g.decision
        t0 = time.monotonic()
        g.apply(d.options[bot.choose(g, d)])
        assert time.monotonic() - t0 < 0.2 + 1.0, "a decision takes its time budget plus at most one iteration"


# --------------------------------------------------------------------------- no peeking

def _cards_game_at_p1_turn() -> Game:
    model = load("shogun-cards", players=4)
    g = Game.new(model, 4, 11, log=False)
    rng = random.Random(3)
    while not (g.decision.player == "P1" and g.decision.step == "take_turn"):
        d = g.decision
        g.apply(d.options[rng.randrange(len(d.options))])
    return g


def test_search_choice_ignores_opponents_secrets() -> None:
    """Rule of every game: what another player holds face down is theirs alone. Swapping a card
    of P2's hand with one in the deck (both unseen by P1) must not change what P1's bot does."""
    from engine.agents import make_agent
    g = _cards_game_at_p1_turn()
    other = g.clone()
    hand, deck = other.state["ent"]["P2"]["hand"], other.state["globals"]["deck"]
    hand[0], deck[-1] = deck[-1], hand[0]
    assert other.state != g.state
    for spec in ("search:iterations=40,time=0", "heuristic:samples=2,horizon=5"):
        a, b = make_agent(spec, 7), make_agent(spec, 7)
        assert a.choose(g, g.decision) == b.choose(other, other.decision), spec
    sims = [determinize(x, "P1", random.Random(5)).state for x in (g, other)]
    assert sims[0] == sims[1], "the copies the bot searches are the same"


def test_determinize_resamples_hidden_counts_and_sealed_bins() -> None:
    """Samurai Swords, Action 5 and Action 1: ronin lie face down and koku go into the planning
    bins in secret. The split is re-dealt; the owner's total (announced) is kept."""
    model = load("samurai-swords", players=4)
    g = Game.new(model, 4, 2, log=False)
    mine = [p for p, f in g.state["ent"].items() if f.get("owner") == "P2" and "ronin" in f][:3]
    assert len(mine) >= 2
    for i, pid in enumerate(mine):
        g.state["ent"][pid]["ronin"] = 3 if i == 0 else 0
    g.state["ent"]["P2"]["plan"] = {"turn": 4, "build": 0, "levy": 0, "ronin": 0, "ninja": 0}
    other = g.clone()
    for i, pid in enumerate(mine):
        other.state["ent"][pid]["ronin"] = 3 if i == 1 else 0
    other.state["ent"]["P2"]["plan"] = {"turn": 0, "build": 1, "levy": 3, "ronin": 0, "ninja": 0}
    splits = set()
    for s in range(12):
        a, b = (determinize(x, "P1", random.Random(s)).state for x in (g, other))
        assert a == b, "only the total of P2's secrets may matter"
        held = [pid for pid, f in a["ent"].items() if f.get("owner") == "P2" and "ronin" in f]
        assert sum(a["ent"][pid]["ronin"] for pid in held) == 3, "P2's ronin, wherever they lie"
        assert sum(a["ent"]["P2"]["plan"].values()) == 4
        splits.add((tuple(a["ent"][pid]["ronin"] for pid in mine), tuple(a["ent"]["P2"]["plan"].values())))
    assert len(splits) > 1, "the split is re-sampled"
    own = determinize(g, "P2", random.Random(1)).state
    assert own["ent"]["P2"]["plan"] == g.state["ent"]["P2"]["plan"], "a player's own secrets stay"


def test_determinize_follows_the_order_the_state_holds_its_entities() -> None:
    """The hidden places are looked up once per model (determinize runs for every option a bot
    tries) and again when a state holds its entities in another order (a save written by
    another tool): the copy is then what it would be on a model that never saw the first."""
    g = _cards_game_at_p1_turn()
    shuffled = g.clone()
    shuffled.state["ent"] = dict(reversed(list(shuffled.state["ent"].items())))
    determinize(g, "P1", random.Random(5))  # the model now knows g's order
    got = determinize(shuffled, "P1", random.Random(5)).state
    g.model.derived.pop("hidden_plan")
    fresh = determinize(shuffled, "P1", random.Random(5)).state
    assert list(got["ent"]) == list(fresh["ent"]) and got == fresh
    assert determinize(g, "P1", random.Random(5)).state != got  # the order decides the deal


def test_play_builds_bots_from_the_same_specs(capsys) -> None:
    """`daimyo play --seats` takes the specs the tournament takes, and refuses a wrong one."""
    from engine.cli import main
    assert main(["play", RACE, "--players", "3", "--seats", "heuristic:samples=2,search:iterations=8,time=0,random",
                 "--quiet"]) == 0
    assert "Winner" in capsys.readouterr().out
    assert main(["play", RACE, "--players", "3", "--seats", "heuristic,search:rollout=smart"]) == 2
    assert "`rollout` is one of random, heuristic" in capsys.readouterr().err


def _played(log_file: Path) -> tuple[list, dict]:
    entries = [json.loads(line) for line in log_file.read_text().splitlines()]
    choices = [(e["player"], e["choice"]) for e in entries if e["t"] == "decision"]
    return choices, entries[-1]["result"]


def test_play_and_the_tournament_seat_the_same_bots(tmp_path, capsys) -> None:
    """Same strength whichever front door: a game of `daimyo tournament` (and of `simulate`, which
    it runs) and `daimyo play` with the same seed and seats is the same game, move for move,
    because both build each seat's bot with `seat_agent(spec, game seed, seat)`."""
    from engine.cli import main
    from tools.simulate import play_game
    from tools.store import Store
    db = str(tmp_path / "t.db")
    assert main(["tournament", RACE, "--players", "4", "--agents", "heuristic,random", "--games", "1", "--jobs", "1",
                 "--db", db, "--no-progress"]) == 0
    store = Store(db, readonly=True)
    [row] = list(store.games(store.sweeps()[0].id))
    store.close()
    assert row["seats"] == ["heuristic", "random", "random", "random"]
    log = tmp_path / "play.jsonl"
    capsys.readouterr()
    assert main(["play", RACE, "--players", "4", "--seats", "heuristic,random,random,random", "--seed",
                 str(row["seed"]), "--log", str(log), "--quiet"]) == 0
    choices, result = _played(log)
    assert len(choices) == row["length"] and result["scores"] == row["scores"] and result["winners"] == row["winners"]
    # A search seat too (time=0: a fixed number of iterations, so the moves cannot depend on the clock).
    seats = ("search:iterations=8,time=0", "heuristic", "random", "random")
    model = load(RACE, players=4)
    sim = play_game(model, 4, seats, False, 1, 0)
    assert main(["play", RACE, "--players", "4", "--seats", ",".join(seats), "--seed", str(sim["seed"]),
                 "--log", str(log), "--quiet"]) == 0
    choices, result = _played(log)
    assert len(choices) == sim["length"] and result["scores"] == sim["scores"] and result["ranking"] == sim["ranking"]
    # ...and the moves are those of bots built by seat_agent: replaying them gives the same choices.
    from engine.agents import seat_agent
    g = Game.new(model, 4, sim["seed"], log=False)
    agents = {f"P{i + 1}": seat_agent(spec, sim["seed"], i) for i, spec in enumerate(seats)}
    mine = []
    while not g.over:
        d = g.decision
        option = d.options[agents[d.player].choose(g, d)]
        mine.append((d.player, option))
        g.apply(option)
    assert mine == choices


def test_search_values_unfinished_playouts_as_hints_versus_says() -> None:
    """The search bot scores a playout that stopped before the end by the same comparison the
    heuristic uses (hints.versus): with `mean`, weakening any opponent counts (the card game)."""
    import math

    from engine.agents.evaluation import evaluate, outcome_value
    model = load("shogun", players=4)
    game = Game.new(model, 4, 5, log=False)
    rng = random.Random(2)
    for _ in range(120):
        d = game.decision
        game.apply(d.options[rng.randrange(len(d.options))])
    me = game.decision.player
    others = [evaluate(game, p) for p in game.state["players"] if p != me]
    assert max(others) != sum(others) / len(others)  # the position tells the two readings apart
    scale = float(model.hints.get("scale", 10.0))
    saved = model.hints.get("versus")
    try:
        for versus, against in (("best", max(others)), ("mean", sum(others) / len(others))):
            model.hints["versus"] = versus
            want = 0.5 + 0.5 * math.tanh((evaluate(game, me) - against) / scale)
            assert math.isclose(outcome_value(game, me), want)
    finally:
        if saved is None:
            model.hints.pop("versus", None)
        else:
            model.hints["versus"] = saved
