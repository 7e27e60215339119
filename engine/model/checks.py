"""`checks:` from a ruleset, evaluated on the initial state of every player count they apply to.

A check is a pure expression with a small step budget: it reads the state, never changes it,
and one that loops ends as R009, not as a hang.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from dsl.runtime import Ctx, Meter, RuleError, copy_value
from engine.base.diagnostics import Diagnostics
from engine.loading.yamlio import loc_of
from engine.model.modifiers import apply_modifiers
from engine.model.ruleset import MAX_PLAYERS, PLAYER_KIND, Model

_SCALARS = frozenset({str, int, float, bool, type(None)})  # values a copy may share (immutable)
CHECK_BUDGET = 100_000  # steps of work for one check on one player count
CHECK_SECONDS = 2.0  # and a time cap: `daimyo validate` must never hang


class _CheckHooks:
    """What a check's expression may reach beyond the state: modified values only."""

    def modify(self, c: Ctx, name: str, base: Any, args: dict) -> Any:
        return apply_modifiers(c, name, base, args)


def initial_state(model: Model, players: int) -> dict:
    """The state before any flow runs: initial globals and fields, no decisions. Its texts are
    interned (`interned`)."""
    ids = [sys.intern(f"P{i + 1}") for i in range(players)]
    ent: dict[str, dict] = {pid: interned(copy_value(model.kinds[PLAYER_KIND].fields)) for pid in ids}
    for k in model.kinds.values():
        if k.name != PLAYER_KIND and k.fields:
            # The kind's fields as plain data once; then each item gets its own copy of that,
            # by a plain dict copy when every field is a scalar (most kinds: many items).
            plain = interned(copy_value(k.fields))
            flat = all(type(v) in _SCALARS for v in plain.values())
            for iid in k.items:
                ent[sys.intern(str(iid))] = dict(plain) if flat else copy_value(plain)
    return {"globals": interned(copy_value(model.globals)), "ent": ent, "players": ids, "flow": [],
            "pending": None, "seq": 0, "over": False, "result": None}


def interned(v: Any) -> Any:
    """`v`, plain data as `copy_value` makes it (so nested no deeper than it allows), with every
    text in it interned, keys included. Rule code reads fields by names Python interned when it
    compiled them (`E[x]['owner']`): a key that is the same object is found at once, where an
    equal text read from YAML is compared character by character (3.5% of a Samurai Swords
    game). The same for ids."""
    t = type(v)
    if t is str:
        return sys.intern(v)
    if t is dict:
        return {(sys.intern(k) if type(k) is str else k): interned(x) for k, x in v.items()}
    if t is list:
        return [interned(x) for x in v]
    return v


def run_checks(model: Model, checks: dict[str, Callable | None], diags: Diagnostics,
               counts: list[int] | None = None) -> None:
    """Evaluate the ruleset's `checks:` on the initial state, for each player count they apply to.

    A check is a pure expression with a small step budget: it reads the state, it never
    changes it, and a check that loops ends as R009, not as a hang.
    """
    spec = model.resolved.data["checks"]
    lo, hi = model.combo.player_range
    if counts is not None:
        default_counts = counts
    elif model.combo.players:
        default_counts = [model.combo.players]
    else:
        default_counts = list(range(lo, min(hi, MAX_PLAYERS) + 1))
    hooks = _CheckHooks()
    # One initial state per player count, read by every check: a check is a pure expression
    # (the compiler refuses assignments, procedures, events and impure built-ins in it), so
    # none can change what the next one reads.
    states: dict[int, dict] = {}
    for cid, fn in checks.items():
        if fn is None:
            continue
        chk = spec[cid]
        loc = loc_of(chk, "expect")
        wanted = chk.get("players")
        ns = [n for n in default_counts if n in wanted] if wanted else default_counts
        ns = [n for n in ns if isinstance(n, int) and 0 < n <= MAX_PLAYERS]
        failed: list[int] = []
        severity = chk.get("severity", "error")
        for n in ns:
            state = states.get(n)
            if state is None:
                state = states[n] = initial_state(model, n)
            ctx = Ctx(state, model, hooks, meter=Meter(CHECK_BUDGET, CHECK_SECONDS, "in one check"))
            try:
                ok = fn(ctx)
            except RuleError as e:
                diags.add("R009", f"check `{cid}` cannot be evaluated with {n} players: {e.message}",
                          e.loc if e.loc.line else loc, severity=severity)
                break
            if not ok:
                failed.append(n)
        if failed:
            shown = f" with {', '.join(map(str, failed))} players" if len(ns) > 1 else ""
            diags.add("R008", f"check `{cid}` fails{shown}: {chk.get('message') or chk['expect']}", loc,
                      hint=f"the condition `{chk['expect']}` does not hold on the initial state",
                      severity=severity)
