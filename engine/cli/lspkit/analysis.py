"""What the language server knows about one package: its diagnostics and its names.

An editor's unsaved buffers are given as texts (`overridden`), so everything below sees
what the editor shows. Diagnostics come from the one validator (`validate_targets`, the
same as `daimyo validate`); names come from the layered data of the package's combo (the
package with the rulesets it extends and requires), so a name declared in a base package
is completed, explained and found from a variant's files.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsl.compiler import BUILTIN_ATTRS, BUILTIN_NAMES, SPECIAL_FORMS
from dsl.primitives import PRIMITIVES
from engine.base.diagnostics import Diagnostic, Diagnostics, Loc
from engine.loading.layering import Resolved, resolve
from engine.loading.package import MANIFEST, Combo, resolve_combo
from engine.loading.yamlio import loc_of, overridden
from engine.model.validate import combo_for, validate_targets

MAX_PACKAGE_DEPTH = 12  # how far up from a file to look for its package's manifest

# Section of a two-part path -> what an entry of it is called in completion and hover.
ENTRY_KINDS = {"constants": "constant", "globals": "global", "functions": "function", "procedures": "procedure",
               "events": "event", "triggers": "trigger", "modifiers": "modifier", "steps": "step",
               "kinds": "kind", "result": "result", "checks": "check", "hints": "hint", "display": "display"}


@dataclass
class Name:
    """A name a rule or a data file may use, and where it is declared."""

    name: str
    kind: str  # "procedure", "space", "field of player", "primitive", ...
    loc: Loc = field(default_factory=Loc)
    package: str = ""
    path: str = ""  # the resolved entry, e.g. `procedures.collect_taxes`
    value: Any = None
    changed_by: list[tuple[str, Loc]] = field(default_factory=list)  # patches that touched it
    doc: str = ""  # primitives: the documentation


@dataclass
class Analysis:
    folder: Path
    combo: str | None = None
    diagnostics: dict[str, list[Diagnostic]] = field(default_factory=dict)  # real path -> diagnostics
    names: dict[str, list[Name]] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)  # name after a dot -> what it is
    options: dict[str, list[Any]] = field(default_factory=dict)  # option -> its values


def package_root(path: Path) -> Path | None:
    """The folder of the package that holds `path`: the nearest one with a manifest."""
    cur = path if path.is_dir() else path.parent
    for _ in range(MAX_PACKAGE_DEPTH):
        if (cur / MANIFEST).is_file():
            return cur
        if cur.parent == cur:
            break
        cur = cur.parent
    return None


def analyse(folder: Path, texts: dict[str, str]) -> Analysis:
    """Validate the package at `folder` (with its combo) and index the names in scope."""
    out = Analysis(folder)
    manifest = os.path.realpath(folder / MANIFEST)
    with overridden(texts):
        diags, _checked = validate_targets([str(folder)])
        for d in diags:
            target = os.path.realpath(d.loc.file) if d.loc.file and os.path.isfile(d.loc.file) else manifest
            out.diagnostics.setdefault(target, []).append(d)
        local = Diagnostics()
        out.combo = combo_for(str(folder), local)
        combo = resolve_combo(out.combo, local, {}, None) if out.combo else None
        if combo is not None:
            _index(out, combo, resolve(combo, Diagnostics()))
    return out


def _index(out: Analysis, combo: Combo, res: Resolved) -> None:
    for path, (pkg, loc) in res.provenance.items():
        parts = path.split(".")
        kind = _kind_of(parts)
        if kind is None:
            continue
        value = _value_at(res.data, parts)
        changed = [who for who in res.touched.get(path, []) if who[0] != pkg]
        out.names.setdefault(parts[-1], []).append(Name(parts[-1], kind, loc, pkg, path, value, changed))
        if kind.startswith("field of"):
            out.attributes.setdefault(parts[-1], kind)
    board = res.data.get("board") or {}
    for space in (board.get("spaces") or {}).values():
        if isinstance(space, dict):
            for attr in space:
                out.attributes.setdefault(str(attr), "attribute of a space")
    for kname, spec in (res.data.get("kinds") or {}).items():
        for item in ((spec or {}).get("items") or {}).values() if isinstance(spec, dict) else ():
            if isinstance(item, dict):
                for attr in item:
                    out.attributes.setdefault(str(attr), f"attribute of a {kname}")
    for attr in BUILTIN_ATTRS:
        out.attributes.setdefault(attr, "built-in attribute")
    for pkg in combo.packages:
        options = pkg.manifest.get("options") or {}
        for oname, spec in pkg.options.items():
            values = list(spec.get("values") or [])
            out.options[oname] = values
            out.names.setdefault(oname, []).append(
                Name(oname, "option", loc_of(options, oname, key=True), pkg.id, f"options.{oname}",
                     {"values": values, "default": spec.get("default")}, doc=str(spec.get("description") or "")))
    for pname, prim in PRIMITIVES.items():
        doc = f"{prim.signature}\n\n{prim.doc}"
        out.names.setdefault(pname, []).append(Name(pname, f"{prim.kind} primitive", doc=doc))
    for bname in BUILTIN_NAMES:
        out.names.setdefault(bname, []).append(Name(bname, "built-in name", doc=_BUILTIN_DOCS.get(bname, "")))
    for form in SPECIAL_FORMS:
        out.names.setdefault(form, []).append(Name(form, "special form", doc=_BUILTIN_DOCS.get(form, "")))


_BUILTIN_DOCS = {
    "players": "the seats of this game, in seat order (entity ids)",
    "num_players": "how many players this game has",
    "spaces": "every space of the board",
    "options": "the options this game was started with: `options.NAME`",
    "value": "in a modifier: the value so far; in a step's `value:`, the computed value",
    "emit": "`emit NAME(arg=value, ...)`: announce an event that triggers listen to",
    "run": "`run NAME(arg=value, ...)`: carry out a procedure",
}


def _kind_of(parts: list[str]) -> str | None:
    section = parts[0]
    if len(parts) == 2:
        return ENTRY_KINDS.get(section)
    if section == "board" and len(parts) == 3 and parts[1] in ("spaces", "regions"):
        return parts[1][:-1]
    if section == "kinds" and len(parts) == 4 and parts[2] == "state":
        return f"field of {parts[1]}"
    if section == "kinds" and len(parts) == 4 and parts[2] == "items":
        return f"{parts[1]} (item)"
    if section == "modifiers" and len(parts) == 4 and parts[2] == "layers":
        return f"rule of modifier {parts[1]}"
    return None


def _value_at(data: Any, parts: list[str]) -> Any:
    for p in parts:
        if not isinstance(data, dict) or p not in data:
            return None
        data = data[p]
    return data


# ---- what the editor asks ----

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_OPTION_COMPARE = re.compile(r"options\.([A-Za-z_]\w*)\s*(?:==|!=)\s*[\"']?([A-Za-z0-9_\-]*)$")


def word_at(line: str, col: int) -> tuple[str, int, int]:
    """The name under (or just before) a 0-based column: (word, start, end)."""
    for m in WORD.finditer(line):
        if m.start() <= col <= m.end():
            return m.group(), m.start(), m.end()
    return "", col, col


def completions(a: Analysis, line: str, col: int) -> list[tuple[str, str, str]]:
    """(label, what it is, documentation) for the name being typed at `col` of `line`."""
    before = line[:col]
    m = _OPTION_COMPARE.search(before)
    if m and m.group(1) in a.options:
        prefix = m.group(2)
        return [(str(v), f"value of option {m.group(1)}", "") for v in a.options[m.group(1)]
                if str(v).startswith(prefix)]
    word, start, _ = word_at(line, col)
    prefix = word[: col - start] if word else ""
    head = before[: col - len(prefix)]
    if head.endswith("options."):
        return [(o, "option", f"values: {', '.join(map(str, vs))}") for o, vs in sorted(a.options.items())
                if o.startswith(prefix)]
    if head.endswith("."):
        return [(n, what, "") for n, what in sorted(a.attributes.items()) if n.startswith(prefix)]
    out = []
    for n, entries in sorted(a.names.items()):
        if n.startswith(prefix):
            e = entries[-1]
            out.append((n, e.kind, e.doc or _declared(e)))
    return out


def hover(a: Analysis, line: str, col: int) -> str | None:
    """Markdown about the name under the cursor: a primitive's documentation, or where the name
    is declared (package, file:line) and which patches changed it, with its value."""
    word, _, _ = word_at(line, col)
    entries = a.names.get(word) or []
    if not entries and word in a.attributes:
        return f"`{word}`: {a.attributes[word]}"
    if not entries:
        return None
    parts = []
    for e in entries:
        text = f"**{e.name}**: {e.kind}"
        if e.doc:
            text += f"\n\n```\n{e.doc}\n```" if "primitive" in e.kind else f"\n\n{e.doc}"
        where = _declared(e)
        if where:
            text += f"\n\n{where}"
        if e.value is not None and "primitive" not in e.kind:
            text += f"\n\n```yaml\n{_short(e.value)}\n```"
        parts.append(text)
    return "\n\n---\n\n".join(parts)


def definitions(a: Analysis, line: str, col: int) -> list[Loc]:
    """Where the name under the cursor is declared (in any package of the combo)."""
    word, _, _ = word_at(line, col)
    return [e.loc for e in a.names.get(word, []) if e.loc.line and e.loc.file]


def _declared(e: Name) -> str:
    if not e.loc.line:
        return ""
    text = f"declared in `{e.package}` at {e.loc}" + (f" (`{e.path}`)" if e.path else "")
    for pkg, loc in e.changed_by:
        text += f"; changed by `{pkg}` at {loc}"
    return text


def _short(value: Any, width: int = 400) -> str:
    if isinstance(value, str):
        text = value.rstrip()
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."
