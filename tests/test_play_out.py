"""`Game.play_out`: a game played on with a function that answers each decision is the game that
`apply` of the same options gives, wherever it stops, and whatever the function does wrong.

In a silent game the flow does not stop for the decisions `pick` answers (engine/run/direct.py
`_Choose.taken`): nothing writes its frames down until the game stops. Every test here compares
the whole state (`state_hash` covers the flow's frames, the pending decision and the counter of
decisions) with the same game driven decision by decision.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import Game, load
from engine.run.direct import SPILL

COMBOS = [("shogun", 4), ("samurai-swords", 3), ("shogun-cards", 4),
          ("shogun+tennos-court+military-leaders+chambers+samurai-cards", 5),
          ("samurai-swords+samurai-swords-vp", 4), ("shogun-cards+shogun-cards-advanced+shogun-cards-wagers", 2)]


def _stepwise(g: Game, pick: Callable[[dict], int | None], limit: int | None = None) -> None:
    """What `play_out` promises, written with `apply`: `pick` at each decision, up to `limit`."""
    while not g.over and (limit is None or g.state["seq"] < limit):
        i = pick(g.state["pending"])
        if i is None:
            return
        g.apply(g.decision.options[i])


def _driven(model: object, players: int, seed: int, pick_seed: int, limit: int | None = None) -> Game:
    """The game of `seed` driven through `apply` with `_random_pick(pick_seed)`'s moves."""
    g = Game.new(model, players, seed, log=False)
    _stepwise(g, _random_pick(pick_seed), limit)
    return g


def _played_out(model: object, players: int, seed: int, pick_seed: int) -> Game:
    g = Game.new(model, players, seed, log=False)
    g.play_out(_random_pick(pick_seed))
    return g


def _random_pick(seed: int, asked: list | None = None) -> Callable[[dict], int]:
    rng = random.Random(seed)

    def pick(pending: dict) -> int:
        if asked is not None:
            asked.append((pending["n"], pending["player"], pending["step"], len(pending["options"])))
        return rng.randrange(len(pending["options"]))
    return pick


def _stopping_pick(stop: int, asked: list) -> Callable[[dict], int | None]:
    """`_random_pick(stop)`'s moves, and no answer at decision number `stop`."""
    rng = random.Random(stop)

    def pick(pending: dict) -> int | None:
        asked.append(pending["n"])
        return None if pending["n"] == stop else rng.randrange(len(pending["options"]))
    return pick


@pytest.mark.parametrize(("combo", "players"), COMBOS)
def test_a_game_played_out_is_the_game_apply_plays(combo: str, players: int) -> None:
    model = load(combo, players=players)
    for seed in (1, 2, 3):
        asked_a: list = []
        asked_b: list = []
        a = Game.new(model, players, seed, log=False)
        a.play_out(_random_pick(seed, asked_a))
        b = Game.new(model, players, seed, log=False)
        _stepwise(b, _random_pick(seed, asked_b))
        assert a.over and b.over
        assert asked_a == asked_b and len(asked_a) == a.state["seq"]  # each decision asked once
        assert a.state_hash() == b.state_hash() and a.result == b.result and a.counts == b.counts


@pytest.mark.parametrize(("combo", "players"), COMBOS[:3])
def test_a_game_played_out_stops_whole_where_pick_gives_no_answer(combo: str, players: int) -> None:
    """Where `pick` says None, the game waits at that decision with the frames, pending
    decision and counters of the game driven through `apply`; both then go on alike."""
    model = load(combo, players=players)
    for stop in (1, 2, 37, 90):
        asked: list = []
        a = Game.new(model, players, 5, log=False)
        a.play_out(_stopping_pick(stop, asked))
        b = _driven(model, players, 5, stop, limit=stop - 1)
        assert asked == list(range(1, stop + 1))  # the decision it declined was asked once
        assert a.decision.number == b.decision.number == stop
        assert a.state_hash() == b.state_hash() and a.counts == b.counts
        assert a.pick is None
        a.play_out(_random_pick(9))  # and it goes on from there like any game
        b.play_out(_random_pick(9))
        assert a.over and a.state_hash() == b.state_hash()


def test_a_logged_game_played_out_keeps_the_log_apply_writes() -> None:
    model = load("shogun", players=4)
    a = Game.new(model, 4, 8)
    a.play_out(_random_pick(8))
    b = Game.new(model, 4, 8)
    _stepwise(b, _random_pick(8))
    assert a.over and json.dumps(a.log) == json.dumps(b.log)
    assert sum(e["t"] == "decision" for e in a.log) == a.state["seq"]


def test_a_game_played_out_on_the_reference_machine_is_the_same_game() -> None:
    model = load("samurai-swords", players=4)
    a = _played_out(model, 4, 2, 2)
    b = Game.new(model, 4, 2, log=False, defer=True)
    b.reference = True
    b.run()
    b.play_out(_random_pick(2))
    assert b.over and a.state_hash() == b.state_hash()


@pytest.mark.parametrize("answer", [99, -1, True, 1.0, "0"])
def test_an_answer_that_is_not_an_option_is_refused_and_the_game_waits_whole(answer: object) -> None:
    model = load("shogun", players=4)
    rng = random.Random(3)

    def pick(pending: dict) -> object:
        return answer if pending["n"] == 40 else rng.randrange(len(pending["options"]))
    a = Game.new(model, 4, 3, log=False)
    with pytest.raises(ValueError, match="not the index of one of the"):
        a.play_out(pick)
    b = _driven(model, 4, 3, 3, limit=39)
    assert a.decision.number == 40 and a.state_hash() == b.state_hash()
    assert a.pick is None and a.pick_error is None
    a.apply(a.decision.options[0])  # the game goes on
    b.apply(b.decision.options[0])
    assert a.state_hash() == b.state_hash()


@pytest.mark.parametrize("at", [1, 60])
def test_what_pick_raises_is_raised_and_the_game_waits_whole(at: int) -> None:
    """At the first decision `play_out` asks itself; later ones are asked inside the flow."""
    model = load("samurai-swords", players=3)
    rng = random.Random(4)

    def pick(pending: dict) -> int:
        if pending["n"] == at:
            raise RuntimeError("the bot broke")
        return rng.randrange(len(pending["options"]))
    a = Game.new(model, 3, 4, log=False)
    with pytest.raises(RuntimeError, match="the bot broke"):
        a.play_out(pick)
    b = _driven(model, 3, 4, 4, limit=at - 1)
    assert a.decision.number == at and a.state_hash() == b.state_hash()
    a.play_out(_random_pick(5))
    b.play_out(_random_pick(5))
    assert a.over and a.state_hash() == b.state_hash()


def test_a_flow_deeper_than_the_spill_is_played_out_alike(tmp_path: Path) -> None:
    """Past `SPILL` levels the flow runs frame by frame (the reference machine's way), which
    stops at every decision: `play_out` asks `pick` there and goes on."""
    from tests.test_direct import DEEP_FLOW, _package
    model = load(_package(tmp_path, DEEP_FLOW), players=2)
    a, b = _played_out(model, 2, 1, 6), _driven(model, 2, 1, 6)
    assert a.over and a.state["seq"] >= SPILL * 2 and a.state_hash() == b.state_hash()


def test_each_decision_answered_starts_a_new_stretch_of_the_work_budget(tmp_path: Path) -> None:
    """The budget (E002) bounds the work between two decisions, as `apply` counts it: each
    turn here costs 60% of it, and a whole game many times over."""
    from tests.test_direct import _package
    combo = _package(tmp_path, """
triggers:
  heavy:
    "on": before_take_turn
    do: |
      for i in range(3):
          turn += count(range(100000), where=x => x < 0)
""")
    model = load(combo, players=2)
    a, b = _played_out(model, 2, 1, 7), _driven(model, 2, 1, 7)
    assert a.over and a.state["seq"] > 5 and a.state_hash() == b.state_hash()


ROWS_CHOICE = """      - choose: d
        player: '"P1"'
        from: "opts"
        then:
          - do: |
              push(d, 9)
              seen = seen + [sum([len(r) for r in opts])]
"""


def _rows_package(deep: bool) -> str:
    """A choice among rows, offered every turn by a step of its own, or (`deep`) once, at the
    bottom of a step that runs itself past the spill."""
    dive = f'''      - do: "depth += 1"
      - if: "depth < {SPILL * 2}"
        then: [pick_row]
''' if deep else ""
    when = '\n    when: "depth == 0"' if deep else ""
    return f"""globals: {{depth: 0, opts: [[1, 2], [3, 4], [5, 6]], seen: []}}
steps:
  pick_row:
    flow:
{dive}{ROWS_CHOICE}triggers:
  rows:
    "on": before_take_turn{when}
    do: run(pick_row)
"""


@pytest.mark.parametrize("deep", [False, True])
def test_the_option_taken_is_a_copy_even_where_the_others_are_not(tmp_path: Path, deep: bool) -> None:
    """Options that are rows (pairs and the like) are checked and charged but not copied when
    `pick` answers at once: the row taken is copied, so that changing it changes nothing else,
    as after `apply`. Past `SPILL` levels (`deep`) the choice is offered by the reference
    machine, which stops: there its rows are copied as `apply` needs them, though `pick` is
    playing the game out."""
    from tests.test_direct import _package
    model = load(_package(tmp_path, _rows_package(deep)), players=2)
    a, b = _played_out(model, 2, 1, 3), _driven(model, 2, 1, 3)
    assert a.over and a.state_hash() == b.state_hash()
    assert set(a.state["globals"]["seen"]) == {6} and a.state["globals"]["opts"] == [[1, 2], [3, 4], [5, 6]]
    for stop in () if deep else (3, 4):  # and where `pick` stops at such a choice, the options wait whole
        a = Game.new(model, 2, 1, log=False)
        a.play_out(_stopping_pick(stop, []))
        b = _driven(model, 2, 1, stop, limit=stop - 1)
        assert a.state_hash() == b.state_hash()
        assert all(o is not r for o in a.decision.options for r in a.state["globals"]["opts"])
