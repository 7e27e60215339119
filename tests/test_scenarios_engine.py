"""The engine's own rule scenarios (on the tiny fixture ruleset): modifiers, triggers,
forced chance, scripted moves, and the runner's failure reports."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.scenario import run_file, run_paths

HERE = Path(__file__).resolve().parent
OUTCOMES = run_paths([str(HERE / "scenarios" / "race")])


@pytest.mark.parametrize("outcome", OUTCOMES, ids=[o.title for o in OUTCOMES])
def test_scenario(outcome) -> None:
    assert outcome.ok, "\n".join(f"{loc}: {msg}" for loc, msg in outcome.failures)


def test_failures_point_at_the_scenario_line(tmp_path: Path) -> None:
    race = HERE / "rulesets" / "race"
    f = tmp_path / "bad.yaml"
    f.write_text(f"scenario: wrong on purpose\nruleset: {race}\nplayers: 2\n"
                 "start: {step: take_turn, with: {player: P1}}\nmoves: [2]\nexpect:\n"
                 "  - P1.total: 3\n  - P1.total == 9\n  - P1.nosuch == 1\n", encoding="utf-8")
    [o] = run_file(f)
    msgs = [(loc.line, msg) for loc, msg in o.failures]
    assert msgs[0] == (7, "expected `P1.total` to be 3, but it is 2")
    assert msgs[1][0] == 8 and "does not" in msgs[1][1]
    assert msgs[2][0] == 9 and "unknown attribute" in msgs[2][1]


def test_illegal_scripted_move_lists_the_legal_ones(tmp_path: Path) -> None:
    race = HERE / "rulesets" / "race"
    f = tmp_path / "bad.yaml"
    f.write_text(f"scenario: illegal\nruleset: {race}\nplayers: 2\nmoves: [7]\n", encoding="utf-8")
    [o] = run_file(f)
    assert o.failures[0][0].line == 4 and "legal: 1, 2, 3" in o.failures[0][1]


def test_malformed_scenario_files_get_located_errors(tmp_path: Path) -> None:
    race = HERE / "rulesets" / "race"
    cases = {"forced: 3": (4, "forced must be a list"), "moves: 5": (4, "moves must be a list"),
             "seed: abc": (4, "seed must be a whole number"), "bogus: 1": (4, "unknown key `bogus`"),
             "start: {step: take_turn, with: 3}": (4, "start.with must be a mapping")}
    for body, (line, text) in cases.items():
        f = tmp_path / "bad.yaml"
        f.write_text(f"scenario: x\nruleset: {race}\nplayers: 2\n{body}\n", encoding="utf-8")
        [o] = run_file(f)
        assert not o.ok and o.failures[0][0].line == line and text in o.failures[0][1], (body, o.failures)
