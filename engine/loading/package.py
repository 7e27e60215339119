"""Ruleset packages: finding them, reading their manifests and ordering a combo.

A package is a folder with a `ruleset.yaml` manifest and data files. A COMBO is a base
package and expansions joined by `+`, each a bundled id or a path to a folder.
"""
from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.files import package_dir
from engine.base.memo import ScopedMemo
from engine.base.record import Record
from engine.loading.schema import check_manifest
from engine.loading.yamlcache import load_yaml_cached
from engine.loading.yamlio import loc_of

MANIFEST = "ruleset.yaml"


class DataFile(Record):
    FIELDS = ("path", "display", "when", "loc")

    def __init__(self, path: Path, display: str, when: dict[str, list], loc: Loc) -> None:
        self.path = path
        self.display = display
        self.when = when  # option or `players` -> allowed values
        self.loc = loc


class Package(Record):
    FIELDS = ("id", "name", "version", "root", "manifest", "manifest_file", "players", "options", "extends",
              "requires", "conflicts", "after", "files", "hands", "inherited_when")

    def __init__(self, id: str, name: str, version: str, root: Path, manifest: dict, manifest_file: str,
                 players: tuple[int, int], options: dict[str, dict], extends: str | None, requires: list[str],
                 conflicts: list[str], after: list[str], files: list[DataFile] | None = None,
                 hands: dict[int, int] | None = None,
                 inherited_when: list[tuple[str, list, Loc]] | None = None) -> None:
        self.id = id
        self.name = name
        self.version = version
        self.root = root
        self.manifest = manifest
        self.manifest_file = manifest_file
        self.players = players
        self.options = options  # name -> {values, default, description}
        self.extends = extends
        self.requires = requires
        self.conflicts = conflicts
        self.after = after
        self.files = [] if files is None else files
        self.hands = {} if hands is None else hands  # player count -> hands each player plays
        # `when:` names this package does not declare, left for its combo to check: an expansion may
        # gate a file on an option of the ruleset it extends or requires (option, values, where).
        self.inherited_when = [] if inherited_when is None else inherited_when

    def loc(self, key: str) -> Loc:
        return loc_of(self.manifest, key) if key in self.manifest else Loc(self.manifest_file, 1, 1)


def bundled_root() -> Path:
    return package_dir("rulesets")


def bundled_ids() -> list[str]:
    root = bundled_root()
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("../../..") else str(path)


def locate(ref: str, diags: Diagnostics) -> Path | None:
    """The folder of a package given by bundled id or by path."""
    try:
        return _locate(ref, diags)
    except (OSError, ValueError) as exc:  # e.g. a name with a NUL byte, or too long for the OS
        diags.add("P001", f"cannot use `{ref[:80]}` as a ruleset: {exc}", Loc(ref[:80]))
        return None


def _locate(ref: str, diags: Diagnostics) -> Path | None:
    p = Path(ref).expanduser()
    looks_like_path = os.sep in ref or ref.startswith(".") or (os.altsep and os.altsep in ref)
    if looks_like_path or (p.is_dir() and (p / MANIFEST).is_file()):
        if p.is_file() and p.name == MANIFEST:
            p = p.parent
        if not p.is_dir():
            diags.add("P001", f"no ruleset folder at `{ref}`", Loc(ref))
            return None
        if not (p / MANIFEST).is_file():
            diags.add("P001", f"`{ref}` has no {MANIFEST} manifest", Loc(ref),
                      hint="a ruleset package is a folder with a ruleset.yaml at its root")
            return None
        return p
    root = bundled_root() / ref
    if (root / MANIFEST).is_file():
        return root
    diags.add("P001", f"unknown ruleset `{ref}`", Loc(ref),
              hint=did_you_mean(ref, bundled_ids()) or f"bundled rulesets: {', '.join(bundled_ids())}")
    return None


_PACKAGES = ScopedMemo("daimyo_package_cache")


def package_cache() -> AbstractContextManager[None]:
    """Within this block, each manifest is read once (validation reads one several times, for
    each target and combo it belongs to): later readers get the same package and diagnostics."""
    return _PACKAGES.scope()


def read_package(folder: Path, diags: Diagnostics) -> Package | None:
    """Read a manifest (once inside `package_cache()`: packages are never changed after)."""
    cache = _PACKAGES.get()
    if cache is None:
        return _read_package(folder, diags)
    try:
        st = (folder / MANIFEST).stat()
        key = (str(folder), st.st_mtime_ns, st.st_size, st.st_ino)
    except (OSError, ValueError):
        return _read_package(folder, diags)
    if key not in cache:
        local = Diagnostics()
        cache[key] = (_read_package(folder, local), list(local))
    pkg, found = cache[key]
    diags.extend(found)
    return pkg


def _read_package(folder: Path, diags: Diagnostics) -> Package | None:
    """Read a manifest. Its shape is checked against schemas/manifest.schema.json elsewhere;
    here we only take what we need, defensively."""
    mpath = folder / MANIFEST
    display = _display(mpath)
    errors = len(diags.errors)
    try:
        outside = mpath.is_symlink() and not mpath.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):  # a symlink loop, a name too long
        outside = True
    if outside:  # never read (or quote) a file elsewhere on the disk
        diags.add("P003", f"the manifest `{MANIFEST}` is a link to a file outside the package folder",
                  Loc(display), hint="a package reads only files in its own folder; copy the file into it")
        return None
    data = load_yaml_cached(mpath, diags, display_name=display)
    if not isinstance(data, dict):
        if data is not None or len(diags.errors) == errors:  # an empty file, or not a mapping
            diags.add("P002", "the manifest must be a mapping with at least id, name, version and players",
                      Loc(display, 1, 1))
        return None
    if not check_manifest(data, display, diags):
        return None
    pid = str(data["id"])
    players = data["players"]
    pmin, pmax = (players, players) if not isinstance(players, dict) else (players["min"], players["max"])
    pmin, pmax = int(pmin), int(pmax)  # the schema admits 3.0 (a whole number, in JSON terms)
    if pmin > pmax:
        diags.add("P016", f"players: min {pmin} is more than max {pmax}", loc_of(data, "players"),
                  hint="write {min: fewest, max: most}")
    options = {}
    for name, spec in (data.get("options") or {}).items():
        options[str(name)] = {"values": list(spec["values"]), "default": spec["default"],
                              "description": spec.get("description", "")}
        if not any(same_value(v, spec["default"]) for v in spec["values"]):
            diags.add("P014", f"option `{name}`: the default `{spec['default']}` is not one of its values",
                      loc_of(spec, "default"), hint=f"values: {', '.join(map(str, spec['values']))}")
    pkg = Package(pid, str(data["name"]), str(data["version"]), folder, data, display, (pmin, pmax), options,
                  data.get("extends"), list(data.get("requires") or []), list(data.get("conflicts") or []),
                  list(data.get("after") or []))
    if isinstance(players, dict):
        pkg.hands = {int(n): int(h) for n, h in (players.get("hands") or {}).items()}
    files = data.get("files")
    if files is None:
        names = sorted(p.name for p in folder.glob("*.yaml") if p.name != MANIFEST)
        files = names
    seen: dict[str, Loc] = {}
    try:  # resolved once for every file (a failure is reported for each file by _data_file)
        root: Path | None = folder.resolve()
    except (OSError, ValueError):
        root = None
    for i, entry in enumerate(files):
        name, when = (entry, {}) if isinstance(entry, str) else (entry["file"], entry.get("when") or {})
        # A file found by listing the folder is located by its own name (line 0: never quoted,
        # since a link would quote a file outside the package).
        loc = loc_of(files, i) if data.get("files") is not None else Loc(_display(folder / str(name)))
        if isinstance(entry, dict):
            loc = loc_of(entry, "file")
        fpath = _data_file(folder, str(name), loc, diags, root)
        if fpath is None:
            continue
        if str(fpath) in seen:
            diags.add("P003", f"data file `{name}` is listed twice (first at {seen[str(fpath)]})", loc)
            continue
        seen[str(fpath)] = loc
        norm = {str(k): (list(v) if isinstance(v, list) else [v]) for k, v in when.items()}
        _check_when(pkg, entry, norm, loc, diags)
        pkg.files.append(DataFile(fpath, _display(fpath), norm, loc))
    return pkg if _size_ok(pkg, mpath, files, diags) else None


MAX_PACKAGE_BYTES = 20_000_000  # all files of one package together (each file: at most 2,000,000)
MAX_PACKAGE_FILES = 500


def _size_ok(pkg: Package, mpath: Path, files: Any, diags: Diagnostics) -> bool:
    """A package is refused as a whole, before its data files are read, when it is too large."""
    loc = pkg.loc("files")
    if len(pkg.files) > MAX_PACKAGE_FILES:
        diags.add("P028", f"the package has {len(pkg.files):,} data files; the limit is {MAX_PACKAGE_FILES}", loc)
        return False
    try:
        total = mpath.stat().st_size + sum(f.path.stat().st_size for f in pkg.files)
    except OSError:
        return True  # each file's own reading reports it
    if total > MAX_PACKAGE_BYTES:
        diags.add("P028", f"the package's files hold {total:,} bytes in all; the limit is {MAX_PACKAGE_BYTES:,}",
                  loc, hint="a ruleset is text: this is almost certainly not one")
        return False
    return True


def _data_file(folder: Path, name: str, loc: Loc, diags: Diagnostics, root: Path | None = None) -> Path | None:
    """The path of a data file named in the manifest, if it exists inside the package (`root`:
    the folder resolved, when already known)."""
    try:
        fpath = folder / name
        inside = fpath.resolve().is_relative_to(root if root is not None else folder.resolve())
        exists = fpath.is_file()
    except (OSError, ValueError):  # a NUL byte, a name too long, a symlink loop
        diags.add("P003", f"`{name[:80]}` is not a usable file name", loc)
        return None
    if not inside:
        diags.add("P003", f"data file `{name}` is outside the package folder", loc,
                  hint="a package reads only files in its own folder; copy the file into it")
        return None
    if not exists:
        diags.add("P003", f"data file `{name}` listed in the manifest does not exist", loc,
                  hint=did_you_mean(name, [p.name for p in folder.glob("*.yaml") if p.name != MANIFEST]))
        return None
    return fpath


def _check_when(pkg: Package, entry: Any, when: dict[str, list], loc: Loc, diags: Diagnostics) -> None:
    """Every name in a file's `when:` is a declared option (or `players`), every value one it can take."""
    raw = entry.get("when") if isinstance(entry, dict) else None
    for opt, values in when.items():
        wloc = loc_of(raw, opt, key=True) if raw is not None else loc
        if opt == "players":
            for i, v in enumerate(values):
                if not (isinstance(v, int) and not isinstance(v, bool) and pkg.players[0] <= v <= pkg.players[1]):
                    vloc = loc_of(raw[opt], i) if isinstance(raw[opt], list) else loc_of(raw, opt)
                    diags.add("P015", f"`when: players` value `{v}` is not a player count of this package "
                              f"({pkg.players[0]}-{pkg.players[1]}): the file would never load", _first(vloc, wloc),
                              severity="warning")
            continue
        if opt not in pkg.options and (pkg.extends or pkg.requires):
            pkg.inherited_when.append((opt, values, wloc))  # the base may declare it: see _check_inherited_when
            continue
        if opt not in pkg.options:
            diags.add("P004", f"`when` names option `{opt}`, which this package does not declare", wloc,
                      hint=did_you_mean(opt, [*pkg.options, "players"]) or
                      "declare it under `options:` in the manifest")
            continue
        allowed = pkg.options[opt]["values"]
        for i, v in enumerate(values):
            if not any(same_value(a, v) for a in allowed):
                vloc = loc_of(raw[opt], i) if isinstance(raw[opt], list) else loc_of(raw, opt)
                diags.add("P015", f"`when: {opt}` value `{v}` is not a value of option `{opt}`: the file "
                          "would never load", _first(vloc, wloc),
                          hint=did_you_mean(str(v), map(str, allowed)) or f"allowed: {', '.join(map(str, allowed))}")


class Combo(Record):
    """A base package and its expansions, in load order, with the chosen options."""

    FIELDS = ("packages", "options", "players", "source")

    def __init__(self, packages: list[Package], options: dict[str, Any], players: int | None,
                 source: str = "") -> None:
        self.packages = packages
        self.options = options
        self.players = players
        self.source = source  # the combo as it was named (ids or paths): logs and saves record it

    @property
    def base(self) -> Package:
        return self.packages[0]

    @property
    def name(self) -> str:
        return "+".join(p.id for p in self.packages)

    @property
    def player_range(self) -> tuple[int, int]:
        """The player counts the combo allows: the base's, narrowed by each expansion."""
        return player_range(self.packages)


def player_range(order: list[Package]) -> tuple[int, int]:
    lo, hi = order[0].players
    for p in order[1:]:  # an expansion may narrow the player count
        lo, hi = max(lo, p.players[0]), min(hi, p.players[1])
    return lo, hi


def parse_combo(text: str) -> list[str]:
    return [part.strip() for part in text.split("+") if part.strip()]


def resolve_combo(text: str | list[str], diags: Diagnostics, options: dict[str, Any] | None = None,
                  players: int | None = None) -> Combo | None:
    """Find every package of a combo, check extends/requires/conflicts, order them, and fix options."""
    refs = parse_combo(text) if isinstance(text, str) else list(text)
    if not refs:
        diags.add("P005", "no ruleset named", Loc("<command line>"))
        return None
    pkgs: list[Package] = []
    for ref in refs:
        folder = locate(ref, diags)
        if folder is None:
            continue
        pkg = read_package(folder, diags)
        if pkg is not None:
            pkgs.append(pkg)
    if len(pkgs) != len(refs):
        return None
    by_id: dict[str, Package] = {}
    for p in pkgs:
        if p.id in by_id:
            diags.add("P006", f"ruleset `{p.id}` is named twice in the combo", p.loc("id"))
            return None
        by_id[p.id] = p
    if _extends_cycle(pkgs, by_id, diags):
        return None
    bases = [p for p in pkgs if not p.extends]
    if len(bases) != 1:
        if not bases:
            diags.add("P007", "the combo has no base ruleset (every package `extends` another)",
                      pkgs[0].loc("extends"), hint="name the base first, e.g. `shogun+chambers`")
        else:
            diags.add("P007", f"the combo has {len(bases)} base rulesets ({', '.join(b.id for b in bases)}); "
                      "only one may stand without `extends`", bases[1].loc("id"))
        return None
    ok = True
    for p in pkgs:
        if p.extends and p.extends not in by_id:
            diags.add("P008", f"`{p.id}` extends `{p.extends}`, which is not in the combo", p.loc("extends"),
                      hint=f"add it: `{p.extends}+...+{p.id}`")
            ok = False
        for i, r in enumerate(p.requires):
            if r not in by_id:
                diags.add("P009", f"`{p.id}` requires `{r}`, which is not in the combo",
                          _first(loc_of(p.manifest.get("requires"), i), p.loc("requires")),
                          hint=f"add it to the combo: `...+{r}+{p.id}`")
                ok = False
        for i, x in enumerate(p.conflicts):
            if x in by_id:
                diags.add("P010", f"`{p.id}` cannot be combined with `{x}`",
                          _first(loc_of(p.manifest.get("conflicts"), i), p.loc("conflicts")),
                          hint=f"`{p.id}` declares `conflicts: [{x}]`; leave one of them out")
                ok = False
    if not ok:
        return None
    order = _load_order(pkgs, by_id, diags)
    if order is None:
        return None
    base = order[0]
    if players is not None:
        lo, hi = player_range(order)
        if not lo <= players <= hi:
            diags.add("P011", f"{'+'.join(x.id for x in order)} is for {lo}-{hi} players, not {players}",
                      base.loc("players"))
            return None
    if not _check_inherited_when(order, diags):
        return None
    chosen = _choose_options(order, options or {}, diags)
    if chosen is None:
        return None
    return Combo(order, chosen, players, "+".join(refs))


def _check_inherited_when(order: list[Package], diags: Diagnostics) -> bool:
    """A `when:` option an expansion does not declare must be declared by a package it builds on
    (one loaded before it), with the values named."""
    ok = True
    for i, pkg in enumerate(order):
        declared = {k: v for q in order[:i] for k, v in q.options.items()}
        for opt, values, wloc in pkg.inherited_when:
            if opt not in declared:
                diags.add("P004", f"`when` names option `{opt}`, which neither `{pkg.id}` nor the rulesets it "
                          "builds on declare", wloc,
                          hint=did_you_mean(opt, [*declared, *pkg.options, "players"]) or
                          "declare it under `options:` in the manifest")
                ok = False
                continue
            allowed = declared[opt]["values"]
            for v in values:
                if not any(same_value(a, v) for a in allowed):
                    diags.add("P015", f"`when: {opt}` value `{v}` is not a value of option `{opt}`: the file "
                              "would never load", wloc,
                              hint=did_you_mean(str(v), map(str, allowed)) or f"allowed: {_listed(allowed)}")
    return ok


def _first(*locs: Loc) -> Loc:
    """The first location that is known (has a line)."""
    return next((loc for loc in locs if loc.line), locs[-1])


def _extends_cycle(pkgs: list[Package], by_id: dict[str, Package], diags: Diagnostics) -> bool:
    """P012 when following `extends` from some package comes back to it."""
    for start in sorted(pkgs, key=lambda p: p.id):
        chain = [start.id]
        cur = start
        while cur.extends and cur.extends in by_id:
            if cur.extends in chain:
                cycle = [*chain[chain.index(cur.extends):], cur.extends]
                diags.add("P012", f"these rulesets extend each other in a cycle: {' -> '.join(cycle)}",
                          by_id[cycle[0]].loc("extends"),
                          hint="a base ruleset has no `extends`; an expansion extends its base")
                return True
            chain.append(cur.extends)
            cur = by_id[cur.extends]
    return False


def _before(p: Package) -> set[str]:
    """Packages that must load before `p`."""
    return {x for x in [p.extends, *p.requires, *p.after] if x}


def _load_order(pkgs: list[Package], by_id: dict[str, Package], diags: Diagnostics) -> list[Package] | None:
    """Topological order; ties broken by id so the order never depends on how the combo was typed."""
    placed: list[Package] = []
    done: set[str] = set()
    pending = sorted(pkgs, key=lambda p: p.id)
    while pending:
        ready = [p for p in pending if (_before(p) & by_id.keys()) <= done]
        if not ready:
            cyc = ", ".join(p.id for p in pending)
            diags.add("P012", f"these rulesets depend on each other in a cycle: {cyc}", pending[0].loc("extends"))
            return None
        nxt = ready[0]
        placed.append(nxt)
        done.add(nxt.id)
        pending.remove(nxt)
    return placed


def ordered_before(a: str, b: str, by_id: dict[str, Package]) -> bool:
    """True if package `a` must load before `b` (through extends/requires/after chains)."""
    seen: set[str] = set()
    stack = [b]
    while stack:
        cur = stack.pop()
        for prev in _before(by_id[cur]) if cur in by_id else ():
            if prev == a:
                return True
            if prev not in seen:
                seen.add(prev)
                stack.append(prev)
    return False


def _choose_options(order: list[Package], given: dict[str, Any], diags: Diagnostics) -> dict[str, Any] | None:
    declared: dict[str, dict] = {}
    for p in order:
        declared.update(p.options)
    chosen = {k: v["default"] for k, v in declared.items()}
    ok = True
    for k, v in given.items():
        if k not in declared:
            diags.add("P013", f"unknown option `{k}`", Loc("<command line>"),
                      hint=did_you_mean(k, declared) or f"options: {', '.join(declared) or 'none'}")
            ok = False
            continue
        allowed = declared[k]["values"]
        match = next((a for a in allowed if same_value(a, v)), _NO)
        if match is _NO:
            diags.add("P013", f"option `{k}` cannot be `{v}`", Loc("<command line>"),
                      hint=f"allowed: {', '.join(map(str, allowed))}")
            ok = False
            continue
        chosen[k] = match
    return chosen if ok else None


_NO = object()


def same_value(a: Any, b: Any) -> bool:
    """Whether two option values are the same, however they were written: `none` (or YAML's
    null) and `true`/`false` match their text from a command line, numbers their digits."""
    return _as_text(a) == _as_text(b)


def _as_text(x: Any) -> str:
    if x is None:
        return "none"
    if isinstance(x, bool):
        return "true" if x else "false"
    return str(x).lower() if str(x).lower() in ("none", "null", "true", "false") else str(x)


def _listed(values: list) -> str:
    return ", ".join(map(str, values))
