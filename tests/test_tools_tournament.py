"""`daimyo tournament`: seat-rotated tables in the simulate store, win rates with intervals,
Bradley-Terry ratings, resume. Few games on the small race ruleset: strength figures come
from hand-run tournaments recorded in docs/agents.md, not from tests."""
from __future__ import annotations

import json
from pathlib import Path

from engine.cli import main
from tools.tournament import bradley_terry, standings, tables

RACE = str(Path(__file__).resolve().parent / "rulesets" / "race")


def test_tables_fill_with_the_last_agent_or_take_every_set() -> None:
    assert tables(["heuristic", "random"], 4) == [("heuristic", "random", "random", "random")]
    assert len(tables(["a", "b", "c", "d"], 3)) == 4


def test_bradley_terry_orders_by_pairwise_wins() -> None:
    r = bradley_terry({("a", "b"): 8, ("b", "a"): 2, ("b", "c"): 8, ("c", "b"): 2}, ["a", "b", "c"])
    assert r["a"] > r["b"] > r["c"]
    assert abs(sum(r.values()) / 3 - 1500) < 1e-6


def test_standings_count_rotated_seats_and_ties() -> None:
    rows = [{"error": None, "seats": ["x", "y"], "ranking": ["P1", "P2"], "winners": ["P1"]},
            {"error": None, "seats": ["y", "x"], "ranking": ["P2", "P1"], "winners": ["P2"]},
            {"error": None, "seats": ["x", "y"], "ranking": ["P1", "P2"], "winners": ["P1", "P2"]},
            {"error": "boom", "seats": ["x", "y"], "ranking": None, "winners": None}]
    st = standings(rows, ["x", "y"])
    by = {a["agent"]: a for a in st["agents"]}
    assert (st["games"], st["failed"]) == (3, 1)
    assert (by["x"]["wins"], by["x"]["seat_games"], by["y"]["wins"]) == (3, 3, 1)
    assert by["x"]["rating"] > by["y"]["rating"]


def test_tournament_stores_resumes_and_reports_json(tmp_path, capsys) -> None:
    db = str(tmp_path / "t.db")
    args = ["tournament", RACE, "--players", "3", "--agents", "heuristic,random", "--games", "6", "--jobs", "1",
            "--db", db, "--no-progress", "--format", "json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["played"] == 6 and first["games"] == 6
    agents = {a["agent"]: a for a in first["agents"]}
    assert agents["heuristic"]["seat_games"] == 6 and agents["random"]["seat_games"] == 12
    assert agents["heuristic"]["rating"] > agents["random"]["rating"]
    assert main(args) == 0  # a rerun resumes: nothing left to play, the same standings
    again = json.loads(capsys.readouterr().out)
    assert again["played"] == 0 and again["agents"] == first["agents"]
    assert main(["report", db, "--rules", "none"]) == 0
    assert "heuristic" in capsys.readouterr().out


def test_tournament_rejects_a_bad_spec(tmp_path, capsys) -> None:
    assert main(["tournament", RACE, "--agents", "search:time=soon", "--games", "2",
                 "--db", str(tmp_path / "t.db")]) == 1
    assert "`time` takes float" in capsys.readouterr().err
