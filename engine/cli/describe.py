"""`daimyo describe COMBO [--resolved]`: what a ruleset and its expansions amount to.

The summary names the packages in load order, the options with their values, the player
counts, how many steps, triggers, modifiers and procedures the combo has, and an outline
of the flow in which every item an expansion inserted is marked with that expansion.

With `--resolved` it prints the whole resolved ruleset as YAML, each entry followed by a
comment `# <package> <file>:<line>` saying which package and which line set it (for a
patched entry: the patch), so a modder sees exactly what their patch did. The output is
valid YAML: `yaml.safe_load` of it gives the resolved data.
"""
from __future__ import annotations

import argparse
import json
import re
from typing import Any

from engine.base.console import EPILOG, add_format_option, parse_options, print_json, report
from engine.base.diagnostics import Diagnostics, Loc
from engine.base.record import replace
from engine.base.text import safe_text
from engine.cli import help_of
from engine.loading.layering import KEYED_SECTIONS, LIST_SECTIONS, Resolved, included
from engine.loading.package import Combo, resolve_combo
from engine.model import Model, build_combo

MAX_OUTLINE_DEPTH = 16
SECTION_ORDER = ("globals", "constants", "kinds", "board", "events", "functions", "procedures", "triggers",
                 "modifier_layers", "modifiers", "steps", "flow", "result", "checks", "hints", "display")


def describe(combo_text: str, options: dict[str, Any] | None, players: int | None, resolved: bool,
             diags: Diagnostics) -> str | None:
    """The description of a combo, or None (with diagnostics) when it does not load."""
    model = _model(combo_text, options, players, diags)
    if model is None:
        return None
    if resolved:
        return resolved_text(model.resolved, model.combo)
    return summary(model)


def describe_json(combo_text: str, options: dict[str, Any] | None, players: int | None, resolved: bool,
                  diags: Diagnostics) -> dict | None:
    """The same as `describe`, as data (docs/output-formats.md)."""
    model = _model(combo_text, options, players, diags)
    if model is None:
        return None
    combo, res = model.combo, model.resolved
    lo, hi = combo.player_range
    out: dict[str, Any] = {
        "combo": combo.name, "players": {"min": lo, "max": hi, "described_for": combo.players},
        "packages": [{"id": p.id, "version": p.version, "extends": p.extends, "requires": p.requires,
                      "after": p.after, "root": str(p.root),
                      "files": [f.display for f in p.files if included(f.when, combo)]} for p in combo.packages],
        "options": {k: {"value": combo.options.get(k), **v} for p in combo.packages for k, v in p.options.items()},
    }
    out["item_patches"] = [{"patch": op, "list": path, "item": name, "package": pkg, "file": loc.file,
                            "line": loc.line} for op, path, name, pkg, loc in res.item_patches]
    if resolved:
        out["resolved"] = res.data
        out["provenance"] = {path: {"package": pkg, "file": loc.file, "line": loc.line, "col": loc.col}
                             for path, (pkg, loc) in res.provenance.items()}
    else:
        out["contents"] = {s: len(res.data[s]) for s in ("steps", "triggers", "modifiers", "procedures",
                                                         "functions", "events", "checks")}
        out["kinds"] = {k.name: len(k.items) for k in model.kinds.values()}
        out["changed_by_expansions"] = {path: {"package": pkg, "file": loc.file, "line": loc.line}
                                        for path, (pkg, loc) in sorted(res.provenance.items())
                                        if pkg != combo.base.id and path.count(".") == 1}
    return out


def _model(combo_text: str, options: dict[str, Any] | None, players: int | None, diags: Diagnostics) -> Model | None:
    combo = resolve_combo(combo_text, diags, options or {}, players)
    if combo is None:
        return None
    if combo.players is None and any("players" in f.when for p in combo.packages for f in p.files):
        # Some files load only for some player counts: describe the smallest game.
        combo = replace(combo, players=combo.player_range[0])
    return build_combo(combo, diags)


# ---- the summary ----

def summary(model: Model) -> str:
    combo, res = model.combo, model.resolved
    data = res.data
    lo, hi = combo.player_range
    out = [f"{combo.name}" + (f"  ({_options_line(combo)})" if combo.options else "")]
    out.append("packages (in load order):")
    width = max(len(f"{p.id} {p.version}") for p in combo.packages)
    for p in combo.packages:
        rel = []
        if p.extends:
            rel.append(f"extends {p.extends}")
        if p.requires:
            rel.append(f"requires {', '.join(p.requires)}")
        if p.after:
            rel.append(f"after {', '.join(p.after)}")
        files = sum(1 for f in p.files if included(f.when, combo))
        out.append(f"  {p.id + ' ' + p.version:<{width}}  {'; '.join(rel) or 'base'}  "
                   f"({files} data file{'s' if files != 1 else ''}, {p.root})")
    declared = {k: v for p in combo.packages for k, v in p.options.items()}
    if declared:
        out.append("options:")
        for name, spec in declared.items():
            values = " | ".join(map(str, spec["values"]))
            desc = f"  {spec['description']}" if spec.get("description") else ""
            out.append(f"  {name} = {combo.options.get(name)}  ({values}; default {spec['default']}){desc}")
    shown = f"{lo}" if lo == hi else f"{lo}-{hi}"
    out.append(f"players: {shown}" + (f" (described for {combo.players})" if combo.players else ""))
    layers = sum(len(m.get("layers") or {}) for m in data["modifiers"].values() if isinstance(m, dict))
    counts = [_count(len(data["steps"]), "step"), _count(len(data["triggers"]), "trigger"),
              _count(len(data["modifiers"]), "modifier") + f" ({_count(layers, 'layer entry', 'layer entries')})",
              _count(len(data["procedures"]), "procedure"), _count(len(data["functions"]), "function"),
              _count(len(data["events"]), "event")]
    if data["checks"]:
        counts.append(_count(len(data["checks"]), "check"))
    out.append("contents: " + ", ".join(counts))
    kinds = [f"{k.name} ({len(k.items)})" if k.items else k.name for k in model.kinds.values()]
    out.append("kinds: " + ", ".join(kinds))
    if model.board is not None:
        b = model.board
        out.append(f"board: {len(b.spaces)} {b.space_kind} spaces, {len(b.regions)} regions, "
                   f"{len(b.links())} links ({', '.join(f'{k} {len(b.links(k))}' for k in b.neighbors_by_kind)})")
    out.append("flow:" + ("" if data["flow"] else " (none)"))
    base = combo.base.id
    _outline(data["flow"], data, res, base, out, 1, set())
    changed = sorted((path, who) for path, who in res.provenance.items()
                     if who[0] != base and path.count(".") == 1 and path.split(".")[0] in ("steps", "triggers",
                                                                                        "procedures", "functions"))
    if changed:
        out.append("added or replaced by expansions:")
        for path, (pkg, loc) in changed:
            out.append(f"  {path}  [{pkg}] {loc}")
    if res.item_patches:
        out.append("items of flows and procedures changed by expansions:")
        out.extend(f"  {line}" for line in _item_patch_lines(res))
    return "\n".join(out)


def _item_patch_lines(res: Resolved) -> list[str]:
    """One line per item patch: `remove_item procedures.collect_taxes.do.unrest  [pkg] file:line`."""
    return [f"{op} {path}.{name}  [{pkg}] {loc}" for op, path, name, pkg, loc in res.item_patches]


def _options_line(combo: Combo) -> str:
    return ", ".join(f"{k}={v}" for k, v in combo.options.items())


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _outline(items: Any, data: dict, res: Resolved, base: str, out: list[str], depth: int,
             expanded: set[str]) -> None:
    """One line per flow item, children indented; named steps with a flow are opened once."""
    if depth > MAX_OUTLINE_DEPTH:
        out.append("  " * depth + "...")
        return
    if isinstance(items, str):
        out.append("  " * depth + f"do: {_short(items)}")
        return
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        who = res.inserted_by(items, i)
        mark = f"  [+{who[0]}]" if who else ""
        pad = "  " * depth
        if isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("step"), str)):
            name = item if isinstance(item, str) else item["step"]
            args = item.get("with") if isinstance(item, dict) else None
            shown = name + (f" ({', '.join(f'{k}={v}' for k, v in args.items())})" if isinstance(args, dict) else "")
            step = data["steps"].get(name)
            owner = res.provenance.get(f"steps.{name}")
            if owner and owner[0] != base and not who:
                mark += f"  [{owner[0]}]"
            title = f"  \"{step['title']}\"" if isinstance(step, dict) and step.get("title") else ""
            if isinstance(step, dict) and isinstance(step.get("flow"), list):
                if name in expanded:
                    out.append(f"{pad}{shown}{title}{mark}  (see above)")
                    continue
                out.append(f"{pad}{shown}{title}{mark}")
                _outline(step["flow"], data, res, base, out, depth + 1, expanded | {name})
            else:
                out.append(f"{pad}{shown}{title}{mark}")
            continue
        if not isinstance(item, dict):
            out.append(f"{pad}?{mark}")
            continue
        if "choose" in item:
            extra = [f"player: {_short(item['player'])}"] if "player" in item else []
            extra += [k for k in ("secret", "optional") if item.get(k)]
            out.append(f"{pad}choose {item['choose']} from {_short(item.get('from', '[]'))}"
                       f"{' (' + ', '.join(extra) + ')' if extra else ''}{mark}")
            _outline(item.get("then"), data, res, base, out, depth + 1, expanded)
            if "else" in item:
                out.append(f"{pad}if there is no option:")
                _outline(item["else"], data, res, base, out, depth + 1, expanded)
        elif "repeat" in item or "for" in item or "while" in item:  # loops: a heading, then their `do`
            if "repeat" in item:
                head = f"repeat {_short(item['repeat'])}" + (f" as {item['as']}" if item.get("as") else "")
            elif "for" in item:
                head = f"for {item['for']} in {_short(item.get('in'))}"
            else:
                head = f"while {_short(item['while'])}"
            out.append(f"{pad}{head}{mark}")
            _outline(item.get("do"), data, res, base, out, depth + 1, expanded)
        elif "if" in item:
            out.append(f"{pad}if {_short(item['if'])}{mark}")
            _outline(item.get("then"), data, res, base, out, depth + 1, expanded)
            if "else" in item:
                out.append(f"{pad}else{mark}")
                _outline(item["else"], data, res, base, out, depth + 1, expanded)
        elif "do" in item:
            if isinstance(item["do"], list):
                out.append(f"{pad}do{mark}")
                _outline(item["do"], data, res, base, out, depth + 1, expanded)
            else:
                out.append(f"{pad}do: {_short(item['do'])}{mark}")
        else:
            out.append(f"{pad}?{mark}")


def _short(x: Any, width: int = 60) -> str:
    text = " ".join(str(x).split())
    first = str(x).strip().splitlines()
    if len(first) > 1:
        text = first[0].strip() + " ..."
    return text if len(text) <= width else text[:width - 3] + "..."


# ---- the resolved ruleset ----

def resolved_text(res: Resolved, combo: Combo) -> str:
    """The resolved ruleset as YAML, with `# package file:line` after every entry that has a
    recorded origin (entries, and whatever a patch set inside one)."""
    out = [f"# {combo.name}: the resolved ruleset" + (f" ({_options_line(combo)})" if combo.options else ""),
           "# Each entry ends with the package and the file:line that set it (a patch, for patched entries)."]
    emitter = _Emitter(res, out)
    sections = [s for s in SECTION_ORDER if s in res.data] + \
        [s for s in (*KEYED_SECTIONS, *LIST_SECTIONS) if s in res.data and s not in SECTION_ORDER]
    for section in sections:
        value = res.data[section]
        if value in ({}, []):
            continue
        emitter.entry(section, value, section, 0)
    if res.item_patches:  # removed items have no line above to sit on: listed here, as comments
        out.append("# Items of flows and procedures that expansions inserted, replaced or removed:")
        out.extend(f"#   {line}" for line in _item_patch_lines(res))
    return "\n".join(out)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*( [A-Za-z0-9_.\-]+)*")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v) if v == v and v not in (float("inf"), float("-inf")) else str(v).replace("inf", ".inf")
    s = str(v)
    if _PLAIN.fullmatch(s) and s.lower() not in _RESERVED:
        return s
    return json.dumps(s, ensure_ascii=False)


INLINE_WIDTH = 100


def _inline(value: Any, depth: int = 0) -> str | None:
    """`[a, b]` / `{k: v}` for small values of scalars (nested at most 2 deep), else None."""
    if depth > 2:
        return None
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            inner = _inline(v, depth + 1)
            if inner is None:
                return None
            parts.append(f"{_scalar(k)}: {inner}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        parts = []
        for v in value:
            inner = _inline(v, depth + 1)
            if inner is None:
                return None
            parts.append(inner)
        return "[" + ", ".join(parts) + "]"
    if isinstance(value, str) and ("\n" in value or len(value) > INLINE_WIDTH):
        return None
    text = _scalar(value)
    return text if len(text) <= INLINE_WIDTH else None


def _comment(who: tuple[str, Loc] | None) -> str:
    if who is None:
        return ""
    pkg, loc = who
    where = f"{loc.file}:{loc.line}" if loc.line else (loc.file or "?")
    return f"  # {pkg} {where}"


class _Emitter:
    """A small YAML writer that can put a comment after any entry or list item."""

    def __init__(self, res: Resolved, out: list[str]):
        self.res = res
        self.out = out
        # Paths with a recorded origin somewhere below them: those are written out in full
        # (one line per key) so that the inner comment has a line to sit on.
        self.above: set[str] = set()
        for path in res.provenance:
            while "." in path:
                path = path.rpartition(".")[0]
                if path in self.above:
                    break
                self.above.add(path)

    def entry(self, key: Any, value: Any, path: str, indent: int) -> None:
        """`key: value` at `indent`, with the origin of `path` as a comment when known."""
        note = _comment(self.res.provenance.get(path))
        self.value(f"{' ' * indent}{_scalar(key)}:", value, path, indent, note)

    def value(self, head: str, value: Any, path: str, indent: int, note: str) -> None:
        quiet = path not in self.above and not self._has_origins(value)
        short = _inline(value) if quiet and isinstance(value, (dict, list)) else None
        if short is not None and len(head) + len(short) <= INLINE_WIDTH:
            self.out.append(f"{head} {short}{note}")
        elif isinstance(value, dict) and value:
            self.out.append(head + note)
            for k, v in value.items():
                self.entry(k, v, f"{path}.{k}", indent + 2)
        elif isinstance(value, list) and value:
            self.out.append(head + note)
            self.items(value, path, indent + 2)
        elif isinstance(value, str) and "\n" in value.rstrip("\n"):
            chomp = "" if value.endswith("\n") and not value.endswith("\n\n") else "-"
            if value.endswith("\n\n") or value[:1] in (" ", "\t"):
                self.out.append(f"{head} {json.dumps(value, ensure_ascii=False)}{note}")
                return
            self.out.append(f"{head} |{chomp}{note}")
            for line in value.rstrip("\n").split("\n"):
                self.out.append((" " * (indent + 2) + line) if line else "")
        else:
            text = "{}" if value == {} else "[]" if value == [] else _scalar(value)
            self.out.append(f"{head} {text}{note}")

    def _has_origins(self, value: Any, depth: int = 0) -> bool:
        """Whether a patch inserted items into `value` or into a list inside it."""
        if depth > 64 or not self.res.flow_origins:
            return False
        if isinstance(value, list):
            if any(known is value for known, _ in self.res.flow_origins):
                return True
            return any(self._has_origins(v, depth + 1) for v in value if isinstance(v, (dict, list)))
        if isinstance(value, dict):
            return any(self._has_origins(v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
        return False

    def items(self, lst: list, path: str, indent: int) -> None:
        pad = " " * indent
        for i, item in enumerate(lst):
            note = _comment(self.res.inserted_by(lst, i))
            if note:
                note = note.replace("  # ", "  # inserted by ", 1)
            if isinstance(item, dict) and item:
                first = True
                for k, v in item.items():
                    lead = f"{pad}- " if first else f"{pad}  "
                    self.value(f"{lead}{_scalar(k)}:", v, f"{path}[{i}].{k}", indent + 2, note if first else "")
                    first = False
            elif isinstance(item, list) and item:
                self.out.append(f"{pad}-{note}")
                self.items(item, f"{path}[{i}]", indent + 2)
            else:
                self.value(f"{pad}-", item, f"{path}[{i}]", indent, note)


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("describe", help=help_of("describe"), epilog=EPILOG,
                       description="Summarize a combo: packages, options, flow outline; --resolved prints every "
                       "resolved entry with the file and line that set it.")
    d.add_argument("combo", metavar="COMBO")
    d.add_argument("--resolved", action="store_true", help="print the resolved ruleset with provenance")
    d.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--players", type=int, default=None)
    add_format_option(d)
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    diags = Diagnostics()
    if args.format == "json":
        data = describe_json(args.combo, parse_options(args.option), args.players, args.resolved, diags)
        if data is None:
            report(diags, "json")
            return 1
        print_json(data)
        return 0
    text = describe(args.combo, parse_options(args.option), args.players, args.resolved, diags)
    if text is None:
        report(diags)
        return 1
    print(safe_text(text))  # rule text may hold terminal control characters: shown escaped
    return 0
