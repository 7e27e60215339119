"""The bundled examples of docs/examples/ (issue 16's variants): each validates, plays, passes its
scenarios, shows its change in `describe --resolved`, and copies no base rule.

"Copies no base rule" is checked on the texts: no example defines or replaces a procedure,
function, step or flow of its base (it may only add entries, add modifier layers and triggers,
and patch data), and no two consecutive lines of rule text (each longer than 20 characters, so that YAML
boilerplate like `player: player` does not count) in an example also appear, in order, in any
file of the base ruleset."""
from __future__ import annotations

import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
import yaml

from engine.model.validate import validate_targets

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "docs" / "examples").glob("*/ruleset.yaml"))
RULE_SECTIONS = ("procedures", "functions", "steps", "flow")


def daimyo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def base_of(example: Path) -> str:
    return yaml.safe_load((example / "ruleset.yaml").read_text(encoding="utf-8"))["extends"]


def combo(example: Path) -> str:
    return f"{base_of(example)}+./{example.relative_to(ROOT)}"


def data_files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.yaml")) if p.name != "ruleset.yaml"]


def test_there_are_examples() -> None:
    assert {p.name for p in EXAMPLES} >= {"cheap-deploy", "tax-rice-event", "dear-ronin", "scout", "island"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_validates_passes_its_scenarios_and_shows_its_change(example: Path) -> None:
    r = daimyo("validate", str(example.relative_to(ROOT)))
    assert r.returncode == 0, r.stdout + r.stderr
    r = daimyo("scenario", str((example / "tests").relative_to(ROOT)))
    assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr
    r = daimyo("describe", combo(example), "--resolved")
    assert r.returncode == 0 and f"# {example.name} " in r.stdout, "describe --resolved names the example's changes"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if base_of(e) in ("shogun", "shogun-cards")],
                         ids=lambda p: p.name)
def test_example_plays_a_whole_game(example: Path) -> None:
    r = daimyo("play", combo(example), "--players", "3", "--bots", "random", "--quiet", "--seed", "3")
    assert r.returncode == 0 and "Winner" in r.stdout, r.stderr


def _rule_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if len(ln.strip()) > 20 and not ln.strip().startswith("#")]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_copies_no_base_rule(example: Path) -> None:
    base = ROOT / "rulesets" / base_of(example)
    base_data = {}
    base_pairs: set[tuple[str, str]] = set()
    for f in data_files(base):
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        for section in RULE_SECTIONS:
            if isinstance(data.get(section), dict):
                base_data.setdefault(section, set()).update(data[section])
        lines = _rule_lines(f.read_text(encoding="utf-8"))
        base_pairs.update(pairwise(lines))
    for f in data_files(example):
        text = f.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
        for section in RULE_SECTIONS:
            assert not set(data.get(section) or ()) & base_data.get(section, set()), f"{f.name} redefines {section}"
        assert "flow" not in data, f"{f.name} writes a flow"
        for patch in data.get("patches") or []:
            target = str(patch.get("replace") or patch.get("merge") or "")
            assert not target.startswith(RULE_SECTIONS), f"{f.name} replaces the base rule `{target}`"
        lines = _rule_lines(text)
        copied = [pair for pair in pairwise(lines) if pair in base_pairs]
        assert not copied, f"{f.name} copies base lines: {copied}"


def test_the_island_map_is_data_only_and_describe_shows_each_replaced_part() -> None:
    """The island replaces the base's board sections and the constants that tie a board to its
    player counts; `describe --resolved` marks each of them with the island's file and line."""
    island = ROOT / "docs" / "examples" / "island"
    r = daimyo("describe", combo(island), "--resolved")
    marked = {ln.split(":")[0].strip() for ln in r.stdout.splitlines() if "# island docs/examples/island/" in ln}
    assert {"spaces", "regions", "links", "sets", "layout", "3"} <= marked, marked
    r = daimyo("describe", combo(island))
    assert "board: 12 province spaces, 3 regions" in r.stdout


def _island_copy(tmp: Path, edit_rules=None, edit_fixed=None) -> Path:
    copy = tmp / "island"
    shutil.copytree(ROOT / "docs" / "examples" / "island", copy)
    for name, edit in (("rules.yaml", edit_rules), ("rules-setup-fixed.yaml", edit_fixed)):
        if edit is not None:
            path = copy / name
            path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return copy


def test_a_small_map_without_fewer_army_groups_fails_validation_at_the_map(tmp_path: Path) -> None:
    """Rulebook, "Claiming Starting Provinces": each army group is placed on a province of its
    own. The base's check `a_province_for_every_army_group` finds a map too small for the army
    groups (12 provinces, 3 x 9 groups) and points at the variant's patch, not the base file."""
    copy = _island_copy(tmp_path, edit_rules=lambda t: t[:t.index("  - merge: constants.army_groups")])
    diags, _ = validate_targets([str(copy)])
    d = next(d for d in diags.errors if "a_province_for_every_army_group" in d.message)
    assert d.code == "R008" and Path(d.loc.file).name == "rules.yaml", d


def test_a_fixed_set_up_row_short_of_a_province_fails_validation(tmp_path: Path) -> None:
    copy = _island_copy(tmp_path, edit_fixed=lambda t: t.replace("[Hyuga, Buzen, Hizen]", "[Hyuga, Buzen]"))
    diags, _ = validate_targets([str(copy)])
    d = next(d for d in diags.errors if "a_fixed_row_per_player_and_a_province_per_group" in d.message)
    assert d.code == "R008" and Path(d.loc.file).resolve().parent == copy.resolve(), d
