"""The seeded generator: nearby seeds give independent streams (issue 14, item 17).

The old derivation spread the seed with the generator's own increment, so seed k+1 replayed
seed k's stream one draw later; these tests fail on it (see the shifted-overlap test)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from engine.cli.replay import replay_file
from engine.run.chance import SEEDING, Rng, initial_rng

SEEDS = 2000


def _draws(seed: int, n: int) -> list[int]:
    rng = Rng({"rng": initial_rng(seed)})
    return [rng._next() for _ in range(n)]


def _correlation(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    vx = sum((x - mx) ** 2 for x in xs)
    vy = sum((y - my) ** 2 for y in ys)
    return cov / math.sqrt(vx * vy)


def test_first_draws_of_neighbouring_seeds_are_uncorrelated() -> None:
    first = [Rng({"rng": initial_rng(k)}).random() for k in range(SEEDS + 1)]
    r = _correlation(first[:-1], first[1:])
    # Independent uniforms: r is about normal with sd 1/sqrt(n); 4 sd is a false alarm in 1 of 15,000.
    assert abs(r) < 4 / math.sqrt(SEEDS), f"first draws of seeds k and k+1 correlate: r = {r:.4f}"
    # and a die rolled first in each game is fair: chi-square over 6 faces, 5 degrees of freedom
    faces = [Rng({"rng": initial_rng(k)}).below(6) for k in range(SEEDS * 3)]
    expected = len(faces) / 6
    chi2 = sum((faces.count(f) - expected) ** 2 / expected for f in range(6))
    assert chi2 < 25.7, f"first die rolls of seeds 0..{len(faces) - 1} are uneven: chi2 = {chi2:.1f}"  # p = 0.0001


def test_no_seed_replays_another_seeds_stream_shifted() -> None:
    streams = {k: _draws(k, 64) for k in range(300)}
    seen: dict[int, int] = {}
    for k, draws in streams.items():
        for value in draws:
            assert value not in seen, f"seed {k} repeats a draw of seed {seen[value]}: the streams overlap"
            seen[value] = k


def test_neighbouring_starting_states_differ_in_about_half_their_bits() -> None:
    flips = [bin(initial_rng(k) ^ initial_rng(k + 1)).count("1") for k in range(SEEDS)]
    mean = sum(flips) / len(flips)
    assert 31 < mean < 33, f"neighbouring seeds' states differ in {mean:.2f} of 64 bits on average"


def test_seeds_of_any_size_and_sign_give_64_bit_states() -> None:
    for seed in (0, 1, -1, 2**64, 2**64 + 1, -(2**70)):
        assert 0 <= initial_rng(seed) < 2**64
    assert initial_rng(2**64) != initial_rng(0), "seeds equal modulo 2^64 must still differ"


def test_replay_refuses_a_log_made_with_another_seeding(tmp_path: Path) -> None:
    from engine import Game, load
    race = str(Path(__file__).parent / "rulesets" / "race")
    lines: list[str] = []
    game = Game.new(load(race, players=2), players=2, seed=3,
                    on_log=lambda e: lines.append(json.dumps(e, separators=(",", ":"), ensure_ascii=False)))
    while not game.over:
        game.apply(game.decision.options[0])
    log = tmp_path / "g.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert replay_file(str(log))[0], "the untouched log must replay"
    start = json.loads(lines[0])
    assert start["seeding"] == SEEDING
    del start["seeding"]  # as a log written before seeds were mixed
    log.write_text("\n".join([json.dumps(start, separators=(",", ":")), *lines[1:]]) + "\n", encoding="utf-8")
    ok, message = replay_file(str(log))
    assert not ok and ":1:" in message and "seeding" in message and SEEDING in message
