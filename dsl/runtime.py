# cython: nonecheck=True
"""What compiled rules run against: the evaluation context and the runtime errors.

A compiled expression or effect is a plain Python callable taking one `Ctx`. The context
gives it the game state (plain data), the frozen ruleset model, the local variables and
the step budget. Nothing else is reachable from rule code.
"""
from __future__ import annotations

import time
from operator import itemgetter
from typing import Any

from engine.base.diagnostics import Loc


class RuleError(Exception):
    """A rule failed while running (bad value, unknown entity, budget exhausted)."""

    code = "E001"

    def __init__(self, message: str, loc: Loc | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc or Loc()
        if code:
            self.code = code  # E003 a size cap, E004 a value that is not data

    def __str__(self) -> str:
        return f"{self.loc}: error[{self.code}]: {self.message}" if self.loc.line else self.message


class BudgetExceeded(RuleError):
    """A rule ran more steps than its budget: almost always an endless loop in a mod."""

    code = "E002"


class Stop(Exception):
    """`stop` inside an effect: leave the current effect at once."""


WORK_BUDGET = 1_000_000  # steps of work between two decisions (flow steps, rule steps, calls, items)
FREE_WALK = 64  # items an operator or built-in may walk, copy or make without a charge: the lists the games handle
MAX_STATE_ITEMS = 1_000_000  # values (list items, map entries) in one value copied into the state
# Lists and maps inside one another in such a value: a save or log line may nest 200 levels
# (engine/run/state.py MAX_JSON_DEPTH), and the state itself takes a few; games use under 10.
MAX_VALUE_DEPTH = 100
# Levels `copy_value` walks: past any save can hold (200) and any value a rule can store, and
# well within Python's stack.
MAX_COPY_DEPTH = 250


class Meter:
    """The work budget shared by everything the engine does between two decisions: flow steps,
    rule steps, calls of functions and `x => ...` functions, and built-ins priced by the size of
    what they handle. One meter per game, reset when a decision is taken.

    `seconds` adds a time cap (validation's `checks:` only: play must stay deterministic). It is
    looked at every few thousand steps: `limit` is the next step count at which to look."""

    __slots__ = ("deadline", "limit", "seconds", "total", "used", "where")

    def __init__(self, limit: int = WORK_BUDGET, seconds: float | None = None,
                 where: str = "without reaching a decision"):
        self.where = where
        self.total = limit
        self.used = 0
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds if seconds else None
        self.limit = limit if seconds is None else min(limit, _LOOK_EVERY)

    def over(self, loc: Loc | None = None) -> None:
        """Called when `used` passed `limit`: raise if the budget or the time is used up."""
        if self.used > self.total:
            raise BudgetExceeded(
                f"the rules did more than {self.total:,} steps of work {self.where}; they "
                "probably never end (a loop that does not finish, a procedure or step that runs itself)", loc)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded(f"the rules ran for more than {self.seconds:g} seconds; they probably never "
                                 "end, or do far too much work", loc)
        self.limit = min(self.total, self.used + _LOOK_EVERY)


_LOOK_EVERY = 2_000


class Ctx:
    """The evaluation context of one rule evaluation.

    `state` is the whole game state (plain data). `model` is the frozen, compiled
    ruleset (static attributes, board, procedures...). `vars` are the locals.
    `hooks` is the engine object that performs chance, logging and scheduling. `meter` is the
    work budget, shared with every other evaluation since the last decision when `hooks` is a
    game; otherwise a fresh one of `budget` steps.
    """

    __slots__ = ("depth", "ent", "g", "hooks", "meter", "model", "state", "vars")

    def __init__(self, state: dict, model: Any, hooks: Any, vars: dict | None = None,
                 budget: int = WORK_BUDGET, meter: Meter | None = None):
        self.state = state
        self.g = state["globals"]
        self.ent = state["ent"]
        self.model = model
        self.hooks = hooks
        self.vars = vars if vars is not None else {}
        self.meter = meter if meter is not None else Meter(budget)
        self.depth = 0

    def tick(self, loc: Loc | None = None) -> None:
        """Count one step (a loop iteration, a call); past the budget, end the rule."""
        m = self.meter
        m.used = used = m.used + 1  # (the count read once: compiled, a read is a lookup by name)
        if used > m.limit:
            m.over(loc)

    def charge(self, n: int) -> None:
        """Count the work of a built-in that handles `n` items."""
        m = self.meter
        m.used = used = m.used + n
        if used > m.limit:
            m.over()


if not __file__.endswith(".py"):  # the compiled engine: rule code reads their fields as members (runtime.pxd)
    fields_as_members(Meter)  # noqa: F821 - declared in dsl/cfields.pxd, for the compiled module only
    fields_as_members(Ctx)  # noqa: F821


def writable(c: Ctx, x: Any, what: str) -> None:
    """Constants are shared, not copied, when rules read them: refuse to change one in place."""
    if id(x) in c.model.frozen_ids:
        raise RuleError(f"{what} cannot change a constant; copy it into the state first "
                        "(assigning it to a state field copies it)")


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PLAIN = frozenset({str, int, bool, type(None)})  # scalars that need no check
_WHOLE = itemgetter(slice(None))  # x[:]: a copy of a list, a text itself


class GiveWay(Exception):
    """A plain form meets work it would have to charge (`weigh`): the checked form decides."""


def scalars(items: Any) -> bool:
    """Whether every item is a scalar that needs no check (`_PLAIN`): a list of them is copied
    as it is. A loop, not `_PLAIN.issuperset(map(type, items))`, which makes an iterator and
    calls `type` for each item: for the short lists a game copies the loop costs less from the
    source too, and compiled it asks each item's type in C (3% of a compiled Shogun game,
    docs/performance.md, session 21). The items of many rows at once (`store_value`) are the
    exception: there, map's loop in C costs less from the source."""
    for x in items:
        t = type(x)  # (`_PLAIN`'s four types by identity: compiled, four C comparisons, not a set lookup)
        if t is not str and t is not int and t is not bool and x is not None:
            return False
    return True


def _row_width(v: list) -> int:
    """The length of the longest item of `v` if every item is a row (a list of `_PLAIN`
    scalars, or a text), else -1. Compiled, a loop in C: each row's type by identity and its
    items by `scalars` (the sets and iterators of `map` cost a third of a Samurai Swords
    choice's copy of its pairs, docs/performance.md, session 30)."""
    w = 0
    for row in v:
        t = type(row)
        if t is list:
            if not scalars(row):
                return -1
        elif t is not str:
            return -1
        n = len(row)
        if n > w:
            w = n
    return w


def weigh(c: Ctx | None, v: Any) -> int:
    """Charge the work of walking the whole of `v`, a list or a map (comparing it with another,
    looking for it in a list): one step per item of every list and map inside it, a list held
    in many places counted in each, past the first FREE_WALK. Charged as it walks, so a value
    that holds one list a million times stops at the budget, not after the walk. With `c`
    None (a plain form, which charges nothing), GiveWay past FREE_WALK. Lists of plain scalars
    are checked at C speed; a step a bytecode is for the rest. Returns the items walked."""
    todo, total, charged = [v], 0, 0
    while todo:
        x = todo.pop()
        total += len(x)
        if total > FREE_WALK:
            if c is None:
                raise GiveWay
            c.charge(total - charged)
            charged = total
        items = x.values() if isinstance(x, dict) else x
        if not scalars(items):
            todo.extend(i for i in items if isinstance(i, (list, dict)))
    return total


def compared(c: Ctx, x: Any, times: int) -> None:
    """`x` is about to be compared `times` times (looked for in a list, sorted among others): a
    list or a map is walked up to its whole each time, which is work for the budget past
    FREE_WALK items in all."""
    if times > 0 and isinstance(x, (list, dict)):
        w = weigh(c, x)
        if w * times > FREE_WALK:
            c.charge(w * times - (w if w > FREE_WALK else 0))


def finite(v: Any, what: str = "the game state") -> Any:
    """`v`, unless it is NaN or an infinity, which saves and logs cannot hold (E003): what
    `store_value` keeps, and a number computed into the state in place (`+=`, `add_count`)."""
    if type(v) is float and v - v != 0:
        raise RuleError(f"the number {v} cannot be kept in {what}", code="E003")
    return v


def store_value(v: Any, c: Ctx | None = None, what: str = "the game state", rows: bool = True) -> Any:
    """A copy of a value a rule puts into the state: plain data only (no function), at most
    MAX_STATE_ITEMS values in all, counting every shared list once per place it appears (a list
    holding the same big list twice becomes two copies in the state), and nested at most
    MAX_VALUE_DEPTH levels deep (so that a save or log line holding it can be read back). With
    `c`, the copy is work for the budget: one step per value copied, past FREE_WALK.
    Without `rows`, a list of rows (lists of plain scalars, and texts) is checked and charged
    as its copy is, but holds the rows themselves: for a choice's options that a bot answers
    at once, of which the flow copies only the one taken (engine/run/direct.py `_Choose`)."""
    t = type(v)
    if t in _PLAIN:  # the common cases first, without the walk below: a plain scalar,
        return v
    if t is list:
        if (n := len(v)) <= MAX_STATE_ITEMS and scalars(v):
            if n > FREE_WALK and c is not None:
                c.charge(n)
            return v[:]  # a list of ids or numbers
        if len(v) <= 1_000:  # a list of such lists (pairs, rows): at most 1,000 * 999 + 1,000 values in all
            # Rows of plain scalars and texts (a choice's pairs and its 'done') are checked and
            # copied without a bytecode per item: the loop below cost 5% of a game that offers
            # pairs at most of its decisions. (A text's characters are walked as its items:
            # texts of under 1,000 only.)
            if 0 <= (w := _row_width(v)) < 1_000:
                if (n := n * (w + 1)) > FREE_WALK and c is not None:  # (at most: each row and its items)
                    c.charge(n)
                return list(map(_WHOLE, v)) if rows else v[:]
            out = []
            for x in v:
                tx = type(x)
                if tx in _PLAIN:
                    out.append(x)
                elif tx is list and len(x) < 1_000 and scalars(x):
                    out.append(x[:])
                else:
                    break
            else:
                if c is not None:
                    _charge_copy(c, len(out) + sum(len(x) for x in out if type(x) is list))
                return out
    if t is float:  # an infinity or NaN is refused: saves and logs hold numbers only
        return finite(v, what)
    if t is dict and (n := len(v)) <= MAX_STATE_ITEMS and scalars(v.values()):
        # a map of plain scalars (the tower's tray, counts by player): what the walk below
        # gives and charges, without making its closure (two thirds of the time of a copy)
        if n > FREE_WALK and c is not None:
            c.charge(n)
        return dict(v)
    budget = [MAX_STATE_ITEMS]

    def copy(x: Any, depth: int) -> Any:
        t = type(x)
        if t in _SCALARS:
            return finite(x, what) if t is float else x
        if isinstance(x, (list, dict)):
            budget[0] -= len(x)
            if budget[0] < 0:
                raise RuleError(f"this value is too large to keep in {what} (more than {MAX_STATE_ITEMS:,} "
                                "items in all)", code="E003")
            if depth > MAX_VALUE_DEPTH:
                raise RuleError(f"this value is nested too deeply to keep in {what} (lists or maps more than "
                                f"{MAX_VALUE_DEPTH} levels inside one another)", code="E003")
            if isinstance(x, list):  # plain scalars as they are, without a call each
                if scalars(x):
                    return list(x)
                return [i if type(i) in _PLAIN else copy(i, depth + 1) for i in x]
            if scalars(x.values()):
                return dict(x)
            return {k: (i if type(i) in _PLAIN else copy(i, depth + 1)) for k, i in x.items()}
        if callable(x):
            raise RuleError(f"a function cannot be kept in {what}: only data (numbers, text, true/false, "
                            "none, lists and maps) can be stored", code="E004")
        raise RuleError(f"a value of type {t.__name__} cannot be kept in {what}", code="E004")
    kept = copy(v, 1)
    if c is not None:
        _charge_copy(c, MAX_STATE_ITEMS - budget[0])
    return kept


def _charge_copy(c: Ctx, n: int) -> None:
    if n > FREE_WALK:
        c.charge(n)


def data_size(v: Any) -> int:
    """How many values plain data holds (1 for a scalar), counting nested items. (Given only
    values `store_value` made, so at most MAX_VALUE_DEPTH levels deep.)"""
    if isinstance(v, list):
        return 1 + sum(data_size(x) for x in v)
    if isinstance(v, dict):
        return 1 + sum(data_size(x) for x in v.values())
    return 1


def copy_value(v: Any, depth: int = 0) -> Any:
    """A deep copy of plain data (lists, dicts, scalars): state must never alias itself.
    Scalars are copied inline (no call per item): option lists and frames are copied often.
    The depth is counted, so that data nested past any a game holds is an error, not a Python
    stack overflow (which would crash the compiled build of the engine: see setup.py)."""
    t = type(v)
    if t is list:
        if depth > MAX_COPY_DEPTH:
            _too_deep_to_copy()
        return [x if type(x) in _SCALARS else copy_value(x, depth + 1) for x in v]
    if t is dict:
        if depth > MAX_COPY_DEPTH:
            _too_deep_to_copy()
        return {k: (x if type(x) in _SCALARS else copy_value(x, depth + 1)) for k, x in v.items()}
    # Values loaded from YAML (initial values, constants) are list/dict subclasses that carry
    # source locations: copy them too, as plain data, or every entity would share one list.
    if isinstance(v, list):
        return [copy_value(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {k: copy_value(x, depth + 1) for k, x in v.items()}
    return v


def _too_deep_to_copy() -> None:
    raise RuleError(f"this value is nested too deeply to copy (lists or maps more than {MAX_COPY_DEPTH} levels "
                    "inside one another)", code="E003")
