"""R011/R012: declared data that no rule reads is a warning, so that "ok" cannot hide dead
data (issue 14, item 18); `unused:` keeps data on purpose, with the reason."""
from __future__ import annotations

import shutil
from pathlib import Path

from engine.loading.package import bundled_ids
from engine.model.validate import validate_targets

REPO = Path(__file__).resolve().parent.parent
RACE = REPO / "tests" / "rulesets" / "race"


def _race_with(tmp_path: Path, text: str) -> list[tuple[str, int, str]]:
    shutil.copytree(RACE, tmp_path / "race")
    (tmp_path / "race" / "more.yaml").write_text(text, encoding="utf-8")
    diags, _ = validate_targets([str(tmp_path / "race")])
    assert not diags.errors, diags.render()
    return [(d.code, d.loc.line, d.message) for d in diags if d.code in ("R011", "R012")]


def test_a_constant_no_rule_reads_is_a_located_warning(tmp_path: Path) -> None:
    found = _race_with(tmp_path, "constants:\n  lucky_face: 6\n  bonus: 1\nglobals:\n  never_used: 0\n"
                                 "display:\n  status: \"'{player.total} of ' + str(bonus)\"\n")
    assert found == [("R011", 2, "constant `lucky_face` is declared, but no rule reads it"),
                     ("R011", 5, "global `never_used` is declared, but no rule reads it")]
    diags, _ = validate_targets([str(tmp_path / "race")])
    assert all(d.severity == "warning" for d in diags), "dead data is a warning: validation still passes"


def test_fields_and_item_attributes(tmp_path: Path) -> None:
    found = _race_with(tmp_path, "kinds:\n  token:\n    items:\n      t5: {weight: 2, notes: prose}\n"
                                 "      t6: {weight: 3, colour: red}\n"
                                 "  player:\n    state:\n      laps: 0\n      written: 0\n"
                                 "triggers:\n  count:\n    \"on\": advanced\n    do: player.written += n\n"
                                 "checks:\n  light:\n    expect: \"t6.colour != 'blue'\"\n")
    # `written` is only written (players see it), `colour` only checked: both count as used;
    # `notes` is documentation
    assert found == [("R011", 4, "item attribute `token.weight` (first on `t5`) is declared, but no rule reads it"),
                     ("R011", 8, "field `player.laps` is declared, but no rule reads it")]


def test_unused_keeps_data_on_purpose_and_stale_entries_are_warned(tmp_path: Path) -> None:
    found = _race_with(tmp_path, "constants:\n  lucky_face: 6\nunused:\n  lucky_face: for readers\n"
                                 "  player.total: read by the rules\n  lucky_fase: a typo\n")
    assert found == [("R012", 5, "`unused:` names `player.total`, but a rule reads it"),
                     ("R012", 6, "`unused:` names `lucky_fase`, which is not a declared constant, global, "
                                 "field or item attribute")]


def test_the_bundled_rulesets_have_no_unexplained_dead_data() -> None:
    targets = [str(REPO / "rulesets" / i) for i in bundled_ids()]
    diags, checked = validate_targets(targets)
    assert len(checked) == len(targets)
    dead = [f"{d.loc}: {d.message}" for d in diags if d.code in ("R011", "R012")]
    assert not dead, "\n".join(dead)
