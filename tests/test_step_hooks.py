"""Every step is announced before and after it runs (`before_STEP`, `after_STEP`, with the step's
params), so a variant hooks any step of a base without copying it."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine import Game, load
from engine.base.diagnostics import Diagnostics
from engine.model.validate import validate_targets

ROOT = Path(__file__).resolve().parent.parent
BASE = str(ROOT / "tests" / "rulesets" / "race")
MANIFEST = "id: hooks\nname: h\nversion: 1\nplayers: {min: 2, max: 4}\nextends: race\n"


def package(tmp: Path, rules: str) -> str:
    (tmp / "ruleset.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp / "rules.yaml").write_text(rules, encoding="utf-8")
    return f"{BASE}+{tmp}"


def test_after_and_before_a_step_with_its_arguments(tmp_path: Path) -> None:
    combo = package(tmp_path, """
globals: {seen: {default: []}}
triggers:
  count_turns:
    "on": after_take_turn
    do: push(seen, "after " + str(player))
  first:
    "on": before_take_turn
    do: push(seen, "before " + str(player))
""")
    game = Game.new(load(combo, players=2), players=2, seed=1)
    while game.decision is not None and len(game.state["globals"]["seen"]) < 4:
        game.apply(game.decision.options[0])
    assert game.state["globals"]["seen"][:4] == ["before P1", "after P1", "before P2", "after P2"]


def test_a_hook_on_an_unknown_step_is_r005_with_a_suggestion(tmp_path: Path) -> None:
    combo = package(tmp_path, 'triggers:\n  t:\n    "on": after_take_trun\n    do: say("x")\n')
    diags, _ = validate_targets([combo])
    d = next(d for d in diags if d.code == "R005")
    assert "after_take_trun" in d.message and "after_take_turn" in d.hint


@pytest.mark.parametrize("combo", ["shogun", "shogun-cards"])
def test_games_without_hooks_play_exactly_as_before(combo: str) -> None:
    """Hooks cost nothing and change nothing when no trigger listens: the same seed gives the same
    game twice (and the bundled scenario tests, which pin exact states, still pass)."""
    model = load(combo, players=3, diags=Diagnostics())
    a, b = Game.new(model, players=3, seed=5), Game.new(model, players=3, seed=5)
    for _ in range(40):
        if a.decision is None:
            break
        a.apply(a.decision.options[-1])
        b.apply(b.decision.options[-1])
    assert a == b
