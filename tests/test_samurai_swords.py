"""Shogun / Samurai Swords / Ikusa (rulesets/samurai-swords) and its online VP variant.

1. Every rule scenario under tests/scenarios/samurai-swords*/ passes (one test per scenario).
2. Combat odds: the engine's battles match an exact dynamic program written here from the rule
   text alone (no rule code reused), over many seeded battles, within 5 standard errors.
3. Random-bot games for 3, 4 and 5 players, with and without the VP package, and for 2 players (two
   colours each, base game), end with a winner,
   and after EVERY decision: unit counts per player are conserved, stacking limits hold (provincial
   forces of at most 5 regular units, army cards of 4 samurai and 10 ashigaru, one army per
   province), and ronin never outnumber (or equal) the regular units of their group.
4. Hidden ronin and secret plans do not show in the other players' views.

   DAIMYO_LONG=1 plays many more games and battles.
"""
from __future__ import annotations

import marshal
import math
import os
from pathlib import Path

import pytest
from scenario_cases import check_scenario, scenario_cases

from engine.agents import RandomAgent
from engine.base.record import replace
from engine.model import load
from engine.run.chance import initial_rng
from engine.run.game import Game

LONG = os.environ.get("DAIMYO_LONG") == "1"

ROOT = Path(__file__).resolve().parent
SCENARIO_DIRS = [ROOT / "scenarios" / "samurai-swords", ROOT / "scenarios" / "samurai-swords-vp"]
COMBOS = ["samurai-swords", "samurai-swords+samurai-swords-vp"]
REGULAR = ["bowman", "swordsman", "gunner", "spearman"]
OWNED = {"bowman": 9, "swordsman": 9, "gunner": 9, "spearman": 36}


# ---------------------------------------------------------------- 1. scenarios

@pytest.mark.parametrize("file,index", scenario_cases(*SCENARIO_DIRS))
def test_scenario(file: str, index: int) -> None:
    check_scenario(file, index)


def test_every_scenario_file_has_scenarios() -> None:
    assert len(scenario_cases(*SCENARIO_DIRS)) >= 80


# ---------------------------------------------------------------- 2. combat odds

# Written from the rules summary's tables, independently of the ruleset:
HIT = {"daimyo": 6, "bowman": 6, "swordsman": 5, "gunner": 4, "spearman": 4, "ronin": 5,
       "castle spearman": 4, "fortress ronin": 5}
RANGED = {"bowman", "gunner"}
# The casualty order the test's players use. The engine offers casualties in this order (castle
# defenders first, as the rules demand, then bowmen, swordsmen, gunners, spearmen); the test's
# players always take the first offer, and the program below removes units in the same order.
ORDER = ["castle spearman", "fortress ronin", "bowman", "swordsman", "gunner", "spearman"]


def _binom(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]


def _hits(side: dict, ranged: bool, temps: bool) -> list[float]:
    """Distribution of the number of hits `side` scores in one step."""
    dist = [1.0]
    for unit, n in side.items():
        if n == 0 or (unit in RANGED) != ranged or (unit.startswith(("castle", "fortress")) and not temps):
            continue
        b = _binom(n, HIT[unit] / 12)
        new = [0.0] * (len(dist) + n)
        for i, p in enumerate(dist):
            for j, q in enumerate(b):
                new[i + j] += p * q
        dist = new
    return dist


def _remove(side: dict, hits: int) -> dict:
    side = dict(side)
    for unit in ORDER:
        take = min(hits, side.get(unit, 0))
        side[unit] = side.get(unit, 0) - take
        hits -= take
    if side.get("daimyo") and not any(side.get(u, 0) for u in REGULAR):
        side["daimyo"] = 0   # the army disbands with its last unit: the Daimyo is lost with it
    return side


def _alive(side: dict) -> bool:
    return any(n for u, n in side.items() if u != "daimyo")


def _key(a: dict, d: dict) -> tuple:
    return tuple(sorted((u, n) for u, n in a.items() if n)), tuple(sorted((u, n) for u, n in d.items() if n))


def _step(a: dict, d: dict, ranged: bool, first_strike: bool = False) -> dict:
    """One step of a sequence: both sides roll at once (or only the defender in a first strike),
    then both remove casualties. Returns {(a, d) as keys: probability}."""
    ha = [1.0] if first_strike else _hits(a, ranged, temps=True)
    hd = _hits(d, ranged, temps=not first_strike)
    out: dict = {}
    for i, p in enumerate(ha):
        for j, q in enumerate(hd):
            if p * q == 0:
                continue
            k = (tuple(sorted(_remove(a, j).items())), tuple(sorted(_remove(d, i).items())))
            out[k] = out.get(k, 0.0) + p * q
    return out


def _sequence(a: dict, d: dict, first_strike: bool = False) -> dict:
    """A complete sequence: ranged step, then (if both sides still stand) the melee step."""
    out: dict = {}
    for (a1, d1), p in _step(a, d, True, first_strike).items():
        a1, d1 = dict(a1), dict(d1)
        if not (_alive(a1) and _alive(d1)):
            k = (tuple(sorted(a1.items())), tuple(sorted(d1.items())))
            out[k] = out.get(k, 0.0) + p
            continue
        for k, q in _step(a1, d1, False, first_strike).items():
            out[k] = out.get(k, 0.0) + p * q
    return out


def battle_odds(attacker: dict, defender: dict, naval: bool = False) -> dict:
    """Exact distribution of the end of a battle fought to the finish (nobody calls it off)."""
    memo: dict = {}

    def solve(a: dict, d: dict) -> dict:
        key = (tuple(sorted(a.items())), tuple(sorted(d.items())))
        if key in memo:
            return memo[key]
        if not (_alive(a) and _alive(d)):
            memo[key] = {_key(a, d): 1.0}
            return memo[key]
        trans = _sequence(a, d)
        stay = trans.pop(key, 0.0)  # a sequence without a single hit: the same position again
        result: dict = {}
        for (a1, d1), p in trans.items():
            for end, q in solve(dict(a1), dict(d1)).items():
                result[end] = result.get(end, 0.0) + p * q / (1 - stay)
        memo[key] = result
        return result

    if not naval:
        return solve(dict(attacker), dict(defender))
    result: dict = {}
    for (a1, d1), p in _sequence(dict(attacker), dict(defender), first_strike=True).items():
        for end, q in solve(dict(a1), dict(d1)).items():
            result[end] = result.get(end, 0.0) + p * q
    return result


# The battles: (title, attacker units, defender units, defender castle level, attacking from, target)
BATTLES = [
    ("2 spearmen against 1 swordsman", {"spearman": 2}, {"swordsman": 1}, 0, "Bingo", "Aki"),
    ("a bowman and a gunner against 3 spearmen", {"bowman": 1, "gunner": 1}, {"spearman": 3}, 0, "Bingo", "Aki"),
    ("4 spearmen and a swordsman against a spearman in a castle", {"spearman": 4, "swordsman": 1},
     {"spearman": 1}, 1, "Bitchu", "Bizen"),
    ("naval invasion: 2 swordsmen and a gunner against 2 spearmen", {"swordsman": 2, "gunner": 1},
     {"spearman": 2}, 0, "Bizen", "Sanuki"),
    ("naval invasion of a fortress: 5 spearmen against a bowman", {"spearman": 5}, {"bowman": 1}, 2,
     "Bizen", "Sanuki"),
    ("an army (Daimyo, bowman, swordsman) against 2 spearmen", {"daimyo": 1, "bowman": 1, "swordsman": 1},
     {"spearman": 2}, 0, "Bingo", "Aki"),
]


def _with_castle(defender: dict, castle: int) -> dict:
    d = dict(defender)
    if castle >= 1:
        d["castle spearman"] = 4
    if castle == 2:
        d["fortress ronin"] = 5
    return d


def _battle_game(model, attacker: dict, defender: dict, castle: int, src: str, target: str) -> dict:
    """The state of a game about to fight this battle (built directly, not with rule code)."""
    g = Game.new(model, 3, 0, log=False, defer=True)
    e = g.state["ent"]
    e[src]["owner"], e[target]["owner"] = "P1", "P2"
    for u in REGULAR:
        e[target]["force"][u] = defender.get(u, 0)
    e[target]["castle"] = castle
    if "daimyo" in attacker:
        a = e["P1a"]
        a.update(owner="P1", alive=True, at=src)
        e[src]["army"] = "P1a"
        e[src]["force"]["spearman"] = 1
        for u in REGULAR:
            a["units"][u] = attacker.get(u, 0)
        who = "P1a"
    else:
        for u in REGULAR:
            e[src]["force"][u] = attacker.get(u, 0)
            e[src]["committed"][u] = attacker.get(u, 0)    # Phase B named the whole force
        who = src
    g.state["flow"] = [{"n": model.steps["battle"], "i": 0, "v": {"attacker": who, "target": target}}]
    return g.state


def _engine_outcome(state: dict, src: str, target: str, army: bool) -> tuple:
    e = state["ent"]
    if army:
        a = e["P1a"]
        att = {u: a["units"][u] for u in REGULAR}
        att["daimyo"] = 1 if a["alive"] else 0
    else:
        att = {u: e[src]["force"][u] for u in REGULAR}
    t = e[target]
    dfd = {u: t["force"][u] for u in REGULAR}
    if t["castle"] >= 1:
        dfd["castle spearman"] = 4 - t["castle_lost"]["spearman"]
    if t["castle"] == 2:
        dfd["fortress ronin"] = 5 - t["castle_lost"]["ronin"]
    return _key(att, dfd)


@pytest.mark.parametrize("title,attacker,defender,castle,src,target", BATTLES, ids=[b[0] for b in BATTLES])
def test_combat_matches_exact_odds(title, attacker, defender, castle, src, target) -> None:
    exact = battle_odds(attacker, _with_castle(defender, castle), naval=src == "Bizen")
    assert abs(sum(exact.values()) - 1) < 1e-9
    # the battle is the whole game here: scoring its final table is not needed
    model = replace(load("samurai-swords", players=3), score=None, tiebreak=[])
    base = _battle_game(model, attacker, defender, castle, src, target)
    n = 20_000 if LONG else 1_200
    seen: dict = {}
    frozen = marshal.dumps(base)   # a fast deep copy of plain data
    for seed in range(n):
        state = marshal.loads(frozen)
        state["rng"] = initial_rng(seed)
        g = Game(model, state, logging=False)
        g.run()
        while not g.over:
            d = g.decision
            # the attacker never calls a battle off; casualties: the first offer
            g.apply("fight on" if d.step == "battle" else d.options[0])
        k = _engine_outcome(g.state, src, target, "daimyo" in attacker)
        seen[k] = seen.get(k, 0) + 1
    assert set(seen) <= set(exact), f"outcomes the rules cannot produce: {set(seen) - set(exact)}"
    for k, p in exact.items():
        f = seen.get(k, 0) / n
        se = math.sqrt(p * (1 - p) / n)
        assert abs(f - p) <= 5 * se + 1e-9, f"{title}: outcome {k}: engine {f:.4f}, exact {p:.4f} (se {se:.4f})"
    # and the whole distribution at once: Pearson's chi-square, turned into a normal deviate by the
    # Wilson-Hilferty approximation; 5 standard deviations essentially never fail by chance
    dof = len(exact) - 1
    if dof:
        chi2 = sum((seen.get(k, 0) - n * p) ** 2 / (n * p) for k, p in exact.items())
        z = ((chi2 / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
        assert z < 5, f"{title}: chi-square {chi2:.1f} on {dof} degrees of freedom (z = {z:.1f})"


def test_exact_odds_simple_case() -> None:
    """The program itself, on a case small enough to check by hand: one spearman against one
    spearman, both rolling 4 or less on a d12 (1/3): each sequence ends the battle with
    probability 1 - (2/3)^2 = 5/9; both fall with (1/9) / (5/9) = 1/5, each side wins 2/5."""
    odds = battle_odds({"spearman": 1}, {"spearman": 1})
    assert odds[((("spearman", 1),), ())] == pytest.approx(0.4)
    assert odds[((), (("spearman", 1),))] == pytest.approx(0.4)
    assert odds[((), ())] == pytest.approx(0.2)


# ---------------------------------------------------------------- 3. random games and invariants

def invariant_errors(g: Game) -> list[str]:
    s = g.state
    e, gl, m = s["ent"], s["globals"], g.model
    provinces, armies = m.collections["provinces"], m.collections["armies"]
    errs: list[str] = []
    ronin = gl["ronin_box"] + gl["ronin_in_hand"]
    for p in s["players"]:
        on_board = dict.fromkeys(REGULAR, 0)
        for x in provinces:
            if e[x]["owner"] == p:
                for u in REGULAR:
                    on_board[u] += e[x]["force"][u]
        alive = 0
        for a in armies:
            if e[a]["owner"] == p and e[a]["alive"]:
                alive += 1
                for u in REGULAR:
                    on_board[u] += e[a]["units"][u]
        for u in REGULAR:
            if on_board[u] + e[p]["pool"][u] != OWNED[u] or e[p]["pool"][u] < 0:
                errs.append(f"{p} {u}: {on_board[u]} on the board + {e[p]['pool'][u]} in the pool != {OWNED[u]}")
        if gl["round"] >= 1 and alive + e[p]["daimyo_lost"] != 3:
            errs.append(f"{p}: {alive} Daimyo alive + {e[p]['daimyo_lost']} lost != 3")
    for x in provinces:
        f = e[x]
        size = sum(f["force"].values())
        ronin += f["ronin"]
        if size > 5:
            errs.append(f"{x}: provincial force of {size} regular units")
        if f["ronin"] and f["ronin"] >= size:
            errs.append(f"{x}: {f['ronin']} ronin with {size} regular units")
        if min(f["force"].values()) < 0 or f["ronin"] < 0:
            errs.append(f"{x}: a negative count")
        if any(f["committed"][u] > f["force"][u] for u in REGULAR) or f["committed_ronin"] > f["ronin"]:
            errs.append(f"{x}: more units named for an attack than the force holds")
        if any(f["stay"][u] > f["force"][u] for u in REGULAR):
            errs.append(f"{x}: more units held in place than the force holds")
        if f["owner"] is None and (size or f["army"]):
            errs.append(f"{x}: units but no owner")
        here = [a for a in armies if e[a]["alive"] and e[a]["at"] == x]
        if len(here) > 1 and not (len(here) == 2 and gl["marching"] in here):  # passing through
            errs.append(f"{x}: armies {here}")
        if f["army"] is not None and e[f["army"]]["at"] != x:
            errs.append(f"{x}: its army {f['army']} stands elsewhere")
    for a in armies:
        f = e[a]
        ronin += f["ronin"]
        if not f["alive"]:
            if sum(f["units"].values()) or f["ronin"]:
                errs.append(f"{a}: disbanded but has units")
            continue
        size = sum(f["units"].values())
        if size == 0 and f["ronin"]:     # a Daimyo standing alone (a successor) has no ronin with him
            errs.append(f"{a}: a Daimyo alone with {f['ronin']} ronin")
        if f["units"]["bowman"] + f["units"]["swordsman"] > 4 or f["units"]["gunner"] + f["units"]["spearman"] > 10:
            errs.append(f"{a}: army card overfull {f['units']}")
        if f["ronin"] and f["ronin"] >= size + 1:
            errs.append(f"{a}: {f['ronin']} ronin with {size} units and the Daimyo")
        if e[f["at"]]["owner"] != f["owner"]:
            errs.append(f"{a}: stands in {f['at']} held by {e[f['at']]['owner']}")
    if ronin != 26:
        errs.append(f"{ronin} ronin in the game, not 26")
    castles = sum(1 for x in provinces if e[x]["castle"] >= 1)
    bases = sum(1 for x in provinces if e[x]["castle"] == 2)
    if castles + gl["castles_left"] != 10 or bases + gl["bases_left"] != 5:
        errs.append("castles or fortification bases appeared or vanished")
    return errs


GAMES = 12 if LONG else 1
# the 2-player game (two colours each) is the base game's only: the VP variant is for 3-5 players
CONFIGS = [(combo, n, seed) for combo in COMBOS for n in ((2, 3, 4, 5) if combo == COMBOS[0] else (3, 4, 5))
           for seed in range(GAMES)]


@pytest.mark.parametrize("combo,players,seed", CONFIGS)
def test_random_game_keeps_the_invariants(combo: str, players: int, seed: int) -> None:
    model = load(combo, players=players)
    g = Game.new(model, players, seed=seed, log=False)
    bots = {f"P{i + 1}": RandomAgent(seed * 7 + i) for i in range(players)}   # one bot per person at the table
    decisions = 0
    while not g.over:
        errs = invariant_errors(g)
        assert not errs, f"after decision {decisions}: {errs}"
        d = g.decision
        assert d.player in bots
        g.apply(d.options[bots[d.player].choose(g, d)])
        decisions += 1
    assert not invariant_errors(g)
    assert g.result["winners"], "the game ended without a winner"
    if players == 2:  # four colours; a player's two colours score and win together
        seats = g.state["seats"]
        assert len(g.state["players"]) == 4 and seats == {"P1": "P1", "P2": "P2", "P3": "P1", "P4": "P2"}
        winners = set(g.result["winners"])
        assert winners in ({"P1", "P3"}, {"P2", "P4"}, {"P1", "P2", "P3", "P4"}), winners
    if "vp" in combo:
        rounds = g.state["globals"]["round"]
        assert rounds <= players + 3 or len([p for p in g.state["players"] if not g.state["ent"][p]["out"]]) <= 1


# ---------------------------------------------------------------- 4. hidden information

def test_hidden_ronin_and_plans_are_hidden_from_the_others() -> None:
    model = load("samurai-swords", players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["Aki"].update(owner="P1", ronin=2)
    e["Aki"]["force"]["spearman"] = 3
    e["P1a"].update(owner="P1", alive=True, at="Bingo", ronin=1)
    e["P1"]["plan"]["levy"] = 3
    mine, theirs = g.view("P1"), g.view("P2")
    assert mine["ent"]["Aki"]["ronin"] == 2 and theirs["ent"]["Aki"]["ronin"] == "?"
    assert mine["ent"]["P1a"]["ronin"] == 1 and theirs["ent"]["P1a"]["ronin"] == "?"
    assert theirs["ent"]["Aki"]["force"]["spearman"] == 3          # regular units are public
    assert mine["ent"]["P1"]["plan"]["levy"] == 3 and theirs["ent"]["P1"]["plan"] != mine["ent"]["P1"]["plan"]


def test_ronin_placement_is_a_secret_choice() -> None:
    model = load("samurai-swords", players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e, gl = g.state["ent"], g.state["globals"]
    for x in ("Aki", "Bingo"):
        e[x]["owner"] = "P1"
        e[x]["force"]["spearman"] = 4
    e["P1"]["bid"]["ronin"] = 1
    gl["priority"] = ["P1"]
    g.state["flow"] = [{"n": model.steps["hire_ronin"], "i": 0, "v": {}}]
    g.run()
    d = g.decision
    assert d.player == "P1" and d.step == "hire_ronin" and d.secret
    assert g.view("P2")["pending"] is None


def _secret_round_state(step: str) -> Game:
    """P1 and P2 each hold two provinces and bid for a castle and a levy; the flow stands at `step`."""
    model = load("samurai-swords", players=3)
    g = Game.new(model, 3, seed=1, defer=True)
    e, gl = g.state["ent"], g.state["globals"]
    for x, p in (("Aki", "P1"), ("Suo", "P1"), ("Bingo", "P2"), ("Bitchu", "P2")):
        e[x]["owner"] = p
        e[x]["force"]["spearman"] = 1
    for p in ("P1", "P2"):
        e[p]["bid"].update(build=2, levy=1)
    gl["priority"] = ["P1", "P2"]
    g.state["flow"] = [{"n": model.steps[step], "i": 0, "v": {}}]
    g.run()
    return g


def test_levies_are_placed_in_secret_and_revealed_together() -> None:
    """Action 4 "(all players simultaneously)": while P2 places his levies he sees nothing of P1's."""
    g = _secret_round_state("levy")
    before = g.view("P2")
    g.apply("bowman")                      # P1: one koku, one bowman ...
    g.apply("Aki")                         # ... in Aki
    d = g.decision
    assert d.player == "P2" and d.secret
    seen = g.view("P2")
    assert seen["ent"]["Aki"]["force"] == before["ent"]["Aki"]["force"]
    assert seen["ent"]["P1"]["pool"] == before["ent"]["P1"]["pool"]
    assert seen["ent"]["Aki"]["levy"] == "?" and g.view("P1")["ent"]["Aki"]["levy"] == "bowman"
    assert all(x["choice"] == "?" for x in g.player_log("P2") if x["t"] == "decision" and x["player"] == "P1")
    assert not any("levies" in str(x) for x in g.player_log("P2"))
    g.apply("spearman")                    # P2: three spearmen, one per province (two provinces)
    g.apply("Bingo")
    g.apply("spearman")                    # Bitchu is the only place left: taken for him
    e = g.state["ent"]
    assert e["Aki"]["force"]["bowman"] == 1 and e["P1"]["pool"]["bowman"] == 8
    assert e["Bingo"]["force"]["spearman"] == 2 and e["Bitchu"]["force"]["spearman"] == 2
    assert e["Aki"]["levy"] is None


def test_builds_are_chosen_in_secret_and_revealed_together() -> None:
    """Action 3 "(all players simultaneously)": P2 chooses his castle without seeing P1's."""
    g = _secret_round_state("build")
    g.apply("Suo")
    d = g.decision
    assert d.player == "P2" and d.secret
    seen = g.view("P2")
    assert seen["ent"]["Suo"]["castle"] == 0 and seen["globals"]["castles_left"] == 10
    assert seen["ent"]["P1"]["build_at"] == "?" and g.view("P1")["ent"]["P1"]["build_at"] == "Suo"
    g.apply("Bitchu")
    e = g.state["ent"]
    assert e["Suo"]["castle"] == 1 and e["Bitchu"]["castle"] == 1 and g.state["globals"]["castles_left"] == 8


# ---------------------------------------------------------------- 5. the final table

def test_vp_ties_go_to_more_provinces() -> None:
    """VP variant, section 7: "In VP games: Most provinces breaks tie; if still tied, shared victory"."""
    model = load("samurai-swords+samurai-swords-vp", players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["Aki"]["owner"] = "P2"
    e["Aki"]["force"]["spearman"] = 1
    e["P1"]["pvp"] = 1
    e["P3"]["pvp"] = 1
    g.state["flow"] = []
    g.run()
    assert g.result["scores"] == {"P1": 1, "P2": 1, "P3": 1}
    assert g.result["winners"] == ["P2"]
    assert g.result["tiebreaks"]["P2"] == [1]


def test_vp_shared_victory_when_provinces_tie() -> None:
    model = load("samurai-swords+samurai-swords-vp", players=3)
    g = Game.new(model, 3, seed=1, log=False, defer=True)
    e = g.state["ent"]
    e["P1"]["pvp"] = 3
    e["P2"]["pvp"] = 3
    g.state["flow"] = []
    g.run()
    assert sorted(g.result["winners"]) == ["P1", "P2"]


def test_daimyo_bench_style_game_has_a_readable_account() -> None:
    """A logged game says what happens: round headings and battle lines."""
    model = load("samurai-swords", players=4)
    g = Game.new(model, 4, seed=3)
    bots = {p: RandomAgent(i) for i, p in enumerate(g.state["players"])}
    while not g.over:
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
    titles = [x["title"] for x in g.log if x["t"] == "step"]
    texts = [x["text"] for x in g.log if x["t"] == "say"]
    assert "Round 1" in titles and "Action 7: wage war" in titles
    assert any(" attacks " in t for t in texts)
    assert any(t.startswith("Provinces: ") for t in texts)


def test_both_packages_validate() -> None:
    from engine.model.validate import validate_targets
    diags, _checked = validate_targets([str(ROOT.parent / "rulesets" / "samurai-swords-vp")])
    assert not diags.errors, [str(d) for d in diags.errors]
