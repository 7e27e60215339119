"""Layering: merge the data files of a combo's packages into one resolved ruleset.

Each package contributes entries to sections (`steps`, `triggers`, `kinds`...). Entries
have stable ids: their path, like `steps.plan` or `kinds.player.state.chests`. Within a
package an entry is defined once; a later package may add new entries freely, and changes
existing ones only through `patches:` (replace, merge, remove, insert into a flow). Every
resolved entry remembers the file and line that set it (provenance). Two packages that
touch the same entry with no order between them is an error naming both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.diagnostics import Diagnostics, Loc, did_you_mean
from engine.package import Combo, Package, ordered_before
from engine.schema import check_datafile
from engine.yamlio import load_yaml, loc_of

# Sections whose entries are keyed by stable ids; anything else in a data file is rejected
# by the schema before we get here.
KEYED_SECTIONS = ("globals", "constants", "kinds", "board", "functions", "procedures", "events",
                  "triggers", "modifiers", "steps", "result", "hints", "display")
LIST_SECTIONS = ("flow", "modifier_layers")
# How deep entries are tracked for provenance and conflicts: `kinds.player.state.chests` is 4.
ENTRY_DEPTH = {"kinds": 3, "board": 2, "modifiers": 3}


@dataclass
class Resolved:
    """The merged ruleset: plain data plus where each entry came from."""

    data: dict[str, Any]
    provenance: dict[str, tuple[str, Loc]] = field(default_factory=dict)  # path -> (package id, loc)
    touched: dict[str, list[tuple[str, Loc]]] = field(default_factory=dict)  # path -> packages changing it
    notes: list[tuple[str, str]] = field(default_factory=list)  # (package id, text)

    def where(self, path: str) -> str:
        got = self.provenance.get(path)
        return f"{got[0]} ({got[1]})" if got else "?"


def resolve(combo: Combo, diags: Diagnostics) -> Resolved:
    res = Resolved({s: {} for s in KEYED_SECTIONS} | {s: [] for s in LIST_SECTIONS})
    by_id = {p.id: p for p in combo.packages}
    for pkg in combo.packages:
        is_base = pkg is combo.base
        for df in pkg.files:
            if not _included(df.when, combo):
                continue
            data = load_yaml(df.path, diags, display_name=df.display)
            if data is None:
                continue
            if not check_datafile(data, df.display, diags):
                continue
            for section, body in data.items():
                if section == "notes":
                    res.notes.append((pkg.id, str(body)))
                elif section == "patches":
                    if is_base:
                        diags.add("P020", "a base ruleset has nothing to patch: write the entries directly",
                                  loc_of(data, "patches", key=True))
                    else:
                        for i, patch in enumerate(body):
                            _apply_patch(res, pkg, patch, loc_of(body, i), diags, by_id)
                elif section in LIST_SECTIONS:
                    _merge_list_section(res, pkg, section, body, loc_of(data, section, key=True), diags)
                else:
                    _add_entries(res, pkg, section, body, diags)
    return res


def _included(when: dict[str, list], combo: Combo) -> bool:
    for k, allowed in when.items():
        value = combo.players if k == "players" else combo.options.get(k)
        if value is None and k == "players":
            continue  # player count not fixed yet (validation): include everything
        if not any(str(a) == str(value) for a in allowed):
            return False
    return True


def _add_entries(res: Resolved, pkg: Package, section: str, body: dict, diags: Diagnostics,
                 prefix: str | None = None, container: dict | None = None, depth: int = 1) -> None:
    """Add each entry of `body` under `prefix`; entries deeper than the tracked depth are merged
    as whole values."""
    prefix = prefix or section
    container = res.data[section] if container is None else container
    max_depth = ENTRY_DEPTH.get(section, 1)
    for key, value in body.items():
        path = f"{prefix}.{key}"
        loc = loc_of(body, key, key=True)
        if key in container:
            if depth < max_depth and isinstance(container[key], dict) and isinstance(value, dict):
                _add_entries(res, pkg, section, value, diags, path, container[key], depth + 1)
                continue
            owner, first = res.provenance.get(path, ("?", Loc()))
            if owner == pkg.id:
                diags.add("P021", f"`{path}` is defined twice in `{pkg.id}` (first at {first})", loc)
            else:
                diags.add("P022", f"`{path}` already exists (set by {owner} at {first}); an expansion "
                          "changes it with a patch", loc,
                          hint=f"patches: [{{replace: {path}, value: ...}}] or merge:")
            continue
        container[key] = value
        _record(res, pkg, path, value, loc, depth, max_depth)


def _record(res: Resolved, pkg: Package, path: str, value: Any, loc: Loc, depth: int, max_depth: int) -> None:
    res.provenance[path] = (pkg.id, loc)
    if isinstance(value, dict) and depth < max_depth:
        for k, v in value.items():
            _record(res, pkg, f"{path}.{k}", v, loc_of(value, k, key=True), depth + 1, max_depth)


def _merge_list_section(res: Resolved, pkg: Package, section: str, body: list, loc: Loc,
                        diags: Diagnostics) -> None:
    if res.data[section]:
        owner, first = res.provenance.get(section, ("?", Loc()))
        diags.add("P021", f"`{section}` is already defined (by {owner} at {first}); "
                  "change it with a patch (insert before/after a step)", loc)
        return
    res.data[section] = list(body)
    res.provenance[section] = (pkg.id, loc)


# ---- patches ----

def _apply_patch(res: Resolved, pkg: Package, patch: dict, loc: Loc, diags: Diagnostics,
                 by_id: dict[str, Package]) -> None:
    op = next(k for k in ("replace", "merge", "remove", "insert") if k in patch)
    if op == "insert":
        _insert_step(res, pkg, patch, loc, diags, by_id)
        return
    path = str(patch[op])
    parent, key = _find(res.data, path)
    if parent is None or key not in parent:
        known = list(parent) if isinstance(parent, dict) else []
        diags.add("P023", f"{op}: there is no `{path}` to change", loc_of(patch, op),
                  hint=did_you_mean(key, known) if known else "")
        return
    if not _claim(res, pkg, path, loc, diags, by_id):
        return
    if op == "remove":
        del parent[key]
        for p in [p for p in res.provenance if p == path or p.startswith(path + ".")]:
            del res.provenance[p]
        return
    value = patch.get("value")
    if op == "replace":
        parent[key] = value
        res.provenance[path] = (pkg.id, loc)
        return
    if not isinstance(parent[key], dict) or not isinstance(value, dict):
        diags.add("P024", f"merge: `{path}` and the value must both be mappings", loc)
        return
    merged = dict(parent[key])
    _deep_merge(merged, value)
    parent[key] = merged
    for k in value:
        res.provenance[f"{path}.{k}"] = (pkg.id, loc_of(value, k, key=True))


def _deep_merge(into: dict, extra: dict) -> None:
    for k, v in extra.items():
        if isinstance(into.get(k), dict) and isinstance(v, dict):
            merged = dict(into[k])
            _deep_merge(merged, v)
            into[k] = merged
        else:
            into[k] = v


def _find(data: dict, path: str) -> tuple[Any, str]:
    parts = path.split(".")
    cur: Any = data
    for part in parts[:-1]:
        if not isinstance(cur, dict) or part not in cur:
            return (cur if isinstance(cur, dict) else None), part
        cur = cur[part]
    return (cur if isinstance(cur, dict) else None), parts[-1]


def _claim(res: Resolved, pkg: Package, path: str, loc: Loc, diags: Diagnostics,
           by_id: dict[str, Package]) -> bool:
    """Record that `pkg` changes `path`; two unordered packages changing it is a conflict."""
    others = res.touched.setdefault(path, [])
    for other_id, other_loc in others:
        if other_id != pkg.id and not ordered_before(other_id, pkg.id, by_id):
            diags.add("P025", f"`{pkg.id}` and `{other_id}` both change `{path}` and nothing orders them",
                      loc, hint=f"the other change is at {other_loc}; add `after: [{other_id}]` to "
                      f"{pkg.id}'s manifest (or `requires`) to say which comes first")
            return False
    others.append((pkg.id, loc))
    return True


def _insert_step(res: Resolved, pkg: Package, patch: dict, loc: Loc, diags: Diagnostics,
                 by_id: dict[str, Package]) -> None:
    item = patch["insert"]
    anchor = patch.get("before") or patch.get("after")
    where = "before" if "before" in patch else "after"
    found = _flow_lists_with(res.data, anchor)
    if not found:
        names = _all_flow_names(res.data)
        diags.add("P026", f"insert: no flow step named `{anchor}` to insert {where}", loc_of(patch, where),
                  hint=did_you_mean(str(anchor), names))
        return
    if len(found) > 1:
        diags.add("P027", f"insert: step `{anchor}` appears in {len(found)} flows; name a unique step",
                  loc_of(patch, where))
        return
    path, lst = found[0]
    if not _claim(res, pkg, f"{path}:{where}:{anchor}", loc, diags, by_id):
        return
    i = next(i for i, x in enumerate(lst) if _step_name(x) == anchor)
    lst.insert(i if where == "before" else i + 1, item)
    res.provenance[f"{path}+{_step_name(item) or 'item'}"] = (pkg.id, loc)


def _step_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("step"), str):
        return item["step"]
    return None


def _iter_flow_lists(data: dict):
    """Every flow list in the ruleset, with a readable path: the root flow, step flows and
    the nested `do`/`then`/`else` lists of flow items."""
    def walk(path: str, lst: Any):
        if not isinstance(lst, list):
            return
        yield path, lst
        for i, item in enumerate(lst):
            if isinstance(item, dict):
                for key in ("do", "then", "else", "flow"):
                    if isinstance(item.get(key), list):
                        yield from walk(f"{path}[{i}].{key}", item[key])
    yield from walk("flow", data.get("flow"))
    for name, step in (data.get("steps") or {}).items():
        if isinstance(step, dict):
            for key in ("flow", "then", "else"):
                yield from walk(f"steps.{name}.{key}", step.get(key))


def _flow_lists_with(data: dict, anchor: Any) -> list[tuple[str, list]]:
    return [(p, lst) for p, lst in _iter_flow_lists(data) if any(_step_name(x) == anchor for x in lst)]


def _all_flow_names(data: dict) -> list[str]:
    return [n for _, lst in _iter_flow_lists(data) for n in map(_step_name, lst) if n]
