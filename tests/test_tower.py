"""The battle tower's generic stochastic containers.

1. `cascade_drop`: only cubes stuck before a drop can be knocked loose by it.
2. `pool_drop` with a `limit`: at most that many dropped cubes get past the entry.
"""
from __future__ import annotations

import random

import pytest

from dsl.primitives import cascade_drop, pool_drop
from dsl.runtime import Ctx, RuleError


class _Hooks:
    """Chance straight from a seeded generator (what the engine does without forced outcomes)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rng.below = lambda n: self.rng.randrange(n)  # the engine generator's interface

    def chance(self, c, kind, draw, forced_apply=None, **info):
        return draw(self.rng)


def _ctx(seed: int = 0) -> Ctx:
    return Ctx({"globals": {}, "ent": {}}, None, _Hooks(seed))


# ---- 1. cascade_drop ----

def test_a_cube_stuck_in_this_drop_is_not_knocked_loose_by_it() -> None:
    c = _ctx(1)
    ledges: list = [{}, {}]
    # every passing cube knocks every dislodgeable cube loose: before the fix the cubes that had
    # just stuck on the first ledge were all knocked on at once
    cascade_drop(c, ledges, {"a": 40}, 0.5, 1.0)
    first = sum(ledges[0].values())
    assert first > 0, "with 40 cubes and a pass chance of 1/2, some stick on the first ledge"
    cascade_drop(c, ledges, {"b": 40}, 0.5, 1.0)
    assert ledges[0].get("a", 0) == 0, "cubes stuck before this drop are knocked loose by it"
    assert sum(ledges[0].values()) > 0, "the cubes that stuck in this drop stay"


def test_cascade_drop_keeps_every_cube() -> None:
    c = _ctx(2)
    ledges: list = [{}, {}]
    total = 0
    for i in range(50):
        cubes = {"a": i % 7, "b": 3}
        total += sum(cubes.values())
        out = cascade_drop(c, ledges, cubes, 0.85, 0.025)
        total -= sum(out.values())
        assert sum(sum(lv.values()) for lv in ledges) == total


# ---- 2. pool_drop with a limit ----

def test_pool_drop_limit_lets_at_most_that_many_dropped_cubes_past_the_entry() -> None:
    c = _ctx(3)
    pool: list = [{}]
    out = pool_drop(c, pool, {"a": 20, "b": 18}, 1.0, 0.0, 10)
    assert sum(out.values()) == 10 and sum(pool[0].values()) == 28
    out = pool_drop(c, pool, {"a": 4}, 1.0, 0.0, 10)      # under the limit: as without one
    assert out == {"a": 4} and sum(pool[0].values()) == 28
    out = pool_drop(c, pool, {}, 1.0, 1.0, 10)            # jammed cubes come out like any inside
    assert sum(out.values()) == 28 and pool == [{}]


def test_pool_drop_without_a_limit_draws_as_before() -> None:
    a, b = [{"x": 5}], [{"x": 5}]
    assert pool_drop(_ctx(4), a, {"y": 9}, 0.6667, 0.3333) == pool_drop(_ctx(4), b, {"y": 9}, 0.6667, 0.3333, None)
    assert a == b


@pytest.mark.parametrize("bad", [-1, 2.5, "ten", True])
def test_pool_drop_rejects_a_bad_limit(bad) -> None:
    with pytest.raises(RuleError):
        pool_drop(_ctx(), [{}], {"a": 1}, 0.5, 0.5, bad)
