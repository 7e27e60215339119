"""The manual ships with the install (docs/ as the data package `daimyo_docs`), and `daimyo --help`
says where it and the JSON Schemas are."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_help_names_the_manual_and_the_schemas() -> None:
    r = subprocess.run([sys.executable, "-m", "engine.cli", "--help"], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "400"}, timeout=60)
    text = " ".join(r.stdout.split())
    manual = re.search(r"Manual: (\S+) ", text).group(1)
    schemas = re.search(r"JSON Schemas for editors: (\S+?)\.?$", text).group(1)
    assert (Path(manual) / "authoring.md").is_file() and (Path(manual) / "README.md").is_file()
    assert (Path(schemas) / "ruleset.schema.json").is_file()


def test_the_build_installs_the_manual(tmp_path: Path) -> None:
    src = tmp_path / "src"
    skipped = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", ".venv*")

    def ignore(folder: str, names: list[str]) -> set[str]:  # the project's tests, not an example's
        return skipped(folder, names) | ({"tests"} if Path(folder) == ROOT else set())
    shutil.copytree(ROOT, src, ignore=ignore)
    out = tmp_path / "built"
    build = [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d", str(out)]
    r = subprocess.run(build, capture_output=True, text=True, cwd=src, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "would be ignored" not in r.stderr, r.stderr  # every importable folder of data is in `packages`
    for page in ("README.md", "authoring.md", "editor-setup.md", "output-formats.md", "examples/README.md",
                 "examples/cheap-deploy/rules.yaml"):
        assert (out / "daimyo_docs" / page).is_file(), page
    assert (out / "schemas" / "ruleset.schema.json").is_file()
    assert (out / "engine" / "cli" / "lspkit" / "analysis.py").is_file()


def test_a_manual_that_cannot_be_found_is_named_not_a_crash(monkeypatch) -> None:
    """Two installs of one package side by side (an editable one and a copy) make `daimyo_docs` a
    namespace whose path holds an entry that is no folder: importlib.resources then raises."""
    from importlib import resources

    from engine.cli import package_folder

    def refuse(name: str) -> None:
        raise NotADirectoryError("MultiplexedPath only supports directories")

    monkeypatch.setattr(resources, "files", refuse)
    assert package_folder("daimyo_docs") == "?"
