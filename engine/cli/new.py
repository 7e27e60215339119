"""`daimyo new variant|board NAME --extends COMBO`: write a package skeleton that already works.

Both kinds write a folder NAME/ (in --into, default the current folder) with a manifest that
extends the combo's base (and requires its expansions), one data file, one scenario test in
NAME/tests/ and a README saying how to validate, describe, play and test it. The package
validates and its scenario passes as written; the modder then edits it.

- variant: one patch that changes one numeric constant of the base (a real change, checked by
  the scenario), to show the shape of a patch.
- board: the base game's board (spaces, regions, links, sets, layout) as `replace:` patches,
  to be edited into the new map, and every constant that names a space or a region (found in
  the base ruleset under every option value, e.g. a fixed set-up table): those are the
  constants a board must provide, listed in the README and patched with their current values.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from engine.base.console import EPILOG, report, usage_error
from engine.base.diagnostics import Diagnostics
from engine.base.record import replace
from engine.cli import help_of
from engine.loading.layering import Resolved, resolve
from engine.loading.package import Combo, resolve_combo
from engine.model.validate import variants

_ID = re.compile(r"[a-z][a-z0-9-]*")
BOARD_KEYS_SKIPPED = ("space_kind", "notes")  # kept from the base: the kind of space is the game's


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("new", help=help_of("new"),
                       epilog=EPILOG, description="Write a package skeleton NAME/ extending COMBO: manifest, one "
                       "data file, one scenario test and a README saying how to run it.")
    p.add_argument("what", choices=["variant", "board"], help="variant: one patch of a constant; board: a new map")
    p.add_argument("name", metavar="NAME", help="the package id and folder name (lower-case, digits, -)")
    p.add_argument("--extends", required=True, metavar="COMBO", help="what the package builds on, e.g. shogun")
    p.add_argument("--into", default=".", metavar="FOLDER", help="where to create NAME/ (default: here)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not _ID.fullmatch(args.name):
        return usage_error(f"NAME must be lower-case letters, digits and `-`, starting with a letter: `{args.name}`")
    folder = Path(args.into) / args.name
    if folder.exists():
        return usage_error(f"`{folder}` already exists; choose another NAME or --into")
    diags = Diagnostics()
    combo = resolve_combo(args.extends, diags, {}, None)
    if combo is None:
        report(diags)
        return 1
    res = resolve(combo, diags)
    if diags.errors:
        report(diags)
        return 1
    files = (variant_files if args.what == "variant" else board_files)(args.name, args.extends, combo, res)
    if files is None:
        print(f"daimyo new: `{args.extends}` has no number among its constants to patch", file=sys.stderr)
        return 1
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    print(f"wrote {folder}/: {', '.join(files)}")
    print(f"next: daimyo validate {_combo_ref(args.extends, args.name)}  (see {folder}/README.md)")
    return 0


def _manifest(name: str, combo: Combo, description: str, files: list | None = None) -> str:
    base, rest = combo.base, combo.packages[1:]
    lo = max(p.players[0] for p in combo.packages)
    hi = min(p.players[1] for p in combo.packages)
    data: dict[str, Any] = {"id": name, "name": name.replace("-", " ").capitalize(), "version": "0.1.0",
                            "description": description, "players": {"min": lo, "max": hi}, "extends": base.id}
    if rest:
        data["requires"] = [p.id for p in rest]
    data["files"] = files or ["rules.yaml"]
    return _dump(data)


def _combo_ref(extends: str, name: str) -> str:
    return f"{extends}+./{name}"


def variant_files(name: str, extends: str, combo: Combo, res: Resolved) -> dict[str, str] | None:
    found = next(((k, v) for k, v in res.data["constants"].items()
                  if isinstance(v, int) and not isinstance(v, bool)), None)
    if found is None:
        return None
    const, old = found
    new = old + 1
    origin = res.provenance.get(f"constants.{const}")
    where = f"{origin[0]} in {Path(origin[1].file).name}:{origin[1].line}" if origin else "the base"
    rules = (f"# {name}: the rules this variant changes. Each change is a patch of an entry of the resolved\n"
             f"# ruleset; `daimyo describe {extends} --resolved` lists every entry with the file that sets it.\n"
             "# This first patch is an example: replace it with your own change.\n"
             + _dump({"patches": [{"replace": f"constants.{const}", "value": new,
                                   "notes": f"was {old} (set by {where})"}]}))
    players = max(p.players[0] for p in combo.packages)
    scenario = _dump({"scenario": f"{const} is {new} in {name}",
                      "notes": "the patch in rules.yaml; the game then starts and runs to its first decision",
                      "ruleset": _combo_ref(extends, name), "players": players,
                      "expect": [{const: new}]})
    readme = _readme(name, extends, "variant", f"It changes `{const}` from {old} to {new}, as an example.", [])
    return {"ruleset.yaml": _manifest(name, combo, f"A variant of {combo.name}."), "rules.yaml": rules,
            f"tests/{name}.yaml": scenario, "README.md": readme}


def board_files(name: str, extends: str, combo: Combo, res: Resolved) -> dict[str, str]:
    board = res.data["board"]
    names = set(board.get("spaces") or {}) | set(board.get("regions") or {})
    constants = board_constants(combo, names)
    patches: list[dict[str, Any]] = [{"replace": f"board.{key}", "value": value}
                                     for key, value in board.items() if key not in BOARD_KEYS_SKIPPED]
    gated: dict[str, tuple[dict, list]] = {}  # file -> (when, patches) for constants of gated base files
    for const, (value, when) in constants.items():
        patch = {"replace": f"constants.{const}", "value": value,
                 "notes": "names spaces or regions of the board: update it for the new map"}
        if when:
            file = "rules-" + "-".join(f"{k}-{'-'.join(map(str, v))}" for k, v in when.items()) + ".yaml"
            gated.setdefault(file, (when, []))[1].append(patch)
        else:
            patches.append(patch)
    rules = (f"# {name}: a new board for {combo.name}. It starts as a copy of the base board: edit the\n"
             "# spaces (with the attributes every space of this game has), the regions, the links, and\n"
             "# every constant below that names a space or a region. `daimyo validate` checks the map\n"
             "# (symmetric links, connected, every space in one region) and every name in those constants.\n"
             + _dump({"patches": patches}))
    files = {"rules.yaml": rules}
    for file, (when, found) in gated.items():
        files[file] = (f"# Constants that the base sets only when {_when_text(when)}; this file loads then too.\n"
                       + _dump({"patches": found}))
    n = len(board.get("spaces") or {})
    players = max(p.players[0] for p in combo.packages)
    scenario = _dump({"scenario": f"the {name} board has {n} spaces",
                      "notes": "change the count when you change the map; the game starts and runs to its "
                               "first decision on the new board",
                      "ruleset": _combo_ref(extends, name), "players": players,
                      "expect": [{"count(spaces)": n}]})
    attrs = sorted({str(a) for s in (board.get("spaces") or {}).values() if isinstance(s, dict) for a in s})
    lines = [f"- `constants.{c}`" + (f" (set when {_when_text(w)})" if w else "") for c, (_, w) in constants.items()] \
        or ["- (none: no constant of the base names a space or region)"]
    extra = ["", "## What a board must provide", "",
             f"- `board.spaces`: every space, each with {', '.join(f'`{a}`' for a in attrs) or 'no attributes'}",
             *(f"- `board.{k}`" for k in board if k not in BOARD_KEYS_SKIPPED and k != "spaces"),
             "", "The constants of the base that name spaces or regions (under any option value); "
             "each is patched with the base board's value, to be updated:", "", *lines]
    checks = [f"- `{cid}`: {' '.join(str(c.get('message', '')).split())}"
              for cid, c in (res.data.get("checks") or {}).items() if isinstance(c, dict)]
    if checks:  # e.g. how many pieces per player the map must have room for
        extra += ["", "The base's checks, which `daimyo validate` also runs on this board:", "", *checks]
    readme = _readme(name, extends, "board", f"It starts as a copy of the {combo.name} board ({n} spaces).", extra)
    manifest = _manifest(name, combo, f"A new board for {combo.name}.",
                         ["rules.yaml", *({"file": f, "when": w} for f, (w, _) in gated.items())])
    return {"ruleset.yaml": manifest, **files, f"tests/{name}.yaml": scenario, "README.md": readme}


def _when_text(when: dict) -> str:
    return " and ".join(f"{k} is {' or '.join(map(str, v))}" for k, v in when.items())


def board_constants(combo: Combo, names: set[str]) -> dict[str, tuple[Any, dict]]:
    """Constants of the combo that mention a space or region, each with the `when:` of the base
    file that sets it, found under every option value that loads a different file (a fixed
    set-up table loads only with `setup: fixed`)."""
    out: dict[str, tuple[Any, dict]] = {}
    files = {df.display: df for p in combo.packages for df in p.files}
    for options, counts in variants(combo):
        res = resolve(replace(combo, options=options, players=counts[0] if counts else None), Diagnostics())
        for const, value in res.data["constants"].items():
            if const not in out and _mentions(value, names):
                origin = res.provenance.get(f"constants.{const}")
                df = files.get(origin[1].file) if origin else None
                out[const] = (value, dict(df.when) if df else {})
    return out


def _mentions(value: Any, names: set[str], depth: int = 0) -> bool:
    if depth > 16:
        return False
    if isinstance(value, str):
        return value in names
    if isinstance(value, dict):
        return any(_mentions(k, names, depth + 1) or _mentions(v, names, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(_mentions(v, names, depth + 1) for v in value)
    return False


def _readme(name: str, extends: str, what: str, summary: str, extra: list[str]) -> str:
    combo = _combo_ref(extends, name)
    return "\n".join([
        f"# {name}", "", f"A {what} for `{extends}`, written by `daimyo new {what}`. {summary}", "",
        "Run these from the folder that holds this package (paths in a COMBO are relative to where you",
        "run the command):", "", "```sh",
        f"daimyo validate {combo}                 # schema, rules, references, the map",
        f"daimyo describe {combo} --resolved      # every entry, with the package and line that set it",
        f"daimyo play {combo} --bots random       # a whole game between bots",
        f"daimyo scenario {name}/tests             # the scenario tests", "```", "",
        f"- `ruleset.yaml`: the manifest (`extends: {extends.split('+')[0].split('/')[-1]}`).",
        "- `rules.yaml`: the patches; see docs/ruleset-format.md for what a patch can do.",
        f"- `tests/{name}.yaml`: a scenario (docs/scenarios.md); add one per rule you change.",
        *extra, ""])


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _dump(data: Any) -> str:
    return yaml.safe_dump(_plain(data), sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
