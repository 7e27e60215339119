"""`daimyo new variant|board NAME --extends COMBO`: the skeleton it writes validates, its scenario
passes, and the board skeleton names the constants a board must provide (from the base)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def daimyo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("what,base", [("variant", "shogun"), ("board", "shogun"), ("variant", "shogun-cards"),
                                       ("board", "samurai-swords")])
def test_the_skeleton_validates_and_its_scenario_passes(tmp_path: Path, what: str, base: str) -> None:
    r = daimyo("new", what, "my-pkg", "--extends", base, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pkg = tmp_path / "my-pkg"
    assert {"ruleset.yaml", "rules.yaml", "README.md", "tests"} <= {p.name for p in pkg.iterdir()}
    manifest = yaml.safe_load((pkg / "ruleset.yaml").read_text(encoding="utf-8"))
    assert manifest["id"] == "my-pkg" and manifest["extends"] == base
    assert yaml.safe_load((pkg / "rules.yaml").read_text(encoding="utf-8"))["patches"]
    readme = (pkg / "README.md").read_text(encoding="utf-8")
    # The README's commands are the ones that work, from the folder holding the package.
    assert f"daimyo validate {base}+./my-pkg" in readme and "daimyo scenario my-pkg/tests" in readme
    r = daimyo("validate", "./my-pkg", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = daimyo("scenario", "my-pkg/tests", cwd=tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def test_the_variant_patch_changes_the_game(tmp_path: Path) -> None:
    """The scenario is not empty: undo the patch and it fails."""
    daimyo("new", "variant", "longer", "--extends", "shogun", cwd=tmp_path)
    rules = tmp_path / "longer" / "rules.yaml"
    data = yaml.safe_load(rules.read_text(encoding="utf-8"))
    assert data["patches"][0] == {"replace": "constants.years", "value": 3,
                                  "notes": "was 2 (set by shogun in components.yaml:6)"}
    rules.write_text(rules.read_text(encoding="utf-8").replace("value: 3", "value: 2"), encoding="utf-8")
    r = daimyo("scenario", "longer/tests", cwd=tmp_path)
    assert r.returncode == 1 and "expected `years` to be 3, but it is 2" in r.stdout, r.stdout


def test_the_board_lists_the_constants_a_board_must_provide(tmp_path: Path) -> None:
    daimyo("new", "board", "island", "--extends", "shogun", cwd=tmp_path)
    pkg = tmp_path / "island"
    readme = (pkg / "README.md").read_text(encoding="utf-8")
    assert "- `constants.regions`" in readme
    # The fixed set-up names provinces; the base loads it only with `setup: fixed`, so the
    # board's copy is in a file gated on the base's option (which the package does not declare).
    assert "- `constants.fixed_setup_sun` (set when setup is fixed)" in readme
    assert "`building_spaces`, `rice`, `tax`" in readme
    # The base's checks that a map must pass are listed with their messages (Shogun's says a
    # smaller map needs fewer army groups).
    assert "- `a_province_for_every_army_group`: claiming puts each army group" in readme
    manifest = yaml.safe_load((pkg / "ruleset.yaml").read_text(encoding="utf-8"))
    assert {"file": "rules-setup-fixed.yaml", "when": {"setup": ["fixed"]}} in manifest["files"]
    # A province of the fixed set-up renamed to one the board lacks is caught by validate.
    gated = pkg / "rules-setup-fixed.yaml"
    gated.write_text(gated.read_text(encoding="utf-8").replace("Suruga", "Surugaa", 1), encoding="utf-8")
    r = daimyo("validate", "./island", cwd=tmp_path)
    assert r.returncode == 1 and "Surugaa" in r.stderr, r.stderr


def test_bad_names_and_existing_folders_are_usage_errors(tmp_path: Path) -> None:
    assert daimyo("new", "variant", "Bad Name", "--extends", "shogun", cwd=tmp_path).returncode == 2
    (tmp_path / "taken").mkdir()
    r = daimyo("new", "variant", "taken", "--extends", "shogun", cwd=tmp_path)
    assert r.returncode == 2 and "already exists" in r.stderr
    r = daimyo("new", "variant", "x", "--extends", "shogunn", cwd=tmp_path)
    assert r.returncode == 1 and "did you mean" in r.stderr
