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


# ---- the format's newer features: each wrong expectation fails with a located message ----

RACE = HERE / "rulesets" / "race"


def _run(tmp_path: Path, body: str, players: int = 2) -> list[tuple[int, str]]:
    f = tmp_path / "sc.yaml"
    f.write_text(f"scenario: x\nruleset: {RACE}\nplayers: {players}\n{body}", encoding="utf-8")
    [o] = run_file(f)
    return [(loc.line, msg) for loc, msg in o.failures]


def test_a_wrong_checkpoint_fails_at_its_line_and_the_scenario_goes_on(tmp_path: Path) -> None:
    msgs = _run(tmp_path, "moves:\n  - 2\n  - expect: [P1.total == 3]\n  - 1\n  - expect: {P2.total: 5}\n")
    assert msgs == [(6, "expected `P1.total == 3` to hold; it does not"),
                    (8, "expected `P2.total` to be 5, but it is 1")]


def test_wrong_options_on_offer_are_located(tmp_path: Path) -> None:
    msgs = _run(tmp_path, "moves:\n  - player: P1\n    options: [1, 2]\n    offers: [4]\n    illegal: [3]\n"
                          "  - {choose: 1, player: P2}\n")
    assert msgs[0] == (6, "checkpoint (moves entry 1): P1 at `take_turn` is offered 1, 2, 3, not 1, 2")
    assert msgs[1] == (7, "checkpoint (moves entry 1): P1 at `take_turn` is not offered 4; offered: 1, 2, 3")
    assert msgs[2] == (8, "checkpoint (moves entry 1): 3 is a legal option for P1 at `take_turn`, "
                          "expected it to be illegal")
    assert msgs[3][0] == 9 and "expected P2 to choose, but P1 is choosing" in msgs[3][1]


def test_a_wrong_result_is_located_and_shows_the_actual_one(tmp_path: Path) -> None:
    msgs = _run(tmp_path, "start: [{step: take_turn, with: {player: P1}}, {step: take_turn, with: {player: P2}}]\n"
                          "moves: [3, 1]\nforced: [{kind: roll, value: 1}]\n"
                          "result:\n  winner: P2\n  ranking: [P2, P1]\n  tie: true\n  scores: {P1: 2}\n")
    shown = "winners P1; ranking P1, P2; scores {'P1': 3, 'P2': 1}"
    assert msgs == [(8, f"expected P2 to win alone, but the result is: {shown}"),
                    (9, f"expected ranking P2, P1, but the result is: {shown}"),
                    (10, f"expected a tie, but the result is: {shown}"),
                    (11, f"expected P1 to score 2, but the result is: {shown}")]


def test_a_result_before_the_end_says_who_is_choosing(tmp_path: Path) -> None:
    assert _run(tmp_path, "moves: [1]\nresult: {winner: P1}\n") == [
        (5, "result: the game is not over (P2 is choosing at `take_turn`)")]


def test_a_move_after_the_start_step_ended_names_the_step_and_keeps_the_account(tmp_path: Path) -> None:
    f = tmp_path / "sc.yaml"
    f.write_text(f"scenario: x\nruleset: {RACE}\nplayers: 2\nstart: {{step: take_turn, with: {{player: P1}}}}\n"
                 "moves: [2, 1]\n", encoding="utf-8")
    [o] = run_file(f)
    assert [(loc.line, msg) for loc, msg in o.failures] == [
        (5, "move 2: no decision is pending: the scenario's start step `take_turn` ended")]
    assert o.account == ["P1 moves 2 to 2"], "the account up to the failure is kept for --verbose"


def test_verbose_prints_the_account_of_a_failed_scenario(tmp_path: Path, capsys) -> None:
    import argparse

    from engine.cli.scenario import run as run_command
    f = tmp_path / "sc.yaml"
    f.write_text(f"scenario: x\nruleset: {RACE}\nplayers: 2\nmoves: [2, 7]\n", encoding="utf-8")
    assert run_command(argparse.Namespace(paths=[str(f)], verbose=True, format="human")) == 1
    out = capsys.readouterr().out
    assert "move 2: 7 is not a legal option for P2 at `take_turn`" in out and "| P1 moves 2 to 2" in out


def test_a_move_after_the_whole_game_ended_names_the_last_step(tmp_path: Path) -> None:
    msgs = _run(tmp_path, "options: {target: 10}\nsetup: P1.total = 9\nmoves: [1, 1]\n")
    assert msgs == [(6, "move 2: no decision is pending: the game ended")]


def test_a_setup_that_breaks_an_invariant_is_refused(tmp_path: Path) -> None:
    msgs = _run(tmp_path, "setup: |\n  P2.total = -1\nmoves: [1]\n")
    assert len(msgs) == 1 and msgs[0][0] == 4
    assert "breaks the ruleset's invariant `totals_never_negative`" in msgs[0][1]
    assert "a player's total never goes below 0" in msgs[0][1] and "invariants.yaml:" in msgs[0][1]
    msgs = _run(tmp_path, "setup: P2.total = -1\nunchecked: [totals_never_negativ]\n")
    assert msgs[0][0] == 5 and "did you mean `totals_never_negative`" in msgs[0][1]
    assert _run(tmp_path, "setup: P2.total = -1\nunchecked: true\n") == []


def test_over_checks_whether_a_decision_is_pending(tmp_path: Path) -> None:
    assert _run(tmp_path, "moves: [1, {over: true}]\n") == [
        (4, "checkpoint (moves entry 2): expected the end, but P2 is choosing at `take_turn`")]


def test_start_can_run_a_short_run_of_steps_an_expansion_inserted(tmp_path: Path) -> None:
    f = tmp_path / "sc.yaml"
    f.write_text("scenario: x\nruleset: shogun+tennos-court\nplayers: 4\n"
                 "start: [court_setup, lay_out_favors]\n"
                 "moves: [{over: true, expect: [len(favor_deck) == 18, len(court_spaces) == 3]}]\n", encoding="utf-8")
    [o] = run_file(f)
    assert o.ok, o.failures
    f.write_text("scenario: x\nruleset: shogun+tennos-court\nplayers: 4\nstart: [court_setup, lay_out_favor]\n",
                 encoding="utf-8")
    [o] = run_file(f)
    assert [(loc.line, msg) for loc, msg in o.failures] == [
        (4, "start: unknown step `lay_out_favor`; did you mean `lay_out_favors`?")]


def test_the_documented_example_is_a_valid_scenario_file(tmp_path: Path) -> None:
    import re

    from engine.base.diagnostics import Diagnostics
    from engine.loading.schema import check_scenario
    from engine.loading.yamlio import load_yaml
    doc = (HERE.parent / "docs" / "scenarios.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(.*?)```", doc, re.S).group(1)
    path = tmp_path / "example.yaml"
    path.write_text(example, encoding="utf-8")
    diags = Diagnostics()
    data = load_yaml(path, diags)
    assert check_scenario(data, str(path), diags), diags.render()
    for key in ("moves", "result", "unchecked", "start", "forced"):
        assert key in data[0], f"the example shows `{key}:`"
