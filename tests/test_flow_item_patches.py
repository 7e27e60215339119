"""Patches that address one item inside a flow by its stable name (a step name or a `label:`):
`replace_item` and `remove_item`, so a variant changes one line of a flow without copying it."""
from __future__ import annotations

from pathlib import Path

from engine import load
from engine.base.diagnostics import Diagnostics
from engine.cli.describe import describe
from engine.model.validate import validate_targets

ROOT = Path(__file__).resolve().parent.parent
BASE = str(ROOT / "tests" / "rulesets" / "mini-map")
MANIFEST = "id: {id}\nname: x\nversion: 1\nplayers: {{min: 2, max: 3}}\nextends: mini-map\n"


def package(tmp: Path, pid: str, rules: str) -> str:
    folder = tmp / pid
    folder.mkdir()
    (folder / "ruleset.yaml").write_text(MANIFEST.format(id=pid), encoding="utf-8")
    (folder / "rules.yaml").write_text(rules, encoding="utf-8")
    return str(folder)


def flow_of(model) -> list:
    return model.resolved.data["flow"]


def test_replace_one_item_inside_a_nested_flow(tmp_path: Path) -> None:
    pkg = package(tmp_path, "double-turn", """
steps:
  double_turn:
    params: [player]
    do: |
      place(player, first([s for s in provinces if s.owner == none]))
patches:
  - replace_item: turn
    value: {step: double_turn, with: {player: p}, label: the_turn}
""")
    model = load(f"{BASE}+{pkg}", players=2)
    inner = flow_of(model)[0]["do"][0]["do"]
    assert inner == [{"step": "double_turn", "with": {"player": "p"}, "label": "the_turn"}]
    text = describe(f"{BASE}+{pkg}", {}, 2, True, Diagnostics())
    assert any("double_turn" in ln for ln in text.splitlines()), text
    assert "# inserted by double-turn" in text  # the replaced item names the package that set it


def test_remove_one_item_and_address_a_label(tmp_path: Path) -> None:
    first = package(tmp_path, "with-label", """
steps:
  bonus:
    params: [player]
    do: "player.score += 1"
patches:
  - insert: {label: end_bonus, for: p, in: players, do: [{step: bonus, with: {player: p}}]}
    after: score
""")
    second = package(tmp_path, "no-bonus", "patches:\n  - remove_item: end_bonus\n")
    (Path(second) / "ruleset.yaml").write_text(MANIFEST.format(id="no-bonus") + "requires: [with-label]\n",
                                                encoding="utf-8")
    assert [x if isinstance(x, str) else x.get("label") for x in flow_of(load(f"{BASE}+{first}", players=2))][1:] \
        == ["score", "end_bonus"]
    model = load(f"{BASE}+{first}+{second}", players=2)
    assert flow_of(model)[1:] == ["score"]


def test_an_unknown_item_name_is_located_with_a_suggestion(tmp_path: Path) -> None:
    pkg = package(tmp_path, "typo", "patches:\n  - remove_item: scroe\n")
    diags, _ = validate_targets([f"{BASE}+{pkg}"])
    d = next(d for d in diags if d.code == "P026")
    assert (d.loc.line, d.loc.col) == (2, 18) and "no flow item or procedure block named `scroe`" in d.message
    assert "score" in d.hint
