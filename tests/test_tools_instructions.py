"""tools/instructions.py: the measures behind docs/performance.md (instruction counts need
valgrind; the log digests that compare two versions of the code do not)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from tools import instructions

RACE = str(Path(__file__).resolve().parent / "rulesets" / "race")


def test_digests_are_one_line_per_seeded_game_and_the_same_every_run(monkeypatch):
    monkeypatch.setattr(instructions, "DIGEST_SET", [(RACE, (2, 3), 3)])
    runs = []
    for _ in range(2):
        out = io.StringIO()
        instructions.digests(out)
        runs.append(out.getvalue().splitlines())
    assert runs[0] == runs[1]
    assert [line.split()[:3] for line in runs[0]] == [[RACE, str(p), str(s)] for p in (2, 3) for s in (1, 2, 3)]
    assert len({line.split()[3] for line in runs[0]}) == 6, "every game its own digest"


def test_a_rule_that_plays_differently_changes_the_digest(monkeypatch, tmp_path):
    import shutil
    game = tmp_path / "race"
    shutil.copytree(RACE, game)
    monkeypatch.setattr(instructions, "DIGEST_SET", [(str(game), (2,), 3)])
    runs = []
    for lucky in ("if r == 6:", "if r >= 5:"):  # the same folder: only the play can differ
        rules = game / "rules.yaml"
        rules.write_text(rules.read_text(encoding="utf-8").replace("if r == 6:", lucky), encoding="utf-8")
        out = io.StringIO()
        instructions.digests(out)
        runs.append([ln.split()[3] for ln in out.getvalue().splitlines()])
    assert runs[0] != runs[1]


def test_counting_without_valgrind_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda _name: None)
    assert instructions.main(["games", "shogun"]) == 2
    assert "apt-get install valgrind" in capsys.readouterr().err


def test_one_game_cannot_be_counted_against_itself(monkeypatch):
    monkeypatch.setattr(instructions.shutil, "which", lambda _name: "/usr/bin/valgrind")
    with pytest.raises(SystemExit):
        instructions.main(["games", "shogun", "--games", "1"])


def test_the_deep_flow_asks_its_choice_below_more_frames_the_deeper_it_is():
    # `decisions` measures one trivial decision with 9, 19 and 31 frames waiting below it
    # (docs/performance.md): the depth must really be there, and the game must go on asking.
    assert [instructions.decisions(depth, 50) for depth in instructions.DEPTHS] == [9, 19, 31]
