# cython: nonecheck=True
"""The modifier pipeline: a value passes through the layers a ruleset declares, in order."""
from __future__ import annotations

import re
from typing import Any

from dsl.runtime import Ctx

# A layer's `when` that holds exactly where one parameter is a text written in it.
_KEYED = re.compile(r"""\s*([A-Za-z_]\w*)\s*==\s*(?:'([^'"\\{}]*)'|"([^'"\\{}]*)")\s*""")


class KeyedLayers(list):
    """A modifier's layers when every one of them applies only where the same parameter is a
    text its `when` names (`when: "action == 'reinforce'"`): `by_text` holds, for each text,
    the layers it selects, in order. A value asks only those: the others' conditions are
    false, and asking a comparison of a parameter with a text changes nothing."""

    __slots__ = ("by_text", "param")


def layers_of(params: tuple[str, ...], layers: list[tuple], whens: list[Any]) -> list:
    """The layers of a modifier in the order they apply, with `whens` the text of each one's
    condition (None for none): KeyedLayers where every condition picks one parameter's text
    (not `value`, which each layer changes)."""
    found = [_KEYED.fullmatch(w) if isinstance(w, str) else None for w in whens]
    names = {m.group(1) for m in found if m is not None}
    if not layers or None in found or len(names) != 1 or not names <= set(params) - {"value"}:
        return list(layers)
    keyed = KeyedLayers(layers)
    keyed.param, keyed.by_text = names.pop(), {}
    for entry, m in zip(layers, found, strict=True):
        keyed.by_text.setdefault(m.group(2) if m.group(2) is not None else m.group(3), []).append(entry)
    return keyed


def apply_modifiers(c: Ctx, name: str, base: Any, args: dict) -> Any:
    """`value(name, base, args...)`: each layer whose `when` holds (in modifier_layers order,
    then package load order, then id) replaces the value, seeing the value so far as `value`.
    `args` becomes the layers' variables: it is given `value`, so pass a dict made for the call
    (the generated `value(...)` writes one out each time)."""
    layers = c.model.modifiers.get(name, ())
    keyed = type(layers) is KeyedLayers
    if keyed:  # only the layers whose text the parameter is can hold, and those hold: each
        # `when` is that parameter `==` that text, a comparison of two texts (no work, no error)
        key = args.get(layers.param)
        layers = layers.by_text.get(key, ()) if type(key) is str else ()
    value = base
    saved = c.vars
    # One dict of variables serves every layer, `value` in it kept up to date (a dict made per
    # layer was a measurable part of a game: docs/performance.md, session 12): rule code only
    # reads its variables, and keeps no dict of them. `args` is the caller's own new dict (the
    # generated code writes it out for this call), so it is that dict.
    seen = args
    seen["value"] = value
    try:
        # Layers run bare (`fast`): a failure is located by the wrapper of the rule that asked
        # for the value (or the flow's), at the layer's line, as `rule_error` (dsl/rule.py) finds it.
        for _lid, when, fn in layers:
            c.vars = seen
            if keyed or when is None or when.fast(c):
                seen["value"] = value = fn.fast(c)
    finally:
        c.vars = saved
    return value
