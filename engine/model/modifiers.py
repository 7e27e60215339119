"""The modifier pipeline: a value passes through the layers a ruleset declares, in order."""
from __future__ import annotations

from typing import Any

from dsl.runtime import Ctx


def apply_modifiers(c: Ctx, name: str, base: Any, args: dict) -> Any:
    """`value(name, base, args...)`: each layer whose `when` holds (in modifier_layers order,
    then package load order, then id) replaces the value, seeing the value so far as `value`."""
    value = base
    saved = c.vars
    # One dict of variables serves every layer, `value` in it kept up to date (a dict made per
    # layer was a measurable part of a game: docs/performance.md, session 12): rule code only
    # reads its variables, and keeps no dict of them.
    seen = {**args, "value": value}
    try:
        # Layers run bare (`fast`): a failure is located by the wrapper of the rule that asked
        # for the value (or the flow's), at the layer's line, as codegen's `rule_error` finds it.
        for _lid, when, fn in c.model.modifiers.get(name, ()):
            c.vars = seen
            if when is None or when.fast(c):
                seen["value"] = value = fn.fast(c)
    finally:
        c.vars = saved
    return value
