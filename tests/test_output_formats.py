"""One flag, `--format human|json`, on every command that reports results (docs/output-formats.md):
the JSON form is one document on stdout, and the exit status is the same as in the human form."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.console import rate_text
from engine.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
REPORTING = ("validate", "describe", "scenario", "replay", "report", "bench", "simulate", "difftest")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", REPORTING)
def test_every_reporting_command_takes_format_json(name: str) -> None:
    sub = subcommands()[name]
    flag = next(a for a in sub._actions if "--format" in a.option_strings)
    assert flag.default == "human" and {"human", "json"} <= set(flag.choices)
    assert "docs/output-formats.md" in (flag.help or ""), "the flag's help points at the page"


def daimyo(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_json_documents_and_exit_status(tmp_path: Path) -> None:
    r = daimyo("describe", "tests/rulesets/mini-map+tests/rulesets/mini-map-plus", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and [p["id"] for p in doc["packages"]] == ["mini-map", "mini-map-plus"]
    assert doc["options"]["side"]["value"] == "sun" and doc["changed_by_expansions"]["steps.bonus"]["package"] \
        == "mini-map-plus"
    r = daimyo("describe", "tests/rulesets/race", "--resolved", "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["provenance"]["steps.take_turn"]["package"] == "race"
    assert all({"package", "file", "line", "col"} == set(v) for v in doc["provenance"].values())
    r = daimyo("describe", "no-such-game", "--format", "json")
    assert r.returncode == 1 and json.loads(r.stdout)[0]["code"] == "P001"
    r = daimyo("scenario", "tests/scenarios/race", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["failed"] == 0 and doc["passed"] == len(doc["scenarios"]) > 0
    log = tmp_path / "game.jsonl"
    assert daimyo("play", "tests/rulesets/race", "--bots", "random", "--quiet", "--log", str(log)).returncode == 0
    r = daimyo("replay", str(log), "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True
    log.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    r = daimyo("replay", str(log), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["ok"] is False and "goes on past the end of the log" in doc["message"]


def test_rates_never_read_zero() -> None:
    assert rate_text(0.04, "game") == "25.0 s per game"
    assert rate_text(3.44, "game") == "3.4 games/s"
    assert rate_text(1234.5, "game") == "1,234 games/s"
    assert rate_text(0, "game") == "0 games/s"


def test_report_help_shows_a_plain_percent_sign() -> None:
    r = daimyo("report", "--help")
    assert "95% Wilson" in " ".join(r.stdout.split()) and "%%" not in r.stdout
