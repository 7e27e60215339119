"""`daimyo validate` and `daimyo describe`, as a modder and a CI job use them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from engine.base.diagnostics import Diagnostics
from engine.cli import main
from engine.cli.describe import describe
from engine.model import load
from engine.model.validate import validate_targets, variants

REPO = Path(__file__).resolve().parent.parent
MAP = "tests/rulesets/mini-map"
PLUS = "tests/rulesets/mini-map-plus"
COMBO = f"{MAP}+{PLUS}"


@pytest.fixture(autouse=True)
def at_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


# ---- validate: exit status ----

def test_a_clean_ruleset_exits_0(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "tests/rulesets/race"]) == 0
    out = capsys.readouterr().out
    assert "validated 1 ruleset combination(s): tests/rulesets/race: ok" in out


def test_errors_exit_1_and_are_all_reported(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "tests/broken/yaml-duplicate-key", "tests/broken/flow-unknown-step"]) == 1
    err = capsys.readouterr().err
    assert "error[Y002]" in err and "error[F004]" in err
    assert "2 error(s), 0 warning(s)" in err


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "tests/broken/data-empty-file"]) == 0
    assert "warning[S010]" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["validate"], ["validate", "--format", "xml", "tests/rulesets/race"],
                                  ["validate", "--no-such-flag", "tests/rulesets/race"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture) -> None:
    assert main([]) == 2
    assert "validate" in capsys.readouterr().out


def test_a_missing_path_is_an_error_not_a_crash(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "tests/rulesets/no-such-package"]) == 1
    assert "error[P001]" in capsys.readouterr().err


# ---- validate: JSON ----

def test_json_format_prints_a_list_of_diagnostics(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "--format", "json", "tests/rulesets/race+tests/broken/dsl-unknown-event"]) == 1
    items = json.loads(capsys.readouterr().out)
    assert items == [{"code": "D107", "severity": "error", "file": "tests/broken/dsl-unknown-event/rules.yaml",
                      "line": 4, "col": 14, "message": "unknown event `advance`",
                      "hint": "did you mean `advanced`?"}]


def test_json_format_of_a_clean_ruleset_is_an_empty_list(capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", "--format", "json", "tests/rulesets/race"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# ---- validate: what is checked ----

def test_a_folder_of_packages_validates_each_one(capsys: pytest.CaptureFixture) -> None:
    diags, checked = validate_targets(["tests/rulesets"])
    assert not diags.items
    assert checked == [MAP, COMBO, "tests/rulesets/race"]
    assert main(["validate", "tests/rulesets"]) == 0


def test_an_expansion_is_validated_with_its_base() -> None:
    diags, checked = validate_targets([PLUS])
    assert checked == [COMBO] and not diags.items


def test_names_that_are_not_packages_are_skipped_in_a_glob(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests/rulesets/race", tmp_path / "race")
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    diags, checked = validate_targets([str(p) for p in sorted(tmp_path.iterdir())])
    assert checked == [str(tmp_path / "race")] and not diags.items


def test_every_option_value_and_player_count_that_gates_a_file_is_compiled() -> None:
    from engine.loading.package import resolve_combo
    combo = resolve_combo(MAP, Diagnostics())
    assert variants(combo) == [({"side": "sun"}, [2]), ({"side": "sun"}, [3]), ({"side": "moon"}, [2])]


def test_a_broken_moon_file_is_found_though_sun_is_the_default(tmp_path: Path) -> None:
    shutil.copytree(REPO / MAP, tmp_path / "mini-map")
    moon = tmp_path / "mini-map" / "moon.yaml"
    moon.write_text(moon.read_text().replace("[Aki, Fuji]", "[Aki, Fujj]"))
    diags, _ = validate_targets([str(tmp_path / "mini-map")])
    errors = {(d.code, Path(d.loc.file).name, d.loc.line) for d in diags.errors}
    assert errors == {("G001", "moon.yaml", 3), ("G004", "board.yaml", 10)}  # Fujj unknown, so Fuji in no region
    assert all("side=moon" in d.hint for d in diags.errors)


def test_player_counts_written_as_decimals_are_whole_numbers(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests/rulesets/race", tmp_path / "race")
    manifest = tmp_path / "race" / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("players: {min: 2, max: 4}", "players: {min: 2.0, max: 4.0}"))
    diags, checked = validate_targets([str(tmp_path / "race")])  # found by fuzzing: range() of floats
    assert checked and not diags.items


def test_checks_run_for_every_player_count(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests/rulesets/race", tmp_path / "race")
    with open(tmp_path / "race" / "rules.yaml", "a") as fh:
        fh.write("checks:\n  small:\n    expect: num_players < 4\n    message: at most three seats\n")
    diags, _ = validate_targets([str(tmp_path / "race")])
    [d] = diags.errors
    assert d.code == "R008" and "with 4 players" in d.message and "at most three seats" in d.message


# ---- describe ----

def test_describe_summarises_packages_options_players_and_flow(capsys: pytest.CaptureFixture) -> None:
    assert main(["describe", COMBO]) == 0
    out = capsys.readouterr().out
    assert "mini-map 1.0.0" in out and "mini-map-plus 0.2.0  extends mini-map" in out
    assert "side = sun  (sun | moon; default sun)" in out
    assert "players: 2-3" in out
    assert "contents: 3 steps, 2 triggers, 1 modifier (1 layer entry), 1 procedure, 1 function, 1 event" in out
    flow = out.split("flow:\n", 1)[1].splitlines()
    assert flow[:2] == ["  repeat rounds as round", "    for p in players"]
    assert "      bonus (player=p)  [+mini-map-plus]" in flow
    assert not any("[+" in line for line in flow if "bonus" not in line)


def test_describe_with_an_option(capsys: pytest.CaptureFixture) -> None:
    assert main(["describe", MAP, "--option", "side=moon", "--players", "3"]) == 0
    out = capsys.readouterr().out
    assert "side = moon" in out and "(described for 3)" in out


def test_describe_resolved_shows_where_each_entry_comes_from(capsys: pytest.CaptureFixture) -> None:
    assert main(["describe", COMBO, "--resolved"]) == 0
    out = capsys.readouterr().out
    assert "  rounds: 3  # mini-map-plus tests/rulesets/mini-map-plus/rules.yaml:15" in out
    assert "      bonus_taken: false  # mini-map-plus tests/rulesets/mini-map-plus/rules.yaml:18" in out
    assert "  - step: bonus  # inserted by mini-map-plus tests/rulesets/mini-map-plus/rules.yaml:13" in out \
        or "- step: bonus  # inserted by mini-map-plus" in out
    assert "  announce: " in out and "# mini-map tests/rulesets/mini-map/rules.yaml:31" in out


def test_describe_resolved_is_yaml_of_the_resolved_ruleset() -> None:
    text = describe(COMBO, {}, 2, True, Diagnostics())
    model = load(COMBO, players=2)

    def plain(x: object) -> object:
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list):
            return [plain(v) for v in x]
        return x
    want = {k: plain(v) for k, v in model.resolved.data.items() if v not in ({}, [])}
    assert yaml.safe_load(text) == want


def test_describe_of_a_broken_combo_reports_and_exits_1(capsys: pytest.CaptureFixture) -> None:
    assert main(["describe", "tests/rulesets/race+tests/broken/patch-missing-path"]) == 1
    assert "error[P023]" in capsys.readouterr().err
    diags = Diagnostics()
    assert describe("no-such-ruleset", {}, None, False, diags) is None and diags.errors
