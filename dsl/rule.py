"""A compiled rule, and where its failures are located.

The compiler (dsl/compiler.py) turns each rule text into a `Rule`: calling it runs the text
with every failure located at the text's line (`rule_error`); its `fast` runs it bare, leaving
the failure to whoever called it to locate, as the flow does for all the rules it runs
(`raise_located`, which engine/run/direct.py calls). A failure is located from its traceback: the generated
code of each text names its unit (`__unit__`), a table from its lines to rule locations
(dsl/codegen.py `Unit.build`), so that locating costs nothing while rules run.

A regular install compiles this module (setup.py): the flow reads a rule's `fast` as a C field.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from types import TracebackType
from typing import Any

from dsl.primitives import describe
from dsl.runtime import RuleError
from engine.base.diagnostics import Loc


class Rule:
    """A compiled rule text. `rule(c)` runs it, its failures located; `fast(c)` runs it bare;
    `pos(c, *args)`, for a function or procedure whose parameters are all different, runs it
    with its arguments by position (None otherwise). `loc` is where the text is (for errors
    about its value), `source` its generated Python (None for a plain YAML value), `var` the
    variable of its caller it only reads (the flow reads that without a call; None
    otherwise), `fresh` whether a list it gives is one it made as it ran, held by nothing else
    (a choice's options are then not copied: compiler `_made_list`), `counted` whether a call
    of it is a step of work (codegen `_ucall`), `what` what it is, for people
    (`rule[function `n_armies`]`)."""

    __slots__ = ("counted", "fast", "fresh", "loc", "pos", "source", "var", "what")

    def __init__(self, fast: Callable[..., Any], what: str, loc: Loc | None = None, source: str | None = None,
                 counted: bool = True):
        self.fast = fast
        self.what = what
        self.loc = loc
        self.source = source
        self.counted = counted
        self.pos: Callable[..., Any] | None = None
        self.var: str | None = None
        self.fresh = False  # (the compiler sets it)

    def __call__(self, c: Any) -> Any:
        try:
            return self.fast(c)
        except Exception as e:  # every failure of rule code becomes a located RuleError
            raise_located(e)

    def __repr__(self) -> str:
        return f"<{self.what}>"


if not __file__.endswith(".py"):  # the compiled engine: rule code reads `pos` as a member (rule.pxd)
    fields_as_members(Rule)  # noqa: F821 - declared in dsl/cfields.pxd, for the compiled module only


def locate(tb: TracebackType | None, at_caller: bool = False) -> Loc | None:
    """The rule location of a failure: the line of the innermost rule call (`__rule`) in the
    traceback, or the last line of that rule's own code after it (its `x => ...` functions);
    None when no rule code is in the traceback. `at_caller`: the innermost rule call is left
    out (a function or procedure refusing its own call: the failure is at the call)."""
    frames = []
    while tb is not None:
        frame = tb.tb_frame
        info = frame.f_globals.get("__unit__")
        if info is not None:
            frames.append((info, frame.f_code.co_name == "__rule", tb.tb_lineno))
        tb = tb.tb_next
    if at_caller:  # a call's budget or depth, checked first thing in the callee: leave it out
        starts = [i for i, (_info, is_rule, _line) in enumerate(frames) if is_rule]
        if starts:
            del frames[starts[-1]:]
    unit = None
    line = 0
    for info, is_rule, lineno in frames:
        if is_rule:
            unit = info
        if info is unit:
            line = lineno
    if unit is None:
        return None
    first, locs, fallback = unit
    i = line - first
    return locs[i] if 0 <= i < len(locs) else fallback


def rule_error(e: Exception) -> Exception:
    """What a failure inside rule code is reported as: a RuleError at the rule's location. An
    exception that is not from rule code (no rule in its traceback) is returned unchanged."""
    loc = locate(e.__traceback__, getattr(e, "at_caller", False))
    if isinstance(e, RuleError):
        if not e.loc.line and loc is not None:
            e.loc = loc
        return e
    if loc is None:
        return e
    if isinstance(e, ZeroDivisionError):
        return RuleError("division by zero", loc)
    if isinstance(e, KeyError):
        return RuleError(f"there is no item {describe(e.args[0] if e.args else None)}", loc)
    if isinstance(e, IndexError):
        return RuleError("a position past the end of a list", loc)
    if isinstance(e, (TypeError, ValueError, AttributeError, OverflowError, NameError)):
        return RuleError(f"cannot evaluate this: {_plain_python_error(e)}", loc)
    if isinstance(e, RecursionError):
        return RuleError("rules nested too deeply (a procedure calling itself?)", loc)
    return e


def raise_located(e: Exception) -> None:
    """Raise `e` as what it is reported as: a failure inside rule code (which a rule's call,
    and both flow machines, which run rules bare, catch) becomes a RuleError at the rule's
    location (`rule_error`); anything else is raised unchanged."""
    err = rule_error(e)
    if err is e:
        raise e
    raise err from None


def _plain_python_error(e: Exception) -> str:
    text = str(e)
    unbound = re.search(r"'v_(\w+)'", text) if isinstance(e, NameError) else None
    if unbound:  # a `let` this path never reached
        return f"`{unbound.group(1)}` has no value here yet"
    text = text.replace("NoneType", "none").replace("'str'", "text").replace("'int'", "number")
    return text.replace("'list'", "list").replace("'dict'", "map")
