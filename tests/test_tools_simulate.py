"""`daimyo simulate`: reproducible rows whatever the number of jobs, resuming after a stop or a kill,
failed games stored, and the Ray backend against a local instance."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli import main
from engine.model import load
from tools.simulate import game_seed, play_game, run_sweep, seat_bots
from tools.store import Store

RACE = str(Path(__file__).resolve().parent / "rulesets" / "race")
SWEEP = [RACE, "--players", "3", "--bots", "random,heuristic,random", "--rotate", "--seed", "7", "--no-progress"]


def rows(db: str) -> list[tuple]:
    store = Store(db, readonly=True)
    try:
        (sweep,) = store.sweeps()
        return store.raw_games(sweep.id)
    finally:
        store.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    """200 games with one job, uninterrupted."""
    db = str(tmp_path_factory.mktemp("ref") / "ref.db")
    assert main(["simulate", *SWEEP, "--games", "200", "--jobs", "1", "--db", db]) == 0
    return db


def test_game_seeds_depend_only_on_the_sweep_seed_and_game_number():
    assert game_seed(7, 3) == game_seed(7, 3)
    assert len({game_seed(7, g) for g in range(1000)}) == 1000
    assert game_seed(7, 3) != game_seed(8, 3)
    assert all(0 <= game_seed(s, g) < 2 ** 63 for s in (0, 1, -5) for g in (0, 10 ** 9))


def test_rotation_seats_every_bot_in_every_seat():
    bots = ("heuristic", "random", "random")
    assert seat_bots(bots, False, 5) == list(bots)
    assert [seat_bots(bots, True, g)[0] for g in range(3)] == ["heuristic", "random", "random"]
    assert [seat_bots(bots, True, g).index("heuristic") for g in range(3)] == [0, 2, 1]


def test_an_interrupted_two_job_sweep_resumes_to_the_rows_of_a_one_job_run(reference, tmp_path):
    db = str(tmp_path / "resumed.db")
    # spawn: the start method of macOS and Windows (Linux defaults to fork), so spawn-safety stays tested
    args = ["simulate", *SWEEP, "--games", "200", "--jobs", "2", "--chunk", "10", "--start-method", "spawn", "--db", db]
    assert main([*args, "--stop-after", "60"]) == 0
    partial = rows(db)
    assert 60 <= len(partial) < 200
    assert main(args) == 0  # the same command again: resumes
    assert rows(db) == rows(reference)
    store = Store(db, readonly=True)
    runs = store.runs(store.sweeps()[0].id)
    store.close()
    assert [r["status"] for r in runs] == ["stopped", "done"]
    assert runs[0]["games"] + runs[1]["games"] == 200  # nothing played twice
    assert all(r["rss_last_kb"] for r in runs)


def test_a_killed_sweep_resumes_where_it_stopped(reference, tmp_path):
    db = str(tmp_path / "killed.db")
    args = [sys.executable, "-m", "engine.cli", "simulate", *SWEEP, "--games", "3000", "--jobs", "2", "--chunk", "20",
            "--db", db]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                con = sqlite3.connect(db, timeout=5)
                stored = con.execute("SELECT count(*) FROM games").fetchone()[0]
                con.close()
            except sqlite3.OperationalError:
                continue  # not created yet
            if stored >= 200:
                break
        proc.send_signal(signal.SIGTERM)  # `kill`: the sweep commits what it has and stops its workers
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == 0:
        pytest.skip("the sweep finished before it could be killed (a very fast machine)")
    assert proc.returncode == 130, err
    assert "interrupted" in out
    before = rows(db)
    assert 200 <= len(before) < 3000
    # Resume (limited to the first 400 games to keep the test short): only missing games are played.
    assert main(["simulate", *SWEEP, "--games", "400", "--jobs", "2", "--db", db]) == 0
    after = rows(db)
    numbers = [r[0] for r in after]
    assert set(range(400)) <= set(numbers) and len(numbers) == len(set(numbers))
    assert set(before) <= set(after)  # nothing stored before the kill changed
    assert after[:200] == rows(reference)  # the same game numbers give the same rows


def test_a_game_that_does_not_end_is_stored_with_its_reason(tmp_path):
    model = load(RACE, players=2)
    row = play_game(model, 2, ("random", "random"), False, 1, 0, max_decisions=5)
    assert row["error"] == "unfinished after 5 decisions" and row["winners"] is None and row["length"] == 5
    out = run_sweep(RACE, 2, 20, jobs=1, db=str(tmp_path / "f.db"), progress=False, max_decisions=5)
    assert out.errors == 20 and out.stored == 20


def test_bad_arguments_are_usage_or_input_errors(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    assert main(["simulate", RACE, "--games", "5", "--bots", "genius", "--db", db]) == 1
    assert "unknown bot `genius`" in capsys.readouterr().err
    assert main(["simulate", "./no-such-ruleset", "--games", "5", "--db", db]) == 1
    assert main(["simulate", RACE, "--games", "5", "--jobs", "0", "--db", db]) == 2


def test_the_ray_backend_gives_the_same_rows_on_a_local_instance(reference, tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'daimyo[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        db = str(tmp_path / "ray.db")
        done = subprocess.run([sys.executable, "-m", "engine.cli", "simulate", *SWEEP, "--games", "200",
                               "--backend", "ray", "--address", address, "--jobs", "2", "--db", db],
                              capture_output=True, text=True, timeout=240,
                              env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert "(ray)" in done.stdout
    finally:
        ray.shutdown()
    assert rows(db) == rows(reference)


def test_round_figures_keep_the_last_value_seen_and_leave_out_figures_that_fail(tmp_path):
    """hints.round_breakdown (docs/simulate.md): each figure is sampled before every decision;
    the value kept is the last one other than none, and a figure whose rule text fails (here a
    division by zero) is left out for that sample while the others are still kept."""
    import shutil

    from engine.agents import seat_agent
    from engine.run.game import Game

    pkg = tmp_path / "race"
    shutil.copytree(RACE, pkg)
    (pkg / "hints.yaml").write_text(
        "hints:\n"
        "  round_breakdown:\n"
        "    total: \"player.total\"\n"
        "    odd: \"player.total if player.total % 2 == 1 else none\"\n"
        "    broken: \"1 // (player.total - player.total)\"\n", encoding="utf-8")
    model = load(str(pkg), players=2)
    row = play_game(model, 2, ("random", "random"), False, 5, 0)
    assert row["error"] is None
    got = {k: v for k, v in row["counts"].items() if k.startswith("byround:")}
    # The same game again, read before each decision by plain Python.
    g = Game.new(model, 2, row["seed"], log=False)
    agents = {f"P{i + 1}": seat_agent("random", row["seed"], i) for i in range(2)}
    held: dict[tuple[str, str], int] = {}
    while not g.over:
        for p in g.state["players"]:
            total = g.state["ent"][p]["total"]
            held[("total", p)] = total
            if total % 2 == 1:
                held[("odd", p)] = total
        d = g.decision
        g.apply(d.options[agents[d.player].choose(g, d)])
    assert got == {f"byround:{name}={v}@{p}": 1 for (name, p), v in held.items()}
    assert any(k.startswith("byround:odd=") for k in got) and not any("broken" in k for k in got)


def test_random_bots_answer_inside_the_flow_and_play_the_games_their_choose_plays(monkeypatch):
    """A sweep's random bots answer through `pick` without the flow stopping (Game.play_out);
    the rows (scores, lengths, decisions by step, round figures, an unfinished game's reason)
    are those of the same bots asked through `choose` at every stop, next to a bot that is."""
    from engine.agents.basic import RandomAgent
    shogun = load("shogun", players=4)
    swords = load("samurai-swords", players=3)

    def rows() -> list[dict]:
        out = [play_game(shogun, 4, ("random", "random", "heuristic", "random"), True, 5, g) for g in range(2)]
        out.append(play_game(shogun, 4, ("random",) * 4, False, 5, 0, max_decisions=100))
        out += [play_game(swords, 3, ("random",) * 3, False, 7, g) for g in range(2)]
        return out

    answered = []
    real_pick = RandomAgent.pick
    monkeypatch.setattr(RandomAgent, "pick", lambda self, pending: answered.append(1) or real_pick(self, pending))
    inside = rows()
    assert len(answered) > 1000
    assert inside[2]["error"] == "unfinished after 100 decisions" and inside[2]["length"] == 100
    assert any(k.startswith("byround:") for k in inside[0]["counts"])  # the round figures were sampled
    monkeypatch.delattr(RandomAgent, "pick")
    assert inside == rows()
