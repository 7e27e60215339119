"""Declared data that no rule reads (R011), so that "ok" cannot hide dead data.

A datum counts as read when a rule text of the combo mentions its name: the flow and steps
(with their prompts and titles), functions, procedures, triggers, modifiers, `result`,
`hints`, `display` and `checks` (a datum a check reads is not silently dead: patching it
changes what validation says). State (globals and kind fields) counts as used when a rule
reads or writes it, since the players see it; a field that names a kind's owner is read by
the engine. Scenario files are not part of a ruleset, so validation cannot see them: data
that exists only for them, or only for readers, is listed under `unused:` with the reason
(docs/ruleset-format.md).

The analysis is by name, so it never warns about data that is read: an attribute read for
one item counts as read for every item that has it.
"""
from __future__ import annotations

from collections.abc import Iterable

from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.record import FrozenRecord
from engine.loading.yamlio import loc_of
from engine.model.ruleset import Model

ITEM_META_KEYS = ("notes", "pos")  # documentation and map layout, never rule data


class Datum(FrozenRecord):
    """One declared datum: `name` as `unused:` names it, what it is, and where it is written."""

    FIELDS = ("name", "what", "where", "loc", "mentioned_as", "path")
    name: str
    what: str
    where: str  # more about where it is declared, for the message
    loc: Loc
    mentioned_as: str  # the name a rule text uses for it (a constant's name, an attribute)
    path: str  # where it sits in the resolved data, for its provenance: `constants.x`

    def __init__(self, name: str, what: str, where: str, loc: Loc, mentioned_as: str, path: str) -> None:
        d = self.__dict__
        d["name"], d["what"], d["where"], d["loc"], d["mentioned_as"], d["path"] = \
            name, what, where, loc, mentioned_as, path


def declared(model: Model) -> list[Datum]:
    """Every constant, global, kind field and item attribute the combo declares."""
    data = model.resolved.data
    out = [Datum(str(n), "constant", "", loc_of(data["constants"], n, key=True), str(n), f"constants.{n}")
           for n in data["constants"]]
    out += [Datum(str(n), "global", "", loc_of(data["globals"], n, key=True), str(n), f"globals.{n}")
            for n in data["globals"]]
    spaces = data["board"].get("spaces") if isinstance(data["board"], dict) else None
    space_kind = data["board"].get("space_kind") if isinstance(data["board"], dict) else None
    for kname, spec in data["kinds"].items():
        state = spec.get("state") or {}
        out += [Datum(f"{kname}.{f}", "field", "", loc_of(state, f, key=True), str(f), f"kinds.{kname}.state.{f}")
                for f in state]
        sources = [(spec.get("items") or {}, f"kinds.{kname}.items")]
        if kname == space_kind and isinstance(spaces, dict):
            sources.append((spaces, "board.spaces"))
        seen: set[str] = set()
        for items, where in sources:
            for iid, attrs in items.items():
                if not isinstance(attrs, dict):
                    continue
                for attr in attrs:
                    if attr not in seen and attr not in ITEM_META_KEYS and attr not in state:
                        seen.add(attr)
                        out.append(Datum(f"{kname}.{attr}", "item attribute", f" (first on `{iid}`)",
                                         loc_of(attrs, attr, key=True), str(attr), f"{where}.{iid}"))
    return out


def engine_reads(model: Model) -> set[str]:
    """Names the engine itself reads from the data: the field naming each kind's owner."""
    return {k.owner for k in model.kinds.values() if k.owner}


def declared_by(model: Model, path: str) -> str:
    """The package that wrote the entry at `path` (or the nearest entry around it)."""
    prov = model.resolved.provenance
    while path:
        if path in prov:
            return prov[path][0]
        path = path.rpartition(".")[0]
    return ""


def check_unused(models: list[Model], diags: Diagnostics) -> None:
    """R011 for data that the last package of the combo declares and no rule of any of
    `models` (the builds of one combo) mentions; R012 for an `unused:` entry that names
    nothing declared, or data a rule does read. Data of the packages a combo builds on is
    checked when they are validated themselves: an expansion that replaces the rule reading
    a base datum does not make the base's data dead."""
    reads: set[str] = set()
    data: dict[str, Datum] = {}  # every package's, by name
    mine: set[str] = set()  # the names the last package declares
    marks: dict[str, Loc] = {}  # the last package's `unused:` entries
    target = models[0].combo.packages[-1].id
    for model in models:
        reads |= model.reads | engine_reads(model)
        for d in declared(model):
            data.setdefault(d.name, d)
            if declared_by(model, d.path) == target:
                mine.add(d.name)
        section = model.resolved.data.get("unused") or {}
        for name in section:
            if declared_by(model, f"unused.{name}") == target:
                marks.setdefault(str(name), loc_of(section, name, key=True))
    for name in sorted(mine, key=lambda n: (data[n].loc.file, data[n].loc.line, data[n].loc.col)):
        d = data[name]
        if d.mentioned_as not in reads and name not in marks:
            diags.add("R011", f"{d.what} `{name}`{d.where} is declared, but no rule reads it", d.loc,
                      hint="use it in the rules or remove it; if it is there on purpose (for readers, or "
                      f"for scenarios), list it under `unused:` with the reason: `{name}: why`",
                      severity="warning")
    for name, loc in marks.items():
        if name not in data:
            diags.add("R012", f"`unused:` names `{name}`, which is not a declared constant, global, field or "
                      "item attribute", loc, hint="write a constant or global by its name, a field or "
                      "attribute as `kind.name`" + _hint(name, data), severity="warning")
        elif data[name].mentioned_as in reads:
            diags.add("R012", f"`unused:` names `{name}`, but a rule reads it", loc,
                      hint="remove the entry: the data is in use", severity="warning")


def _hint(name: str, known: Iterable[str]) -> str:
    close = did_you_mean(name, known)
    return f"; {close}" if close else ""
