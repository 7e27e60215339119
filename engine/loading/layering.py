"""Layering: merge the data files of a combo's packages into one resolved ruleset.

Each package contributes entries to sections (`steps`, `triggers`, `kinds`...). Entries
have stable ids: their path, like `steps.plan` or `kinds.player.state.chests`. Within a
package an entry is defined once; a later package may add new entries freely, and changes
existing ones only through `patches:` (replace, merge, remove, insert into a flow). Every
resolved entry remembers the file and line that set it (provenance). Two packages that
touch the same entry with no order between them is an error naming both.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.memo import ScopedMemo
from engine.base.record import Record
from engine.loading.package import Combo, Package, ordered_before, package_cache, same_value
from engine.loading.schema import check_data, check_datafile, schema
from engine.loading.yamlcache import load_yaml_cached
from engine.loading.yamlio import LocDict, LocList, loc_of

# Sections whose entries are keyed by stable ids; anything else in a data file is rejected
# by the schema before we get here.
KEYED_SECTIONS = ("globals", "constants", "kinds", "board", "functions", "procedures", "events",
                  "triggers", "modifiers", "steps", "result", "hints", "display", "checks", "unused")
LIST_SECTIONS = ("flow", "modifier_layers")
# How deep entries are tracked for provenance and conflicts: `kinds.player.state.chests` is 4.
ENTRY_DEPTH = {"kinds": 3, "board": 2, "modifiers": 3}


class Resolved(Record):
    """The merged ruleset: plain data plus where each entry came from."""

    FIELDS = ("data", "provenance", "touched", "notes", "flow_origins", "patched_sections", "item_patches",
              "incomplete", "flow_lists", "owned", "flow_names")
    COMPARE = FIELDS[:8]
    REPR = FIELDS[:8]

    def __init__(self, data: dict[str, Any], provenance: dict[str, tuple[str, Loc]] | None = None,
                 touched: dict[str, list[tuple[str, Loc]]] | None = None, notes: list[tuple[str, str]] | None = None,
                 flow_origins: list[tuple[list, list[tuple[str, Loc] | None]]] | None = None,
                 patched_sections: set[str] | None = None,
                 item_patches: list[tuple[str, str, str, str, Loc]] | None = None, incomplete: bool = False,
                 flow_lists: list[tuple[str, list, tuple]] | None = None, owned: dict[int, Any] | None = None,
                 flow_names: dict[int, tuple[list, set]] | None = None) -> None:
        self.data = data
        self.provenance = {} if provenance is None else provenance  # path -> (package id, loc)
        self.touched = {} if touched is None else touched  # path -> packages changing it
        self.notes = [] if notes is None else notes  # (package id, text)
        # Flow lists that patches inserted into, each with a parallel list naming, per item, the
        # package that inserted it (None: the item was written in the list's own file).
        self.flow_origins = [] if flow_origins is None else flow_origins
        self.patched_sections = set() if patched_sections is None else patched_sections  # by replace/merge/remove
        # Item patches in load order: (what was done, e.g. "remove_item" or "insert after", the list's
        # path, the item's name, package, patch location); describe lists them, removals included.
        self.item_patches = [] if item_patches is None else item_patches
        self.incomplete = incomplete  # a data file could not be used (its errors are reported)
        # Every list that flow item patches address, with its path (`_iter_flow_lists`), kept from
        # one such patch to the next; None after any change that may add, drop or move a list.
        self.flow_lists = flow_lists
        # Within `reading_cache()` the data files' values are shared by every build, read-only:
        # a container is copied into this build (and kept here by id) before layering changes it.
        # None: the values are this build's own (no cache), changed in place.
        self.owned = owned
        # The names the items of a flow list answer to, by the list's id (with the list, which is
        # checked: an id is only unique while its object lives); dropped when the list changes.
        self.flow_names = {} if flow_names is None else flow_names

    def where(self, path: str) -> str:
        got = self.provenance.get(path)
        return f"{got[0]} ({got[1]})" if got else "?"

    def origin(self, path: str) -> tuple[str, Loc] | None:
        """Who set the entry at `path`, or the nearest enclosing entry that has a record."""
        while path:
            got = self.provenance.get(path)
            if got is not None:
                return got
            path = path[:max(path.rfind("."), path.rfind("["), 0)]
        return None

    def inserted_by(self, lst: list, index: int) -> tuple[str, Loc] | None:
        """(package, patch location) if item `index` of the flow list `lst` was inserted by a patch."""
        for known, origins in self.flow_origins:
            if known is lst:
                return origins[index] if 0 <= index < len(origins) else None
        return None


def resolve(combo: Combo, diags: Diagnostics) -> Resolved:
    """Merge the data files of every package of `combo` (those its options and player count
    load), apply the expansions' patches in load order, and record where everything came from."""
    res = Resolved(_empty_data())
    memo = _CACHE.get()
    if memo is not None:  # the files' values are shared: copy on change (see `_own`)
        res.owned = {id(c): c for c in (res.data, *res.data.values())}
    by_id = {p.id: p for p in combo.packages}
    for pkg in combo.packages:
        files = [df for df in pkg.files if included(df.when, combo)]
        if pkg is not combo.base:
            _lay(res, pkg, files, False, diags, by_id)
            continue
        # Within `reading_cache()` the base package's files, laid once without any diagnostic,
        # are laid for every build that loads the same files (the other option values, player
        # counts and expansions) by a copy of the result, changed only where later packages do.
        key = _base_key(pkg, files) if memo is not None else None
        laid = memo.get(key) if key is not None else None
        if laid is None:
            mark = len(diags.items)
            _lay(res, pkg, files, True, diags, by_id)
            if key is None or len(diags.items) != mark or res.incomplete:
                continue
            laid = memo[key] = (res.data, res.provenance, res.notes)  # never changed again: see below
        res = _from_base(*laid)
    # A patch may have removed a whole section: later stages expect every section.
    for s in KEYED_SECTIONS:
        if not isinstance(res.data.get(s), dict):
            res.data[s] = LocDict()
    for s in LIST_SECTIONS:
        if not isinstance(res.data.get(s), list):
            res.data[s] = LocList()
    if res.patched_sections:
        check_resolved(res, diags)
    return res


def _lay(res: Resolved, pkg: Package, files: list, is_base: bool, diags: Diagnostics,
         by_id: dict[str, Package]) -> None:
    """Lay the data files of one package over what `res` holds."""
    for df in files:
        errors = len(diags.errors)
        data = _read_datafile(df.path, df.display, diags)
        if data is None:
            res.incomplete = res.incomplete or len(diags.errors) > errors
            continue
        for section, body in data.items():
            if section not in res.data.key_locs:  # where each section is first written
                res.data.key_locs[section] = loc_of(data, section, key=True)
                res.data.value_locs[section] = loc_of(data, section)
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
            elif isinstance(body, dict):
                _add_entries(res, pkg, section, body, diags)


def _base_key(pkg: Package, files: list) -> tuple | None:
    """The memo key of a base package laid with these files (None if a file cannot be looked at)."""
    keys = [_file_key(df.path, df.display) for df in files]
    return None if None in keys else ("base laid", pkg.id, str(pkg.root), *keys)


def _from_base(data: LocDict, provenance: dict, notes: list) -> Resolved:
    """A build's start from a base package laid before: its own top level, every section shared
    (copied into the build when changed, like the files' values: `_own`). The build that laid
    the base starts from it the same way, so nothing changes what is remembered."""
    top = dict.__new__(LocDict)
    top.update(data)
    top.file, top.loc = data.file, data.loc
    top.key_locs, top.value_locs = data.key_locs.copy(), data.value_locs.copy()
    res = Resolved(top, dict(provenance), notes=list(notes))
    res.owned = {id(top): top}
    return res


def _empty_data() -> LocDict:
    """The resolved data before any file: every section, empty. The containers are located
    mappings and lists, so that `loc_of(data["steps"], name)` finds where an entry is written
    whichever file or package it came from."""
    data = LocDict()
    for s in KEYED_SECTIONS:
        data[s] = LocDict()
    for s in LIST_SECTIONS:
        data[s] = LocList()
    return data


def _set_loc(container: Any, key: Any, key_loc: Loc, value_loc: Loc) -> None:
    if isinstance(container, LocDict):
        container.key_locs[key] = key_loc
        container.value_locs[key] = value_loc


def _read_datafile(path: Path, display: str, diags: Diagnostics) -> dict | None:
    """A data file, read and checked against the schema; None when it cannot be used.

    Inside `reading_cache()` each file is read once; every reader gets the same values, which
    layering never changes (it copies a container before changing it: `_own`), and the same
    diagnostics again.
    """
    cache = _CACHE.get()
    key = None
    if cache is not None:
        key = _file_key(path, display)
        if key is not None and key in cache:
            data, found = cache[key]
            diags.extend(found)
            return data
    local = Diagnostics()
    data = load_yaml_cached(path, local, display_name=display)
    if data is not None:
        if data == {}:
            local.add("S010", "this data file has no sections", Loc(display, 1, 1),
                      hint="remove it from the package, or write its sections", severity="warning")
            data = None
        elif not check_datafile(data, display, local):
            data = None
    elif not local.items:
        local.add("S010", "this data file is empty", Loc(display, 1, 1),
                  hint="remove it from the package, or write its sections", severity="warning")
    diags.extend(local)
    if cache is not None and key is not None:
        cache[key] = (data, list(local))
    return data


_CACHE = ScopedMemo("daimyo_reading_cache")


def _file_key(path: Path, display: str) -> tuple | None:
    """A data file as the reading cache knows it: its path and what its last change left."""
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (str(path), display, st.st_mtime_ns, st.st_size, st.st_ino)


@contextmanager
def reading_cache() -> Iterator[None]:
    """Within this block, each data file and manifest is read and schema-checked once, and each
    valid content of the sections patches change is checked once (`check_resolved`): validation
    builds the same files for several option values and combos."""
    with _CACHE.scope(), package_cache():
        yield


def _own(res: Resolved, parent: Any, key: Any) -> Any:
    """`parent[key]` as a container of this build's own, copied (one level, with its locations)
    the first time it is changed: within `reading_cache()` the values of the data files are
    shared by every build. `parent` must be this build's own already (see `_own_keys`)."""
    child = parent[key]
    owned = res.owned
    if owned is None or id(child) in owned:
        return child
    cls = type(child)
    if cls is LocDict:
        copy: Any = dict.__new__(LocDict)
        copy.update(child)
        copy.file, copy.loc = child.file, child.loc
        copy.key_locs, copy.value_locs = child.key_locs.copy(), child.value_locs.copy()
    elif cls is LocList:
        copy = list.__new__(LocList)
        copy.extend(child)
        copy.file, copy.loc, copy.item_locs = child.file, child.loc, child.item_locs.copy()
    elif isinstance(child, dict):
        copy = dict(child)
    elif isinstance(child, list):
        copy = list(child)
    else:
        return child
    owned[id(copy)] = copy  # kept: an id is only unique while its object lives
    parent[key] = copy
    return copy


def _own_keys(res: Resolved, keys: tuple) -> Any:
    """The container at `res.data[k0][k1]...`, each container on the way made this build's own."""
    cur: Any = res.data
    for k in keys:
        cur = _own(res, cur, k)
    return cur


def included(when: dict[str, list], combo: Combo) -> bool:
    """Whether a file with this `when:` loads in `combo` (every player count when none is fixed)."""
    for k, allowed in when.items():
        value = combo.players if k == "players" else combo.options.get(k)
        if value is None and k == "players":
            # Player count not fixed yet (validate, describe, play without --players): read the
            # combo as for its fewest players. Including every file instead would merge files
            # meant for different counts (a board per count) and report them as clashing;
            # validation compiles each other count the files name separately.
            value = max(p.players[0] for p in combo.packages)
        if not any(same_value(a, value) for a in allowed):
            return False
    return True


def _add_entries(res: Resolved, pkg: Package, section: str, body: dict, diags: Diagnostics,
                 prefix: str | None = None, container: dict | None = None, depth: int = 1) -> None:
    """Add each entry of `body` under `prefix`; entries deeper than the tracked depth are merged
    as whole values."""
    prefix = prefix or section
    if container is None:
        res.data.setdefault(section, {})
        container = _own(res, res.data, section)
    res.flow_lists = None
    max_depth = ENTRY_DEPTH.get(section, 1)
    for key, value in body.items():
        path = f"{prefix}.{key}"
        loc = loc_of(body, key, key=True)
        if key in container:
            if depth < max_depth and isinstance(container[key], dict) and isinstance(value, dict):
                _add_entries(res, pkg, section, value, diags, path, _own(res, container, key), depth + 1)
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
        _set_loc(container, key, loc, loc_of(body, key))
        _record(res, pkg, path, value, loc, depth, max_depth)


def _record(res: Resolved, pkg: Package, path: str, value: Any, loc: Loc, depth: int, max_depth: int) -> None:
    res.provenance[path] = (pkg.id, loc)
    if isinstance(value, dict) and depth < max_depth:
        for k, v in value.items():
            _record(res, pkg, f"{path}.{k}", v, loc_of(value, k, key=True), depth + 1, max_depth)


def _merge_list_section(res: Resolved, pkg: Package, section: str, body: list, loc: Loc,
                        diags: Diagnostics) -> None:
    if res.data.get(section):
        owner, first = res.provenance.get(section, ("?", Loc()))
        if owner == pkg.id:
            diags.add("P021", f"`{section}` is defined twice in `{pkg.id}` (first at {first})", loc)
        else:
            diags.add("P022", f"`{section}` already exists (set by {owner} at {first}); an expansion "
                      "changes it with a patch", loc, hint="insert before/after a step, or "
                      f"`replace: {section}`")
        return
    res.data[section] = body if isinstance(body, LocList) else LocList(body)
    res.provenance[section] = (pkg.id, loc)
    res.flow_lists = None


# ---- patches ----

def _apply_patch(res: Resolved, pkg: Package, patch: dict, loc: Loc, diags: Diagnostics,
                 by_id: dict[str, Package]) -> None:
    op = next((k for k in ("replace", "merge", "remove", "insert", "replace_item", "remove_item") if k in patch), None)
    if op is None:  # the schema rejects this; stay safe if called on unchecked data
        return
    if op == "insert":
        _insert_step(res, pkg, patch, loc, diags, by_id)
        return
    if op in ("replace_item", "remove_item"):
        _change_item(res, pkg, patch, op, loc, diags, by_id)
        return
    path = str(patch[op])
    parent, key = _find(res.data, path)
    if parent is None or key not in parent or (parent is res.data and key not in (*KEYED_SECTIONS, *LIST_SECTIONS)):
        if res.incomplete:
            return  # the entry is probably in a file that could not be read: that error says why
        known = list(parent) if isinstance(parent, dict) else []
        diags.add("P023", f"{op}: there is no `{path}` to change", loc_of(patch, op),
                  hint=did_you_mean(key, known) if known else "paths are entry ids such as `steps.plan` "
                  "or `kinds.player.state.chests`")
        return
    if not _claim(res, pkg, path, loc, diags, by_id):
        return
    section = path.split(".", 1)[0]
    res.patched_sections.add(section)
    res.flow_lists = None
    if res.owned is not None:  # the containers on the way to `parent` become this build's own
        cur: Any = res.data
        for part in path.split(".")[:-1]:
            cur = _own(res, cur, _key_in(cur, part))
        parent = cur
    if op == "remove":
        del parent[key]
        _forget(res, path)
        return
    value = patch.get("value")
    if op == "replace":
        parent[key] = value
        _set_loc(parent, key, loc_of(patch, op), loc_of(patch, "value"))
        _forget(res, path)
        depth = path.count(".")
        _record(res, pkg, path, value, loc, depth, ENTRY_DEPTH.get(section, 1))
        return
    if not isinstance(parent[key], dict) or not isinstance(value, dict):
        diags.add("P024", f"merge: `{path}` and the value must both be mappings", loc)
        return
    merged = copy_map(parent[key])
    _deep_merge(merged, value)
    parent[key] = merged
    for k in value:
        res.provenance[f"{path}.{k}"] = (pkg.id, loc_of(value, k, key=True))


def _forget(res: Resolved, path: str) -> None:
    """Drop the provenance of `path` and everything under it (it was replaced or removed)."""
    under = path + "."
    for p in [p for p in res.provenance if p == path or p.startswith(under)]:
        del res.provenance[p]


def copy_map(d: dict) -> LocDict:
    """A shallow copy that keeps the locations of the entries."""
    out = LocDict(d)
    if isinstance(d, LocDict):
        out.file, out.loc = d.file, d.loc
        out.key_locs, out.value_locs = dict(d.key_locs), dict(d.value_locs)
    return out


def _deep_merge(into: dict, extra: dict) -> None:
    for k, v in extra.items():
        if isinstance(into.get(k), dict) and isinstance(v, dict):
            merged = copy_map(into[k])
            _deep_merge(merged, v)
            into[k] = merged
        else:
            into[k] = v
        _set_loc(into, k, loc_of(extra, k, key=True), loc_of(extra, k))


def _find(data: dict, path: str) -> tuple[Any, Any]:
    """The mapping holding the last part of `path`, and that part; (None, part) if the way
    there is not a chain of mappings. Parts that are whole numbers also match number keys
    (YAML reads `3:` as the number 3)."""
    parts = path.split(".")
    cur: Any = data
    for part in parts[:-1]:
        part = _key_in(cur, part)
        if not isinstance(cur, dict) or part not in cur:
            return (cur if isinstance(cur, dict) else None), part
        cur = cur[part]
    return (cur if isinstance(cur, dict) else None), _key_in(cur, parts[-1])


def _key_in(container: Any, part: str) -> Any:
    if isinstance(container, dict) and part not in container and part.lstrip("-").isdigit():
        try:
            if int(part) in container:
                return int(part)
        except ValueError:  # pragma: no cover - isdigit() admits some non-ASCII digits
            pass
    return part


def _claim(res: Resolved, pkg: Package, path: str, loc: Loc, diags: Diagnostics,
           by_id: dict[str, Package]) -> bool:
    """Record that `pkg` changes `path`; two unordered packages changing it (or an entry
    inside it, or around it) is a conflict, and so is changing an entry that another package
    added without saying that package comes first."""
    for other_path, changes in res.touched.items():
        if not _overlap(path, other_path):
            continue
        for other_id, other_loc in changes:
            if other_id != pkg.id and not ordered_before(other_id, pkg.id, by_id):
                what = f"`{path}`" if other_path == path else f"`{path}` and `{other_path}`"
                diags.add("P025", f"`{pkg.id}` and `{other_id}` both change {what} and nothing orders them",
                          loc, hint=f"the other change is at {other_loc}; add `after: [{other_id}]` to "
                          f"{pkg.id}'s manifest (or `requires`) to say which comes first")
                return False
    owner = res.origin(path.split(":", 1)[0])
    if owner is not None and owner[0] != pkg.id and owner[0] in by_id \
            and not ordered_before(owner[0], pkg.id, by_id):
        diags.add("P025", f"`{pkg.id}` changes `{path}`, which `{owner[0]}` adds, and nothing orders "
                  "the two packages", loc, hint=f"`{owner[0]}` sets it at {owner[1]}; add "
                  f"`after: [{owner[0]}]` (or `requires`) to {pkg.id}'s manifest")
        return False
    res.touched.setdefault(path, []).append((pkg.id, loc))
    return True


def _overlap(a: str, b: str) -> bool:
    """Whether two patched paths touch the same data: equal, or one inside the other."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _insert_step(res: Resolved, pkg: Package, patch: dict, loc: Loc, diags: Diagnostics,
                 by_id: dict[str, Package]) -> None:
    item = patch["insert"]
    anchor = patch.get("before") or patch.get("after")
    where = "before" if "before" in patch else "after"
    got = _flow_item(res, anchor, loc_of(patch, where), diags,
                     missing=f"insert: no flow step or procedure block named `{anchor}` to insert {where}",
                     ambiguous="insert: `{anchor}` appears in {n} lists ({paths})")
    claimed = _claim_item(res, pkg, got, where, loc, diags, by_id)
    if claimed is None:
        return
    path, lst, i, anchor, origins = claimed
    at = i if where == "before" else i + 1
    lst.insert(at, item)
    res.flow_names.pop(id(lst), None)
    if _moves_lists(lst, at):
        res.flow_lists = None
    locs = getattr(lst, "item_locs", None)
    if isinstance(locs, list) and len(locs) == len(lst) - 1:  # the inserted item is located at the patch
        locs.insert(at, loc_of(patch, "insert"))
    origins.insert(at, (pkg.id, loc))
    res.provenance[f"{path}+{_step_name(item) or 'item'}"] = (pkg.id, loc)
    res.item_patches.append((f"insert {_step_name(item) or 'an item'} {where}", path, anchor, pkg.id, loc))


def _change_item(res: Resolved, pkg: Package, patch: dict, op: str, loc: Loc, diags: Diagnostics,
                 by_id: dict[str, Package]) -> None:
    """`replace_item: NAME` with `value:`, or `remove_item: NAME`: one item of a flow, found by its
    step name or `label` wherever it stands, so a variant changes one line of a flow, not the flow."""
    name = patch[op]
    got = _flow_item(res, name, loc_of(patch, op), diags,
                     missing=f"{op}: no flow item or procedure block named `{name}`",
                     ambiguous=f"{op}: item `{{anchor}}` appears in {{n}} lists ({{paths}})",
                     fallback_hint="name a flow item with `label:`, a procedure block with `name:`")
    claimed = _claim_item(res, pkg, got, "item", loc, diags, by_id)
    if claimed is None:
        return
    path, lst, i, name, origins = claimed
    res.item_patches.append((op, path, name, pkg.id, loc))
    res.flow_names.pop(id(lst), None)
    if op == "remove_item":
        if _moves_lists(lst, i):
            res.flow_lists = None
        del lst[i]
        del origins[i]
        return
    if _holds_lists(lst[i]) or _holds_lists(patch.get("value")):
        res.flow_lists = None
    lst[i] = patch.get("value")
    origins[i] = (pkg.id, loc)
    res.provenance[f"{path}+{_step_name(lst[i]) or name}"] = (pkg.id, loc)


def _claim_item(res: Resolved, pkg: Package, got: tuple[str, list, int, Any, tuple] | None, what: str,
                loc: Loc, diags: Diagnostics, by_id: dict[str, Package]) -> tuple[str, list, int, Any, list] | None:
    """The item `_flow_item` found, claimed for `pkg` (`what`: before, after or item, so two
    packages changing the same place conflict), its section marked patched (the item is
    checked in place), with its list (this build's own, to be changed) and the list's origins;
    None if not found or already claimed."""
    if got is None:
        return None
    path, lst, i, name, keys = got
    if not _claim(res, pkg, f"{path}:{what}:{name}", loc, diags, by_id):
        return None
    res.patched_sections.add(path.split(".", 1)[0].split("[", 1)[0])
    if res.owned is not None and id(lst) not in res.owned:
        lst = _own_flow_list(res, keys)
    return path, lst, i, name, _flow_origins(res, lst)


def _own_flow_list(res: Resolved, keys: tuple) -> list:
    """The flow list at `keys` made this build's own (with the containers on the way); the
    remembered flow lists on that way now point at the copies (the others are unchanged: a
    copy holds the same children)."""
    lst = _own_keys(res, keys)
    if res.flow_lists is not None:
        res.flow_lists = [(path, _at_keys(res.data, where) if where == keys[:len(where)] else known, where)
                          for path, known, where in res.flow_lists]
    return lst


def _at_keys(data: Any, keys: tuple) -> Any:
    for k in keys:
        data = data[k]
    return data


def _flow_item(res: Resolved, name: Any, where: Loc, diags: Diagnostics, missing: str, ambiguous: str,
               fallback_hint: str = "") -> tuple[str, list, int, Any, tuple] | None:
    """The one list (a flow, or a procedure's blocks) holding an item named `name` (a step name,
    `label` or block `name`), its index, and the item's name without its list; None after
    reporting P026 (no such item; silent while the combo is incomplete, see _apply_patch) or
    P027 (it stands in several lists).

    `LIST.ITEM` (`procedures.score.do.bonus`, `steps.plan.flow.bid`) looks only in the
    list at that path."""
    lists = res.flow_lists
    if lists is None:
        lists = res.flow_lists = list(_iter_flow_lists(res.data))
    text = str(name)
    scope, _, bare = text.rpartition(".")
    if scope and any(path == scope for path, _, _ in lists):
        lists = [x for x in lists if x[0] == scope]
    else:
        scope, bare = "", name
    try:
        found = [x for x in lists if bare in _names_in(res, x[1])]
    except TypeError:  # a name that cannot be hashed (not a text) answers to no item
        found = []
    if not found:
        if not res.incomplete:
            names = [n for _, lst, _ in lists for x in lst for n in _item_names(x)]
            hint = did_you_mean(str(bare), names)
            if hint and scope:
                hint = hint.replace("`", f"`{scope}.", 1)
            if not hint and not scope:
                hint = _unnamed_hint(res.data, text)
            diags.add("P026", missing, where, hint=hint or fallback_hint or hint)
        return None
    if len(found) > 1:
        shown = ", ".join(p for p, _, _ in found[:4]) + (", ..." if len(found) > 4 else "")
        named = " or ".join(f"`{p}.{bare}`" for p, _, _ in found[:2])
        diags.add("P027", ambiguous.format(anchor=name, n=len(found), paths=shown), where,
                  hint=f"name it with its list, like {named} (or give a flow item a unique `label`)")
        return None
    path, lst, keys = found[0]
    return path, lst, next(i for i, x in enumerate(lst) if _answers_to(x, bare)), bare, keys


def _names_in(res: Resolved, lst: list) -> set:
    """Every name the items of `lst` answer to (`_answers_to`), worked out once per version of it."""
    got = res.flow_names.get(id(lst))
    if got is None or got[0] is not lst:
        got = res.flow_names[id(lst)] = (lst, {n for x in lst for n in _item_names(x)})
    return got[1]


def _holds_lists(item: Any) -> bool:
    """Whether `_iter_flow_lists` may find a list inside this item."""
    return isinstance(item, dict) and any(isinstance(item.get(k), list) for k in ("do", "then", "else", "flow"))


def _moves_lists(lst: list, i: int) -> bool:
    """Whether inserting or removing item `i` of `lst` adds or drops a list, or renumbers one (its
    path names its item's index), so that the remembered flow lists are out of date."""
    return any(_holds_lists(x) for x in lst[i:])


def _unnamed_hint(data: dict, text: str) -> str:
    """`procedures.P.do.X` where P's `do` is one text: say how its blocks get names."""
    section, _, rest = text.partition(".")
    proc = (data.get("procedures") or {}).get(rest.split(".", 1)[0]) if section == "procedures" else None
    if isinstance(proc, dict) and isinstance(proc.get("do"), str):
        return (f"procedure `{rest.split('.', 1)[0]}` is one text; its blocks have names only where its "
                "`do:` is a list of `{name, do}` blocks")
    return ""


def _flow_origins(res: Resolved, lst: list) -> list:
    """Which package put each item of a patched flow list there (None: the list's own file)."""
    origins = next((o for known, o in res.flow_origins if known is lst), None)
    if origins is None:
        origins = [None] * len(lst)
        res.flow_origins.append((lst, origins))
    return origins


def _item_names(item: Any) -> tuple[str, ...]:
    """Every name an item answers to: a flow item's step name and its `label`, a procedure
    block's `name`."""
    if isinstance(item, str):
        return (item,)
    if isinstance(item, dict):
        return tuple(item[k] for k in ("label", "step", "name") if isinstance(item.get(k), str))
    return ()


def _answers_to(item: Any, name: Any) -> bool:
    """`name in _item_names(item)`, without building the tuple (patches look through every
    item of every flow list for each insert, in each build)."""
    if isinstance(item, str):
        return item == name
    if isinstance(item, dict):
        for key in ("label", "step", "name"):
            value = item.get(key)
            if isinstance(value, str) and value == name:
                return True
    return False


def _step_name(item: Any) -> str | None:
    """The stable name of an item: a step name, its `label`, or a procedure block's `name`."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("label", "step", "name"):
            if isinstance(item.get(key), str):
                return item[key]
    return None


def _iter_flow_lists(data: dict):
    """Every list whose items patches address by name, with its path and the keys that lead to
    it from `data`: the root flow, step flows, the nested `do`/`then`/`else` lists of flow
    items, and the named blocks of procedures (`procedures.NAME.do`)."""
    def walk(path: str, lst: Any, keys: tuple):
        if not isinstance(lst, list):
            return
        yield path, lst, keys
        for i, item in enumerate(lst):
            if isinstance(item, dict):
                for key in ("do", "then", "else", "flow"):
                    if isinstance(item.get(key), list):
                        yield from walk(f"{path}[{i}].{key}", item[key], (*keys, i, key))
    yield from walk("flow", data.get("flow"), ("flow",))
    for name, step in (data.get("steps") or {}).items():
        if isinstance(step, dict):
            for key in ("flow", "then", "else"):
                yield from walk(f"steps.{name}.{key}", step.get(key), ("steps", name, key))
    for name, proc in (data.get("procedures") or {}).items():
        if isinstance(proc, dict) and isinstance(proc.get("do"), list):
            yield f"procedures.{name}.do", proc["do"], ("procedures", name, "do")


def check_resolved(res: Resolved, diags: Diagnostics) -> bool:
    """Check the sections that patches changed against the data-file schema.

    Every file was checked on its own before layering, but a `replace` or `merge` value, or
    a `remove`, can still leave an entry the wrong shape (a trigger without `do`, a number
    where a list belongs). Problems point into the patch's value when it is located there,
    else at the entry's provenance.
    """
    data = {s: res.data[s] for s in sorted(res.patched_sections) if s in res.data}

    def locate(path: list, key: bool) -> Loc:
        best, cur = Loc(), data
        for i, part in enumerate(path):
            got = loc_of(cur, part, key=key and i == len(path) - 1)
            if got.line:
                best = got
            try:
                cur = cur[part]
            except (KeyError, IndexError, TypeError):
                break
        if best.line:
            return best
        dotted = ".".join(str(p) for p in path)
        origin = res.origin(dotted)
        return origin[1] if origin else Loc()

    # Within `reading_cache()`, content found valid once is not checked again: the builds of
    # one combo for several option values, and the combos of one base game, patch mostly the
    # same entries the same way. Only "valid" is remembered (it adds no diagnostic, wherever
    # the data is written); see `_valid_keys` for the pieces. The pieces not yet known are
    # checked alone first; when one of them has a problem, the whole check says what and where.
    memo = _CACHE.get()
    pieces = _valid_keys(data, memo) if memo is not None else None
    if pieces is not None:
        new = {key: where for key, where in pieces.items() if key not in memo}
        part: dict[str, Any] = {}
        for section, entry in new.values():
            if entry is _WHOLE:
                part[section] = data[section]
            else:
                part.setdefault(section, {})
                if entry is not _MAPPING:
                    part[section][entry] = data[section][entry]
        if not new or check_data("ruleset", part, Diagnostics(), lambda path, key: Loc()):
            memo.update(dict.fromkeys(new, True))
            for section, entry in pieces.values():  # and the entries themselves (see _valid_keys)
                if entry is not _WHOLE and entry is not _MAPPING:
                    value = data[section][entry]
                    if isinstance(value, (dict, list)):
                        memo[("valid entry", section, entry, id(value))] = value
            return True
    return check_data("ruleset", data, diags, locate, "after patches: ")


# Section schemas that constrain each entry on its own: a mapping whose keys and values are
# checked one by one (no `required`, `minProperties`, ... across entries).
_PER_ENTRY = {"type", "propertyNames", "additionalProperties", "description", "title"}


_WHOLE, _MAPPING = object(), object()  # a piece that is a whole section, or "the section is a mapping"


def _valid_keys(data: dict, memo: dict) -> dict[tuple, tuple[str, Any]] | None:
    """The pieces whose validity makes `data` valid against the data-file schema, as memo keys,
    each with (section, entry) saying which piece it is: each entry of a section whose schema
    checks entries one by one, else the whole section. (The schema's top level checks each
    section on its own: tests/test_speed.py keeps it so.) A key is a repr, which tells apart
    every type the schema does (1, 1.0, True, "1"); None for a structure that holds itself (its
    repr does not say all of it). An entry that is the very object found valid before (kept in
    `memo` with its id: an object no build changes once laid, see `_own`) is left out, without
    its repr."""
    sections = schema("ruleset").get("properties", {})
    keys: dict[tuple, tuple[str, Any]] = {}
    for name, value in data.items():
        spec = sections.get(name)
        if isinstance(spec, dict) and spec.get("type") == "object" and set(spec) <= _PER_ENTRY \
                and isinstance(value, dict):
            keys[("valid after patches", name, "{}")] = (name, _MAPPING)
            for k, v in value.items():
                if memo.get(("valid entry", name, k, id(v))) is not v:
                    keys[("valid after patches", name, repr(k), repr(v))] = (name, k)
        else:
            keys[("valid after patches", name, repr(value))] = (name, _WHOLE)
    if any("[...]" in k[-1] or "{...}" in k[-1] for k in keys):
        return None
    return keys
