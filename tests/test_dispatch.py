"""`dispatch:` flow items run the step a value names (dispatch tables in data); a name that is not
a step, or a step that takes other arguments, stops the game with a located rule error."""
from __future__ import annotations

from pathlib import Path

import pytest

from dsl.runtime import RuleError
from engine import Game, load

RULES = """
globals: {log_: {default: []}, which: {default: "a"}}
kinds: {player: {state: {n: 0}}}
constants: {table: {a: step_a, b: step_b, c: nowhere, d: step_d}}
steps:
  step_a: {params: [player], do: "player.n += 1"}
  step_b: {params: [player], do: "player.n += 10"}
  step_d: {params: [who], do: "who.n += 100"}
  turn:
    flow:
      - {dispatch: "table[which]", with: {player: "players[0]"}}
flow: [turn]
result: {score: player.n}
"""
MANIFEST = "id: disp\nname: d\nversion: 1\nplayers: {min: 1, max: 2}\n"


@pytest.fixture
def model(tmp_path: Path):
    (tmp_path / "ruleset.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    return load(str(tmp_path), players=1)


def run_with(model, which: str) -> Game:
    game = Game.new(model, players=1, seed=1, defer=True)
    game.state["globals"]["which"] = which
    game.run()
    return game


def test_dispatch_runs_the_named_step(model) -> None:
    assert run_with(model, "a").state["ent"]["P1"]["n"] == 1
    assert run_with(model, "b").state["ent"]["P1"]["n"] == 10


@pytest.mark.parametrize("which,words", [("c", "`nowhere` is not a step"), ("d", "step `step_d` takes who")])
def test_a_bad_dispatch_is_a_located_rule_error(model, which: str, words: str) -> None:
    with pytest.raises(RuleError) as e:
        run_with(model, which)
    assert words in e.value.message and e.value.loc.file.endswith("rules.yaml") and e.value.loc.line == 11
