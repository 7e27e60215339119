"""Several hands per player (`players: {hands: {N: H}}` in a manifest): with N people at the table the
rules see N x H players; person Pi plays hands Pi, Pi+N, ...: he is asked their decisions, sees what
they may see, and the log, saves and replays count the people. Built on a copy of tests/rulesets/race."""
from __future__ import annotations

import shutil
from pathlib import Path

from engine import Game, load
from engine.cli.replay import replay_file
from engine.cli.scenario import run_file
from engine.run.state import canonical

RACE = Path(__file__).resolve().parent / "rulesets" / "race"


def _package(tmp_path: Path) -> str:
    folder = tmp_path / "race-hands"
    folder.mkdir()
    shutil.copy(RACE / "rules.yaml", folder / "rules.yaml")
    (folder / "ruleset.yaml").write_text(
        "id: race-hands\nname: Race with two hands each\nversion: 1\n"
        "players: {min: 2, max: 4, hands: {2: 2}}\n"
        "options:\n  target: {values: [10, 20], default: 20, description: the total that ends the game}\n",
        encoding="utf-8")
    return str(folder)


def test_each_player_plays_two_hands(tmp_path: Path) -> None:
    g = Game.new(load(_package(tmp_path), players=2), 2, seed=3)
    assert g.state["players"] == ["P1", "P2", "P3", "P4"]
    asked = []
    for _ in range(4):  # one turn: P1, P2, P3, P4 take theirs; P3's is asked of P1, P4's of P2
        asked.append(g.decision.player)
        g.apply(1)
    assert asked == ["P1", "P2", "P1", "P2"]
    assert [g.state["ent"][p]["total"] for p in g.state["players"]] == [1, 1, 1, 1]


def test_a_player_sees_his_hands_secrets_only(tmp_path: Path) -> None:
    g = Game.new(load(_package(tmp_path), players=2), 2, seed=3)
    for p in g.state["players"]:
        g.state["ent"][p]["secret_pick"] = 2
    mine = g.view("P1")["ent"]
    assert mine["P1"]["secret_pick"] == 2 and mine["P3"]["secret_pick"] == 2
    assert mine["P2"]["secret_pick"] == "?" and mine["P4"]["secret_pick"] == "?"


def test_other_player_counts_keep_one_hand_and_their_state(tmp_path: Path) -> None:
    g = Game.new(load(_package(tmp_path), players=3), 3, seed=3)
    assert g.state["players"] == ["P1", "P2", "P3"] and "seats" not in g.state
    assert "seats" not in g.log[0]


def test_log_save_and_replay_count_the_people(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    g = Game.new(load(pkg, players=2), 2, seed=5)
    while not g.over:
        g.apply(g.decision.options[-1])
    assert g.log[0]["seats"] == 2 and g.log[0]["players"] == ["P1", "P2", "P3", "P4"]
    assert g.save()["players"] == 2
    log = tmp_path / "game.jsonl"
    log.write_text("".join(canonical(e) + "\n" for e in g.log), encoding="utf-8")
    ok, msg = replay_file(str(log), quiet=True)
    assert ok, msg


def test_the_rules_ask_who_plays_a_hand(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    sc = tmp_path / "controller.yaml"
    sc.write_text(
        f"scenario: controller() names the person who plays a hand\nruleset: {pkg}\nplayers: 2\n"
        "start: {step: take_turn, with: {player: P3}}\n"
        "expect:\n  - 'controller(P3)': P1\n  - 'controller(P2)': P2\n"
        "  - 'count(players, where=p => controller(p) == p)': 2\n", encoding="utf-8")
    outcomes = run_file(sc)
    assert [o.ok for o in outcomes] == [True], [o.failures for o in outcomes]
