"""The four Shogun expansions as packages: tennos-court, military-leaders, chambers, samurai-cards.

1. Every rule scenario under tests/scenarios/<expansion>/ passes (one test per scenario).
2. Each expansion validates on its own, and the full four-expansion combo validates.
3. The order of the steps the expansions add is the rule text's (checked on the resolved flow).
4. Random-bot games of all 16 combinations (shogun plus any subset of the four) for 3, 4 and 5
   players end with a winner, and after EVERY decision:
   - the base game's invariants hold (tests/test_shogun.py, check_invariants);
   - Tenno's Court: each player's 7 court officials are in their supply, the entrance hall or the
     audience hall (the audience hall only during the court step); nobody's court plan is seen by
     another player;
   - military leaders: statues on the board + trophies + supply = 6 per player; a leader stands only
     in a province of its player;
   - chambers: the 36 chamber markers are each in exactly one place (bag, face up or face down on
     their space, discarded after an exchange); each player's 15 markers are on the board or in
     supply; once all 6 rounds are over every marker has been drawn;
   - Samurai cards: each pile's top card is one of the 4 cards.
   The board side, set-up and tower model rotate over the configurations, so every option is played.
   DAIMYO_LONG=1 plays many more games per configuration.
"""
from __future__ import annotations

import itertools
import os
import sys
from functools import cache
from pathlib import Path

import pytest

from engine.agents import RandomAgent
from engine.base.diagnostics import Diagnostics
from engine.cli.describe import describe
from engine.model import load
from engine.model.validate import validate_targets
from engine.run.game import Game
from engine.run.views import view

sys.path.append(str(Path(__file__).resolve().parent))  # for test_shogun
from scenario_cases import check_scenario, scenario_cases
from test_shogun import check_invariants as check_base_invariants  # the base game's invariants

ROOT = Path(__file__).resolve().parent
EXPANSIONS = ["tennos-court", "military-leaders", "chambers", "samurai-cards"]
SCENARIO_DIRS = [ROOT / "scenarios" / e for e in EXPANSIONS]
LONG = os.environ.get("DAIMYO_LONG") == "1"
GAMES = 20 if LONG else 1
OFFICIALS, STATUES, CHAMBER_MARKERS, PLAYER_MARKERS = 7, 6, 36, 15
COMBOS = ["+".join(("shogun", *sub)) for k in range(len(EXPANSIONS) + 1)
          for sub in itertools.combinations(EXPANSIONS, k)]
OPTION_SETS = [
    {"side": "sun", "setup": "claim", "tower": "two_ledges"},
    {"side": "sun", "setup": "fixed", "tower": "one_pool"},
    {"side": "moon", "setup": "claim", "tower": "one_pool"},
    {"side": "sun", "setup": "fixed", "tower": "two_ledges"},
    {"side": "moon", "setup": "claim", "tower": "funnel"},
    {"side": "sun", "setup": "fixed", "tower": "funnel"},
]


# ---- 1. rule scenarios ----

@pytest.mark.parametrize("file,index", scenario_cases(*SCENARIO_DIRS))
def test_scenario(file: str, index: int) -> None:
    check_scenario(file, index)


def test_every_expansion_has_scenarios() -> None:
    for d in SCENARIO_DIRS:
        assert list(d.glob("*.yaml")), f"no scenarios in {d}"


# ---- 2. validation ----

@pytest.mark.parametrize("target", [*[str(ROOT.parent / "rulesets" / e) for e in EXPANSIONS],
                                    "shogun+" + "+".join(EXPANSIONS)])
def test_validates(target: str) -> None:
    diags, checked = validate_targets([target])
    assert not diags.errors, diags.render()
    assert checked


# ---- 3. where the expansions add their steps ----

def _names(flow: list) -> list[str]:
    return [x if isinstance(x, str) else x.get("step", "?") for x in flow]


@cache
def full_model(players: int = 4):
    return load("shogun+" + "+".join(EXPANSIONS), players=players)


def test_the_round_follows_the_rule_texts() -> None:
    round_flow = _names(full_model().resolved.data["steps"]["round"]["flow"])
    assert round_flow == [
        "chamber_draw",           # chambers: "At the beginning of each round"
        "lay_out_actions", "lay_out_specials",
        "lay_out_favors",         # Tenno's Court: after "Lay Out Special Cards"
        "plan",
        "plan_court",             # Tenno's Court: the extra board is planned with the base board
        "determine_events", "determine_turn_order",
        "place_leaders",          # military leaders (fixed set-up): "after player order is determined"
        "samurai_cards",          # Samurai: after turn order, "prior to any Court actions"
        "court",                  # Tenno's Court: after turn order, before the base actions
        "carry_out_actions",
        "move_leaders",           # military leaders: "After each round"
        "chamber_exchanges",      # chambers: "End of a round"
        "end_round",
    ], round_flow


def test_the_game_end_and_the_winter_follow_the_rule_texts() -> None:
    data = full_model().resolved.data
    root = _names(data["flow"])
    assert root[-3:] == ["statue_scoring", "chamber_scoring", "game_end"], root
    assert _names(data["steps"]["setup"]["flow"]) == ["prepare", "chamber_setup", "starting_provinces",
                                                     "court_setup", "load_tower"]
    year = data["flow"][1]["do"]
    between_years = next(x for x in year if isinstance(x, dict) and "if" in x)["then"]
    assert _names(between_years) == ["end_year", "leaders_after_winter"]
    # military leaders: "After each round ... move" (winter is a round), then "After the winter
    # round, the player places the military leader" that is off the board
    assert _names(data["steps"]["leaders_after_winter"]["flow"]) == ["move_leaders", "return_leaders"]


def test_describe_resolved_shows_each_expansions_changes() -> None:
    diags = Diagnostics()
    text = describe("shogun+tennos-court+chambers", None, None, True, diags)
    assert text is not None, diags.render()
    for needle in ("- court  # inserted by tennos-court", "- chamber_exchanges  # inserted by chambers",
                   "- chamber_scoring  # inserted by chambers",
                   "favor_4_parry:  # tennos-court rulesets/tennos-court/court.yaml"):
        assert needle in text, needle
    summary = describe("shogun+tennos-court+chambers", None, None, False, diags)
    assert "court  [+tennos-court]" in summary and "chamber_exchanges  [+chambers]" in summary


def test_combos_load_in_a_fixed_order_however_they_are_typed() -> None:
    a = load("shogun+samurai-cards+tennos-court+chambers+military-leaders", players=4)
    b = load("shogun+military-leaders+tennos-court+samurai-cards+chambers", players=4)
    assert [p.id for p in a.combo.packages] == [p.id for p in b.combo.packages]
    assert a.fingerprint == b.fingerprint


# ---- 4. random games with invariants ----

def check_invariants(game: Game, in_court: bool) -> None:
    check_base_invariants(game)
    m, st = game.model, game.state
    ent, g, players = st["ent"], st["globals"], st["players"]
    coll = m.collections
    if "court_boxes" in coll:
        for p in players:
            e = ent[p]
            assert min(e["officials"], e["entrance"], e["audience"]) >= 0, e
            total = e["officials"] + e["entrance"] + e["audience"]
            assert total == OFFICIALS, f"{p}: {e['officials']} + {e['entrance']} + {e['audience']} officials"
            assert in_court or e["audience"] == 0, f"{p} has officials in the audience hall outside the court"
        assert len(g["court_spaces"]) <= 3
    if "leader" in ent[players[0]]:
        provinces = coll["provinces"]
        for p in players:
            e = ent[p]
            on_board = sum(1 for x in provinces if ent[x]["statue"] == p)
            taken = sum(ent[q]["trophies"].count(p) for q in players)
            assert e["statues"] >= 0
            assert on_board + taken + e["statues"] == STATUES, f"{p}: {on_board} + {taken} + {e['statues']} statues"
            assert p not in e["trophies"]
            if e["leader"] is not None:
                assert ent[e["leader"]]["owner"] == p, f"{p}'s leader stands in {e['leader']}"
    if "chamber_spaces" in coll:
        spaces = coll["chamber_spaces"]
        on_board = [x for x in spaces if ent[x]["content"] in ("up", "down")]
        places = list(g["chamber_bag"]) + on_board + list(g["chamber_discard"])
        assert len(places) == CHAMBER_MARKERS and set(places) == set(spaces), "chamber markers not conserved"
        for x in g["chamber_bag"]:
            assert ent[x]["content"] is None
        for x in g["chamber_discard"]:
            assert ent[x]["content"] in players
        for p in players:
            placed = sum(1 for x in spaces if ent[x]["content"] == p)
            assert placed + ent[p]["chamber_markers"] == PLAYER_MARKERS and ent[p]["chamber_markers"] >= 0
    if "samurai_cards" in coll:
        for p in players:
            assert ent[p]["samurai_top"] in coll["samurai_cards"]


def check_secrets(game: Game) -> None:
    st = game.state
    if "court_plan" not in st["ent"][st["players"][0]]:
        return
    for p in st["players"]:
        for other in st["players"]:
            if other != p:
                seen = view(game.model, st, other)["ent"][p]
                assert all(k == "?" for k in seen["court_plan"]), seen["court_plan"]
                assert all(k == "?" for k in seen["court_left"]), seen["court_left"]  # the cards still in hand


@cache
def model_for(combo: str, players: int, opts: tuple):
    return load(combo, dict(opts), players=players)


def play_checked(combo: str, players: int, seed: int, options: dict) -> Game:
    model = model_for(combo, players, tuple(sorted(options.items())))
    game = Game.new(model, players, seed=seed, log=False)
    agent = RandomAgent(seed)
    check_invariants(game, False)
    n = 0
    while not game.over:
        d = game.decision
        game.apply(d.options[agent.choose(game, d)])
        frames = [model.nodes[f["n"]].label for f in game.state["flow"]]
        check_invariants(game, any(label.startswith("court") or label.startswith("favor") for label in frames))
        n += 1
        if n % 40 == 0:
            check_secrets(game)
    res = game.result
    assert res and res["winners"], res
    ent, g = game.state["ent"], game.state["globals"]
    best = max((ent[p]["vp"], ent[p]["chests"]) for p in game.state["players"])
    assert all((ent[w]["vp"], ent[w]["chests"]) == best for w in res["winners"])
    assert g["year"] == 2
    if "chamber_bag" in g:
        assert g["chamber_bag"] == [], "all 36 chamber markers are drawn in 6 rounds"
    if "court_spaces" in g:
        assert all(ent[p]["audience"] == 0 for p in game.state["players"])
    return game


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: c.replace("shogun+", "") if "+" in c else "base")
def test_random_games_keep_the_invariants(combo: str, players: int) -> None:
    i = COMBOS.index(combo)
    for seed in range(GAMES):
        options = OPTION_SETS[(i + players + seed) % len(OPTION_SETS)]
        play_checked(combo, players, 7000 + 100 * i + 10 * players + seed, options)


def test_a_full_game_survives_save_and_load() -> None:
    import json
    model = model_for("shogun+" + "+".join(EXPANSIONS), 4, tuple(sorted(OPTION_SETS[0].items())))
    a = Game.new(model, 4, seed=5, log=False)
    agent = RandomAgent(5)
    for _ in range(200):
        d = a.decision
        a.apply(d.options[agent.choose(a, d)])
    b = Game.from_save(model, json.loads(json.dumps(a.save())))
    state = agent.rng.getstate()
    for g in (a, b):
        agent.rng.setstate(state)
        while not g.over:
            d = g.decision
            g.apply(d.options[agent.choose(g, d)])
    assert a.result == b.result and a.state == b.state
