"""What compiled rules run against: the evaluation context and the runtime errors.

A compiled expression or effect is a plain Python callable taking one `Ctx`. The context
gives it the game state (plain data), the frozen ruleset model, the local variables and
the step budget. Nothing else is reachable from rule code.
"""
from __future__ import annotations

from typing import Any

from engine.base.diagnostics import Loc


class RuleError(Exception):
    """A rule failed while running (bad value, unknown entity, budget exhausted)."""

    code = "E001"

    def __init__(self, message: str, loc: Loc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc or Loc()

    def __str__(self) -> str:
        return f"{self.loc}: error[{self.code}]: {self.message}" if self.loc.line else self.message


class BudgetExceeded(RuleError):
    """A rule ran more steps than its budget: almost always an endless loop in a mod."""

    code = "E002"


class Stop(Exception):
    """`stop` inside an effect: leave the current effect at once."""


class Ctx:
    """The evaluation context of one rule evaluation.

    `state` is the whole game state (plain data). `model` is the frozen, compiled
    ruleset (static attributes, board, procedures...). `vars` are the locals.
    `hooks` is the engine object that performs chance, logging and scheduling.
    """

    __slots__ = ("budget", "depth", "ent", "g", "hooks", "model", "state", "steps", "vars")

    def __init__(self, state: dict, model: Any, hooks: Any, vars: dict | None = None,
                 budget: int = 1_000_000):
        self.state = state
        self.g = state["globals"]
        self.ent = state["ent"]
        self.model = model
        self.hooks = hooks
        self.vars = vars if vars is not None else {}
        self.steps = 0
        self.budget = budget
        self.depth = 0

    def tick(self, loc: Loc | None = None) -> None:
        """Count one step (a loop iteration, a call); past the budget, end the rule."""
        self.steps += 1
        if self.steps > self.budget:
            raise BudgetExceeded(
                f"this rule ran more than {self.budget:,} steps; it probably never ends "
                "(a loop that does not finish or a procedure that calls itself)", loc)


def writable(c: Ctx, x: Any, what: str) -> None:
    """Constants are shared, not copied, when rules read them: refuse to change one in place."""
    if id(x) in c.model.frozen_ids:
        raise RuleError(f"{what} cannot change a constant; copy it into the state first "
                        "(assigning it to a state field copies it)")


_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_value(v: Any) -> Any:
    """A deep copy of plain data (lists, dicts, scalars): state must never alias itself.
    Scalars are copied inline (no call per item): option lists and frames are copied often."""
    t = type(v)
    if t is list:
        return [x if type(x) in _SCALARS else copy_value(x) for x in v]
    if t is dict:
        return {k: (x if type(x) in _SCALARS else copy_value(x)) for k, x in v.items()}
    # Values loaded from YAML (initial values, constants) are list/dict subclasses that carry
    # source locations: copy them too, as plain data, or every entity would share one list.
    if isinstance(v, list):
        return [copy_value(x) for x in v]
    if isinstance(v, dict):
        return {k: copy_value(x) for k, x in v.items()}
    return v
