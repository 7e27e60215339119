"""The direct flow runner (engine/run/direct.py) plays every game exactly as the reference frame
machine does: the same log, byte for byte, the same state at every decision, the same saves.
`daimyo difftest` runs the same comparison over thousands of games (docs/performance.md)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine import Game, load
from engine.base.diagnostics import Diagnostics
from engine.run.direct import SPILL
from tools.difftest import first_difference, game_log, run_difftest

ROOT = Path(__file__).resolve().parent.parent
RACE = str(ROOT / "tests" / "rulesets" / "race")
MANIFEST = "id: flowcase\nname: f\nversion: 1\nplayers: {min: 2, max: 4}\nextends: race\n"

COMBOS = [("shogun", 3), ("shogun", 5), ("shogun+tennos-court+military-leaders+chambers+samurai-cards", 4),
          ("samurai-swords", 2), ("samurai-swords+samurai-swords-vp", 4), ("shogun-cards", 4),
          ("shogun-cards+shogun-cards-advanced+shogun-cards-wagers", 3)]


@pytest.mark.parametrize(("combo", "players"), COMBOS)
def test_bundled_games_give_the_same_log_on_both_machines(combo: str, players: int) -> None:
    model = load(combo, players=players, diags=Diagnostics())
    for seed in (1, 2):
        direct = game_log(model, players, seed, reference=False)
        assert first_difference(direct, game_log(model, players, seed, reference=True)) is None
        assert json.loads(direct[-1])["t"] == "end"  # whole games, to the end


# A step that runs itself twice SPILL levels deep before its choice (tests/test_play_out.py too).
DEEP_FLOW = f"""
globals: {{depth: 0, picked: 0}}
steps:
  dive:
    flow:
      - do: "depth += 1"
      - if: "depth < {SPILL * 2}"
        then: [dive]
      - choose: k
        player: '"P1"'
        from: "[1, 2]"
        then:
          - do: "picked += k"
  forever:
    flow: [forever]
triggers:
  go:
    "on": before_take_turn
    when: "depth == 0"
    do: run(dive)
"""


def _package(tmp: Path, rules: str) -> str:
    (tmp / "ruleset.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp / "rules.yaml").write_text(rules, encoding="utf-8")
    return f"{RACE}+{tmp}"


def _started(model: Any) -> tuple[Game, Game]:
    """The same 2-player game (seed 3) started on the direct runner and on the reference machine."""
    games = []
    for reference in (False, True):
        g = Game.new(model, 2, 3, defer=True)
        g.reference = reference
        g.run()
        games.append(g)
    return games[0], games[1]


def _both(combo: str, picks: int = 200) -> tuple[Game, Game]:
    """Play the same game on both machines, checking the states agree at every decision."""
    a, b = _started(load(combo, players=2, diags=Diagnostics()))
    rng = random.Random(4)
    for _ in range(picks):
        assert a.state == b.state
        if a.over:
            break
        option = rng.choice(a.decision.options)
        a.apply(option)
        b.apply(option)
    assert a.log == b.log
    return a, b


def _errors_on_both(combo: str, act: Callable[[Game], object]) -> list[str]:
    """The error `act` ends in on the direct runner and on the reference machine."""
    errors = []
    for reference in (False, True):
        g = Game.new(load(combo, players=2), 2, 1, defer=True)
        g.reference = reference
        with pytest.raises(Exception) as e:
            act(g)
        errors.append(str(e.value))
    return errors


def test_steps_scheduled_by_hooks_and_effects_wait_as_frames_at_a_decision(tmp_path: Path) -> None:
    """A decision inside a scheduled step, with more scheduled steps and the hooked step's body
    still to run: the stack holds exactly the reference machine's frames."""
    combo = _package(tmp_path, """
globals: {log_: {default: []}}
steps:
  ask:
    params: [player]
    flow:
      - choose: k
        player: player
        from: "[1, 2]"
        then: [{do: 'push(log_, "ask " + str(k))'}]
  note:
    do: 'push(log_, "note")'
triggers:
  before:
    "on": before_take_turn
    do: |
      run(ask, player)
      run(note)
  after:
    "on": after_take_turn
    do: run(ask, player)
""")
    a, _ = _both(combo)
    assert "note" in a.state["globals"]["log_"]


def test_a_steps_title_is_built_only_where_a_log_keeps_it(tmp_path: Path) -> None:
    """Like `say`'s text, a title is made for the log: a game without one (a bot's lookahead, a
    sweep) drops the entry, so it does not build it. A title that fails as it is built shows it:
    a logged game ends in that error, located at the title, on both machines; one without a log
    plays on, on both."""
    combo = _package(tmp_path, """
globals: {zero: 0}
steps:
  titled:
    title: "Share {[1][zero + 5]}"
    do: "zero = zero"
triggers:
  before:
    "on": before_take_turn
    do: run(titled)
""")
    errors = _errors_on_both(combo, lambda g: g.run())
    assert errors[0] == errors[1] and "rules.yaml:5" in errors[0], errors[0]
    for reference in (False, True):
        g = Game.new(load(combo, players=2), 2, 1, log=False, defer=True)
        g.reference = reference
        g.run()
        assert g.decision is not None and g.state["seq"] == 0  # the first decision, past the title


def test_a_sequence_that_holds_one_item_twice_stops_at_the_right_position(tmp_path: Path) -> None:
    """The direct runner finds a stopped child's position by looking it up among the children;
    a sequence with an item twice (no walk of the data makes one, a patched model may) counts
    its way instead, and every frame is the reference machine's."""
    combo = _package(tmp_path, """
globals: {log_: {default: []}}
steps:
  twice:
    params: [player]
    flow:
      - if: "len(log_) % 2 == 1"
        then:
          - choose: k
            player: player
            from: "[1, 2]"
            then: [{do: 'push(log_, k)'}]
      - do: 'push(log_, 0)'
triggers:
  before:
    "on": before_take_turn
    do: run(twice, player)
""")
    model = load(combo, players=2, diags=Diagnostics())
    at = next(i for i, n in enumerate(model.nodes) if n.kind == "seq" and n.label == "twice")
    first, second = model.nodes[at].children
    model.nodes[at].children = [first, second, first]  # asks the second time only: its third item
    a, b = _started(model)
    positions = set()
    for pick in (1, 2, 2, 1):
        assert a.state == b.state
        positions.update(f["i"] for f in a.state["flow"] if f["n"] == at)
        a.apply(pick)
        b.apply(pick)
    assert a.state == b.state and a.log == b.log
    assert positions == {3}


def test_a_choices_options_and_a_loops_items_are_copies_and_a_long_copy_costs_its_length(tmp_path: Path) -> None:
    """The options a choice offers are copied into the pending decision (the state never holds
    one list twice), and a flow loop runs over a copy of its list, on both machines; a copy of
    more than FREE_WALK items costs its length."""
    combo = _package(tmp_path, """
globals: {pool: {default: [a, b, c]}}
steps:
  walk:
    flow:
      - for: x
        in: pool
        do: [{do: "push(pool, x)"}]
  ask:
    params: [player]
    flow:
      - choose: k
        player: player
        from: "pool"
triggers:
  asking:
    "on": before_take_turn
    do: |
      run(walk)
      run(ask, player)
""")
    model = load(combo, players=2, diags=Diagnostics())
    used = {}
    for size in (3, 200):
        for reference in (False, True):
            g = Game.new(model, 2, 3, defer=True)
            g.reference = reference
            g.state["globals"]["pool"] = [f"o{i}" for i in range(size)]
            g.run()
            pool, options = g.state["globals"]["pool"], g.state["pending"]["options"]
            assert pool == [f"o{i}" for i in range(size)] * 2  # each item pushed once: the loop ran over its copy
            assert options == pool and options is not pool
            used[size, reference] = g.meter.used
    assert used[3, False] == used[3, True] and used[200, False] == used[200, True]
    assert used[200, False] - used[3, False] >= 200


def test_a_list_of_options_the_text_makes_as_it_runs_is_offered_without_a_copy(tmp_path: Path) -> None:
    """A choice whose options the text makes as it runs (a comprehension, a list written out,
    a join, `range()`, a choice of two such: `Rule.fresh`) offers that very list, which
    nothing else holds; a list the text reads (a global, or a built-in's list) is copied."""
    rules = """
globals: {pool: {default: [a, b, c]}}
steps: {ask: {params: [player], flow: [{choose: k, player: player, from: "FROM"}]}}
triggers: {asking: {"on": before_take_turn, do: "run(ask, player)"}}
"""
    cases = [("[x for x in pool]", True), ("pool + ['d']", True), ("range(4)", True), ("['a', 'b']", True),
             ("[1, 2] if len(pool) > 1 else range(3)", True), ("pool", False),
             ("pool if len(pool) > 1 else []", False), ("sorted(pool)", False)]
    for i, (text, fresh) in enumerate(cases):
        (tmp_path / str(i)).mkdir()
        model = load(_package(tmp_path / str(i), rules.replace("FROM", text)), players=2, diags=Diagnostics())
        node = next(n for n in model.nodes if n.kind == "choose" and n.var == "k")
        assert node.fn.fresh is fresh, text
        Game.new(model, 2, 3)  # (the text is compiled as it first runs)
        made = []
        inner = node.fn.fast

        def recorded(c: Any, inner: Any = inner, made: list = made) -> Any:
            made.append(inner(c))
            return made[-1]
        node.fn.fast = recorded
        g = Game.new(model, 2, 3)
        assert (g.state["pending"]["options"] is made[-1]) is fresh, text
        assert g.state["pending"]["options"] is not g.state["globals"]["pool"]



def test_end_game_inside_an_effect_stops_the_flow_but_runs_what_was_scheduled_after_it(tmp_path: Path) -> None:
    combo = _package(tmp_path, """
globals: {after_end: {default: 0}}
steps:
  late:
    do: "after_end += 1"
triggers:
  stop_early:
    "on": advanced
    when: "player.total >= 4"
    do: |
      end_game()
      run(late)
""")
    a, _ = _both(combo)
    assert a.over and a.state["globals"]["after_end"] == 1


def test_deep_flows_are_handed_to_frames_and_the_depth_limit_is_reported_the_same(tmp_path: Path) -> None:
    combo = _package(tmp_path, DEEP_FLOW)
    model = load(combo, players=2)
    g = Game.new(model, 2, 1)
    assert len(g.state["flow"]) > SPILL * 2  # the innermost `dive` asks first
    for _ in range(SPILL):  # the chosen option's body, entered past the spill and below it
        g.apply(1)
    assert len(g.state["flow"]) > SPILL and g.state["globals"]["picked"] == SPILL
    _both(combo)
    errors = []
    for reference in (False, True):
        g = Game.new(load(combo, players=2), 2, 1, defer=True)
        g.reference = reference
        g.state["flow"] = [{"n": g.model.steps["forever"], "i": 0, "v": {}}]
        with pytest.raises(Exception) as e:
            g.run()
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "E002" in errors[0]


def test_a_step_that_schedules_itself_ends_in_the_same_budget_error(tmp_path: Path) -> None:
    """after_again runs `again` again, forever: the stack never grows, but the calls would; both
    machines stop at the work budget (E002) at the same place, not at Python's recursion limit."""
    combo = _package(tmp_path, """
steps:
  again:
    do: "turn += 0"
triggers:
  loop:
    "on": after_again
    do: run(again)
  start:
    "on": before_take_turn
    do: run(again)
""")
    errors = _errors_on_both(combo, lambda g: g.run())
    assert errors[0] == errors[1] and "E002" in errors[0]


def test_a_save_from_either_machine_continues_on_the_other() -> None:
    model = load("shogun", players=4, diags=Diagnostics())
    rng = random.Random(9)
    g = Game.new(model, 4, 9)
    for _ in range(150):
        g.apply(rng.choice(g.decision.options))
    ends = []
    for reference in (False, True):
        h = Game.from_save(model, json.loads(json.dumps(g.save())))
        h.reference = reference
        r = random.Random(10)
        while not h.over:
            h.apply(r.choice(h.decision.options))
        ends.append(h.state)
    assert ends[0] == ends[1]


def test_rule_failures_are_located_alike(tmp_path: Path) -> None:
    """A failure inside a procedure called from the flow names the procedure's line on both machines."""
    combo = _package(tmp_path, """
procedures:
  broken:
    params: [player]
    do: |
      let xs = [1, 2]
      player.total += xs[5]
triggers:
  t:
    "on": advanced
    do: broken(player)
""")
    errors = _errors_on_both(combo, lambda g: (g.run(), g.apply(g.decision.options[0])))
    assert errors[0] == errors[1]
    assert "rules.yaml:7:" in errors[0] and "past the end" in errors[0]


def test_difftest_command_reports_identical_logs(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    args = argparse.Namespace(combo=["shogun-cards"], players=3, games=3, jobs=1, option=[], no_progress=True,
                              format="json")
    assert run_difftest(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tables"] == [{"combo": "shogun-cards", "players": 3, "games": 3, "seeds": "1-3", "differ": 0,
                              "first": []}]
    assert out["interrupted"] is False and out["first_seed"] == 1


def test_difftest_goes_on_from_a_first_seed_and_reports_an_interrupted_run() -> None:
    import argparse
    args = argparse.Namespace(combo=["shogun-cards"], players=2, games=2, jobs=1, option=[], no_progress=True,
                              format="human", first_seed=41)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run_difftest(args) == 0
    assert "shogun-cards (2 players): 2 games (seeds 41-42), identical" in out.getvalue()
    # Ctrl-C in a long run: the games compared so far are reported (exit 130), none is lost; and
    # the same for `kill` (SIGTERM), how a run in the background, which ignores Ctrl-C, is stopped.
    for stop in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "difftest", "shogun-cards", "--players", "2",
                                 "--games", "5000", "--jobs", "2", "--format", "json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "games" not in proc.stderr.readline():
            pass  # the progress line comes once a block of games is compared
        workers = _children(proc.pid)
        assert len(workers) == 2
        os.kill(proc.pid, stop)
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130, stop
        doc = json.loads(stdout)
        assert doc["interrupted"] is True and doc["differ"] == 0
        (row,) = doc["tables"]
        assert 0 < row["games"] < 5000 and row["games"] % 25 == 0 and row["seeds"] == f"1-{row['games']}"
        assert not [w for w in workers if _running(w)], "the workers stop with the run"


def _children(pid: int) -> list[str]:
    """The processes `pid` started that still run (the workers of a difftest)."""
    return [stat.parent.name for stat in Path("/proc").glob("[0-9]*/stat") if _running(stat.parent.name, pid)]


def _running(pid: str, parent: int | None = None) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone
        return False
    return fields[0] != "Z" and (parent is None or fields[1] == str(parent))


def test_difftest_plays_only_the_player_counts_a_combo_allows() -> None:
    from tools.difftest import player_counts
    assert player_counts("samurai-swords", {}, None) == [2, 3, 4, 5]
    assert player_counts("samurai-swords+samurai-swords-vp", {}, None) == [3, 4, 5]  # the variant narrows them


def test_difftest_refuses_counts_it_cannot_play(capsys: pytest.CaptureFixture[str]) -> None:
    """A player count the combo does not allow is refused up front (it used to be played and
    reported as a differing game); so are no games and no workers."""
    import argparse

    from tools.difftest import player_counts
    with pytest.raises(SystemExit, match="is for 2 to 4 players, not 9"):
        player_counts("shogun-cards", {}, 9)
    for games, jobs, what in ((0, 1, "--games"), (3, 0, "--jobs")):
        args = argparse.Namespace(combo=["shogun-cards"], players=3, games=games, jobs=jobs, option=[],
                                  no_progress=True, format="human")
        assert run_difftest(args) == 2
        assert what in capsys.readouterr().err


def test_first_difference_names_the_line() -> None:
    assert first_difference(["a", "b"], ["a", "c"]) == {"line": 1, "direct": "b", "reference": "c"}
    assert first_difference(["a"], ["a", "b"])["line"] == 1


def test_a_listener_attached_to_a_game_without_log_gets_the_account_from_then_on() -> None:
    """Rules skip building account text while nobody reads it (`silent`, asked before every
    `say`); attaching a listener later (the terminal does) must make them build it again."""
    model = load("shogun", players=3, diags=Diagnostics())
    g = Game.new(model, 3, 4, log=False)
    assert g.silent
    heard: list[dict] = []
    g.on_log = heard.append
    assert not g.silent
    while not g.over and not any(e["t"] == "say" for e in heard):
        g.apply(g.decision.options[0])
    assert any(e["t"] == "say" and e["text"] for e in heard)
    assert [e["t"] for e in g.log] == ["start"]  # still no log: the listener hears the account only
    g.on_log = None
    assert g.silent
