"""Shogun, the card game (shogun-cards) and its variants (advanced suits, wagers).

1. Every rule scenario under tests/scenarios/shogun-cards*/ passes (one test per scenario).
2. Random-bot games for 2, 3 and 4 players in each of the four package combinations end with
   a winner, and the invariants below hold after EVERY decision:
   - the 52 cards are all accounted for, each exactly once, across deck, discards, hands,
     the card set aside for a ranged attack, and the territories;
   - once play has begun, every player still in the game has an army; a player who is out
     holds no card;
   - no decision that everybody can see offers a face-down card or a card in a hand, and every
     other player's view of a face-down card or a hand shows only `?`;
   - with wagers: nobody's money is negative and the money in the game never changes;
   - the moment the deck runs out, the discards become the new deck.
   DAIMYO_LONG=1 plays many more games per configuration.
"""
from __future__ import annotations

import io
import os
import random
from contextlib import redirect_stdout
from functools import cache
from pathlib import Path

import pytest
from scenario_cases import check_scenario, scenario_cases

from engine.agents import RandomAgent
from engine.model import load
from engine.run.game import Game
from engine.run.views import view

ROOT = Path(__file__).resolve().parent
SCENARIO_DIRS = [ROOT / "scenarios" / d for d in ("shogun-cards", "shogun-cards-advanced", "shogun-cards-wagers")]
COMBOS = [
    "shogun-cards",
    "shogun-cards+shogun-cards-advanced",
    "shogun-cards+shogun-cards-wagers",
    "shogun-cards+shogun-cards-advanced+shogun-cards-wagers",
]
LONG = os.environ.get("DAIMYO_LONG") == "1"
GAMES = 60 if LONG else 2


# ---- 1. rule scenarios ----

@pytest.mark.parametrize("file,index", scenario_cases(*SCENARIO_DIRS))
def test_scenario(file: str, index: int) -> None:
    check_scenario(file, index)


# ---- 2. random-bot games with invariants ----

def _zones(state: dict, model) -> dict[str, list]:
    g, ent = state["globals"], state["ent"]
    zones = {"deck": g["deck"], "discards": g["discards"]}
    for p in state["players"]:
        zones[f"{p}.hand"] = ent[p]["hand"]
        zones[f"{p}.committed"] = ent[p]["committed"]
    for t in model.collections["territories"]:
        zones[f"{t}.hidden"] = ent[t]["hidden"]
        zones[f"{t}.shown"] = ent[t]["shown"]
    return zones


def check_invariants(game: Game, wagers: bool, buy_in: int) -> None:
    state, model = game.state, game.model
    ent, g = state["ent"], state["globals"]
    zones = _zones(state, model)
    every = sorted(c for cards in zones.values() for c in cards)
    assert every == sorted(model.collections["cards"]), \
        f"cards lost or doubled: {len(every)} cards; zones {({k: v for k, v in zones.items() if v})}"
    started = g["turns_played"] >= 1
    for p in state["players"]:
        mine = [t for t in model.collections["territories"] if model.static[t]["side"] == p]
        cards_down = sum(len(ent[t]["hidden"]) + len(ent[t]["shown"]) for t in mine)
        if not ent[p]["alive"]:
            assert cards_down == 0 and not ent[p]["hand"] and not ent[p]["committed"], f"{p} is out but holds cards"
        elif started:
            assert cards_down > 0, f"{p} is still in the game without an army"
        assert len(ent[p]["committed"]) <= 1
        if ent[p]["committed"]:
            # set aside for a ranged attack: the target is being chosen, or the wagers made
            choosing = game.decision is not None and game.decision.step == "ranged_attack"
            assert choosing or (g["fight"].get("what") == "ranged" and g["fight"].get("attacker") == p)
    # hidden information: the pending decision and the other players' views
    secret_cards = {c for p in state["players"] for c in ent[p]["hand"] + ent[p]["committed"]}
    secret_cards |= {c for t in model.collections["territories"] for c in ent[t]["hidden"]}
    d = game.decision
    if d is not None and not d.secret:
        leaked = [o for o in d.options if isinstance(o, str) and o in secret_cards]
        assert not leaked, f"a public decision at `{d.step}` shows face-down cards {leaked}"
    if d is not None:
        onlooker = next(p for p in state["players"] if p != d.player)
        seen = view(model, state, onlooker)
        for eid in [*state["players"], *model.collections["territories"]]:
            owner = eid if eid in state["players"] else ent[eid]["owner"]
            if owner == onlooker:
                continue
            for f in ("hand", "committed", "hidden"):
                if f in seen["ent"][eid]:
                    assert all(x == "?" for x in seen["ent"][eid][f]), f"{onlooker} sees {eid}.{f}"
        assert all(x == "?" for x in seen["globals"]["deck"])
    if wagers:
        money = [ent[p]["money"] for p in state["players"]]
        assert min(money) >= 0
        assert sum(money) == buy_in * len(state["players"]), "money was created or lost"


@cache
def _model(combo: str, players: int):
    return load(combo, players=players)


def play_checked(combo: str, players: int, seed: int) -> Game:
    model = _model(combo, players)
    wagers = "wagers" in combo
    buy_in = model.combo.options.get("buy_in", 0)
    game = Game.new(model, players, seed, log=False)
    rng = random.Random(seed)
    agents = {p: RandomAgent(rng.randrange(1 << 30)) for p in game.state["players"]}
    check_invariants(game, wagers, buy_in)
    decisions = 0
    while not game.over:
        d = game.decision
        deck_before = len(game.state["globals"]["deck"])
        game.apply(d.options[agents[d.player].choose(game, d)])
        decisions += 1
        check_invariants(game, wagers, buy_in)
        g = game.state["globals"]
        # "Reshuffle all discarded cards to create a new deck whenever the deck runs out"
        assert not (deck_before and not g["deck"] and g["discards"]), \
            f"the deck ran out with {len(g['discards'])} discards left unshuffled"
        assert decisions < 200_000
    return game


def _assert_finished(game: Game) -> None:
    state = game.state
    alive = [p for p in state["players"] if state["ent"][p]["alive"]]
    limit = game.model.combo.options["turn_limit"]
    result = game.result
    assert result["winners"], "the game ended without a winner"
    if len(alive) == 1:
        assert result["winners"] == alive
    elif not alive:  # the last players went out together (our reading: they share the victory)
        last = max(state["ent"][p]["out_rank"] for p in state["players"])
        together = sorted(p for p in state["players"] if state["ent"][p]["out_rank"] == last)
        assert sorted(result["winners"]) == together, (result, together)
    else:
        assert limit and state["globals"]["turns_played"] == limit, f"{len(alive)} players left before the limit"


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("combo", COMBOS)
def test_random_games(combo: str, players: int) -> None:
    for i in range(GAMES):
        game = play_checked(combo, players, seed=1000 * players + i)
        _assert_finished(game)


def test_views_keep_face_down_cards_for_their_owner() -> None:
    model = _model("shogun-cards", 3)
    game = Game.new(model, 3, 5, log=False)
    while game.state["globals"]["turns_played"] < 1:
        d = game.decision
        game.apply(d.options[0])
    for p in game.state["players"]:
        mine = [t for t in model.collections["territories"] if model.static[t]["side"] == p]
        own = view(model, game.state, p)
        other = view(model, game.state, next(q for q in game.state["players"] if q != p))
        for t in mine:
            assert own["ent"][t]["hidden"] == game.state["ent"][t]["hidden"]
            assert other["ent"][t]["hidden"] == ["?"] * len(game.state["ent"][t]["hidden"])
        assert own["ent"][p]["hand"] == game.state["ent"][p]["hand"]
        assert other["ent"][p]["hand"] == ["?"] * len(game.state["ent"][p]["hand"])


def test_play_prints_a_readable_game() -> None:
    from engine.cli import main
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["play", "shogun-cards", "--players", "3", "--bots", "random", "--seed", "1"]) == 0
    text = out.getvalue()
    for line in ("== Dealing", "== Placing the armies", "== Turn 1:", "Final table", "Winner"):
        assert line in text
    assert "places a card face down" in text


def test_the_last_two_out_together_share_the_victory_with_wagers() -> None:
    """Wagers: when the last two players go out at the same moment the account says they share
    the victory, and the result must agree, whatever money each has left (the scenario "when the
    last two players go out together they share the victory, whatever their money")."""
    model = _model("shogun-cards+shogun-cards-wagers", 2)
    game = Game.new(model, 2, seed=0, defer=True)
    st = game.state
    for t in model.collections["territories"]:  # seat_players(), then the two last armies
        side = model.static[t]["side"]
        st["ent"][t]["owner"] = side
        st["ent"][side]["realm"].append(t)
    st["ent"]["P1_1"]["hidden"] = ["H7"]
    st["ent"]["P2_4"]["hidden"] = ["D7"]
    st["ent"]["P1"]["money"], st["ent"]["P2"]["money"] = 30, 10
    st["globals"]["current"] = "P1"
    st["flow"] = [{"n": model.steps["play"], "i": 0, "v": {}}]
    game.run()
    for choice in ("army attack", 0, 0):  # P1 attacks P2_4 (the only target); nobody wagers
        game.apply(choice)
    assert game.over
    assert sorted(game.result["winners"]) == ["P1", "P2"], game.result
    assert any("they share the victory" in e.get("text", "") for e in game.log)
