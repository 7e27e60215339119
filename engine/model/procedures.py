"""A procedure's body: one text, or a list of named blocks compiled as one text.

`do:` of a procedure may be a list `- {name: pay, do: "..."}`. The blocks run as one body,
in order: a `let` of one block is seen by the next, and `stop` ends the whole procedure. The
names are stable handles for patches (`replace_item`, `remove_item`, `insert` in
engine/loading/layering.py), so a variant changes one part of a procedure without copying the
rest. Joining happens at build time: a procedure written in blocks compiles to the same code
as the same text written in one piece, and costs nothing more at play.

Like steps, procedures are announced as `before_NAME` and `after_NAME` events, with their
params, where a trigger listens (`announced`).
"""
from __future__ import annotations

from typing import Any

from dsl.codegen import by_position
from dsl.compiler import Fn, Pieces
from engine.base.diagnostics import Diagnostics, Loc
from engine.loading.yamlio import loc_of


def procedure_body(name: str, spec: dict, diags: Diagnostics) -> tuple[str, Loc, Pieces]:
    """The text of procedure `name`, where it is written, and (for blocks) where each block's
    lines are written; P029 for two blocks of one procedure with the same name."""
    do = spec.get("do")
    if not isinstance(do, list):
        return str(do), loc_of(spec, "do"), ()
    lines: list[str] = []
    pieces: list[tuple[int, Loc]] = []
    seen: dict[Any, Loc] = {}
    for block in do:
        if not isinstance(block, dict):  # the schema has reported it
            continue
        block_name = block.get("name")
        where = loc_of(block, "name")
        if block_name in seen:
            diags.add("P029", f"procedure `{name}` has two blocks named `{block_name}` (the first at "
                      f"{seen[block_name]})", where,
                      hint="patches address a block by its name: give each block of a procedure its own")
        else:
            seen[block_name] = where
        text = str(block.get("do") or "").rstrip("\n")
        if text.strip():
            pieces.append((len(lines) + 1, loc_of(block, "do")))
            lines.extend(text.split("\n"))
    return "\n".join(lines), loc_of(spec, "do"), tuple(pieces)


def announced(body: Fn, name: str, params: tuple[str, ...], before: bool, after: bool) -> Fn:
    """`body` that also emits `before_NAME` as it starts and `after_NAME` when it is done (also
    after a `stop`), each with the call's arguments. The build wraps only procedures a trigger
    listens to, so every other procedure runs exactly as compiled, at no cost."""
    def run(c: Any) -> Any:
        args = {p: c.vars.get(p) for p in params}
        if before:
            c.hooks.emit(c, f"before_{name}", args)
        result = body(c)
        if after:
            c.hooks.emit(c, f"after_{name}", args)
        return result
    run.__wrapped__ = body  # type: ignore[attr-defined]
    run.fast = run  # type: ignore[attr-defined]  # what calls of procedures by name run (codegen._ucall)
    run.pos = by_position(run, params, name)  # type: ignore[attr-defined]  # and calls by position (codegen)
    run.loc = getattr(body, "loc", None)  # type: ignore[attr-defined]
    return run
