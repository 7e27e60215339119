"""Every broken ruleset under tests/broken/ gives the diagnostic a modder needs: the right
code, at the right file, line and column, in both the human and the JSON output.

The table below is the specification: one row per case, `(code, file, line, column,
words of the message)`. The file is relative to the case folder (or to the repository
for a fixture file). See tests/broken/README.md for how cases are laid out.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from engine import Game, load
from engine.cli import main
from engine.cli.scenario import run_file
from engine.model.validate import validate_targets

REPO = Path(__file__).resolve().parent.parent
BROKEN = REPO / "tests" / "broken"

CASES: dict[str, tuple[str, str, int, int, str]] = {
    # ---- Y: reading YAML ----
    "yaml-syntax":            ("Y001", "rules.yaml", 12, 12, "unexpected ':'"),
    "yaml-tab":               ("Y001", "rules.yaml", 5, 1, "tab character"),
    "yaml-unclosed-quote":    ("Y001", "rules.yaml", 8, 9, "never closed"),
    "yaml-duplicate-key":     ("Y002", "rules.yaml", 3, 3, "duplicate key `turn`"),
    "yaml-binary-file":       ("Y003", "zz-image.yaml", 1, 7, "binary"),
    "yaml-alias-bomb":        ("Y004", "zz-bomb.yaml", 7, 14, "too much data"),
    "yaml-deep-nesting":      ("Y005", "zz-deep.yaml", 2, 68, "deeper than 64"),
    "yaml-huge-file":         ("Y006", "zz-huge.yaml", 0, 0, "larger than"),
    "yaml-merge-key":         ("Y007", "rules.yaml", 5, 5, "merge keys"),
    "yaml-python-tag":        ("Y008", "rules.yaml", 12, 8, "unsupported tag"),
    # ---- S: the shape of files ----
    "manifest-unknown-key":   ("S002", "ruleset.yaml", 5, 1, "unknown key `extend`"),
    "manifest-missing-key":   ("S003", "ruleset.yaml", 1, 1, "needs `version`"),
    "manifest-wrong-type":    ("S004", "ruleset.yaml", 4, 10, "players must be a whole number or a mapping"),
    "manifest-bad-id":        ("S006", "ruleset.yaml", 1, 5, "`Tiny Game`"),
    "data-not-mapping":       ("S001", "zz-list.yaml", 1, 1, "must be a mapping"),
    "data-unknown-section":   ("S002", "rules.yaml", 12, 1, "unknown key `rule`"),
    "data-unknown-key":       ("S002", "rules.yaml", 4, 5, "unknown key `then` in triggers.bonus"),
    "data-missing-key":       ("S003", "rules.yaml", 3, 5, "triggers.bonus needs `do`"),
    "data-wrong-type":        ("S004", "rules.yaml", 4, 12, "order must be a whole number"),
    "flow-item-not-a-step":   ("S004", "rules.yaml", 9, 14, "flow.1 must be text or a mapping"),
    "board-colour-unquoted":  ("S004", "board.yaml", 8, 13, "color must be text, not empty"),
    "data-not-allowed-value": ("S005", "rules.yaml", 3, 32, "visible cannot be `everyone`"),
    "patch-two-forms":        ("S007", "rules.yaml", 2, 5, "fits more than one form"),
    "manifest-out-of-range":  ("S008", "ruleset.yaml", 4, 16, "0 is less than the minimum of 1"),
    "board-bad-layout":       ("S008", "board.yaml", 11, 15, "board.layout.A"),
    "data-bad-name":          ("S006", "rules.yaml", 3, 3, "`big-turn` is not a valid name"),
    "data-flow-item-shape":   ("S002", "rules.yaml", 12, 5, "unknown key `times` in flow.1"),
    "data-empty-file":        ("S010", "zz-empty.yaml", 1, 1, "empty"),
    "patch-bad-value":        ("S004", "rules.yaml", 5, 11, "after patches: triggers.lucky.do must be text"),
    # ---- D: the rules language ----
    "dsl-unknown-id":                ("D101", "rules.yaml", 3, 19, "unknown name `Fujii`"),
    "dsl-unknown-attribute":         ("D102", "rules.yaml", 4, 21, "unknown attribute `taxes`"),
    "dsl-unknown-function":          ("D103", "rules.yaml", 4, 25, "unknown function `maximum`"),
    "dsl-wrong-argument-count":      ("D103", "rules.yaml", 4, 25, "wrong number of arguments to `abs`"),
    "dsl-wrong-argument-count-user": ("D103", "rules.yaml", 5, 29, "`holdings` takes 1 argument"),
    "dsl-syntax-unclosed":           ("D001", "rules.yaml", 6, 7, "unexpected `say`"),
    "dsl-syntax-bad-character":      ("D001", "rules.yaml", 4, 27, "unexpected character `;`"),
    "dsl-syntax-chained-comparison": ("D001", "rules.yaml", 4, 18, "unexpected `<`"),
    "dsl-syntax-indentation":        ("D001", "rules.yaml", 6, 7, "unexpected `player`"),
    "dsl-syntax-missing-colon":      ("D001", "rules.yaml", 5, 23, "unexpected end of line"),
    "dsl-syntax-text-insert":        ("D001", "rules.yaml", 4, 43, "insert of this text"),
    "dsl-effect-in-condition":       ("D104", "rules.yaml", 4, 11, "`roll` changes the game"),
    "dsl-assign-undeclared-global":  ("D105", "rules.yaml", 5, 7, "cannot assign to `rounds`"),
    "dsl-assign-undeclared-field":   ("D106", "rules.yaml", 5, 14, "`bonus` is not a state field"),
    "dsl-unknown-event":             ("D107", "rules.yaml", 4, 14, "unknown event `advance`"),
    "option-gated-file-broken":      ("D101", "moon.yaml", 2, 19, "unknown name `trun`"),
    "player-gated-file-broken":      ("D106", "three.yaml", 3, 16, "`scroe` is not a state field"),
    # ---- F: the flow ----
    "flow-step-do-and-flow":    ("F001", "rules.yaml", 7, 3, "both `do` and `flow`"),
    "flow-choose-without-from": ("F003", "rules.yaml", 10, 9, "needs `from:`"),
    "flow-unknown-step":        ("F004", "rules.yaml", 9, 14, "unknown step `scoring`"),
    "flow-step-arguments":      ("F005", "rules.yaml", 10, 8, "missing player"),
    "flow-missing":             ("F006", "ruleset.yaml", 1, 1, "no `flow:`"),
    # ---- R: references ----
    "board-unknown-space-kind":    ("R001", "board.yaml", 2, 15, "space_kind `provinces`"),
    "id-used-by-two-kinds":        ("R002", "rules.yaml", 4, 7, "id `Aki` is used by two kinds"),
    "constant-named-like-an-id":   ("R003", "rules.yaml", 2, 3, "constant `Aki` has the same name as an id"),
    "dsl-builtin-name-clash":      ("R004", "rules.yaml", 2, 3, "`max` is a built-in function"),
    "trigger-unknown-event":       ("R005", "rules.yaml", 3, 11, "unknown event `advance`"),
    "modifier-unknown-layer":      ("R006", "rules.yaml", 5, 21, "layer `rule`"),
    "result-missing":              ("R007", "ruleset.yaml", 1, 1, "no `result:`"),
    "check-card-count":            ("R008", "tests/rulesets/mini-map/board.yaml", 37, 14,
                                    "one card for each province"),
    "check-cannot-be-evaluated":   ("R009", "rules.yaml", 14, 13, "check `deck` cannot be evaluated"),
    "card-names-unknown-province": ("R010", "rules.yaml", 4, 26, "province `Gifu` is not a province"),
    # ---- G: the board ----
    "board-unknown-space-in-link": ("G001", "board.yaml", 10, 32, "unknown province `D`"),
    "board-self-link":             ("G002", "board.yaml", 10, 28, "joins `C` to itself"),
    "board-duplicate-link":        ("G003", "board.yaml", 10, 28, "listed twice"),
    "board-space-in-no-region":    ("G004", "board.yaml", 6, 5, "`C` is in no region"),
    "board-space-in-two-regions":  ("G005", "board.yaml", 9, 22, "`B` is in two regions"),
    "board-disconnected":          ("G006", "board.yaml", 6, 5, "not connected"),
    "board-malformed-link":        ("G007", "board.yaml", 10, 20, "pair of two province ids"),
    "board-colour-not-hex":        ("G008", "board.yaml", 8, 14, "is not #rrggbb"),
    # ---- P: packages and patches ----
    "not-a-package":              ("P001", ".", 0, 0, "has no ruleset.yaml manifest"),
    "manifest-not-mapping":       ("P002", "ruleset.yaml", 1, 1, "must be a mapping"),
    "manifest-empty":             ("P002", "ruleset.yaml", 1, 1, "must be a mapping"),
    "manifest-missing-file":      ("P003", "ruleset.yaml", 5, 21, "`board.yaml` listed in the manifest does not exist"),
    "file-outside-package":       ("P003", "tiny/ruleset.yaml", 5, 21, "outside the package folder"),
    "when-unknown-option":        ("P004", "ruleset.yaml", 9, 31, "option `sides`"),
    "combo-names-a-package-twice": ("P006", "ruleset.yaml", 1, 5, "named twice in the combo"),
    "combo-without-base":         ("P007", "east/ruleset.yaml", 5, 10, "no base ruleset"),
    "option-default-not-a-value": ("P014", "ruleset.yaml", 6, 40, "the default `mars` is not one of its values"),
    "manifest-players-reversed":  ("P016", "ruleset.yaml", 4, 10, "min 4 is more than max 2"),
    "extends-missing":            ("P008", "ruleset.yaml", 5, 10, "extends `no-such-game`, which cannot be found"),
    "requires-missing":           ("P009", "ruleset.yaml", 6, 12, "requires `race-extras`"),
    "conflicts-present":          ("P010", "calm/ruleset.yaml", 6, 13, "`calm` cannot be combined with `storm`"),
    "extends-cycle":              ("P012", "a/ruleset.yaml", 5, 10, "a -> b -> a"),
    "when-unknown-value":         ("P015", "ruleset.yaml", 9, 37, "value `mon` is not a value of option `side`"),
    "patch-in-base":              ("P020", "rules.yaml", 12, 1, "nothing to patch"),
    "duplicate-entry-in-package": ("P021", "rules.yaml", 7, 3, "`steps.play` is defined twice in `tiny`"),
    "redefine-without-patch":     ("P022", "rules.yaml", 2, 3, "`triggers.lucky` already exists"),
    "patch-missing-path":         ("P023", "rules.yaml", 2, 14, "no `modifiers.step_size.layers.capp`"),
    "patch-merge-not-mapping":    ("P024", "rules.yaml", 2, 5, "must both be mappings"),
    "patch-conflict":             ("P025", "wild/rules.yaml", 2, 5, "`wild` and `slow` both change"),
    "patch-insert-unknown-step":  ("P026", "rules.yaml", 6, 13, "no flow step or procedure block named `scoring`"),
    "patch-insert-ambiguous-step": ("P027", "rules.yaml", 8, 12, "appears in 2 lists (flow, steps.again.flow)"),
    # ---- hostile packages: caps, budgets, names and links (issue 15) ----
    "dsl-number-too-long":        ("D003", "rules.yaml", 9, 14, "a number of 400 digits"),
    "dsl-decimal-too-long":       ("D003", "rules.yaml", 9, 14, "more than 300 digits"),
    "dsl-loops-nested-too-deep":  ("D002", "rules.yaml", 24, 67, "`for` loops nested more than 15 deep"),
    "dsl-blocks-nested-too-deep": ("D002", "rules.yaml", 61, 111, "nested more than 50 deep"),
    "dsl-expression-nested-too-deep": ("D002", "rules.yaml", 9, 7, "nested too deeply"),
    "check-runs-away":            ("R009", "rules.yaml", 13, 14, "more than 100,000 steps of work in one check"),
    "check-makes-huge-text":      ("R009", "rules.yaml", 13, 14, "more than 1,000,000 items"),
    "name-global-players":        ("R013", "rules.yaml", 3, 3, "global `players` has the name of a built-in"),
    "name-constant-spaces":       ("R013", "rules.yaml", 7, 3, "constant `spaces` has the name of a built-in"),
    "name-collection-players":    ("R013", "rules.yaml", 7, 17, "collection `players` has the name of a built-in"),
    "name-item-like-a-player":    ("R013", "rules.yaml", 8, 13, "item `P1` of `token` is named like a player"),
    "name-param-twice":           ("R015", "rules.yaml", 7, 23, "function `twice` names the parameter `a` twice"),
    "board-without-spaces":       ("G009", "rules.yaml", 9, 3, "got no `spaces`"),
    "board-spaces-empty":         ("G009", "rules.yaml", 10, 11, "a board needs at least one space"),
    "patch-insert-unknown-item":  ("F004", "rules.yaml", 2, 13, "unknown step `no_such_step`"),
    "link-manifest-outside":      ("P003", "pkg/ruleset.yaml", 0, 0, "is a link to a file outside the package"),
    "link-data-outside":          ("P003", "pkg/secret.yaml", 0, 0, "outside the package folder"),
    "package-too-large":          ("P028", "ruleset.yaml", 1, 1, "bytes in all; the limit is 20,000,000"),
    "package-too-many-files":     ("P028", "ruleset.yaml", 1, 1, "data files; the limit is 500"),
    # ---- issue 16: validation sees what play would hit ----
    "mod-setup-table-unknown-space":   ("R014", "rules.yaml", 2, 30, "`Chibaa` is not a province"),
    "mod-when-option-nobody-declares": ("P004", "ruleset.yaml", 8, 31, "neither `mod-when` nor the rulesets"),
    "mod-patch-breaks-base":           ("D101", "rules.yaml", 2, 5,
                                        "`rounds` (in tests/rulesets/mini-map/rules.yaml:50:13, after `mod-break`"),
}
VALIDATE_SECONDS = 10.0  # every case, hostile ones included, is reported within this (typically < 1 s)

# Cases that are not validated as their own folder (or with the fixture they extend).
TARGETS = {
    "conflicts-present": ["tests/rulesets/race+tests/broken/conflicts-present/calm"
                          "+tests/broken/conflicts-present/storm"],
    "patch-conflict": ["tests/rulesets/race+tests/broken/patch-conflict/slow+tests/broken/patch-conflict/wild"],
    "patch-conflict-ordered": ["tests/rulesets/race+tests/broken/patch-conflict-ordered/slow"
                               "+tests/broken/patch-conflict-ordered/wild"],
    "combo-without-base": ["tests/broken/combo-without-base/east+tests/broken/combo-without-base/west"],
    "combo-names-a-package-twice": ["tests/broken/combo-names-a-package-twice"
                                    "+tests/broken/combo-names-a-package-twice"],
    "file-outside-package": ["tests/broken/file-outside-package/tiny"],
    "extends-cycle": ["tests/broken/extends-cycle/a"],
    "link-manifest-outside": ["tests/broken/link-manifest-outside/pkg"],
    "link-data-outside": ["tests/broken/link-data-outside/pkg"],
}
CLEAN = {"patch-conflict-ordered", "runaway-rule", "mod-when-base-option"}  # validate without any diagnostic
FIXTURES = {"race", "mini-map"}


@pytest.fixture(autouse=True)
def at_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # diagnostics name files relative to the working folder


def targets_for(case: str, folder: Path | None = None) -> list[str]:
    if case in TARGETS:
        return list(TARGETS[case])
    folder = folder or BROKEN / case
    path = os.path.relpath(folder)
    manifest = folder / "ruleset.yaml"
    m = re.search(r"^extends: (\S+)", manifest.read_text(encoding="utf-8", errors="replace"), re.M) \
        if manifest.is_file() else None
    if m and m.group(1) in FIXTURES:
        return [f"tests/rulesets/{m.group(1)}+{path}"]
    return [path]


def _many_big_files(folder: Path) -> None:  # 11 files just under the 2 MB limit of one file
    for i in range(11):
        (folder / f"zz-{i:02}.yaml").write_text("constants:\n  blob: " + "x" * 1_900_000 + "\n", encoding="utf-8")


def _many_files(folder: Path) -> None:
    for i in range(501):
        (folder / f"zz-{i:03}.yaml").write_text("{}\n", encoding="utf-8")


GENERATED = {  # cases whose large files the test writes (they are not stored in the repository)
    "yaml-huge-file": lambda folder: (folder / "zz-huge.yaml").write_text(
        "constants:\n  blob: " + "x" * 2_000_001 + "\n", encoding="utf-8"),
    "package-too-large": _many_big_files,
    "package-too-many-files": _many_files,
}


def prepared(case: str, tmp_path: Path) -> tuple[list[str], Path]:
    """The targets to validate and the case folder (a copy when the test adds files)."""
    if case not in GENERATED:
        return targets_for(case), BROKEN / case
    folder = tmp_path / case
    shutil.copytree(BROKEN / case, folder)
    GENERATED[case](folder)
    return [str(folder)], folder


def same_file(shown: str, expected: str, folder: Path) -> bool:
    want = (REPO / expected) if expected.startswith("tests/") else folder / expected
    return os.path.realpath(shown) == os.path.realpath(want)


def test_every_case_folder_is_in_the_table() -> None:
    # play-* cases validate cleanly and fail in play: tests/test_hostile_inputs.py has their table
    folders = {p.name for p in BROKEN.iterdir() if p.is_dir() and not p.name.startswith("play-")}
    assert folders == set(CASES) | CLEAN
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_gives_the_located_diagnostic(case: str, tmp_path: Path) -> None:
    code, file, line, col, words = CASES[case]
    targets, folder = prepared(case, tmp_path)
    start = time.monotonic()
    diags, _ = validate_targets(targets)
    assert time.monotonic() - start < VALIDATE_SECONDS
    found = [d for d in diags if d.code == code and same_file(d.loc.file, file, folder)
             and (d.loc.line, d.loc.col) == (line, col)]
    shown = "\n".join(f"{d.code} {d.loc} {d.message}" for d in diags.sorted())
    assert found, f"expected {code} at {file}:{line}:{col}; got:\n{shown}"
    assert words in found[0].message, found[0].message
    assert all(d.code and d.message and d.severity in ("error", "warning") for d in diags)


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_in_human_and_json_output(case: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, file, line, col, _ = CASES[case]
    targets, folder = prepared(case, tmp_path)
    status = main(["validate", "--format", "json", *targets])
    out = capsys.readouterr().out
    items = json.loads(out)
    assert isinstance(items, list) and items
    for item in items:
        assert {"code", "severity", "file", "line", "col", "message"} <= set(item)
    match = [i for i in items if i["code"] == code and (i["line"], i["col"]) == (line, col)
             and same_file(i["file"], file, folder)]
    assert match
    errors = [i for i in items if i["severity"] == "error"]
    assert status == (1 if errors else 0)

    assert main(["validate", *targets]) == status
    err = capsys.readouterr().err
    head = f":{line}:{col}: {match[0]['severity']}[{code}]: " if line else f": {match[0]['severity']}[{code}]: "
    lines = err.splitlines()
    at = next(i for i, text in enumerate(lines) if head in text and text.startswith(match[0]["file"]))
    shown = Path(match[0]["file"])
    text_lines = shown.read_text(encoding="utf-8", errors="replace").splitlines() if shown.is_file() else []
    if 0 < line <= len(text_lines):  # the source line, then a caret under the column
        gutter = f"{line:>5} | "
        assert lines[at + 1].startswith(gutter)
        caret = lines[at + 2]
        assert caret.rstrip().endswith("^") and caret.index("^") == len(gutter) + col - 1


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_clean_cases_validate_without_diagnostics(case: str) -> None:
    diags, checked = validate_targets(targets_for(case))
    assert checked and not list(diags), diags.render()


def test_ordered_patches_apply_in_the_declared_order() -> None:
    combo = TARGETS["patch-conflict-ordered"][0]
    model = load(combo, players=2)
    assert model.resolved.data["modifiers"]["step_size"]["layers"]["cap"]["value"] == "value"
    assert model.resolved.provenance["modifiers.step_size.layers.cap"][0] == "wild"


def test_runaway_rule_stops_with_a_budget_error_at_its_line() -> None:
    from dsl.runtime import RuleError  # after `engine`: dsl.runtime imported first is an import cycle
    model = load("tests/broken/runaway-rule", players=2)
    with pytest.raises(RuleError) as info:
        Game.new(model, 2, seed=0)
    assert info.value.code == "E002"
    loc = info.value.loc
    assert (os.path.realpath(loc.file), loc.line, loc.col) == \
        (os.path.realpath(BROKEN / "runaway-rule" / "rules.yaml"), 10, 11)
    [outcome] = run_file("tests/broken/runaway-rule/scenario.yml")
    assert not outcome.ok
    (where, message), = outcome.failures
    assert (where.line, where.col) == (10, 11) and "more than 1,000,000 steps" in message


def test_gated_file_errors_say_which_variant_found_them() -> None:
    diags, _ = validate_targets(targets_for("option-gated-file-broken"))
    [d] = diags.errors
    assert "side=moon" in d.hint
