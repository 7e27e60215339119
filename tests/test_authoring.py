"""docs/authoring.md stays true: build the tutorial's package from the page's own code
blocks, then validate, describe, play and test it exactly as the page says."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")


def blocks() -> dict[str, str]:
    """The page's YAML blocks, keyed by the file named in their first-line comment."""
    out = {}
    for body in re.findall(r"```yaml\n(.*?)```", DOC, re.S):
        first = body.splitlines()[0]
        if first.startswith("# cheap-castles/"):
            out[first[2:].strip()] = body
    return out


def daimyo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def write_package(tmp: Path) -> Path:
    files = blocks()
    assert set(files) == {"cheap-castles/ruleset.yaml", "cheap-castles/rules.yaml", "cheap-castles/tests/castle.yaml"}
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")
    return tmp


def test_the_walkthrough_works_as_written(tmp_path: Path) -> None:
    write_package(tmp_path)
    r = daimyo("validate", "./cheap-castles", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = daimyo("describe", "shogun+./cheap-castles", "--resolved", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "cost" in ln and "cheap-castles" in ln)
    assert "2" in line
    r = daimyo("play", "shogun+./cheap-castles", "--players", "4", "--bots", "random", "--quiet", cwd=tmp_path)
    assert r.returncode == 0 and "Winner" in r.stdout, r.stderr
    r = daimyo("scenario", "cheap-castles/tests", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_typo_example_gives_the_error_the_page_shows(tmp_path: Path) -> None:
    write_package(tmp_path)
    rules = tmp_path / "cheap-castles" / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace("build_castle", "build_castel"), encoding="utf-8")
    r = daimyo("validate", "./cheap-castles", cwd=tmp_path)
    assert r.returncode == 1
    shown = re.search(r"```\n(cheap-castles/rules.yaml:.*?)```", DOC, re.S).group(1)
    for line in shown.strip().splitlines():
        assert line.strip() in r.stderr, f"the page shows `{line.strip()}`; validate printed:\n{r.stderr}"


def test_the_new_board_tutorial_works_as_written(tmp_path: Path) -> None:
    section = DOC[DOC.index("# A new board"):]
    r = daimyo("new", "board", "island", "--extends", "shogun", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines()[0] in section, r.stdout + r.stderr
    readme = (tmp_path / "island" / "README.md").read_text(encoding="utf-8")
    for must in ("`constants.regions`", "`constants.fixed_setup_sun` (set when setup is fixed)",
                 "`building_spaces`, `rice`, `tax`", "`board.links`", "`board.sets`", "`board.layout`"):
        assert must in readme, must
    rules = tmp_path / "island" / "rules.yaml"
    rules.write_text(re.sub(r"\bSuruga\b", "Suruga-oki", rules.read_text(encoding="utf-8")), encoding="utf-8")
    r = daimyo("validate", "./island", cwd=tmp_path)
    assert r.returncode == 1
    shown = re.search(r"```\n(island/rules-setup-fixed.yaml:.*?)```", section, re.S).group(1)
    for line in shown.strip().splitlines():
        assert line.strip() in r.stderr, f"the page shows `{line.strip()}`; validate printed:\n{r.stderr}"
    fixed = tmp_path / "island" / "rules-setup-fixed.yaml"
    fixed.write_text(re.sub(r"\bSuruga\b", "Suruga-oki", fixed.read_text(encoding="utf-8")), encoding="utf-8")
    r = daimyo("validate", "./island", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = daimyo("scenario", "island/tests", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = daimyo("play", "shogun+./island", "--players", "4", "--bots", "random", "--quiet", cwd=tmp_path)
    assert r.returncode == 0 and "Winner" in r.stdout, r.stderr
