"""Python source for compiled rules, and the helpers that source may call.

The compiler (dsl/compiler.py) checks a rule text and writes it as one small Python
function. The function sees only what its namespace holds: the evaluation context `c`,
the helpers below, the whitelisted primitives and the constants the text names; Python's
builtins are not there, and every name in the source was written by the compiler (rule
names are prefixed `v_`, text is quoted with repr), so rule text cannot reach anything
else. One statement per line, with a table from line to rule location: a failure is
located from the traceback, so locating costs nothing while rules run.
"""
from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from typing import Any

from dsl.primitives import PRIMITIVES, _seq, describe
from dsl.rule import Rule
from dsl.runtime import _PLAIN, _SCALARS, FREE_WALK, Ctx, RuleError, compared, finite, store_value, weigh, writable
from engine.base.diagnostics import Loc

MAX_CALL_DEPTH = 200
MAX_SEQUENCE = 1_000_000  # items in a list or characters in a text built by `+`, `*`, join or a template
MAX_INT_BITS = 3_322  # about 1,000 decimal digits: numbers grown past it are an error, not a slow crawl
_UNIT_IDS = itertools.count(1)


# ---- helpers called by generated code ----

def _too_long() -> RuleError:
    return RuleError(f"this would make a list or text of more than {MAX_SEQUENCE:,} items", code="E003")


def _too_big() -> RuleError:
    return RuleError("this number is too large (more than 1,000 digits)", code="E003")


_INT_LIMIT = 1 << MAX_INT_BITS  # numbers of more bits than MAX_INT_BITS reach it
_NEG_LIMIT = -_INT_LIMIT


def _add(c: Ctx, x: Any, y: Any, bounded: bool = True) -> Any:
    # Doubling a list, a text or a number in a loop reaches any size in a few steps: bound it.
    # Not `bounded`: a step of a chain of sums, whose end bounds its number (compiler `_x_binop`).
    t = type(x)
    if t is int and type(y) is int:  # the common case, without the checks below
        r = x + y
        if not bounded or _NEG_LIMIT < r < _INT_LIMIT:
            return r
        raise _too_big()
    if (t is str or t is list) and type(y) is t:
        n = len(x) + len(y)
        if n > FREE_WALK:  # (`_made`, written out: most joins that come here are long)
            if n > MAX_SEQUENCE:
                raise _too_long()
            m = c.meter
            m.used += n
            if m.used > m.limit:
                m.over()
        return x + y
    r = x + y
    if bounded and type(r) is int and r.bit_length() > MAX_INT_BITS:
        raise _too_big()
    return r


def _made(c: Ctx, n: int) -> None:
    """A list or text of `n` items is about to be made: refused past MAX_SEQUENCE, and its items
    copied are work for the budget past FREE_WALK (the short ones the games join cost nothing)."""
    if n > MAX_SEQUENCE:
        raise _too_long()
    if n > FREE_WALK:
        c.charge(n)


def _sub(c: Ctx, x: Any, y: Any) -> Any:
    return _sub_result(x - y)


def _sub_result(r: Any) -> Any:
    """A difference the generated code computed inline (compiler `_arith`): out of bounds only
    if it is a whole number too large."""
    if type(r) is int and r.bit_length() > MAX_INT_BITS:
        raise _too_big()
    return r


def _mul(c: Ctx, x: Any, y: Any) -> Any:
    seq, n = (x, y) if isinstance(x, (str, list)) else (y, x)
    if isinstance(seq, (str, list)) and isinstance(n, int):
        _made(c, len(seq) * n)
    if type(x) is int and type(y) is int and x.bit_length() + y.bit_length() > MAX_INT_BITS + 1:
        raise _too_big()
    return x * y


def _mod(x: Any, y: Any) -> Any:
    """`x % y`: the remainder of numbers. (Python would format a text with it, walking whatever
    it is given: a rule writes a template "{a}" for that.)"""
    if isinstance(x, str):
        raise RuleError("`%` gives the remainder of two numbers; to put values into a text, write a "
                        'template such as "{a} of {b}"')
    return x % y


def _join(c: Ctx, parts: tuple) -> str:
    """A text template such as "{a}{b}": bounded and priced like `+`."""
    _made(c, sum(map(len, parts)))
    return "".join(parts)


def _in(c: Ctx, x: Any, seq: Any) -> bool:
    """`x in seq`: a long list is walked item by item, and a list or a map looked for is walked
    against each; a long text is searched character by character: work for the budget."""
    if type(seq) is list:
        if len(seq) > FREE_WALK:
            c.charge(len(seq))
        if type(x) in _SCALARS:  # (the common case: an id or a number looked for)
            return x in seq
        compared(c, x, len(seq))
    elif type(seq) is str and len(seq) > FREE_WALK:
        c.charge(len(seq))
    return x in seq


AUG_OPS = {"+": "_add", "-": "_sub", "*": "_mul"}
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def _compare(c: Ctx | None, x: Any, y: Any, op: str) -> bool:
    """`x op y` where `x` is not a scalar (compiler `_x_compare`): two lists or maps are walked
    item by item, up to the whole of `x`, which is work for the budget (`weigh`; `c` None in a
    plain form, which gives way to the checked form past FREE_WALK items)."""
    if isinstance(x, (list, dict)) and isinstance(y, (list, dict)):
        weigh(c, x)
    return _COMPARE[op](x, y)


def _attr(c: Ctx, o: Any, f: str) -> Any:
    """`o.f`: a state field or static attribute of an entity, or a key of a map."""
    if type(o) is str:
        d = c.ent.get(o)
        if d is not None and f in d:
            return d[f]
        s = c.model.static.get(o)
        if s is not None and f in s:
            return s[f]
        if f == "id":
            return o
        raise RuleError(f"`{o}` has no attribute `{f}`")
    if isinstance(o, dict):
        if f in o:
            return o[f]
        raise RuleError(f"this map has no key `{f}`")
    raise RuleError(f"{describe(o)} has no attribute `{f}`")


def _state_of(c: Ctx, o: Any, f: str) -> dict:
    d = c.ent.get(o) if type(o) is str else None
    if d is None or f not in d:
        raise RuleError(f"{describe(o)} has no state field `{f}`")
    return d


def _set_item(c: Ctx, d: Any, k: Any, v: Any, op: Callable | None = None) -> None:
    if id(d) in c.model.frozen_ids:  # (runtime.writable, its test written out)
        writable(c, d, "setting an item")
    if type(d) is dict and op is None and type(v) in _PLAIN:  # the common case: a map, a plain value
        d[k] = v
    elif isinstance(d, dict):
        d[k] = finite(op(c, d.get(k, 0), v), "a map") if op else store_value(v, c)
    elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
        d[k] = finite(op(c, d[k], v), "a list") if op else store_value(v, c)
    else:
        raise RuleError(f"cannot set item {describe(k)} of {describe(d)}")


def _loop_list(seq: Any) -> list:
    """What a `for` statement runs over when it is not given a list (compiler `_stmt`)."""
    if isinstance(seq, dict):
        return list(seq)
    if not isinstance(seq, list):
        raise RuleError(f"`for` needs a list, got {describe(seq)}")
    return seq


def _iter(c: Ctx, seq: Any) -> list:
    """The items of a `for` or a comprehension: a copy (the loop body may change the list),
    charged to the budget when the loop starts, one step per item."""
    if type(seq) is not list:
        if isinstance(seq, dict):
            seq = list(seq)
        elif not isinstance(seq, list):
            raise RuleError(f"`for` needs a list, got {describe(seq)}")
    m = c.meter
    u = m.used + len(seq)
    m.used = u
    if u > m.limit:
        m.over()
    return seq[:]


def _modify(c: Ctx, name: str, base: Any, args: dict) -> Any:
    """`value(name, base, args...)` of a modifier no layer of the ruleset changes, written where
    an argument does some work: its value is `base` (the hooks' pipeline if the model gives it
    layers after all). A layered modifier's `value()` calls the hooks' `modify` itself, and one
    whose arguments do nothing is written as its base (compiler `_special`)."""
    if c.model.modifiers.get(name):  # (the model lists every declared modifier, with its layers)
        return c.hooks.modify(c, name, base, args)
    return base


def _ucall(c: Ctx, table: str, name: str, scope: dict) -> Any:
    """Call a ruleset function or procedure; `scope` (its parameters) becomes its locals. Its
    failures are located by the caller's `rule_error`, at the callee's line. (Calls of a
    function or procedure whose parameters are all different go by position: its `pos`.)"""
    callee = getattr(c.model, table)[name]
    target = callee.fast
    if getattr(callee, "counted", True):  # (a compiled text says: `Unit.build`)
        m = c.meter
        m.used += 1
        if m.used > m.limit:
            m.over()
    if c.depth >= MAX_CALL_DEPTH:
        raise _deep(name)
    saved = c.vars
    c.vars = scope
    c.depth += 1
    try:
        return target(c)
    finally:
        c.depth -= 1
        c.vars = saved


# A call of a ruleset function or procedure by position runs the callee's `pos` (written where
# the call is: `c.model.functions['f'].pos(c, a, b)`). The callee counts the call as a step of
# the budget and checks its depth first thing (Unit.build), as `_ucall` does for a call by name;
# those two failures are located at the call, in the caller (`locate` skips the callee).

def _deep(name: str) -> RuleError:
    return RuleError(f"`{name}` called itself more than {MAX_CALL_DEPTH} levels deep")


def _deep_at_caller(name: str) -> RuleError:
    e = _deep(name)
    e.at_caller = True  # type: ignore[attr-defined]
    return e


def _miss() -> bool:
    """The plain form gives way to the checked form here (a call written out at the depth limit,
    a sum out of its inline bounds: compiler `_inline`, `_x_binop`)."""
    raise KeyError("the checked form decides")


def _over_at_caller(m: Any) -> None:
    """The budget of a call used up (the callee's first line): an error at the call."""
    try:
        m.over()
    except RuleError as e:
        e.at_caller = True  # type: ignore[attr-defined]
        raise


def by_position(fn: Callable[[Ctx], Any], params: tuple[str, ...], name: str, counted: bool = True) \
        -> Callable[..., Any]:
    """The `pos` of a callee that reads its arguments from `c.vars` (a procedure wrapped to
    announce itself, a function whose value is a plain number): the call counted (if `counted`)
    and checked as the compiled callees do (this wrapper is no rule code: its failures are
    located at the call), then `fn` run with the arguments as its variables."""
    def pos(c: Ctx, *args: Any) -> Any:
        if counted:
            m = c.meter
            u = m.used + 1
            m.used = u
            if u > m.limit:
                m.over()
        d = c.depth
        if d >= MAX_CALL_DEPTH:
            raise _deep(name)
        c.depth = d + 1
        saved = c.vars
        c.vars = dict(zip(params, args, strict=True))
        try:
            return fn(c)
        finally:
            c.depth = d
            c.vars = saved
    return pos


def _text(v: Any) -> str:
    return v if isinstance(v, str) else describe(v).strip("`")


def _coll(c: Ctx, kind: str) -> list:
    return list(c.model.collections[kind])


def _spaces(c: Ctx) -> list:
    return list(c.model.board.spaces) if c.model.board else []


BASE_NAMESPACE: dict[str, Any] = {
    "__builtins__": {},  # rule code gets no Python builtins at all
    "_add": _add, "_sub": _sub, "_mul": _mul, "_mod": _mod, "_attr": _attr,
    "_set_item": _set_item, "_state_of": _state_of, "_in": _in, "_iter": _iter, "_ucall": _ucall, "_text": _text,
    "_deep_at_caller": _deep_at_caller, "_compare": _compare, "_SC": _SCALARS, "_over_at_caller": _over_at_caller,
    "_coll": _coll, "_spaces": _spaces, "_copy": store_value, "_join": _join, "_len": len,
    "_type": type, "_str": str, "_dict": dict,  # for the inline read of a field (compiler `_x_getattr`)
    "_int": int, "_sub_result": _sub_result, "_finite": finite,  # for inline `+` and `-` (compiler `_arith`)
    "_PL": _PLAIN, "_modify": _modify, "_list": list, "_LENT": frozenset({list, dict, str}),
    "_SEQT": frozenset({list, str}),  # for inline `+` of two texts or lists (compiler `_arith`)
    "_loop_list": _loop_list, "_id": id, "_range": range,  # (a `for` over `range(n)`: compiler `_stmt`)
    "_min": min, "_max": max,  # (`min(a, b)` and `max(a, b)` of two scalars: compiler `_x_call`)
    "_LT": frozenset({list, tuple}),  # (`index` of a list, or of a collection's own ids: compiler `_index`)
    "_MISS": Exception,  # the plain form off its common case, or failing: the checked form decides (`_plain_form`)
    "_miss": _miss,
    "_KeyError": KeyError,  # (a variable its caller did not set: `Unit.build`)
    "_ValueError": ValueError,  # (`remove` of an item the list does not hold: compiler `_remove_stmt`)
    # for `count`, `filter`, `any`, `all` with their test written in place (compiler `_verdict_form`)
    "_seq": _seq, "_any": any, "_all": all,
    **{f"P_{name}": prim.fn for name, prim in PRIMITIVES.items()},
}


# ---- building a unit ----

class Unit:
    """The lines of one compiled rule text, with the rule location of each line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.locs: list[Loc] = []
        self.consts: dict[str, Any] = {}
        self._const_ids: dict[int, str] = {}
        self._temps = 0
        self.static = False  # the text reads static attributes inline: its function needs `S`
        self.calls_out = False  # the text calls functions, procedures, modifiers, events or steps
        self.calls_rule = False  # it calls a rule, written out or not: its own calls are steps (compiler `calls_rules`)
        # locals bound once, on entry, whose comparisons ask once whether each holds a scalar:
        # `_s_NAME` (compiler `_x_compare`)
        self.scalar_flags: set[str] = set()
        # the most calls written out around one another whose depth a plain form asks for (`_dok`,
        # compiler `_guarded`), or -1: the depth does not change while the text runs (a call
        # gives it back), so it is asked once, on entry, for the deepest
        self.depth_asked = -1
        # levels of indentation added to every line past the block's own (an `elif` whose
        # condition has a plain form is written as `else:` and an `if` inside it: compiler `_elif`)
        self.shift = 0

    def temp(self) -> str:
        """A fresh name for a value an expression uses twice (`:=`)."""
        self._temps += 1
        return f"_t{self._temps}"

    def emit(self, depth: int, text: str, loc: Loc) -> None:
        self.lines.append("    " * (depth + self.shift) + text)
        self.locs.append(loc)

    def const(self, value: Any) -> str:
        """A name for a constant in the namespace (shared, not copied: see runtime.writable)."""
        if value is None or isinstance(value, bool):
            return repr(value)
        if type(value) in (int, str) or (type(value) is float and value == value and abs(value) != float("inf")):
            return repr(value)
        key = id(value)
        if key not in self._const_ids:
            name = f"K{len(self._const_ids)}"
            self._const_ids[key] = name
            self.consts[name] = value
        return self._const_ids[key]

    def build(self, loads: list[str], what: str, callee: tuple[str, tuple[str, ...]] | None = None,
              counted: bool = True) -> Callable[[Ctx], Any]:
        """Compile the unit into a function of the context. `loads` are the locals the text
        reads from its caller (flow variables, parameters). With `callee` (the name and the
        parameters, all different, in their declared order, of a function or procedure) there
        is also `pos`, what calls of it run: the same text as a function taking its parameters
        by position, which checks the depth itself and, if its calls are `counted` (compiler
        `calls_rules`), counts the call as a step of the budget (as `_ucall` does)."""
        filename = f"<rule {next(_UNIT_IDS)}>"
        used = "\n".join(self.lines)
        prologue = [line for name, line in (("G[", "G = c.g"), ("E.", "E = c.ent"), ("E[", "E = c.ent"))
                    if name in used]
        prologue = list(dict.fromkeys(prologue))  # E once
        if self.static:
            prologue.append("S = c.model.static")
        flags = [f"_s_{name} = _type(v_{name}) in _SC" for name in sorted(self.scalar_flags)]
        if self.depth_asked >= 0:
            flags.append(f"_dok = c.depth < {MAX_CALL_DEPTH - self.depth_asked}")
        # The variables it reads from its caller: each by a subscript, which costs less than
        # `get`; where the caller did not set one (KeyError), all by `get`, None for those missing.
        reads = [] if not loads else [
            "    V = c.vars", "    try:", *(f"        v_{name} = V[{name!r}]" for name in loads),
            "    except _KeyError:", *(f"        v_{name} = V.get({name!r})" for name in loads)]
        head = ["def __rule(c):", *reads, *("    " + ln for ln in prologue), *("    " + ln for ln in flags)]
        source = "\n".join(head + ["    " + ln for ln in self.lines] + ["    return None"])
        sources = [(source, len(head) + 1, "fast")]
        if callee is not None:
            name, params = callee
            pos_head = [f"def __rule({', '.join(['c', *(f'v_{p}' for p in params)])}):"]
            if counted:
                pos_head += ["    _m = c.meter; _u = _m.used + 1; _m.used = _u",
                             "    if _u > _m.limit: _over_at_caller(_m)"]
            if self.calls_out:
                pos_head += ["    _d = c.depth",
                             f"    if _d >= {MAX_CALL_DEPTH}: raise _deep_at_caller({name!r})",
                             "    c.depth = _d + 1",
                             "    try:", *("        " + ln for ln in prologue + flags)]
                pos_source = "\n".join(pos_head + ["        " + ln for ln in self.lines] +
                                       ["        return None", "    finally:", "        c.depth = _d"])
            else:  # nothing it runs looks at the depth: it is checked, not counted up and down
                pos_head += [f"    if c.depth >= {MAX_CALL_DEPTH}: raise _deep_at_caller({name!r})",
                             *("    " + ln for ln in prologue + flags)]
                pos_source = "\n".join(pos_head + ["    " + ln for ln in self.lines] + ["    return None"])
            sources.append((pos_source, len(pos_head) + 1, "pos"))
        # The depth is at most the number of opening brackets: count them first (in C), and
        # scan only a source that has more than the limit.
        opening = source.count("(") + source.count("[") + source.count("{")
        if opening > MAX_NESTING and _nesting(source) > MAX_NESTING:
            raise SyntaxError("nested too deeply")  # reported as D002 by the compiler
        locs = self.locs
        fallback = locs[0] if locs else Loc()
        if len(source) > EAGER_SOURCE or max((len(ln) - len(ln.lstrip(" ")) for ln in self.lines), default=0) \
                > 4 * EAGER_DEPTH:
            # Unusual text: compile it now, so a limit of Python's (nested blocks, indentation,
            # expression depth) is a validation error (D002) instead of a crash in play.
            for text, _first, _entry in sources:
                compile(text, filename, "exec")

        rule = Rule(None, f"rule[{what}]", fallback, source, counted)  # (`fast`: just below)

        def compiled(entry: str) -> None:
            # Python compiles the source on first use: validation checks every text but runs few.
            for text, first, name in sources:
                if name == entry:
                    namespace = dict(BASE_NAMESPACE)
                    namespace.update(self.consts)
                    namespace["__unit__"] = (first, locs, fallback)  # how `locate` finds a line's rule location
                    exec(compile(text, filename, "exec"), namespace)  # our own source: see module docstring
                    setattr(rule, entry, namespace["__rule"])

        def first_call(c: Ctx) -> Any:
            if rule.fast is first_call:
                compiled("fast")
            return rule.fast(c)

        def first_pos(c: Ctx, *args: Any) -> Any:
            if rule.pos is first_pos:
                compiled("pos")
            return rule.pos(c, *args)

        rule.fast = first_call  # the bare function: errors left to the caller
        if callee is not None:
            rule.pos = first_pos
        # A text that only reads a variable of its caller names it in `var` (the compiler sets
        # it): the flow reads the variable without a call.
        return rule


MAX_NESTING = 150  # Python's parser refuses about 200 nested brackets
EAGER_SOURCE = 8_000  # generated source longer than this is compiled at once (a few bundled procedures pass it)
EAGER_DEPTH = 10  # so is source with blocks nested deeper than this


# A string literal (to its closing quote, or to the end of the source), or one bracket: only the
# bracket is captured, so a scan of the source visits brackets and strings, not every character.
_BRACKETS = re.compile(r"""'(?:[^'\\]|\\.)*(?:'|\\?\Z)|"(?:[^"\\]|\\.)*(?:"|\\?\Z)|([()\[\]{}])""", re.S)


def _nesting(source: str) -> int:
    """The deepest bracket nesting in generated source (string literals are repr()s: skip them)."""
    depth = deepest = 0
    for ch in _BRACKETS.findall(source):
        if not ch:  # a string literal
            continue
        if ch in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


