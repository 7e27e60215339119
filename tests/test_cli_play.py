"""`daimyo play` as a person uses it: bots, a human seat at the terminal, save and resume,
logs that replay, and exit codes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RACE = str(ROOT / "tests" / "rulesets" / "race")


def daimyo(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_bot_game_prints_account_and_final_table() -> None:
    r = daimyo("play", RACE, "--players", "3", "--seed", "5")
    assert r.returncode == 0, r.stderr
    assert "moves" in r.stdout and "Final table" in r.stdout and "Winner" in r.stdout


def test_human_seat_numbered_choices_and_help() -> None:
    r = daimyo("play", RACE, "--players", "2", "--seats", "human,random", stdin="h\nx\n" + "3\n" * 40)
    assert r.returncode == 0, r.stderr
    assert "  1. 1" in r.stdout and "this help" in r.stdout and "type a number from 1 to 3" in r.stdout
    assert "Final table" in r.stdout


def test_save_quit_and_resume_finishes_the_same_game(tmp_path: Path) -> None:
    save = tmp_path / "g.json"
    r = daimyo("play", RACE, "--players", "2", "--seats", "human,random", "--save", str(save), stdin="2\n2\nq\n")
    assert r.returncode == 0, r.stderr
    assert save.exists() and "daimyo play --load" in r.stdout
    r2 = daimyo("play", "--load", str(save), "--seats", "human,random", stdin="2\n" * 40)
    assert r2.returncode == 0, r2.stderr
    assert "Final table" in r2.stdout


def test_log_replays_and_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "g.jsonl"
    assert daimyo("play", RACE, "--players", "2", "--quiet", "--log", str(log)).returncode == 0
    r = daimyo("replay", str(log))
    assert r.returncode == 0 and "every line matches" in r.stdout
    assert daimyo("play", "no-such-ruleset").returncode == 1
    assert daimyo("play", RACE, "--players", "2", "--seats", "human,alien").returncode == 2
    assert daimyo("play", RACE, "--players", "9").returncode == 1
    assert daimyo("bogus-command").returncode == 2
    assert daimyo("replay", str(tmp_path / "missing.jsonl")).returncode == 1


def test_player_copy_of_the_log_hides_others_secrets(tmp_path: Path) -> None:
    p1 = tmp_path / "p1.jsonl"
    assert daimyo("play", RACE, "--players", "2", "--quiet", "--log-for", f"P1={p1}").returncode == 0
    text = p1.read_text(encoding="utf-8")
    assert '"state"' not in text and '"t":"decision"' in text


def test_damaged_saves_are_errors_not_crashes(tmp_path: Path) -> None:
    import json
    save = tmp_path / "g.json"
    assert daimyo("play", RACE, "--players", "2", "--quiet", "--save", str(save)).returncode == 0
    good = json.loads(save.read_text(encoding="utf-8"))
    damaged = {
        "not-json": "\x00\x01",
        "a-list": "[1, 2]",
        "other-rules": json.dumps({**good, "fingerprint": "0000"}),
        "no-state": json.dumps({k: v for k, v in good.items() if k != "state"}),
        "bad-frame": json.dumps({**good, "state": {**good["state"], "flow": [{"n": 10**6, "i": 0, "v": {}}]}}),
    }
    for name, text in damaged.items():
        f = tmp_path / f"{name}.json"
        f.write_text(text, encoding="utf-8")
        r = daimyo("play", "--load", str(f), "--quiet")
        assert r.returncode == 1, name
        assert "Traceback" not in r.stderr and r.stderr.startswith("daimyo: cannot"), (name, r.stderr)


def test_a_person_sees_labels_and_their_status() -> None:
    """display.label and display.status: cards by face, territories by owner, the player's position."""
    r = daimyo("play", "shogun-cards", "--players", "2", "--seats", "human,random", stdin="1\n1\nq\n")
    assert "P1's territory 1" in r.stdout and "in hand]" in r.stdout
    assert any(suit in r.stdout for suit in "♣♠♦♥"), r.stdout[:500]


def test_unwritable_output_paths_are_errors_not_crashes(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    for args in (["play", RACE, "--players", "2", "--quiet", "--log", str(missing / "g.jsonl")],
                 ["play", RACE, "--players", "2", "--quiet", "--save", str(missing / "g.json")]):
        r = daimyo(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr and "cannot use" in r.stderr, r.stderr
