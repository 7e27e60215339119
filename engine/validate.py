"""`daimyo validate`: check packages and combos without running any game code."""
from __future__ import annotations

from pathlib import Path

from engine.diagnostics import Diagnostics
from engine.model import build
from engine.package import locate, read_package


def combo_for(target: str, diags: Diagnostics) -> str | None:
    """An expansion alone is checked with the chain of rulesets it extends (and requires)."""
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
        for dep in [cur.extends, *cur.requires]:
            if not dep or dep in seen:
                continue
            seen.add(dep)
            sibling = cur.root.parent / dep
            ref = str(sibling) if (sibling / "ruleset.yaml").is_file() else dep
            dep_folder = locate(ref, diags)
            dep_pkg = read_package(dep_folder, diags) if dep_folder else None
            if dep_pkg is None:
                return None
            chain.insert(0, ref)
            todo.append(dep_pkg)
    return "+".join(chain)


def validate_targets(targets: list[str]) -> tuple[Diagnostics, list[str]]:
    diags = Diagnostics()
    checked: list[str] = []
    for target in targets:
        if Path(target).is_dir() and not (Path(target) / "ruleset.yaml").exists() and \
                any(Path(target).glob("*/ruleset.yaml")):
            subs = sorted(str(p.parent) for p in Path(target).glob("*/ruleset.yaml"))
            targets.extend(subs)
            continue
        combo = combo_for(target, diags)
        if combo is None:
            continue
        local = Diagnostics()
        model = build(combo, {}, None, local)
        if model is not None:
            _check_player_counts(combo, model, local)
        diags.extend(d for d in local if d not in diags.items)
        checked.append(combo)
    return diags, checked


def _check_player_counts(combo: str, model, diags: Diagnostics) -> None:
    """Files included only for some player counts are compiled for each such count."""
    counts = {v for p in model.combo.packages for f in p.files for v in f.when.get("players", [])}
    for n in sorted(counts):
        try:
            n = int(n)
        except (TypeError, ValueError):
            continue
        build(combo, {}, n, diags)
