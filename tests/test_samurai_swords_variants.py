"""The online Samurai Swords' further variants: "New Way to Win" (rulesets/samurai-swords-objectives),
and the options Fixed Castles (castles=fixed) and two-turn set-up (spearmen_setup=two_turn).

1. Every scenario under tests/scenarios/samurai-swords-objectives/ passes (one test per scenario;
   the option scenarios are in tests/scenarios/samurai-swords/options.yaml, run by
   test_samurai_swords.py).
2. Random-bot games of every combination (classic, VP variant, New Way to Win; each with both
   castle options and both set-ups) end with a winner, and after every decision the invariants of
   test_samurai_swords.py hold, plus the objective deck's own: no card is lost or doubled, hands
   hold at most 2 cards, VP never below 0, pacts are mutual. Heuristic-bot games (4 players, each
   package with another option combination; every combination with DAIMYO_LONG=1) do the same.
3. Hidden information: objective hands and the deck's order are not in the other players' views or
   logs; the choice of a card to play is secret.
4. The final table: the agreed total, the first elimination, the eliminated player cannot win.
5. The 2-player game (two colours each): a random-bot game, hands seen by their person only, pacts
   offered to the other person's colours, a colour out leaves its person in the running.

   DAIMYO_LONG=1 plays every combination at 3, 4 and 5 players with several seeds.
"""
from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from scenario_cases import check_scenario, scenario_cases
from test_samurai_swords import invariant_errors

from engine.agents import HeuristicAgent, RandomAgent
from engine.model import load
from engine.run.game import Game

LONG = os.environ.get("DAIMYO_LONG") == "1"
ROOT = Path(__file__).resolve().parent
OBJ = "samurai-swords+samurai-swords-objectives"
DECK = 15


@pytest.mark.parametrize("file,index", scenario_cases(ROOT / "scenarios" / "samurai-swords-objectives"))
def test_scenario(file: str, index: int) -> None:
    check_scenario(file, index)


def test_every_named_card_has_a_scenario() -> None:
    cases = scenario_cases(ROOT / "scenarios" / "samurai-swords-objectives")
    titles = " ".join(str(p.id) for p in cases)
    for name in ("Win a Battle", "Capture a Castle", "More Castles", "Samurai's Journey", "Donate Koku",
                 "Breaking an Agreement"):
        assert name in titles, name


# ---------------------------------------------------------------- 2. random games of every combination

def objective_errors(g: Game) -> list[str]:
    s = g.state
    e, gl = s["ent"], s["globals"]
    if "objective_deck" not in gl:
        return []
    cards = list(gl["objective_deck"]) + list(gl["objectives_done"])
    errs: list[str] = []
    for p in s["players"]:
        f = e[p]
        cards += f["objectives"] + f["revealed"]
        if len(f["objectives"]) + len(f["revealed"]) > 2:
            errs.append(f"{p} holds {len(f['objectives']) + len(f['revealed'])} objective cards")
        if f["ovp"] < 0:
            errs.append(f"{p}: {f['ovp']} VP")
        for q in f["pacts"]:
            if p not in e[q]["pacts"]:
                errs.append(f"{p}'s pact with {q} is one-sided")
    dealt = gl["round"] >= 1
    if dealt and (len(cards) != DECK or len(set(cards)) != DECK):
        errs.append(f"objective cards: {len(cards)} in play, {len(set(cards))} different, not {DECK}")
    return errs


COMBOS = ["samurai-swords", "samurai-swords+samurai-swords-vp", OBJ]
OPTIONS = [{"castles": c, "spearmen_setup": s}
           for c, s in itertools.product(["build", "fixed"], ["five_turn", "two_turn"])]


def _name(combo: str, opts: dict) -> str:
    return f"{combo.split('+')[-1]}-{opts['castles']}-{opts['spearmen_setup']}"


# every rules combination once, the player counts taking turns; DAIMYO_LONG: every player count, 3 seeds
CONFIGS = [(combo, opts, n, seed)
           for i, (combo, opts) in enumerate(itertools.product(COMBOS, OPTIONS))
           for n in ((3, 4, 5) if LONG else ((3, 4, 5)[i % 3],))
           for seed in (range(3) if LONG else (i,))]


@pytest.mark.parametrize("combo,options,players,seed", CONFIGS,
                         ids=[f"{_name(c, o)}-{n}p-s{s}" for c, o, n, s in CONFIGS])
def test_random_game_of_every_combination(combo: str, options: dict, players: int, seed: int) -> None:
    model = load(combo, options, players=players)
    g = Game.new(model, players, seed=seed, log=False)
    bots = {p: RandomAgent(seed * 7 + i) for i, p in enumerate(g.state["players"])}
    play_checked(g, bots)
    check_ending(g, combo, options)


def play_checked(g: Game, bots: dict) -> None:
    """Play `g` to its end with `bots` (keyed by the person who decides), checking the invariants
    after every decision."""
    decisions = 0
    while not g.over:
        errs = invariant_errors(g) + objective_errors(g)
        assert not errs, f"after decision {decisions}: {errs}"
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
        decisions += 1
    assert not invariant_errors(g) + objective_errors(g)


def check_ending(g: Game, combo: str, options: dict) -> None:
    """A finished game of 3-5 players: a winner, the fixed castles all on the board, and New Way to
    Win's end (first elimination, agreed total or safety stop) with the best VP among those still in."""
    assert g.result["winners"], "the game ended without a winner"
    e, gl = g.state["ent"], g.state["globals"]
    if options["castles"] == "fixed":
        assert gl["castles_left"] == 0 and gl["bases_left"] == 0
        assert sum(1 for x in g.model.collections["provinces"] if e[x]["castle"] == 2) == 5
    if combo == OBJ:
        out = [p for p in g.state["players"] if e[p]["out"]]
        best = max(e[p]["ovp"] for p in g.state["players"] if not e[p]["out"])
        # the game ends at the first elimination, at the agreed total, or at the safety stop
        assert len(out) == 1 or best >= 30 or gl["round"] == 40
        assert not set(g.result["winners"]) & set(out)
        assert all(e[p]["ovp"] == best for p in g.result["winners"])


# every package once, each with another option combination (both values of each option are played);
# DAIMYO_LONG: every package with every combination
HEURISTIC = [(combo, opts) for i, combo in enumerate(COMBOS) for opts in (OPTIONS if LONG else (OPTIONS[3 - i],))]


@pytest.mark.parametrize("combo,options", HEURISTIC, ids=[_name(c, o) for c, o in HEURISTIC])
def test_heuristic_game_ends_with_a_winner(combo: str, options: dict) -> None:
    """The heuristic bot plays every part (agreements, objective cards, fixed castles, the set-up)."""
    model = load(combo, options, players=4)
    g = Game.new(model, 4, seed=11, log=False)
    bots = {p: HeuristicAgent(i) for i, p in enumerate(g.state["players"])}
    while not g.over:
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
        errs = invariant_errors(g) + objective_errors(g)
        assert not errs, errs
    check_ending(g, combo, options)


# ---------------------------------------------------------------- the 2-player game (two colours each)

@pytest.mark.parametrize("seed", range(3) if LONG else (1,))
def test_two_player_random_game(seed: int) -> None:
    """Objective cards per colour, a side's VP combined: the game ends with one person's colours
    winning together, the invariants hold after every decision, and a person decides for both colours."""
    model = load(OBJ, players=2)
    g = Game.new(model, 2, seed=seed, log=False)
    assert g.state["seats"] == {"P1": "P1", "P2": "P2", "P3": "P1", "P4": "P2"}
    bots = {p: RandomAgent(seed * 7 + i) for i, p in enumerate(("P1", "P2"))}   # one bot per person
    play_checked(g, bots)
    e, gl = g.state["ent"], g.state["globals"]
    winners = set(g.result["winners"])
    assert winners in ({"P1", "P3"}, {"P2", "P4"}, {"P1", "P2", "P3", "P4"}), winners
    side = {"P1": ("P1", "P3"), "P2": ("P2", "P4")}
    vp = {who: sum(e[c]["ovp"] for c in cols) for who, cols in side.items()}
    out = [p for p in g.state["players"] if e[p]["out"]]
    assert len(out) == 1 or max(vp.values()) >= 30 or gl["round"] == 40
    assert all(g.result["scores"][c] == vp[who] for who, cols in side.items() for c in cols)


def test_two_player_hands_are_seen_by_their_person_only() -> None:
    g = Game.new(load(OBJ, players=2), 2, seed=3)
    bots = {p: RandomAgent(i) for i, p in enumerate(("P1", "P2"))}
    while g.state["globals"]["round"] < 1:
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
    e = g.state["ent"]
    mine, theirs = g.view("P1")["ent"], g.view("P2")["ent"]
    for colour in ("P1", "P3"):               # P1's two colours
        assert len(e[colour]["objectives"]) == 2
        assert mine[colour]["objectives"] == e[colour]["objectives"]
        assert theirs[colour]["objectives"] == ["?", "?"]


def test_two_player_pacts_are_offered_to_the_other_persons_colours_only() -> None:
    g = Game.new(load(OBJ, players=2), 2, seed=1, log=False, defer=True)
    g.state["flow"] = [{"n": g.model.steps["agreements"], "i": 0, "v": {}}]
    g.run()
    d = g.decision
    assert d.player == "P1" and d.step == "agreements"
    assert list(d.options) == ["P2", "P4", "no offer"]


def test_two_player_a_colour_out_leaves_its_person_in_the_running() -> None:
    """Win 2 with two colours each: the first colour eliminated ends the game; its person still plays
    his other colour, so his side scores both colours' VP and may win."""
    g = Game.new(load(OBJ, players=2), 2, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["P1"].update(ovp=10, out=True)
    e["P3"]["ovp"] = 15
    e["P2"]["ovp"] = 5
    e["P4"]["ovp"] = 8
    result = _finish(g)
    assert result["winners"] == ["P1", "P3"]
    assert result["scores"] == {"P1": 25, "P2": 13, "P3": 25, "P4": 13}


# ---------------------------------------------------------------- 3. hidden information

def _objective_game(players: int = 3, seed: int = 2) -> tuple[Game, dict]:
    model = load(OBJ, players=players)
    g = Game.new(model, players, seed=seed)
    return g, {p: RandomAgent(seed * 7 + i) for i, p in enumerate(g.state["players"])}


def test_objective_hands_are_hidden_from_the_others() -> None:
    g, bots = _objective_game()
    while g.state["globals"]["round"] < 1:
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
    e = g.state["ent"]
    hand = e["P1"]["objectives"]
    assert len(hand) == 2
    assert g.view("P1")["ent"]["P1"]["objectives"] == hand
    assert g.view("P2")["ent"]["P1"]["objectives"] == ["?", "?"]
    assert g.view(None)["ent"]["P1"]["objectives"] == ["?", "?"]
    assert all(x == "?" for x in g.view("P1")["globals"]["objective_deck"])


def test_cards_never_played_stay_out_of_the_other_players_logs() -> None:
    """The deal is a logged shuffle and a card is chosen in secret: another seat's log never names a
    card its holder has not played (played cards are announced by their face)."""
    g, bots = _objective_game(players=4, seed=5)
    secret_seen = False
    while not g.over:
        d = g.decision
        if d.step == "play_objectives":
            assert d.secret
            assert g.view(next(p for p in g.state["players"] if p != d.player))["pending"] is None
            secret_seen = True
        g.apply(d.options[bots[d.player].choose(g, d)])
    assert secret_seen
    e = g.state["ent"]
    for p in g.state["players"]:
        for q in g.state["players"]:
            if q != p:
                text = json.dumps(g.player_log(q))
                for card in e[p]["objectives"]:
                    assert f'"{card}"' not in text, f"{q}'s log names {p}'s hidden card {card}"


# ---------------------------------------------------------------- 4. the final table

def _finish(g: Game) -> dict:
    g.state["flow"] = []
    g.run()
    return g.result


def test_most_vp_wins_and_ties_go_to_more_provinces() -> None:
    model = load(OBJ, players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["P1"]["ovp"] = 31
    e["P2"]["ovp"] = 31
    e["P3"]["ovp"] = 12
    e["Aki"]["owner"] = "P2"
    result = _finish(g)
    assert result["winners"] == ["P2"]
    assert result["scores"] == {"P1": 31, "P2": 31, "P3": 12}


def test_the_eliminated_player_cannot_win() -> None:
    """Win 2, "having highest VP when a player is eliminated": the player knocked out is out."""
    model = load(OBJ, players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["P1"]["ovp"] = 25
    e["P1"]["out"] = True
    e["P2"]["ovp"] = 9
    e["P3"]["ovp"] = 4
    result = _finish(g)
    assert result["winners"] == ["P2"]
    assert result["ranking"][-1] == "P1"


def test_objectives_conflict_with_the_vp_variant() -> None:
    from engine.base.diagnostics import Diagnostics
    from engine.model import build
    diags = Diagnostics()
    assert build("samurai-swords+samurai-swords-vp+samurai-swords-objectives", {}, 4, diags) is None
    assert any(d.code == "P010" for d in diags.errors)


# ---------------------------------------------------------------- 5. sweeps and the report

def test_simulate_and_report_compare_new_way_to_win_with_the_vp_variant(tmp_path, capsys) -> None:
    from engine.cli import main
    db = str(tmp_path / "ss.db")
    for combo in (OBJ, "samurai-swords+samurai-swords-vp"):
        assert main(["simulate", combo, "--players", "3", "--games", "4", "--jobs", "1",
                     "--db", db, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", db, "--format", "json"]) == 0
    sweeps = json.loads(capsys.readouterr().out)["sweeps"]
    assert [s["combo"] for s in sweeps] == [OBJ, "samurai-swords+samurai-swords-vp"]
    assert all(s["games"] == 4 and s["failed"] == 0 for s in sweeps)
    assert main(["report", db]) == 0
    out = capsys.readouterr().out
    assert "Comparison" in out and "vp_target=30" in out and "never_out=no" in out
    assert "play_objectives" in out      # a rule only New Way to Win has, per game


def test_a_person_reads_objective_cards_by_face_and_value() -> None:
    from engine.cli.human import _show
    g = Game.new(load(OBJ, players=3), 3, seed=1, log=False, defer=True)
    assert _show(g, "battle_1") == "Win a Battle (5 VP)"
    assert _show(g, "journey") == "Samurai's Journey (20 VP)"
    assert _show(g, "Aki") == "Aki  [no owner]" and _show(g, "done") == "done"


def test_heuristic_hint_counts_a_battle_declared_against_a_partner_as_the_penalty() -> None:
    """The penalty comes when the battle begins, after the declaration: the bot's evaluation counts
    it at the declaration (4 points per VP, agreement_penalty 8), and only for the declarer."""
    from engine.agents import evaluate
    g = Game.new(load(OBJ, players=3), 3, seed=1, log=False, defer=True)
    e, gl = g.state["ent"], g.state["globals"]
    e["Aki"]["owner"], e["Bingo"]["owner"], e["Suo"]["owner"] = "P1", "P2", "P3"
    e["P1"]["pacts"], e["P2"]["pacts"] = ["P2"], ["P1"]
    before = {p: evaluate(g, p) for p in ("P1", "P2")}
    gl["declared"] = [["Aki", "Suo"]]            # against a player without a pact: nothing
    assert evaluate(g, "P1") == before["P1"]
    gl["declared"] = [["Aki", "Bingo"]]          # against the partner
    assert evaluate(g, "P1") == before["P1"] - 32
    assert evaluate(g, "P2") == before["P2"]
