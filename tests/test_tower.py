"""The battle tower: the generic stochastic containers and the Shogun tower models.

1. `cascade_drop`: only cubes stuck before a drop can be knocked loose by it.
2. `pool_drop` with a `limit`: at most that many dropped cubes get past the entry.
3. The default Shogun tower (`tower=funnel`) against the published figures
   (shared reference, queen-shogun.md section 8, and the Tenno's Court set-up example):
   - the initial load of 38 cubes (4 players) lets about 7 fall out;
   - in a small throw about 2/3 of the freshly thrown cubes come out;
   - about 1/3 of the cubes stuck inside come out per throw.
   Samples use seeds far apart, so that no two games share a stretch of the random stream.
"""
from __future__ import annotations

import random
from functools import cache
from statistics import mean

import pytest

from dsl.primitives import cascade_drop, pool_drop
from dsl.runtime import Ctx, RuleError
from engine import Game, load


class _Hooks:
    """Chance straight from a seeded generator (what the engine does without forced outcomes)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rng.below = lambda n: self.rng.randrange(n)  # the engine generator's interface

    def chance(self, c, kind, draw, forced_apply=None):
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
# ---- 3. the default tower model against the published figures ----

@cache
def _model(players: int, tower: str | None = None):
    opts = {"setup": "fixed"}
    if tower:
        opts["tower"] = tower
    return load("shogun", opts, players=players)


def _initial_load_out(players: int, seed: int, tower: str | None = None) -> int:
    """Cubes out of the first load: the game is played up to its first decision (planning)."""
    m = _model(players, tower)
    game = Game.new(m, players, seed=seed, log=False)
    thrown = players * m.symbols.constants["tower_load_armies"] + m.symbols.constants["tower_load_farmers"]
    inside = sum(sum(lv.values()) for lv in game.state["globals"]["tower"])
    return thrown - inside


def test_the_default_tower_is_the_funnel_model() -> None:
    assert _model(4).combo.options["tower"] == "funnel"


def test_initial_load_fits_the_tennos_court_example() -> None:
    """Tenno's Court, set-up: of 38 cubes (4 players) 7 fall into the tray."""
    outs = [_initial_load_out(4, 1_000_003 * k) for k in range(300)]
    assert 6.0 <= mean(outs) <= 7.4, mean(outs)
    assert sum(5 <= o <= 9 for o in outs) / len(outs) > 0.75
    assert max(outs) <= 10          # no more than the funnel lets through


def test_the_old_default_keeps_few_of_the_initial_load_inside() -> None:
    """For contrast (why the default changed): two ledges let about 27 of 38 fall out."""
    outs = [_initial_load_out(4, 1_000_003 * k, "two_ledges") for k in range(60)]
    assert mean(outs) > 24 and min(outs) > 12


def _funnel_constants() -> tuple[float, float, int]:
    k = _model(4).symbols.constants
    return k["tower_fresh_out"], k["tower_stuck_out"], k["tower_funnel_limit"]


def test_small_throws_let_about_two_thirds_of_the_fresh_cubes_out() -> None:
    fresh, stuck, limit = _funnel_constants()
    c = _ctx(5)
    thrown = out = 0
    for _ in range(2000):
        pool: list = [{"old": 12}]     # a tower that holds cubes from earlier battles
        got = pool_drop(c, pool, {"new": 5}, fresh, stuck, limit)
        thrown += 5
        out += got.get("new", 0)
    assert abs(out / thrown - 2 / 3) < 0.02, out / thrown


def test_about_a_third_of_the_stuck_cubes_come_out_per_throw() -> None:
    fresh, stuck, limit = _funnel_constants()
    c = _ctx(6)
    inside = out = 0
    for _ in range(2000):
        pool: list = [{"old": 12}]
        got = pool_drop(c, pool, {"new": 4}, fresh, stuck, limit)
        inside += 12
        out += got.get("old", 0)
    assert abs(out / inside - 1 / 3) < 0.02, out / inside


# ---- 4. the counted draws have the distribution of the cube-by-cube model ----
# cascade_drop and pool_drop draw one binomial count per colour (and a hypergeometric one for
# the cubes that get past a funnel) instead of one random number per cube. The cube-by-cube
# models below are the literal reading of their docstrings, kept here as the reference: both
# are run on many seeded drops and their outcomes compared with a chi-square test.

def _reference_cascade(rng, container: list, cubes: dict, pass_p: float, dislodge_p: float) -> dict:
    falling = dict(cubes)
    for ledge in container:
        before = dict(ledge)
        passed: dict = {}
        for colour in sorted(falling):
            for _ in range(falling[colour]):
                if rng.random() < pass_p:
                    passed[colour] = passed.get(colour, 0) + 1
                else:
                    ledge[colour] = ledge.get(colour, 0) + 1
        loosened: dict = {}
        for colour in sorted(before):
            for _ in range(before[colour]):
                # each cube that passed knocks this one loose with probability dislodge_p
                if any(rng.random() < dislodge_p for _ in range(sum(passed.values()))):
                    loosened[colour] = loosened.get(colour, 0) + 1
        for colour, n in loosened.items():
            ledge[colour] -= n
            if not ledge[colour]:
                del ledge[colour]
            passed[colour] = passed.get(colour, 0) + n
        falling = passed
    return {k: v for k, v in sorted(falling.items()) if v}


def _reference_pool(rng, container: list, cubes: dict, fresh_p: float, stuck_p: float, limit=None) -> dict:
    pool = container[0]
    out: dict = {}
    for colour in sorted(pool):
        n = sum(1 for _ in range(pool[colour]) if rng.random() < stuck_p)
        if n:
            out[colour] = n
    for colour, n in out.items():
        pool[colour] -= n
        if not pool[colour]:
            del pool[colour]
    new = [colour for colour in sorted(cubes) for _ in range(cubes[colour])]
    jammed: list = []
    if limit is not None and len(new) > limit:
        rng.shuffle(new)  # a random `limit` of them get past the entry
        new, jammed = new[:limit], new[limit:]
    for colour in new:
        if rng.random() < fresh_p:
            out[colour] = out.get(colour, 0) + 1
        else:
            pool[colour] = pool.get(colour, 0) + 1
    for colour in jammed:
        pool[colour] = pool.get(colour, 0) + 1
    return {k: v for k, v in sorted(out.items()) if v}


def _outcome(out: dict, container: list) -> tuple:
    """What a drop decides: what fell out, and where every cube inside lies."""
    return (tuple(sorted(out.items())), tuple(tuple(sorted(lv.items())) for lv in container))


def _chi_square_same(a: list, b: list) -> tuple[float, float]:
    """Two-sample chi-square statistic over the outcomes (rare outcomes pooled, at least 10
    expected per cell), and the critical value at p = 0.0001 (Wilson-Hilferty approximation)."""
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    cells, rare_a, rare_b = [], 0, 0
    for key in sorted(set(ca) | set(cb)):
        if ca[key] + cb[key] >= 20:
            cells.append((ca[key], cb[key]))
        else:
            rare_a, rare_b = rare_a + ca[key], rare_b + cb[key]
    if rare_a + rare_b:
        cells.append((rare_a, rare_b))
    na, nb = len(a), len(b)
    stat = 0.0
    for x, y in cells:
        total = x + y
        ea, eb = total * na / (na + nb), total * nb / (na + nb)
        stat += (x - ea) ** 2 / ea + (y - eb) ** 2 / eb
    df = max(1, len(cells) - 1)
    z = 3.719  # p = 0.0001, one-sided
    crit = df * (1 - 2 / (9 * df) + z * (2 / (9 * df)) ** 0.5) ** 3
    return stat, crit


CASES = {
    # two ledges with cubes stuck from earlier drops (tower=two_ledges)
    "cascade": ("cascade", [{"a": 2, "b": 1}, {"c": 2}], {"a": 3, "b": 2, "c": 1}, 0.85, 0.3),
    "cascade, full tower": ("cascade", [{"a": 4}, {"b": 3, "c": 1}], {"a": 5, "d": 4}, 0.6, 0.5),
    # one pool (tower=one_pool) and the funnel (tower=funnel): 12 thrown, 10 get past
    "pool": ("pool", [{"a": 3, "b": 2}], {"a": 2, "c": 4}, 0.6667, 0.3333, None),
    "funnel": ("pool", [{"a": 2, "c": 1}], {"a": 5, "b": 4, "c": 3}, 0.6667, 0.3333, 10),
    "funnel, one colour past": ("pool", [{}], {"a": 6, "b": 1}, 0.5, 0.3333, 3),
}


class _Rng(random.Random):
    def below(self, n: int) -> int:
        return self.randrange(n)


@pytest.mark.parametrize("case", sorted(CASES))
def test_counted_draws_match_the_cube_by_cube_model(case: str) -> None:
    kind, container, cubes, *ps = CASES[case]
    fast_fn = cascade_drop if kind == "cascade" else pool_drop
    ref_fn = _reference_cascade if kind == "cascade" else _reference_pool
    n = 10_000
    rng_ref, fast, ref = _Rng(7), [], []
    for i in range(n):
        box = [dict(lv) for lv in container]
        fast.append(_outcome(fast_fn(_ctx(1_000_003 * i + 11), box, cubes, *ps), box))
        box = [dict(lv) for lv in container]
        ref.append(_outcome(ref_fn(rng_ref, box, cubes, *ps), box))
    stat, crit = _chi_square_same(fast, ref)
    assert stat < crit, f"{case}: chi-square {stat:.1f} over the critical {crit:.1f}"
    # and the test can tell distributions apart: a cube passing 5 points more often is caught
    ps_off = [ps[0] + 0.05, *ps[1:]]
    off = []
    for i in range(n):
        box = [dict(lv) for lv in container]
        off.append(_outcome(fast_fn(_ctx(1_000_003 * i + 11), box, cubes, *ps_off), box))
    assert _chi_square_same(off, ref)[0] > crit


class _Grid:
    """A 'generator' whose uniform numbers sweep [0, 1) evenly: the share of each result of a
    sampler fed by it is that result's probability, to within 1/steps."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


@pytest.mark.parametrize(("n", "p"), [(1, 0.3), (7, 0.6667), (38, 0.3333), (40, 0.85), (12, 0.999)])
def test_binomial_inversion_gives_the_binomial_probabilities(n: int, p: float) -> None:
    from math import comb

    from dsl.primitives import _binomial

    steps = 50_000
    counts = [0] * (n + 1)
    for i in range(steps):
        counts[_binomial(_ctx(), _Grid((i + 0.5) / steps), n, p)] += 1
    for k in range(n + 1):
        assert abs(counts[k] / steps - comb(n, k) * p**k * (1 - p) ** (n - k)) <= 2 / steps


@pytest.mark.parametrize(("total", "good", "draws"), [(20_000, 10_000, 5_000), (200_000, 100_000, 1_000)])
def test_a_hypergeometric_draw_of_many_items_is_drawn_one_by_one(total: int, good: int, draws: int) -> None:
    # By inversion, the first of these gave 5,000 every time (its first term underflowed), and
    # the second spent a third of a second in whole-number arithmetic on each draw.
    import random

    from dsl.primitives import _hypergeometric

    rng = random.Random(3)
    got = [_hypergeometric(_ctx(), rng, total, good, draws) for _ in range(40)]
    mean, spread = draws * good / total, (draws * 0.25 * (total - draws) / (total - 1)) ** 0.5
    assert abs(sum(got) / len(got) - mean) < spread and len(set(got)) > 5
    c = _ctx()
    _hypergeometric(c, rng, total, good, draws)
    assert c.meter.used == total  # (one step per item it may walk, as before)


@pytest.mark.parametrize(("total", "good", "draws"), [(12, 5, 10), (38, 9, 10), (7, 6, 3), (20, 1, 10)])
def test_hypergeometric_inversion_gives_the_hypergeometric_probabilities(total: int, good: int,
                                                                         draws: int) -> None:
    from math import comb

    from dsl.primitives import _hypergeometric

    steps = 50_000
    counts = [0] * (draws + 1)
    for i in range(steps):
        counts[_hypergeometric(_ctx(), _Grid((i + 0.5) / steps), total, good, draws)] += 1
    for k in range(draws + 1):
        exact = comb(good, k) * comb(total - good, draws - k) / comb(total, draws)
        assert abs(counts[k] / steps - exact) <= 2 / steps
