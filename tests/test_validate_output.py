"""`daimyo validate` prints exactly what it printed when tests/golden/validate-output.json was
written: for the bundled rulesets, every case of tests/broken, the fixtures of tests/rulesets
and tests/mods, and the examples of docs/examples; human and JSON output and exit code alike
(codes, messages, hints, `file:line:col`, order).

This guards the speed work on validation (docs/performance.md, "Cold validation, third
pass"): a shortcut that loses, adds, moves or reorders one diagnostic fails here. Each target
is validated twice, so that the second run reads everything from the caches (what the first
validation found, and under it the parse and YAML caches on disk and the memos of the process).

When a diagnostic is meant to change (a new check, a better message), write the file again
and review its diff:

    DAIMYO_WRITE_GOLDEN=1 python -m pytest -q tests/test_validate_output.py
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_validation_corpus import BROKEN, GENERATED, targets_for

from engine.cli import main
from engine.model import verdicts

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "validate-output.json"
WRITE = os.environ.get("DAIMYO_WRITE_GOLDEN") == "1"


def _folders(parent: str) -> list[str]:
    return sorted(str(p.parent.relative_to(REPO)) for p in (REPO / parent).glob("*/ruleset.yaml"))


def cases() -> dict[str, list[str]]:
    """Name of the case -> the targets given to `daimyo validate`."""
    out = {"rulesets/*": [str(p) for p in sorted(Path("rulesets").glob("*")) if p.is_dir()]}
    for case in sorted(p.name for p in BROKEN.iterdir() if p.is_dir()):
        out[f"tests/broken/{case}"] = [] if case in GENERATED else targets_for(case)
    for folder in [*_folders("tests/rulesets"), *_folders("tests/mods"), *_folders("docs/examples")]:
        out[folder] = targets_for("", REPO / folder)
    return out


@pytest.fixture(autouse=True)
def verdicts_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user runs it: the second validation of a target is the kept one (engine/model/verdicts.py)."""
    monkeypatch.setattr(verdicts, "_CACHE", [])


def _run(targets: list[str], fmt: str, capsys: pytest.CaptureFixture, tmp: str) -> dict:
    code = main(["validate", "--format", fmt, *targets])
    got = capsys.readouterr()

    def clean(text: str) -> str:  # paths that differ between checkouts and runs
        return text.replace(os.path.relpath(tmp), "<tmp>").replace(tmp, "<tmp>").replace(str(REPO), "<repo>")
    return {"exit": code, "stdout": clean(got.out), "stderr": clean(got.err)}


def output_of(case: str, targets: list[str], capsys: pytest.CaptureFixture, tmp_path: Path) -> dict:
    if not targets:  # a case whose big files the corpus test writes (GENERATED)
        name = case.rsplit("/", 1)[-1]
        folder = tmp_path / name
        shutil.copytree(BROKEN / name, folder)
        GENERATED[name](folder)
        targets = [str(folder)]
    return {fmt: _run(targets, fmt, capsys, str(tmp_path)) for fmt in ("human", "json")}


@pytest.fixture(autouse=True)
def at_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # diagnostics name files relative to the working folder


def test_validate_prints_what_it_printed(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    got = {}
    for case, targets in cases().items():
        first = output_of(case, targets, capsys, tmp_path / "a")
        again = output_of(case, targets, capsys, tmp_path / "b")  # from the caches
        assert again == first, case
        got[case] = first
    if WRITE:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(want), "the cases changed: write the file again (see the docstring)"
    changed = [case for case in want if got[case] != want[case]]
    assert not changed, f"output changed for {changed[:5]} ({len(changed)} cases); first:\n" \
        + json.dumps({"was": want[changed[0]], "now": got[changed[0]]}, indent=1)
    assert sum(out["human"]["exit"] for out in got.values()) > 100  # the broken cases really fail
