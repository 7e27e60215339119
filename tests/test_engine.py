"""Engine properties over random games in every bundled ruleset (and the tiny fixture):
save/load/continue equals the uninterrupted game, replay reproduces every line, clones are
independent, the same seed gives byte-identical logs across processes, illegal moves leave
the state unchanged, and views hide what a player may not see."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.diagnostics import Diagnostics
from engine.cli.replay import replay_file
from engine.loading.package import bundled_ids
from engine.model import build
from engine.run.game import Game, IllegalMove
from engine.run.state import canonical

ROOT = Path(__file__).resolve().parent.parent
RACE = str(ROOT / "tests" / "rulesets" / "race")
CANDIDATES = [(RACE, 3), ("shogun", 4), ("shogun", 3), ("samurai-swords", 4), ("samurai-swords+samurai-swords-vp", 3),
              ("shogun-cards", 3), ("shogun-cards+shogun-cards-advanced+shogun-cards-wagers", 2),
              ("shogun+tennos-court+military-leaders+chambers+samurai-cards", 4)]


def _available(combo: str) -> bool:
    return combo == RACE or all(part in bundled_ids() for part in combo.split("+"))


COMBOS = [pytest.param(c, n, id=f"{Path(c).name if c == RACE else c}-{n}p") for c, n in CANDIDATES if _available(c)]
_MODELS: dict = {}


def model_for(combo: str, players: int):
    key = (combo, players)
    if key not in _MODELS:
        diags = Diagnostics()
        m = build(combo, {}, players, diags)
        assert m is not None, diags.render()
        _MODELS[key] = m
    return _MODELS[key]


def play_random(game: Game, rng: random.Random, limit: int | None = None) -> int:
    n = 0
    while not game.over and (limit is None or n < limit):
        d = game.decision
        game.apply(d.options[rng.randrange(len(d.options))])
        n += 1
    return n


@pytest.mark.parametrize("combo,players", COMBOS)
def test_save_load_continue_equals_uninterrupted(combo: str, players: int) -> None:
    model = model_for(combo, players)
    whole = Game.new(model, players, seed=11)
    total = play_random(whole, random.Random(5))
    assert whole.over and whole.result["winners"]
    for cut in (0, total // 3, (2 * total) // 3):
        g = Game.new(model, players, seed=11)
        rng = random.Random(5)
        play_random(g, rng, cut)
        saved = json.dumps(g.save())
        resumed = Game.from_save(model, json.loads(saved))
        resumed.log = list(g.log)
        play_random(resumed, rng)
        assert resumed.state == whole.state, f"diverged after resuming at decision {cut}"
        assert [canonical(e) for e in resumed.log] == [canonical(e) for e in whole.log]


@pytest.mark.parametrize("combo,players", COMBOS)
def test_replay_reproduces_every_line_and_refuses_edits(combo: str, players: int, tmp_path: Path) -> None:
    model = model_for(combo, players)
    g = Game.new(model, players, seed=3)
    play_random(g, random.Random(8))
    path = tmp_path / "game.jsonl"
    path.write_text("".join(canonical(e) + "\n" for e in g.log), encoding="utf-8")
    ok, msg = replay_file(str(path))
    assert ok, msg
    lines = path.read_text(encoding="utf-8").splitlines()
    decisions = [i for i, ln in enumerate(lines) if '"t":"decision"' in ln]
    # A line missing: the replay stops at (or right after) it.
    cut = decisions[len(decisions) // 2]
    (tmp_path / "missing.jsonl").write_text("\n".join(lines[:cut] + lines[cut + 1:]) + "\n", encoding="utf-8")
    ok, msg = replay_file(str(tmp_path / "missing.jsonl"))
    assert not ok and (f":{cut + 1}:" in msg or f":{cut + 2}:" in msg), msg
    # Two lines swapped.
    a, b = decisions[1], decisions[2]
    swapped = list(lines)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    (tmp_path / "moved.jsonl").write_text("\n".join(swapped) + "\n", encoding="utf-8")
    ok, msg = replay_file(str(tmp_path / "moved.jsonl"))
    assert not ok, "a moved line must be refused"
    # A state hash edited.
    edited = list(lines)
    edited[a] = edited[a].replace('"state":"', '"state":"0', 1)
    (tmp_path / "edited.jsonl").write_text("\n".join(edited) + "\n", encoding="utf-8")
    ok, msg = replay_file(str(tmp_path / "edited.jsonl"))
    assert not ok and f":{a + 1}:" in msg, msg


@pytest.mark.parametrize("combo,players", COMBOS)
def test_clones_are_independent(combo: str, players: int) -> None:
    model = model_for(combo, players)
    g = Game.new(model, players, seed=4)
    play_random(g, random.Random(1), 25)
    before = json.dumps(g.state)
    c = g.clone()
    assert c == g
    play_random(c, random.Random(2), 40)
    assert json.dumps(g.state) == before, "playing a clone changed the original"
    play_random(g, random.Random(3), 5)
    assert c.state != g.state or c.over


@pytest.mark.parametrize("combo,players", COMBOS)
def test_illegal_move_is_rejected_and_state_unchanged(combo: str, players: int) -> None:
    model = model_for(combo, players)
    g = Game.new(model, players, seed=9)
    before = json.dumps(g.state)
    with pytest.raises(IllegalMove, match="not a legal option"):
        g.apply({"surely": "not an option"})
    assert json.dumps(g.state) == before


def test_two_processes_write_byte_identical_logs(tmp_path: Path) -> None:
    combo, players = next(((c, n) for c, n in CANDIDATES if c == "shogun" and _available(c)), (RACE, 3))
    paths = []
    for i in range(2):
        p = tmp_path / f"log{i}.jsonl"
        subprocess.run([sys.executable, "-m", "engine.cli", "play", combo, "--players", str(players), "--seed", "42",
                        "--quiet", "--log", str(p)], check=True, cwd=ROOT, capture_output=True, timeout=300)
        paths.append(p)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].stat().st_size > 0


def test_views_hide_owner_fields_and_the_generator() -> None:
    model = model_for(RACE, 3)
    g = Game.new(model, 3, seed=1)
    g.state["ent"]["P2"]["secret_pick"] = 3
    v1 = g.view("P1")
    assert v1["ent"]["P2"]["secret_pick"] == "?"
    assert g.view("P2")["ent"]["P2"]["secret_pick"] == 3
    assert "rng" not in v1, "the random generator's state would reveal future chance"
    assert all(isinstance(x, str) for x in v1["flow"]), "views show step names, not frames with locals"


def test_runaway_rule_ends_with_a_located_error(tmp_path: Path) -> None:
    pkg = tmp_path / "loop"
    pkg.mkdir()
    (pkg / "ruleset.yaml").write_text("id: loop\nname: Loop\nversion: 1\nplayers: 2\n", encoding="utf-8")
    (pkg / "rules.yaml").write_text(
        "globals: {n: 0}\nflow:\n  - do: |\n      for i in range(100000):\n          for j in range(100000):\n"
        "              n += 1\nresult: {score: 0}\n", encoding="utf-8")
    model = build(str(pkg), {}, 2, Diagnostics())
    from dsl.runtime import BudgetExceeded
    with pytest.raises(BudgetExceeded) as e:
        Game.new(model, 2, seed=1)
    assert e.value.loc.line == 5 and e.value.loc.file.endswith("rules.yaml")
