"""`daimyo validate`: check packages and combos without running any game code.

A target is a bundled id, a package folder, a folder of package folders, or a COMBO
(`base+expansion`). An expansion named alone is checked together with the rulesets it
extends and requires (found as sibling folders, else among the bundled ones).

A package's files may load only for some option values or player counts (`when:` in the
manifest), so one build is not enough: `variants` picks the builds that together compile
every file at least once, so a broken moon-side file is found even though the default is
the sun side. Diagnostics found in several builds are reported once.

Speed: within one run each data file is read and schema-checked once (`reading_cache`),
each rule text parsed once, a text is compiled again only where a name it uses means
something else (`compile_cache`), and a step's flow walked again only where it or what it
uses changed (`flow_cache`), so the extra builds cost little. Across runs, what the builds of a
combo found is kept on disk by a hash of its files and the engine (`verdicts`), so files
validated before are not built again.
"""
from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dsl.compiler import compile_cache
from engine.base.diagnostics import Diagnostic, Diagnostics
from engine.base.record import replace
from engine.loading.layering import included, reading_cache, resolve
from engine.loading.package import (
    MANIFEST,
    Combo,
    Package,
    bundled_root,
    locate,
    read_package,
    resolve_combo,
    same_value,
)
from engine.loading.yamlio import loc_of
from engine.model import verdicts
from engine.model.build import board_cache, build_combo
from engine.model.checks import run_checks
from engine.model.flow import flow_cache
from engine.model.ruleset import MAX_PLAYERS, Model
from engine.model.unused import check_unused


def validate_targets(targets: list[str]) -> tuple[Diagnostics, list[str]]:
    """Validate every target; return the diagnostics (sorted later by the reporter) and the
    combos that were checked. Never raises on bad input."""
    diags = Diagnostics()
    checked: list[str] = []
    seen: set[tuple] = set()
    with reading_cache(), compile_cache(), flow_cache(), board_cache(), _fewer_collections():
        for target in expand_targets(targets):
            local = Diagnostics()
            combo = combo_for(target, local)
            if combo is not None:
                validate_combo(combo, local)
                checked.append(combo)
            for d in local:
                key = _key(d)
                if key not in seen:
                    seen.add(key)
                    diags.items.append(d)
    return diags, checked


def expand_targets(targets: list[str]) -> list[str]:
    """Targets with every folder of packages replaced by its package folders.

    Names starting with `_` or `.` that are not packages (`__init__.py`, `__pycache__`) are
    skipped, so that `daimyo validate rulesets/*` works.
    """
    out: list[str] = []
    for target in targets:
        if "+" in target:
            out.append(target)
            continue
        try:
            p = Path(target)
            is_package = (p / MANIFEST).is_file() or p.name == MANIFEST
            is_dir = p.is_dir()
            subs = sorted(str(s.parent) for s in p.glob(f"*/{MANIFEST}")) if is_dir and not is_package else []
        except (OSError, ValueError):
            out.append(target)  # locate() reports it
            continue
        if subs:
            out.extend(subs)
        elif not is_package and p.name.startswith(("_", ".")) and p.exists():
            continue
        else:
            out.append(target)
    return out


def combo_for(target: str, diags: Diagnostics) -> str | None:
    """The combo to check for one target: an expansion alone comes with the chain of rulesets
    it extends (and requires), found next to it or among the bundled rulesets."""
    if "+" in target:
        return target
    folder = locate(target, diags)
    if folder is None:
        return None
    pkg = read_package(folder, diags)
    if pkg is None:
        return None
    chain = [target]
    seen = {pkg.id}
    todo = [pkg]
    while todo:
        cur = todo.pop()
        for field_, dep in [("extends", cur.extends), *(("requires", r) for r in cur.requires)]:
            if not dep or dep in seen:
                continue
            seen.add(dep)
            ref = _find_dependency(cur, dep)
            if ref is None:
                code = "P008" if field_ == "extends" else "P009"
                i = cur.requires.index(dep) if field_ == "requires" else None
                loc = cur.loc(field_)
                if i is not None:
                    item = loc_of(cur.manifest.get("requires"), i)
                    loc = item if item.line else loc
                diags.add(code, f"`{cur.id}` {field_} `{dep}`, which cannot be found", loc,
                          hint=f"there is no folder `{cur.root.parent / dep}` next to it and no bundled "
                          f"ruleset `{dep}`; validate it as a combo: `path/to/{dep}+{target}`")
                return None
            dep_folder = locate(ref, diags)
            dep_pkg = read_package(dep_folder, diags) if dep_folder else None
            if dep_pkg is None:
                return None
            chain.insert(0, ref)
            todo.append(dep_pkg)
    return "+".join(chain)


def _find_dependency(pkg: Package, dep: str) -> str | None:
    """A sibling folder named `dep` with a manifest, else the bundled ruleset `dep`."""
    try:
        sibling = pkg.root.parent / dep
        if (sibling / MANIFEST).is_file():
            return str(sibling)
        if (bundled_root() / dep / MANIFEST).is_file():
            return dep
    except (OSError, ValueError):
        pass
    return None


def validate_combo(combo_text: str, diags: Diagnostics) -> None:
    """Build the variants of a combo (see `variants`); report each problem once. What the builds
    found is kept on disk (engine/model/verdicts.py): the same files, validated again by the same
    engine, give it again without a build."""
    combo = resolve_combo(combo_text, diags, {}, None)
    if combo is None:
        return
    key = verdicts.combo_key(combo_text, combo)
    kept = verdicts.load(key) if key is not None else None
    if kept is not None:
        diags.extend(kept)
        return
    start = len(diags.items)
    _build_variants(combo, diags)
    if key is not None and verdicts.combo_key(combo_text, combo) == key:  # not if a file changed meanwhile
        verdicts.keep(key, diags.items[start:])


def _build_variants(combo: Combo, diags: Diagnostics) -> None:
    first: set[tuple] | None = None
    models: list[Model] = []
    for options, counts in variants(combo):
        local = Diagnostics()
        variant = replace(combo, options=options, players=counts[0] if counts else None)
        model = build_combo(variant, local)
        if model is not None:
            models.append(model)
        if model is not None and len(counts) > 1:
            run_checks(model, model.checks, local, counts[1:])
        local.items = blame_patches(variant, local.items)
        keys = {_key(d) for d in local}
        if first is None:
            first = keys
            diags.extend(local)
            continue
        where = _describe_variant(combo, options, counts)
        for d in local:
            if _key(d) not in first:
                hint = f"{d.hint} (found with {where})" if d.hint else f"found with {where}"
                diags.items.append(Diagnostic(d.code, d.message, d.loc, d.severity, hint))
    if models and not diags.errors:  # data read under any option value counts as read
        check_unused(models, diags)


def blame_patches(combo: Combo, found: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics in a file of a package that the combo *without the packages after it* does not
    give were caused by a later package's patch: point at that patch, and say in the message where
    the base file broke. (Without this, a variant author is sent into a base file they never wrote.)"""
    if not found:
        return found
    owner: dict[str, int] = {}
    for i, pkg in enumerate(combo.packages[:-1]):
        for df in pkg.files:
            owner[os.path.realpath(df.path)] = i
    suspects = [(i, d) for d in found if d.loc.file
                and (i := owner.get(os.path.realpath(d.loc.file))) is not None]
    if not suspects:
        return found
    touched = resolve(combo, Diagnostics()).touched
    alone: dict[int, set[tuple]] = {}
    out = []
    for d in found:
        i = owner.get(os.path.realpath(d.loc.file)) if d.loc.file else None
        if i is None:
            out.append(d)
            continue
        if i not in alone:
            sub = Diagnostics()
            build_combo(replace(combo, packages=combo.packages[:i + 1]), sub)
            alone[i] = {_key(x) for x in sub}
        later = {p.id for p in combo.packages[i + 1:]}
        patches = [(path, pkg, loc) for path, changes in touched.items() for pkg, loc in changes if pkg in later]
        if _key(d) in alone[i] or not patches:
            out.append(d)
            continue
        named = [x for x in patches if f"`{x[0].rsplit('.', 1)[-1]}`" in d.message]
        path, pkg, loc = (named or patches)[0]
        out.append(Diagnostic(d.code, f"{d.message} (in {d.loc}, after `{pkg}`'s patch of `{path}`)", loc,
                              d.severity, d.hint or f"the base file {d.loc} still uses what this patch changed"))
    return out


def variants(combo: Combo) -> list[tuple[dict[str, Any], list[int]]]:
    """(options, player counts) to build so that every data file is compiled at least once.

    The first variant is the default options (with, when some file depends on the player
    count, one variant per distinct set of files the counts load). Then, while some file
    that depends on options has not been loaded, a variant is added that loads it, and as
    many other such files as agree with it (`side: moon` and `setup: fixed` together). So
    each option value that decides a file is compiled, without building every combination
    of every option. Player counts are given only when some file depends on them.
    """
    declared = {k: v for p in combo.packages for k, v in p.options.items()}
    gated = [f for p in combo.packages for f in p.files if f.when]
    player_gated = any("players" in f.when for f in gated)
    lo, hi = combo.player_range
    counts: list[int | None] = list(range(lo, min(hi, MAX_PLAYERS) + 1)) if player_gated and lo <= hi else [None]
    default = dict(combo.options)
    out: list[tuple[dict[str, Any], list[int]]] = []
    covered: set[str] = set()

    def add(options: dict[str, Any], ns: list[int | None]) -> None:
        files = [f for p in combo.packages for f in p.files
                 if included(f.when, replace(combo, options=options, players=ns[0]))]
        covered.update(str(f.path) for f in files)
        out.append((options, [n for n in ns if n is not None]))

    groups: dict[tuple, list[int | None]] = {}
    for n in counts:
        probe = replace(combo, options=default, players=n)
        key = tuple(str(f.path) for p in combo.packages for f in p.files if included(f.when, probe))
        groups.setdefault(key, []).append(n)
    for ns in groups.values():
        add(default, ns)
    for f in gated:
        if str(f.path) in covered:
            continue
        options, fixed = dict(default), set()
        players: int | None = counts[0]
        for g in gated:
            if str(g.path) in covered:
                continue
            trial, trial_fixed, trial_players = dict(options), set(fixed), players
            ok = True
            for opt, allowed in g.when.items():
                if opt == "players":
                    good = [n for n in counts if n is not None and any(same_value(a, n) for a in allowed)]
                    if trial_players in good:
                        continue
                    if "players" in trial_fixed or not good:
                        ok = False
                        break
                    trial_players = good[0]
                    trial_fixed.add("players")
                    continue
                values = [v for v in declared.get(opt, {}).get("values", []) if any(same_value(a, v) for a in allowed)]
                if any(same_value(a, trial.get(opt)) for a in allowed):
                    trial_fixed.add(opt)
                    continue
                if opt in trial_fixed or not values:
                    ok = False
                    break
                trial[opt] = values[0]
                trial_fixed.add(opt)
            if ok:
                options, fixed, players = trial, trial_fixed, trial_players
            elif g is f:
                break  # this file can never load (P004/P015 say why)
        if included(f.when, replace(combo, options=options, players=players)):
            add(options, [players])
        else:
            covered.add(str(f.path))
    return out


def _describe_variant(combo: Combo, options: dict[str, Any], counts: list[int]) -> str:
    changed = [f"{k}={v}" for k, v in options.items() if combo.options.get(k) != v]
    parts = changed or ["the default options"]
    if counts:
        parts.append(f"{'/'.join(map(str, counts))} players")
    return ", ".join(parts)


def _key(d: Diagnostic) -> tuple:
    return (d.code, d.loc.file, d.loc.line, d.loc.col, d.message, d.severity)


YOUNG_LIMIT = 250_000  # allocations between two young collections while validating


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect garbage rarely while validating: building a ruleset makes ~10^5 long-lived
    objects and few cycles, and the default thresholds would scan them over and over (about a
    seventh of a cold validation). What exists before is frozen out of every scan. A young
    collection still comes every YOUNG_LIMIT allocations, so that a ruleset making cycles
    cannot grow memory without bound; validating every bundled ruleset makes about 130,000
    objects, and a collection among them would scan them all (a tenth of the run)."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_LIMIT, 50, 100)
    try:
        yield
    finally:
        # What validation made and kept (the caches, the last models) goes to the oldest
        # generation unscanned: left young, the next allocation would scan all of it at once
        # (a twentieth of a cold validation). A later full collection still frees its cycles.
        gc.freeze()
        gc.set_threshold(*old)
        gc.unfreeze()
