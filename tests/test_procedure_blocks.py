"""Procedures written as named blocks (`do:` a list of `{name, do}`), and patches that replace,
remove or insert one block by its name, so a variant changes one part of a procedure without
copying it. Shogun's `collect_taxes` is written in two blocks, `collect` and `unrest`."""
from __future__ import annotations

import shutil
from pathlib import Path

from engine import Game, load
from engine.base.diagnostics import Diagnostics
from engine.cli.describe import describe, describe_json
from engine.cli.scenario import run_file
from engine.model.validate import validate_targets

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "id: {id}\nname: x\nversion: 1\nplayers: {{min: 3, max: 5}}\nextends: shogun\n"
TAXES = """
scenario: {title}
ruleset: shogun+{pkg}
players: 4
start: {{step: carry_out_action, with: {{player: P1, action: collect_taxes}}}}
setup: |
  fill_supplies()
  place_armies(P1, Settsu, 3)
  P1.plan = {{collect_taxes: Settsu}}
expect:
{expect}
"""


def variant(tmp: Path, pid: str, rules: str) -> Path:
    folder = tmp / pid
    folder.mkdir()
    (folder / "ruleset.yaml").write_text(MANIFEST.format(id=pid), encoding="utf-8")
    (folder / "rules.yaml").write_text(rules, encoding="utf-8")
    return folder


def taxes_scenario(tmp: Path, pkg: Path, title: str, expect: list[str]) -> list[str]:
    """Run a Collect taxes action in Settsu (tax 7, P1 holds it with 3 armies) under `pkg`."""
    path = tmp / f"{pkg.name}-scenario.yaml"
    path.write_text(TAXES.format(title=title, pkg=pkg, expect="\n".join(f"  - {e}" for e in expect)),
                    encoding="utf-8")
    return [f"{loc}: {msg}" for out in run_file(path) for loc, msg in out.failures]


def test_the_base_collects_then_places_a_revolt_marker(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "nothing", "notes: no change\n")
    assert taxes_scenario(tmp_path, pkg, "base", ["P1.chests: 22", "Settsu.revolts: 1"]) == []


def test_a_variant_removes_one_block_of_a_base_procedure(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "calm-taxes", """
patches:
  - remove_item: procedures.collect_taxes.do.unrest
    notes: taxes never stir the farmers
""")
    assert taxes_scenario(tmp_path, pkg, "no unrest", ["P1.chests: 22", "Settsu.revolts: 0"]) == []
    blocks = load(f"shogun+{pkg}", players=4).resolved.data["procedures"]["collect_taxes"]["do"]
    assert [b["name"] for b in blocks] == ["collect"]


def test_inserted_and_replaced_blocks_run_as_one_body(tmp_path: Path) -> None:
    """An inserted block sees the locals of the blocks before it (`n`); a replaced block runs in
    the place of the old one."""
    pkg = variant(tmp_path, "tithe", """
patches:
  - insert: {name: tithe, do: "player.chests -= n // 2"}
    after: procedures.collect_taxes.do.collect
  - replace_item: unrest
    value: {name: unrest, do: "province.revolts += 2"}
""")
    assert taxes_scenario(tmp_path, pkg, "tithe", ["P1.chests: 19", "Settsu.revolts: 2"]) == []


def test_an_unknown_block_is_p026_with_the_qualified_suggestion(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "typo", "patches:\n  - remove_item: procedures.collect_taxes.do.unrset\n")
    diags, _ = validate_targets([f"shogun+{pkg}"])
    d = next(d for d in diags if d.code == "P026")
    assert (Path(d.loc.file).name, d.loc.line, d.loc.col) == ("rules.yaml", 2, 18)
    assert "procedures.collect_taxes.do.unrest" in d.hint


def test_a_procedure_written_as_one_text_has_no_blocks_and_says_so(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "onetext", "patches:\n  - remove_item: procedures.confiscate_rice.do.unrest\n")
    diags, _ = validate_targets([f"shogun+{pkg}"])
    d = next(d for d in diags if d.code == "P026")
    assert "`confiscate_rice` is one text" in d.hint


def test_two_blocks_with_one_name_are_p029_at_the_second(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "twice", """
patches:
  - insert: {name: collect, do: "player.chests += 1"}
    after: unrest
""")
    diags, _ = validate_targets([f"shogun+{pkg}"])
    d = next(d for d in diags if d.code == "P029")
    assert "collect_taxes" in d.message and "`collect`" in d.message
    assert (Path(d.loc.file).name, d.loc.line) == ("rules.yaml", 3), d.loc


def test_a_block_that_is_not_a_block_is_a_schema_error_after_patches(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "shape", """
patches:
  - insert: {do: "player.chests += 1"}
    after: unrest
""")
    diags, _ = validate_targets([f"shogun+{pkg}"])
    assert any(d.code.startswith("S") and "after patches" in d.message and Path(d.loc.file).name == "rules.yaml"
               for d in diags.errors), [str(d) for d in diags]


def test_an_error_in_a_block_points_into_that_block(tmp_path: Path) -> None:
    """The blocks compile as one text, but each keeps its own place: a base's second block and a
    variant's inserted block are located in their own files and lines."""
    pkg = variant(tmp_path, "bad", """
patches:
  - insert:
      name: bonus
      do: |
        player.chests += 1
        player.chests += bonsu
    after: collect
""")
    diags, _ = validate_targets([f"shogun+{pkg}"])
    d = next(d for d in diags if d.code == "D101")
    assert (Path(d.loc.file).name, d.loc.line, d.loc.col) == ("rules.yaml", 7, 26), d.loc


def _mini_map_with_blocks(tmp: Path) -> tuple[str, str]:
    """The test ruleset mini-map, and a copy whose procedure `place` is written in blocks."""
    base = ROOT / "tests" / "rulesets" / "mini-map"
    copy = tmp / "mini-map"
    shutil.copytree(base, copy)
    rules = copy / "rules.yaml"
    text = rules.read_text(encoding="utf-8")
    one = """    do: |
      province.owner = player
      province.armies += 1
      player.armies -= 1
      emit(placed, player, province)
"""
    blocks = """    do:
      - name: take
        do: |
          province.owner = player
          province.armies += 1
      - {name: pay, do: "player.armies -= 1"}
      - name: tell
        do: emit(placed, player, province)
"""
    assert one in text
    rules.write_text(text.replace(one, blocks), encoding="utf-8")
    return str(base), str(copy)


def test_a_procedure_in_blocks_plays_exactly_as_the_same_text(tmp_path: Path) -> None:
    one, blocks = _mini_map_with_blocks(tmp_path)
    games = [Game.new(load(c, players=2), players=2, seed=3) for c in (one, blocks)]
    while games[0].decision is not None:
        assert games[0].decision.options == games[1].decision.options
        for g in games:
            g.apply(g.decision.options[-1])
    assert games[1].decision is None
    assert games[0].state == games[1].state


def test_describe_resolved_names_the_package_that_changed_a_block(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "tithe2", """
patches:
  - insert: {name: tithe, do: "player.chests -= 1"}
    after: procedures.collect_taxes.do.collect
""")
    text = describe(f"shogun+{pkg}", {}, 4, True, Diagnostics())
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("- name: tithe"))
    assert "# inserted by tithe2" in lines[at], lines[at]
    assert "collect_taxes:" in "\n".join(lines[at - 12:at])


def test_a_qualified_name_looks_only_in_its_list(tmp_path: Path) -> None:
    """`flow.score` is the item `score` of the game's flow; `steps.turn.flow.score` names a list
    that has no `score`, so it is P026 although the bare name exists elsewhere."""
    base = str(ROOT / "tests" / "rulesets" / "mini-map")
    manifest = "id: {id}\nname: x\nversion: 1\nplayers: {{min: 2, max: 3}}\nextends: mini-map\n"
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, name in ((good, "flow.score"), (bad, "steps.turn.flow.score")):
        folder.mkdir()
        (folder / "ruleset.yaml").write_text(manifest.format(id=folder.name), encoding="utf-8")
        (folder / "rules.yaml").write_text(f"patches:\n  - remove_item: {name}\n", encoding="utf-8")
    assert "score" not in load(f"{base}+{good}", players=2).resolved.data["flow"]
    diags, _ = validate_targets([f"{base}+{bad}"])
    assert any(d.code == "P026" and "steps.turn.flow.score" in d.message for d in diags.errors)


# ---- before_PROC / after_PROC ----

HOOKED = """
triggers:
  before_taxes:
    "on": before_collect_taxes
    do: 'say("before taxes in {province}: {player} has {player.chests}")'
  after_taxes:
    "on": after_collect_taxes
    do: 'say("after taxes in {province}: {player} has {player.chests}")'
"""


def test_a_procedure_is_announced_before_and_after_with_its_arguments(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "hooked", HOOKED)
    path = tmp_path / "hooked.yaml"
    path.write_text(TAXES.format(title="hooks", pkg=pkg, expect="  - P1.chests: 22") +
                    'expect_log: ["before taxes in Settsu: P1 has 15", "after taxes in Settsu: P1 has 22"]\n',
                    encoding="utf-8")
    assert [f for out in run_file(path) for f in out.failures] == []


def test_only_procedures_a_trigger_listens_to_are_wrapped(tmp_path: Path) -> None:
    """No listener, no cost: the procedure is the compiled body itself."""
    plain = load("shogun", players=4).procedures
    assert not hasattr(plain["collect_taxes"], "__wrapped__")
    hooked = load(f"shogun+{variant(tmp_path, 'hooked2', HOOKED)}", players=4).procedures
    assert hasattr(hooked["collect_taxes"], "__wrapped__")
    assert not hasattr(hooked["confiscate_rice"], "__wrapped__")


def test_a_hook_on_an_unknown_procedure_is_r005_with_a_suggestion(tmp_path: Path) -> None:
    pkg = variant(tmp_path, "typo2", 'triggers:\n  t:\n    "on": after_collect_taxs\n    do: say("x")\n')
    diags, _ = validate_targets([f"shogun+{pkg}"])
    d = next(d for d in diags if d.code == "R005")
    assert "after_collect_taxs" in d.message and "after_collect_taxes" in d.hint


def test_describe_lists_removed_and_inserted_items(tmp_path: Path) -> None:
    """A removed block has no line left to carry a comment: the summary, the end of `--resolved`
    and the JSON list every item patch with its package and place."""
    pkg = variant(tmp_path, "calm", """
patches:
  - remove_item: procedures.collect_taxes.do.unrest
""")
    summary = describe(f"shogun+{pkg}", {}, 4, False, Diagnostics())
    assert "remove_item procedures.collect_taxes.do.unrest  [calm]" in summary
    resolved = describe(f"shogun+{pkg}", {}, 4, True, Diagnostics())
    assert "#   remove_item procedures.collect_taxes.do.unrest  [calm]" in resolved
    data = describe_json(f"shogun+{pkg}", {}, 4, False, Diagnostics())
    assert data["item_patches"] == [{"patch": "remove_item", "list": "procedures.collect_taxes.do", "item": "unrest",
                                     "package": "calm", "file": data["item_patches"][0]["file"], "line": 3}]
    assert data["item_patches"][0]["file"].endswith("rules.yaml")


def test_stop_in_a_block_ends_the_procedure_and_after_still_runs(tmp_path: Path) -> None:
    """`stop` in a block ends the whole procedure (the blocks after it do not run), and the
    `after_` hook still announces the call."""
    _, blocks = _mini_map_with_blocks(tmp_path)
    pkg = tmp_path / "halt"
    pkg.mkdir()
    (pkg / "ruleset.yaml").write_text("id: halt\nname: h\nversion: 1\nplayers: {min: 2, max: 3}\nextends: mini-map\n",
                                      encoding="utf-8")
    (pkg / "rules.yaml").write_text("""
globals: {calls: 0}
patches:
  - insert: {name: halt, do: stop}
    before: tell
triggers:
  counted:
    "on": after_place
    do: calls += 1
""", encoding="utf-8")
    game = Game.new(load(f"{blocks}+{pkg}", players=2), players=2, seed=1)
    game.apply(game.decision.options[0])
    state = game.state
    assert state["globals"]["calls"] == 1
    assert not any("places an army" in str(line) for line in game.log), "the block after `stop` did not run"
