"""The whitelisted primitives rule code may call.

Each primitive is declared with `@primitive`, saying whether it is pure (usable in
conditions), an effect (changes the state) or chance (draws from the game's seeded
generator and is logged). The declarations are the single source for the compiler's
name checks and for the generated reference (docs/reference/primitives.md).

Every implementation takes the evaluation context first; rule authors never see it.
Values are plain data: numbers, strings (entity ids), booleans, none, lists, maps.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from math import comb
from typing import Any

from dsl.runtime import (
    _PLAIN,
    FREE_WALK,
    Ctx,
    RuleError,
    compared,
    copy_value,
    data_size,
    finite,
    scalars,
    store_value,
    writable,
)
from engine.base.record import FrozenRecord


class Primitive(FrozenRecord):
    FIELDS = ("name", "fn", "kind", "min_args", "max_args", "kwargs")
    name: str
    fn: Callable
    kind: str  # "pure" | "effect" | "chance"
    min_args: int
    max_args: int  # -1: any number
    kwargs: tuple[str, ...]

    def __init__(self, name: str, fn: Callable, kind: str, min_args: int, max_args: int,
                 kwargs: tuple[str, ...]) -> None:
        self.__dict__.update(name=name, fn=fn, kind=kind, min_args=min_args, max_args=max_args, kwargs=kwargs)

    @property
    def doc(self) -> str:
        """The function's docstring, cleaned (inspect is imported only when a doc is read)."""
        import inspect
        return inspect.getdoc(self.fn) or ""

    @property
    def signature(self) -> str:
        import inspect
        sig = inspect.signature(self.fn)
        params = list(sig.parameters.values())[1:]
        out = []
        for p in params:
            if p.kind is p.VAR_POSITIONAL:
                out.append(f"{p.name}...")
            elif p.default is not p.empty:
                shown = "none" if p.default is None else "(error if empty)" if p.default is _MISSING else p.default
                out.append(f"{p.name}={shown}")
            else:
                out.append(p.name)
        return f"{self.name}({', '.join(out)})"


PRIMITIVES: dict[str, Primitive] = {}
_VARARGS = 0x04  # a code object's flag: the function takes *args
MAX_TEXT = 1_000_000  # characters in a text, items in a list a built-in makes (as codegen.MAX_SEQUENCE)
MAX_RANGE = 100_000  # items of range() and repeat()


def primitive(kind: str = "pure", name: str | None = None):
    def register(fn: Callable) -> Callable:
        # The parameters after the context, read from the code object (inspect.signature gives
        # the same, but importing inspect is about 2% of a cold `daimyo validate`).
        code = fn.__code__
        n = code.co_argcount  # positional parameters, the context included
        names = code.co_varnames
        defaults = len(fn.__defaults__ or ())
        kwdefaults = fn.__kwdefaults__ or {}
        first_default = n - defaults  # the positional parameters from here on have defaults
        kw = tuple(names[i] for i in range(max(1, code.co_posonlyargcount, first_default), n)) + \
            tuple(p for p in names[n:n + code.co_kwonlyargcount] if p in kwdefaults)
        var = bool(code.co_flags & _VARARGS)
        pname = name or fn.__name__.rstrip("_")
        PRIMITIVES[pname] = Primitive(pname, fn, kind, max(0, first_default - 1), -1 if var else n - 1, kw)
        return fn
    return register


def _seq(x: Any, what: str, c: Ctx | None = None) -> list:
    """`x` as a list; with `c`, the work of handling its items is charged to the budget."""
    if isinstance(x, list):
        pass
    elif isinstance(x, dict):
        x = list(x)
    else:
        raise RuleError(f"{what} needs a list, got {describe(x)}")
    if c is not None:  # Ctx.charge, written out: this runs for most built-ins
        m = c.meter
        u = m.used + len(x)
        m.used = u
        if u > m.limit:
            m.over()
    return x


def describe(x: Any) -> str:
    if x is None:
        return "none"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, list):
        return f"a list of {len(x)}"
    if isinstance(x, dict):
        return f"a map of {len(x)}"
    if callable(x):  # never its memory address: the account must replay the same
        return "a function"
    text = str(x)
    if not isinstance(x, (int, float)) and len(text) > 80:  # an error message quotes, it does not dump
        text = text[:77] + "..."
    return f"`{text}`"


def _key(c: Ctx, key: Any, times: int) -> Callable[[Any], Any] | None:
    """What Python's min, max and sorted compare by: the items themselves (None) or `key`'s value,
    a list or a map of which is walked up to `times` times (`compared`)."""
    if key is None:
        return None
    if not callable(key):
        raise RuleError("key= needs a function such as `p => p.score`")
    m = c.meter

    def keyed(v: Any) -> Any:
        u = m.used + 1  # each call of an `x => ...` function is a step of work (Ctx.tick, written out)
        m.used = u
        if u > m.limit:
            m.over()
        k = key(c, v)
        if type(k) not in _PLAIN:
            compared(c, k, times)
        return k
    return keyed


def _items_compared(c: Ctx, xs: list, times: int) -> None:
    """Each item of `xs`, not all plain scalars, is about to be compared about `times` times
    (`compared`)."""
    for x in xs:
        compared(c, x, times)


def _where(c: Ctx, where: Any, what: str) -> Callable[[Ctx, Any], Any]:
    """The `where=` function, checked. Each call of it is a step of work (`_verdicts`)."""
    if not callable(where):
        raise RuleError(f"{what} where= needs a function such as `p => p.score > 0`")
    return where


def _verdicts(c: Ctx, xs: list, test: Callable[[Ctx, Any], Any]) -> Iterator[tuple[Any, Any]]:
    """Each item of `xs` with what `test` says of it, tested only when asked for (`any` stops at
    the first true), each test a step of work counted before it (Ctx.tick, written out: a
    wrapper around `test` would double the calls per item)."""
    m = c.meter
    for x in xs:
        u = m.used + 1
        m.used = u
        if u > m.limit:
            m.over()
        yield x, test(c, x)


# ---- collections (pure) ----

@primitive()
def len_(c: Ctx, xs: Any) -> int:
    """Number of items in a list or map, or characters in a string."""
    if isinstance(xs, (list, dict, str)):
        return len(xs)
    raise RuleError(f"len() needs a list, got {describe(xs)}")


@primitive()
def count(c: Ctx, xs: Any, where: Any = None) -> int:
    """Number of items in `xs`; with `where=x => cond`, only those for which cond holds."""
    xs = _seq(xs, "count()")
    if where is None:
        return len(xs)
    n = 0
    for _x, ok in _verdicts(c, xs, _where(c, where, "count()")):
        if ok:
            n += 1
    return n


@primitive()
def sum_(c: Ctx, xs: Any) -> Any:
    """Sum of a list of numbers (0 for an empty list)."""
    total = 0
    for x in _seq(xs, "sum()", c):
        total += x
    return total


def _extreme(c: Ctx, fn: Callable, args: tuple, key: Any, default: Any, name: str) -> Any:
    xs = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, dict)) else list(args)
    m = c.meter  # Ctx.charge, written out
    m.used = used = m.used + len(xs)
    if used > m.limit:
        m.over()
    if not xs:
        if default is _MISSING:
            raise RuleError(f"{name}() of an empty list; give default=...")
        return default
    if key is None and type(xs[0]) not in _PLAIN:
        # each item against the best so far, which starts as the first: if that is a scalar, a
        # list met later fails at once (Python orders no list against a scalar), unwalked
        _items_compared(c, xs, 1)
    return fn(xs, key=_key(c, key, 1))


_MISSING = object()


@primitive(name="min")
def min_(c: Ctx, *xs: Any, key: Any = None, default: Any = _MISSING) -> Any:
    """Smallest of a list (or of the arguments); `key=x => ...` compares by a value; `default=` for empty lists.
    Ties go to the earliest item."""
    return _extreme(c, min, xs, key, default, "min")


@primitive(name="max")
def max_(c: Ctx, *xs: Any, key: Any = None, default: Any = _MISSING) -> Any:
    """Largest of a list (or of the arguments); `key=x => ...` compares by a value; `default=` for empty lists.
    Ties go to the earliest item."""
    return _extreme(c, max, xs, key, default, "max")


@primitive()
def abs_(c: Ctx, x: Any) -> Any:
    """Absolute value."""
    return abs(x)


@primitive()
def range_(c: Ctx, a: int, b: Any = None) -> list:
    """`range(n)` is [0 .. n-1]; `range(a, b)` is [a .. b-1]. At most 100,000 items."""
    lo, hi = (0, a) if b is None else (a, b)
    if not isinstance(lo, int) or not isinstance(hi, int):
        raise RuleError("range() needs whole numbers")
    if hi - lo > MAX_RANGE:
        raise RuleError(f"range() of more than {MAX_RANGE:,} items")
    if hi > lo:  # Ctx.charge, written out
        m = c.meter
        u = m.used + (hi - lo)
        m.used = u
        if u > m.limit:
            m.over()
    return list(range(lo, hi))


@primitive()
def sorted_(c: Ctx, xs: Any, key: Any = None, reverse: bool = False) -> list:
    """The items sorted (stable), by `key=x => value` if given; `reverse=true` for descending."""
    xs = _seq(xs, "sorted()", c)
    times = len(xs).bit_length()  # comparisons: n log n, each item in about log n of them
    c.charge(times * len(xs))
    if key is None and not scalars(xs):
        _items_compared(c, xs, times)
    return sorted(xs, key=_key(c, key, times), reverse=bool(reverse))


@primitive()
def reversed_(c: Ctx, xs: Any) -> list:
    """The items in reverse order."""
    return list(reversed(_seq(xs, "reversed()", c)))


@primitive()
def any_(c: Ctx, xs: Any, where: Any = None) -> bool:
    """True if any item is true (or satisfies `where=x => cond`)."""
    xs = _seq(xs, "any()")
    if where is None:
        c.charge(len(xs))  # (each item looked at, as with a test)
        return any(xs)
    return any(ok for _x, ok in _verdicts(c, xs, _where(c, where, "any()")))


@primitive()
def all_(c: Ctx, xs: Any, where: Any = None) -> bool:
    """True if every item is true (or satisfies `where=x => cond`)."""
    xs = _seq(xs, "all()")
    if where is None:
        c.charge(len(xs))
        return all(xs)
    return all(ok for _x, ok in _verdicts(c, xs, _where(c, where, "all()")))


@primitive()
def filter_(c: Ctx, xs: Any, where: Any) -> list:
    """The items satisfying `where` (a function such as `p => p.owner == player`)."""
    test = _where(c, where, "filter()")
    return [x for x, ok in _verdicts(c, _seq(xs, "filter()"), test) if ok]


@primitive()
def first(c: Ctx, xs: Any, default: Any = None) -> Any:
    """The first item of a list, or `default` (none) when it is empty."""
    xs = _seq(xs, "first()")
    return xs[0] if xs else default


@primitive()
def last(c: Ctx, xs: Any, default: Any = None) -> Any:
    """The last item of a list, or `default` (none) when it is empty."""
    xs = _seq(xs, "last()")
    return xs[-1] if xs else default


@primitive()
def index(c: Ctx, xs: Any, x: Any) -> int:
    """Position (from 0) of `x` in the list; an error if absent."""
    xs = _seq(xs, "index()", c)
    if type(x) not in _PLAIN:
        compared(c, x, len(xs))
    try:
        return xs.index(x)
    except ValueError:
        raise RuleError(f"index(): {describe(x)} is not in the list") from None


@primitive()
def keys(c: Ctx, d: Any) -> list:
    """The keys of a map, in insertion order."""
    if not isinstance(d, dict):
        raise RuleError(f"keys() needs a map, got {describe(d)}")
    c.charge(len(d))
    return list(d)


@primitive()
def values(c: Ctx, d: Any) -> list:
    """The values of a map, in insertion order."""
    if not isinstance(d, dict):
        raise RuleError(f"values() needs a map, got {describe(d)}")
    c.charge(len(d))
    return list(d.values())


@primitive()
def get(c: Ctx, d: Any, k: Any, default: Any = None) -> Any:
    """`d[k]` for a map or list, or `default` when the key or position is absent."""
    if isinstance(d, dict):
        return d.get(k, default)
    if isinstance(d, list) and isinstance(k, int):
        return d[k] if -len(d) <= k < len(d) else default
    raise RuleError(f"get() needs a map or list, got {describe(d)}")


@primitive()
def tally(c: Ctx, xs: Any) -> dict:
    """A map from each distinct item to how often it occurs."""
    out: dict = {}
    for x in _seq(xs, "tally()", c):
        out[x] = out.get(x, 0) + 1
    return out


@primitive()
def unique(c: Ctx, xs: Any) -> list:
    """The items without repeats, first occurrence kept."""
    seen: list = []
    for x in _seq(xs, "unique()", c):
        c.charge(len(seen))  # each item is compared with those kept so far
        if type(x) not in _PLAIN:
            compared(c, x, len(seen))
        if x not in seen:
            seen.append(x)
    return seen


@primitive()
def repeat(c: Ctx, x: Any, n: int) -> list:
    """A list of `n` copies of `x` (at most 100,000)."""
    if not isinstance(n, int) or n > MAX_RANGE:
        raise RuleError(f"repeat() needs a whole number up to {MAX_RANGE:,}")
    one = store_value(x, c, "a list")
    c.charge(max(0, n) * data_size(one))
    return [copy_value(one) for _ in range(max(0, n))]


@primitive()
def clamp(c: Ctx, x: Any, lo: Any, hi: Any) -> Any:
    """`x` limited to the range lo..hi."""
    return max(lo, min(hi, x))


@primitive()
def str_(c: Ctx, x: Any) -> str:
    """The value as text."""
    return describe(x).strip("`") if not isinstance(x, str) else x


@primitive()
def join(c: Ctx, xs: Any, sep: Any = ", ") -> str:
    """The items as one text, separated by `sep` (default ", "): `join(names)` is "Aki, Bingo"."""
    sep = sep if isinstance(sep, str) else describe(sep).strip("`")
    parts = [x if isinstance(x, str) else describe(x).strip("`") for x in _seq(xs, "join()", c)]
    n = sum(map(len, parts)) + len(sep) * len(parts)
    if n > MAX_TEXT:
        raise RuleError(f"join() would make a text of more than {MAX_TEXT:,} characters", code="E003")
    if n > FREE_WALK:  # the characters copied
        c.charge(n)
    return sep.join(parts)


@primitive()
def int_(c: Ctx, x: Any) -> int:
    """The value as a whole number (rounded down)."""
    try:
        return int(x)
    except (TypeError, ValueError):
        raise RuleError(f"int() cannot convert {describe(x)}") from None


@primitive()
def ceil_div(c: Ctx, a: int, b: int) -> int:
    """`a / b` rounded up."""
    if not b:
        raise RuleError("ceil_div() by zero")
    return -(-a // b)


# ---- players (pure) ----

@primitive()
def next_player(c: Ctx, p: Any, n: int = 1) -> str:
    """The player `n` seats after `p` in seat order (wrapping around)."""
    players = c.state["players"]
    try:
        i = players.index(p)
    except ValueError:
        raise RuleError(f"next_player(): {describe(p)} is not a player") from None
    return players[(i + n) % len(players)]


@primitive()
def controller(c: Ctx, p: Any) -> str:
    """The player at the table who plays `p`: `p` itself, unless the manifest gives each player
    several hands at this player count (`players: {hands: {2: 2}}`); then P1 plays P1, P3, ..."""
    if p not in c.state["players"]:
        raise RuleError(f"controller(): {describe(p)} is not a player")
    seats = c.state.get("seats")
    return seats[p] if seats else p


@primitive()
def seat(c: Ctx, p: Any) -> int:
    """The seat number of a player, from 1."""
    try:
        return c.state["players"].index(p) + 1
    except ValueError:
        raise RuleError(f"seat(): {describe(p)} is not a player") from None


# ---- board (pure) ----

@primitive()
def neighbors(c: Ctx, space: Any, kind: Any = None) -> list:
    """Spaces linked to `space` (by any link kind, or only by `kind`), sorted by id."""
    board = c.model.board
    if board is None:
        raise RuleError("this ruleset has no board")
    if kind is None:
        got = board.neighbors.get(space)
    else:
        got = board.neighbors_by_kind.get(kind, {}).get(space, ())
    if got is None:
        raise RuleError(f"neighbors(): {describe(space)} is not a space of the board")
    return list(got)


@primitive()
def adjacent(c: Ctx, a: Any, b: Any, kind: Any = None) -> bool:
    """True if spaces `a` and `b` are linked (by any link kind, or by `kind`)."""
    board = c.model.board
    if board is None:
        raise RuleError("this ruleset has no board")
    return board.adjacent(a, b, kind)


@primitive()
def spaces_in(c: Ctx, region: Any) -> list:
    """The spaces of a region, sorted by id."""
    board = c.model.board
    if board is None or region not in board.regions:
        raise RuleError(f"spaces_in(): {describe(region)} is not a region")
    return list(board.regions[region])


@primitive()
def board_set(c: Ctx, name: Any) -> list:
    """The spaces of a named set declared in the board's `sets`, sorted by id."""
    board = c.model.board
    if board is None or name not in board.sets:
        raise RuleError(f"board_set(): no set named {describe(name)}")
    return sorted(board.sets[name])


# ---- effects on lists and maps ----

@primitive("effect")
def push(c: Ctx, xs: Any, *items: Any) -> None:
    """Append items to the end of a list held in the state."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "push()")
    if not isinstance(xs, list):
        raise RuleError(f"push() needs a list, got {describe(xs)}")
    if len(xs) + len(items) > MAX_TEXT:
        raise RuleError(f"push() would make a list of more than {MAX_TEXT:,} items", code="E003")
    for i in items:  # each a copy (a plain scalar is its own), appended once all before it are copied
        xs.append(i if type(i) in _PLAIN else store_value(i, c))


@primitive("effect")
def insert(c: Ctx, xs: Any, i: int, item: Any) -> None:
    """Insert `item` at position `i` of a list held in the state."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "insert()")
    if not isinstance(xs, list):
        raise RuleError(f"insert() needs a list, got {describe(xs)}")
    if len(xs) >= MAX_TEXT:
        raise RuleError(f"insert() would make a list of more than {MAX_TEXT:,} items", code="E003")
    c.charge(len(xs))  # the items after it move up
    xs.insert(i, store_value(item, c))


@primitive("effect")
def remove(c: Ctx, xs: Any, item: Any) -> None:
    """Remove the first occurrence of `item` from a list (or the key from a map); an error if absent."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "remove()")
    if isinstance(xs, list):
        c.charge(len(xs))  # a walk to the item, and the items after it move down
        if type(item) not in _PLAIN:
            compared(c, item, len(xs))
        try:
            xs.remove(item)
            return
        except ValueError:
            raise RuleError(f"remove(): {describe(item)} is not in the list") from None
    if isinstance(xs, dict):
        if item not in xs:
            raise RuleError(f"remove(): {describe(item)} is not a key of the map")
        del xs[item]
        return
    raise RuleError(f"remove() needs a list or map, got {describe(xs)}")


@primitive("effect")
def discard(c: Ctx, xs: Any, item: Any) -> bool:
    """Remove `item` from a list or map if it is there; true if something was removed."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "discard()")
    if isinstance(xs, list):
        c.charge(len(xs))  # (as remove)
        if type(item) not in _PLAIN:
            compared(c, item, len(xs))
        if item in xs:
            xs.remove(item)
            return True
    elif isinstance(xs, dict) and item in xs:
        del xs[item]
        return True
    return False


@primitive("effect")
def pop(c: Ctx, xs: Any, i: int = -1) -> Any:
    """Remove and return the item at position `i` (default: the last) of a list."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "pop()")
    if not isinstance(xs, list) or not xs:
        raise RuleError(f"pop() needs a non-empty list, got {describe(xs)}")
    if i != -1:
        c.charge(len(xs))  # the items after it move down
    return xs.pop(i)


@primitive("effect")
def take(c: Ctx, xs: Any, n: int = 1) -> list:
    """Remove and return the first `n` items of a list (fewer if it is shorter)."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "take()")
    if not isinstance(xs, list):
        raise RuleError(f"take() needs a list, got {describe(xs)}")
    c.charge(len(xs))  # the items taken, and the rest moving up
    got = xs[:n]
    del xs[:n]
    return got


@primitive("effect")
def clear(c: Ctx, xs: Any) -> None:
    """Empty a list or map held in the state."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "clear()")
    if not isinstance(xs, (list, dict)):
        raise RuleError(f"clear() needs a list or map, got {describe(xs)}")
    xs.clear()


@primitive("effect")
def add_count(c: Ctx, d: Any, key: Any, n: int = 1) -> None:
    """Add `n` to `d[key]` of a map of counts (missing keys count 0; a key reaching 0 is removed)."""
    if id(d) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, d, "add_count()")
    if not isinstance(d, dict):
        raise RuleError(f"add_count() needs a map, got {describe(d)}")
    v = d.get(key, 0) + n
    if type(v) is float:  # (whole numbers, the common case, need no check)
        finite(v, "a map of counts")
    if v < 0:
        raise RuleError(f"add_count(): {describe(key)} would go below zero ({v})")
    if v:
        d[key] = v
    else:
        d.pop(key, None)


# ---- chance: drawn from the game's seeded generator, every outcome logged ----

@primitive("chance")
def roll(c: Ctx, sides: int) -> int:
    """A fair die with `sides` faces: a number from 1 to `sides`."""
    if not isinstance(sides, int) or sides < 1:
        raise RuleError("roll() needs a positive whole number of sides")
    return c.hooks.chance(c, "roll", lambda rng: rng.below(sides) + 1)


@primitive("chance")
def shuffle(c: Ctx, xs: Any) -> None:
    """Shuffle a list held in the state, in place."""
    if id(xs) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, xs, "shuffle()")
    if not isinstance(xs, list):
        raise RuleError(f"shuffle() needs a list, got {describe(xs)}")
    c.charge(len(xs))  # a draw per item

    def draw(rng: Any) -> list:
        out = list(xs)
        for i in range(len(out) - 1, 0, -1):
            j = rng.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out
    xs[:] = c.hooks.chance(c, "shuffle", draw)


@primitive("chance")
def pick(c: Ctx, xs: Any) -> Any:
    """One item of a list chosen at random (each equally likely)."""
    xs = _seq(xs, "pick()")
    if not xs:
        raise RuleError("pick() from an empty list")
    return c.hooks.chance(c, "pick", lambda rng: xs[rng.below(len(xs))])


@primitive("chance")
def chance_of(c: Ctx, p: Any) -> bool:
    """True with probability `p` (a number from 0 to 1)."""
    return c.hooks.chance(c, "chance", lambda rng: rng.random() < p)


@primitive("chance")
def cascade_drop(c: Ctx, container: Any, cubes: Any, pass_p: Any, dislodge_p: Any) -> dict:
    """Drop `cubes` (a map colour -> count) into a stochastic container with ledges and return
    what falls out (a map colour -> count).

    `container` is a list of ledges held in the state, each a map colour -> count of cubes stuck
    there. Each falling cube passes a ledge with probability `pass_p`, else it sticks on it;
    each cube that passes a ledge knocks each cube that was stuck there BEFORE this drop loose
    with probability `dislodge_p` (a cube that sticks during this drop stays put until the next
    one), and a loosened cube falls on to the next ledge. Cubes stay inside between drops: this
    is a container with memory.

    The cubes are independent, so the draw takes one binomial count per colour and ledge
    instead of one random number per cube: the same distribution (tests/test_tower.py checks it
    against the cube-by-cube model), with less work.
    """
    if not isinstance(container, list) or not all(isinstance(lv, dict) for lv in container):
        raise RuleError("cascade_drop() needs a list of ledges (maps colour -> count)")

    def draw(rng: Any) -> dict:
        falling = dict(cubes)
        for ledge in container:
            before = dict(ledge)  # only these can be knocked loose in this drop
            passed: dict = {}
            for colour in sorted(falling):
                n = falling[colour]
                k = _binomial(c, rng, n, pass_p)
                if k:
                    passed[colour] = k
                if n - k:
                    ledge[colour] = ledge.get(colour, 0) + n - k
            loosened: dict = {}
            n_passed = sum(passed.values())
            if n_passed and dislodge_p > 0:
                loose_p = 1.0 - (1.0 - dislodge_p) ** n_passed  # knocked by at least one passing cube
                for colour in sorted(before):
                    k = _binomial(c, rng, before[colour], loose_p)
                    if k:
                        loosened[colour] = k
                for colour, n in loosened.items():
                    ledge[colour] -= n
                    if not ledge[colour]:
                        del ledge[colour]
            for colour, n in loosened.items():
                passed[colour] = passed.get(colour, 0) + n
            falling = passed
        return {k: v for k, v in sorted(falling.items()) if v}
    return c.hooks.chance(c, "drop", draw, forced_apply=lambda out: _force_drop(container, cubes, out))


@primitive("chance")
def pool_drop(c: Ctx, container: Any, cubes: Any, fresh_p: Any, stuck_p: Any, limit: Any = None) -> dict:
    """Drop `cubes` (colour -> count) into a one-pool stochastic container and return what falls out.

    `container` is a list with one map colour -> count (the cubes inside). Each cube already
    inside falls out with probability `stuck_p`; each new cube falls straight through with
    probability `fresh_p`, else it stays inside. With a `limit` (a whole number), at most that
    many of the new cubes get past the entry in one drop: when more are dropped, a random
    `limit` of them go on as above and the others jam inside (they can come out from the next
    drop on, like any cube inside). Without a limit every new cube goes on.

    Drawn as counts per colour (binomial; hypergeometric for which cubes get past the entry),
    the same distribution as cube by cube (tests/test_tower.py), with less work.
    """
    if not isinstance(container, list) or len(container) != 1 or not isinstance(container[0], dict):
        raise RuleError("pool_drop() needs a list holding one map colour -> count")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise RuleError(f"pool_drop() needs a whole number of 0 or more as `limit`, got {describe(limit)}")

    drop = _PoolDraw(c, container, cubes, fresh_p, stuck_p, limit)
    return c.hooks.chance(c, "drop", drop, drop.forced)


class _PoolDraw:
    """`pool_drop`'s draw (called with the generator) and its forced outcome (`forced`), as one
    object, which the compiled engine makes a C type (primitives.pxd): two closures and the cell
    they shared were made and freed at every drop (docs/performance.md, session 31)."""

    __slots__ = ("c", "container", "cubes", "fresh_p", "limit", "stuck_p")

    def __init__(self, c: Ctx, container: list, cubes: Any, fresh_p: Any, stuck_p: Any, limit: Any) -> None:
        self.c, self.container, self.cubes = c, container, cubes
        self.fresh_p, self.stuck_p, self.limit = fresh_p, stuck_p, limit

    def __call__(self, rng: Any) -> dict:
        c, cubes, fresh_p, stuck_p, limit = self.c, self.cubes, self.fresh_p, self.stuck_p, self.limit
        pool = self.container[0]
        out: dict = {}
        for colour in sorted(pool):
            n = _binomial(c, rng, pool[colour], stuck_p)
            if n:
                out[colour] = n
        for colour, n in out.items():
            rest = pool[colour] - n
            if rest:
                pool[colour] = rest
            else:
                del pool[colour]
        thrown: dict = {}
        left = 0
        for colour in sorted(cubes):
            n = cubes[colour]
            if n > 0:
                thrown[colour] = n
                left += n
        room = left
        if limit is not None and left > limit:
            room = limit
        for colour, n in thrown.items():
            past = _hypergeometric(c, rng, left, n, room)  # of the `room` that get past, how many are `colour`
            left, room = left - n, room - past
            through = _binomial(c, rng, past, fresh_p)
            if through:
                out[colour] = out.get(colour, 0) + through
            if n - through:
                pool[colour] = pool.get(colour, 0) + n - through  # stayed, or jammed at the entry
        return {k: v for k, v in sorted(out.items()) if v}

    def forced(self, out: dict) -> dict:
        return _force_drop(self.container, self.cubes, out)


def _binomial(c: Ctx, rng: Any, n: int, p: float) -> int:
    """How many of `n` independent trials of probability `p` succeed, from one uniform number:
    the cumulative distribution is walked up to it (inversion). A trial here is what
    `rng.random() < p` decides for one cube. The walk takes up to `n` steps: past a handful,
    they are charged to the budget (a drop of 10**12 cubes would walk for days)."""
    if type(n) is int and type(p) is float and 0 < n <= 32 and 0.0 < p < 1.0:
        # The common case (a handful of cubes), the same steps on numbers the compiled engine
        # holds as C doubles (`pd`, `nd`: primitives.pxd), whose `-`, `/` and power are Python's.
        pd, nd = p, n
        q = 1.0 - pd
        pk = q ** nd
        if pk >= 1e-300:
            return _binomial_walk(rng.random(), pk, nd, pd / q)
    if n <= 0 or p <= 0:
        return 0
    if p >= 1:
        return n
    if n > 32:
        c.charge(n)  # past the work budget this raises: below, `n` is a whole number as a float
    q = 1.0 - p
    pk = q ** float(n)  # P(0 successes): as `q ** n` (a float holds `n` exactly), a C double compiled
    if pk < 1e-300:  # so many trials that the walk would underflow: count them one by one
        k = 0
        for _ in range(n):
            if rng.random() < p:
                k += 1
        return k
    return _binomial_walk(rng.random(), pk, n, p / q)


def _binomial_walk(u: float, pk: float, n: float, ratio: float) -> int:
    """`_binomial`'s walk up the cumulative distribution from P(0) = `pk` until it passes `u`.
    The compiled engine runs it on C doubles (primitives.pxd): `n` is under the work budget, so
    a float holds it exactly, and every quotient is the one Python's division of the same whole
    numbers rounds to."""
    k, cum = 0, pk
    while u >= cum and k < n:
        pk *= (n - k) / (k + 1) * ratio
        k += 1
        cum += pk
    return k


_EXACT_TOTAL = 10_000  # items of a hypergeometric draw walked by inversion (a tower holds tens of cubes)


def _hypergeometric(c: Ctx, rng: Any, total: int, good: int, draws: int) -> int:
    """How many of `draws` items taken at random without replacement from `total`, of which
    `good` are marked, are marked (inversion, one uniform number; none when it is certain).
    Charged as `_binomial` is: its work grows with `total`."""
    bad = total - good
    lo, hi = max(0, draws - bad), min(good, draws)
    if lo >= hi:
        return lo
    if total > 32:
        c.charge(total)
    # Past a few thousand, the exact first term takes seconds of whole-number arithmetic and
    # may be too small for a float (the walk would then give `hi` every time): draw the items
    # one by one instead, as `_binomial` counts its trials when its first term underflows.
    pk = comb(good, lo) * comb(bad, draws - lo) / comb(total, draws) if total <= _EXACT_TOTAL else 0.0
    if pk < 1e-300:
        k = 0
        for _ in range(draws):
            if rng.random() * total < good:
                k += 1
                good -= 1
            total -= 1
        return k
    return _hypergeometric_walk(rng.random(), pk, lo, hi, good, draws, bad)


def _hypergeometric_walk(u: float, pk: float, k: int, hi: int, good: int, draws: int, bad: int) -> int:
    """`_hypergeometric`'s walk from P(`k` = lo) = `pk` until it passes `u` (at most `hi`). The
    compiled engine runs it on C numbers (primitives.pxd): every count is at most
    `_EXACT_TOTAL`, so the products are exact and each quotient the one Python rounds to."""
    cum = pk
    while u >= cum and k < hi:
        pk *= (good - k) * (draws - k) / ((k + 1) * (bad - draws + k + 1))
        k += 1
        cum += pk
    return k


def _force_drop(container: list, cubes: dict, out: dict) -> dict:
    """Make a container consistent with a forced outcome: `out` falls out of everything that
    was inside plus what was dropped; the rest settles on the first ledge."""
    inside: dict = dict(cubes)
    for ledge in container:
        for k, v in ledge.items():
            inside[k] = inside.get(k, 0) + v
        ledge.clear()
    for k, v in out.items():
        if inside.get(k, 0) < v:
            raise RuleError(f"forced drop: {v} `{k}` cannot fall out; only {inside.get(k, 0)} are in play")
        inside[k] -= v
    container[0].update({k: v for k, v in inside.items() if v})
    return {k: v for k, v in sorted(out.items()) if v}


# ---- flow and messages ----

@primitive("effect")
def say(c: Ctx, *parts: Any) -> None:
    """Add a line to the game's readable account (the log and `daimyo play` output)."""
    text = " ".join(p if isinstance(p, str) else describe(p).strip("`") for p in parts)
    if len(text) > MAX_TEXT:
        raise RuleError(f"say() of a text of more than {MAX_TEXT:,} characters", code="E003")
    if len(text) > FREE_WALK:  # a line kept in the account: a loop of long ones would fill the memory
        c.charge(len(text))
    c.hooks.say(c, text)


@primitive("effect")
def end_game(c: Ctx) -> None:
    """End the game now: the flow stops and the result is scored."""
    c.hooks.end_game(c)
