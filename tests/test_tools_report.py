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
