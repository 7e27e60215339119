"""`daimyo report`: Wilson intervals, seat and bot tables, never-fired rules, comparison, charts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.model import load
from tools.report import collect, describe, wilson
from tools.simulate import play_game, rules_of
from tools.store import Store, SweepSpec

RACE = str(Path(__file__).resolve().parent / "rulesets" / "race")


def test_wilson_interval_matches_the_textbook_values():
    lo, hi = wilson(5, 10)
    assert round(lo, 4) == 0.2366 and round(hi, 4) == 0.7634
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    assert wilson(0, 0) == (0.0, 1.0)


def test_describe_gives_quantiles():
    d = describe([1.0, 2.0, 3.0, 4.0, 5.0])
    assert d["mean"] == 3 and d["median"] == 3 and d["min"] == 1 and d["max"] == 5 and d["p10"] == 1.4


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> str:
    """Two sweeps: race 3p with a heuristic bot rotated, and race 2p random to 10 with a declared
    trigger `ghost` that cannot fire (added to the rules list, as if the ruleset declared it)."""
    db = str(tmp_path_factory.mktemp("rep") / "r.db")
    assert main(["simulate", RACE, "--players", "3", "--games", "120", "--jobs", "1",
                 "--bots", "heuristic,random,random", "--rotate", "--db", db, "--no-progress"]) == 0
    model = load(RACE, {"target": 10}, 2)
    store = Store(db)
    spec = SweepSpec(model.combo.name, dict(model.combo.options), 2, ("random", "random"), False, 3, model.fingerprint)
    rules = rules_of(model)
    rules["triggers"].append("ghost")
    sid = store.sweep_id(spec, rules, "test")
    store.add_games(sid, [play_game(model, 2, ("random", "random"), False, 3, g) for g in range(100)])
    store.commit()
    store.close()
    return db


def test_report_tables_flag_seats_bots_and_rules_that_never_fired(results, capsys):
    assert main(["report", results]) == 0
    out = capsys.readouterr().out
    assert "Win rate per seat (fair share 33.3%" in out and "Win rate per seat (fair share 50.0%" in out
    assert "Win rate per bot" in out and "heuristic" in out
    assert "above fair share" in out  # the heuristic bot beats random bots at this game
    assert "trigger   ghost" in out and "NEVER FIRED" in out
    assert "1 never fired" in out
    assert "Comparison" in out and "#1" in out and "#2" in out


def test_report_json_has_every_sweep(results, capsys):
    assert main(["report", results, "--format", "json", "--sweep", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    (sweep,) = data["sweeps"]
    assert sweep["players"] == 2 and sweep["games"] == 100 and sweep["options"] == {"target": 10}
    assert [r["name"] for r in sweep["rules"] if r["never"]] == ["ghost"]
    seats = sweep["seats"]
    assert seats["P1"]["wins"] + seats["P2"]["wins"] >= 100
    lo, hi = seats["P1"]["ci95"]
    assert lo <= seats["P1"]["rate"] <= hi


def test_report_collect_counts_wins_per_bot(results):
    store = Store(results, readonly=True)
    st = collect(store, store.sweeps()[0])
    store.close()
    assert st.games == 120 and st.bots["heuristic"].trials == 120 and st.bots["random"].trials == 240
    assert sum(r.trials for r in st.seats.values()) == 360


def test_report_errors(tmp_path, results, capsys):
    assert main(["report", str(tmp_path / "missing.db")]) == 1
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    assert main(["report", str(bad)]) == 1
    assert main(["report", results, "--sweep", "9"]) == 1
    assert "no sweep 9" in capsys.readouterr().err


def test_report_plots_write_png_and_svg(results, tmp_path):
    pytest.importorskip("matplotlib", reason="charts need the optional extra: pip install 'daimyo[plots]'")
    folder = tmp_path / "plots"
    assert main(["report", results, "--plots", str(folder), "--rules", "never"]) == 0
    names = sorted(p.name for p in folder.iterdir())
    for stem in ("winrate-seats", "winrate-bots", "length", "scores-1", "rules-2"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names
    assert (folder / "winrate-seats.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_difference_of_two_rates_has_interval_and_significance():
    from tools.report import Rate, diff_means, diff_rates
    d = diff_rates(Rate(50, 100), Rate(70, 100))
    assert round(d["diff"], 3) == 0.2 and d["ci95"][0] > 0 and d["p"] < 0.01
    same = diff_rates(Rate(30, 100), Rate(31, 100))
    assert same["ci95"][0] < 0 < same["ci95"][1] and same["p"] > 0.5
    m = diff_means([1.0, 2.0, 3.0] * 10, [5.0, 6.0, 7.0] * 10)
    assert m["diff"] == 4.0 and m["p"] < 0.001


def test_comparison_has_a_difference_column(results, capsys):
    assert main(["report", results, "--rules", "none"]) == 0
    out = capsys.readouterr().out
    assert "Difference #2 - #1 (95% interval, p-value; * significant at 5%)" in out
    assert "P1 win rate" in out.split("Difference #2 - #1")[1]
    assert main(["report", results, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differences"][0]["base"] == 1 and "P1 win rate" in data["differences"][0]["figures"]


def test_plots_without_matplotlib_say_so_before_the_report(results, capsys, monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were not installed
    assert main(["report", results, "--plots", str(tmp_path / "charts")]) == 1
    captured = capsys.readouterr()
    assert "pip install 'daimyo[plots]'" in captured.err and captured.out == ""


def test_rounds_and_breakdowns_come_from_the_ruleset_hints(tmp_path, capsys):
    db = str(tmp_path / "c.db")
    assert main(["simulate", "shogun-cards", "--players", "2", "--games", "2", "--jobs", "1", "--db", db,
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", db, "--rules", "none"]) == 0
    out = capsys.readouterr().out
    assert "Game length (rounds: times the step `take_turn` ran)" in out
    # hints.breakdown: win rate by the seat's place after the first player (0 is the first player)
    part = out.split("Win rate by after_first")[1]
    assert sum(int(line.split()[2]) for line in part.splitlines()[3:5]) == 4, "2 games x 2 players"


def _expected_special_rounds(model, seed: int) -> dict[str, int]:
    """Replay game `seed` of a random sweep with the log on and read, from the log alone, which
    special card and which turn-order place each player took in each round (rulebook, "Determine
    Turn Order": the space of the special card taken is the player's place in the turn order)."""
    import re

    from engine.agents import seat_agent
    from engine.run.game import Game
    g = Game.new(model, 4, seed)
    agents = {f"P{i + 1}": seat_agent("random", seed, i) for i in range(4)}
    while not g.over:
        d = g.decision
        g.apply(d.options[agents[d.player].choose(g, d)])
    held: dict[tuple[str, int, str], str] = {}
    spaces: dict[int, dict[str, int]] = {}
    r = 0
    for e in g.log:
        if e["t"] == "step" and e["step"] == "round":
            r += 1
        elif e["t"] == "decision" and e["step"] == "determine_turn_order":
            held[("special", r, e["player"])] = e["choice"]
        elif e["t"] == "say" and (m := re.match(r"(P\d) takes space (\d)", e["text"])):
            spaces.setdefault(r, {})[m[1]] = int(m[2])
    for r, taken in spaces.items():
        for place, p in enumerate(sorted(taken, key=taken.get), start=1):
            held[("turn_position", r, p)] = str(place)
    out: dict[str, int] = {}
    for (name, _r, p), v in held.items():
        out[f"byround:{name}={v}@{p}"] = out.get(f"byround:{name}={v}@{p}", 0) + 1
    return out


def test_round_breakdown_records_the_special_card_and_place_each_player_held_each_round():
    model = load("shogun", {}, 4)
    for game in (0, 1):
        row = play_game(model, 4, ("random",) * 4, False, 7, game)
        assert row["error"] is None
        got = {k: v for k, v in row["counts"].items() if k.startswith("byround:")}
        assert got == _expected_special_rounds(model, row["seed"])
        assert sum(v for k, v in got.items() if k.startswith("byround:special=")) == 4 * row["counts"]["round"]


def test_report_splits_win_rates_by_what_was_held_in_each_round(tmp_path, capsys):
    db = str(tmp_path / "rb.db")
    model = load(RACE, {}, 2)
    store = Store(db)
    spec = SweepSpec(model.combo.name, dict(model.combo.options), 2, ("random", "random"), False, 1, model.fingerprint)
    sid = store.sweep_id(spec, rules_of(model), "test")
    rows = []
    # Game 0: P1 held card a for 3 rounds and b for 1, and won; P2 held b for 3 rounds and a for 1.
    # Game 1: P1 held a for 4 rounds, P2 held b for 4 rounds; P2 won.
    for game, held, winner in ((0, {"a@P1": 3, "b@P1": 1, "b@P2": 3, "a@P2": 1}, "P1"),
                               (1, {"a@P1": 4, "b@P2": 4}, "P2")):
        rows.append({"game": game, "seed": game, "seats": ["random", "random"], "scores": {"P1": 0, "P2": 0},
                     "tiebreaks": {}, "ranking": [winner, "P2" if winner == "P1" else "P1"], "winners": [winner],
                     "length": 10, "counts": {f"byround:card={k}": v for k, v in held.items()}, "error": None})
    store.add_games(sid, rows)
    store.commit()
    store.close()
    assert main(["report", db, "--format", "json"]) == 0
    card = json.loads(capsys.readouterr().out)["sweeps"][0]["round_breakdowns"]["card"]
    # a: held 3+1+4 = 8 player-rounds in 3 player-games, 3 rounds by a winner; b: 1+3+4 = 8, 1+4 = 5 won.
    assert (card["a"]["wins"], card["a"]["games"], card["a"]["player_games"]) == (3, 8, 3)
    assert (card["b"]["wins"], card["b"]["games"], card["b"]["player_games"]) == (5, 8, 3)
    # The interval is over player-games (rounds of one game share its outcome): 3/8 of 3 is 1 of 3.
    assert card["a"]["ci95"] == list(wilson(1, 3)) and card["b"]["ci95"] == list(wilson(2, 3))
    assert main(["report", db, "--rules", "none"]) == 0
    out = capsys.readouterr().out
    assert "Win rate by card held in a round" in out
    assert "byround" not in out  # the tags are not shown as rules
