"""Building a `Model` from a combo.

`load(combo_text, options, players)` goes from a COMBO string to a `Model`: packages are
found and ordered, their data files loaded and checked against the schemas, merged by
layering, the board frozen, every DSL text compiled and every name resolved. Problems
are collected as diagnostics; nothing here runs game code.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from dsl.compiler import Callable_, Compiler, Symbols
from dsl.primitives import PRIMITIVES
from dsl.runtime import copy_value
from engine.base.diagnostics import Diagnostics, Loc, RulesetError, did_you_mean
from engine.loading.layering import Resolved, copy_map, resolve
from engine.loading.package import Combo, resolve_combo
from engine.loading.yamlio import loc_of
from engine.model.board import Board, build_board
from engine.model.checks import run_checks
from engine.model.flow import FlowCompiler, Node
from engine.model.ruleset import PLAYER_KIND, Kind, Model


def load(combo_text: str | list[str], options: dict[str, Any] | None = None, players: int | None = None,
         diags: Diagnostics | None = None) -> Model:
    """Load and compile a combo; raises RulesetError (carrying the diagnostics) on errors."""
    diags = diags if diags is not None else Diagnostics()
    model = build(combo_text, options, players, diags)
    if model is None or diags.errors:
        raise RulesetError(diags)
    return model


def build(combo_text: str | list[str], options: dict[str, Any] | None, players: int | None,
          diags: Diagnostics) -> Model | None:
    combo = resolve_combo(combo_text, diags, options, players)
    if combo is None:
        return None
    return build_combo(combo, diags)


def build_combo(combo: Combo, diags: Diagnostics) -> Model | None:
    """Layer and compile an already resolved combo (its options and player count fixed)."""
    resolved = resolve(combo, diags)
    if diags.errors:
        return None
    return _compile(combo, resolved, diags)


def _compile(combo: Combo, res: Resolved, diags: Diagnostics) -> Model | None:
    data = res.data
    # ---- kinds, entities, board ----
    kinds: dict[str, Kind] = {}
    for kname, spec in data["kinds"].items():
        k = Kind(kname, str(spec.get("collection", "")), str(spec.get("owner", "")))
        for fname, fspec in (spec.get("state") or {}).items():
            if isinstance(fspec, dict) and "default" in fspec:
                k.fields[fname] = fspec["default"]
                k.visible[fname] = fspec.get("visible", "all") or "none"  # `none` may read as null
            else:
                k.fields[fname] = fspec
                k.visible[fname] = "all"
        k.items = copy_map(spec.get("items") or {})
        kinds[kname] = k
    if PLAYER_KIND not in kinds:
        kinds[PLAYER_KIND] = Kind(PLAYER_KIND)
    board = None
    if data["board"]:
        board = build_board(data["board"], diags)
        sk = data["board"].get("space_kind")
        if board is not None:
            if not sk:
                diags.add("R001", "the board needs `space_kind:` naming the kind of its spaces",
                          loc_of(data, "board"))
            elif sk not in kinds:
                diags.add("R001", f"board space_kind `{sk}` is not a declared kind",
                          loc_of(data["board"], "space_kind"), hint=did_you_mean(sk, kinds))
            else:
                for sid in board.spaces:
                    kinds[sk].items[sid] = dict(board.attrs.get(sid, {}))
        elif isinstance(sk, str) and sk in kinds and isinstance(data["board"].get("spaces"), dict):
            # The board has errors (already reported): still declare its spaces, so that rules
            # and cards naming them do not each add a misleading "unknown" error.
            for sid, attrs in data["board"]["spaces"].items():
                if isinstance(sid, str):
                    kinds[sk].items.setdefault(sid, dict(attrs) if isinstance(attrs, dict) else {})
    static: dict[str, dict] = {}
    kind_of: dict[str, str] = {}
    for k in kinds.values():
        for iid, attrs in k.items.items():
            iid = str(iid)
            if iid in kind_of:
                where = loc_of(k.items, iid, key=True)
                if not where.line and board is not None and k.name == board.space_kind:
                    where = loc_of(data["board"].get("spaces"), iid, key=True)
                diags.add("R002", f"id `{iid}` is used by two kinds ({kind_of[iid]} and {k.name})", where,
                          hint="every entity id names one thing; rename one of them")
                continue
            kind_of[iid] = k.name
            s = dict(attrs) if isinstance(attrs, dict) else {}
            s["kind"] = k.name
            if board is not None and iid in board.region_of:
                s["region"] = board.region_of[iid]
            static[iid] = s
    collections = {k.collection: tuple(str(i) for i in k.items) for k in kinds.values() if k.collection}
    _check_refs(data, kinds, board, diags)
    # ---- symbols ----
    sym = Symbols()
    globals_: dict[str, Any] = {}
    globals_visible: dict[str, str] = {}
    for gname, gspec in data["globals"].items():
        if isinstance(gspec, dict) and "default" in gspec:
            globals_[gname], globals_visible[gname] = gspec["default"], gspec.get("visible", "all") or "none"
        else:
            globals_[gname], globals_visible[gname] = gspec, "all"
    sym.globals = set(globals_)
    sym.constants = {str(i): str(i) for i in static}
    if board is not None:
        sym.constants.update({r: r for r in board.regions})
        sym.constants.update({lk: lk for lk in board.neighbors_by_kind})
        sym.constants.update({s: s for s in board.sets})
    sym.constants.update({kname: kname for kname in kinds})
    for cname, value in data["constants"].items():
        if cname in sym.constants:
            diags.add("R003", f"constant `{cname}` has the same name as an id",
                      loc_of(data["constants"], cname, key=True))
        sym.constants[cname] = copy_value(value)  # plain data: the loader's located types stay behind
    sym.option_names = {str(k) for k in combo.options}
    sym.fields = {f for k in kinds.values() for f in k.fields}
    sym.statics = {a for s in static.values() for a in s}
    sym.collections = {c: c for c in collections}
    for gname in globals_:
        if gname in sym.constants or gname in collections:
            diags.add("R003", f"global `{gname}` has the same name as an id or constant",
                      loc_of(data["globals"], gname, key=True))
    for table, target in (("functions", sym.functions), ("procedures", sym.procedures),
                          ("events", sym.events), ("modifiers", sym.modifiers), ("steps", sym.steps)):
        for name, spec in data[table].items():
            target[name] = Callable_(tuple(spec.get("params") or ()), loc_of(data[table], name, key=True))
    for name in [*sym.functions, *sym.procedures]:
        if name in PRIMITIVES:
            diags.add("R004", f"`{name}` is a built-in function; choose another name",
                      loc_of(data["functions"] if name in sym.functions else data["procedures"], name, key=True))
    comp = Compiler(sym, diags)
    # ---- compile rule texts ----
    functions = {n: comp.expression(s["value"], loc_of(s, "value"), set(s.get("params") or ()), f"function `{n}`")
                 for n, s in data["functions"].items()}
    procedures = {n: comp.effect(s["do"], loc_of(s, "do"), set(s.get("params") or ()), f"procedure `{n}`")
                  for n, s in data["procedures"].items()}
    triggers: dict[str, list] = {}
    pkg_rank = {p.id: i for i, p in enumerate(combo.packages)}
    tlist = []
    for tid, t in data["triggers"].items():
        ev = t["on"]
        if ev not in sym.events:
            diags.add("R005", f"trigger `{tid}` listens to unknown event `{ev}`", loc_of(t, "on"),
                      hint=did_you_mean(ev, sym.events))
            continue
        params = set(sym.events[ev].params)
        when = comp.expression(t["when"], loc_of(t, "when"), params, "condition") if "when" in t else None
        do = comp.effect(t["do"], loc_of(t, "do"), params, f"trigger `{tid}`")
        rank = pkg_rank.get(res.provenance.get(f"triggers.{tid}", ("", Loc()))[0], 0)
        tlist.append((int(t.get("order", 0)), rank, tid, ev, when, do))
    for _order, _rank, tid, ev, when, do in sorted(tlist, key=lambda x: x[:3]):
        triggers.setdefault(ev, []).append((tid, when, do))
    layer_order = list(data["modifier_layers"])
    modifiers: dict[str, list] = {}
    modifier_params: dict[str, tuple[str, ...]] = {}
    for mname, m in data["modifiers"].items():
        params = tuple(m.get("params") or ())
        modifier_params[mname] = params
        entries = []
        for lid, layer in (m.get("layers") or {}).items():
            if layer["layer"] not in layer_order:
                diags.add("R006", f"modifier layer `{layer['layer']}` is not listed in modifier_layers",
                          loc_of(layer, "layer"), hint=did_you_mean(layer["layer"], layer_order))
                continue
            scope = set(params) | {"value"}
            when = comp.expression(layer["when"], loc_of(layer, "when"), scope, "condition") \
                if "when" in layer else None
            value = comp.expression(layer["value"], loc_of(layer, "value"), scope, "value")
            rank = pkg_rank.get(res.provenance.get(f"modifiers.{mname}.layers.{lid}", ("", Loc()))[0], 0)
            entries.append((layer_order.index(layer["layer"]), rank, lid, when, value))
        modifiers[mname] = [(lid, when, value) for _, _, lid, when, value in sorted(entries, key=lambda e: e[:3])]
    # ---- flow ----
    fc = FlowCompiler(data["steps"], comp, sym.globals, diags)
    fc.compile_steps()
    if not data["flow"]:
        diags.add("F006", "the ruleset has no `flow:` (the game from start to end)",
                  Loc(combo.base.manifest_file, 1, 1), hint="add a `flow:` section listing the steps of the game")
        root = fc.add(Node("seq"))
    else:
        root = fc.items(data["flow"], set(), "flow", data, "flow")
    result = data["result"]
    score = comp.expression(result["score"], loc_of(result, "score"), {"player"}, "score") if result else None
    if not result:
        diags.add("R007", "the ruleset has no `result:` saying how a finished game is scored",
                  Loc(combo.base.manifest_file, 1, 1), hint="add `result: {score: <expression over player>}`")
    tiebreak = [comp.expression(t, loc_of(result["tiebreak"], i), {"player"}, "tiebreak")
                for i, t in enumerate(result.get("tiebreak") or [])] if result else []
    hints = data["hints"]
    evaluate = comp.expression(hints["evaluate"], loc_of(hints, "evaluate"), {"player"}, "evaluation") \
        if "evaluate" in hints else None
    bot_hints: dict[str, Any] = {k: hints[k] for k in ("versus", "scale", "round", "samples", "horizon") if k in hints}
    if "prefer" in hints:
        bot_hints["prefer"] = comp.expression(hints["prefer"], loc_of(hints, "prefer"), {"player", "item"},
                                              "preference")
    if "breakdown" in hints:
        bot_hints["breakdown"] = {name: comp.expression(expr, loc_of(hints["breakdown"], name), {"player"},
                                                        f"breakdown `{name}`")
                                  for name, expr in hints["breakdown"].items()}
    display = data["display"]
    status = comp.expression(display["status"], loc_of(display, "status"), {"player"}, "status") \
        if "status" in display else None
    label = comp.expression(display["label"], loc_of(display, "label"), {"item"}, "label") \
        if "label" in display else None
    checks = {cid: comp.expression(chk["expect"], loc_of(chk, "expect"), set(), f"check `{cid}`")
              for cid, chk in data["checks"].items()}
    if diags.errors:
        return None
    fingerprint = _fingerprint(combo, res)
    model = Model(combo, res, kinds, kind_of, static, board, collections, globals_, globals_visible,
                  functions, procedures, triggers, modifiers, modifier_params, fc.nodes, fc.step_index, root,
                  score, tiebreak, evaluate, status, list(display.get("player_names") or []), fingerprint, sym,
                  checks)
    model.frozen_ids = _container_ids(sym.constants.values())
    model.label = label
    model.hints = bot_hints
    run_checks(model, checks, diags)
    return None if diags.errors else model


def _container_ids(values: Any) -> frozenset[int]:
    """The ids of every list and map inside the constants, which rules share without copying."""
    ids: set[int] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, (list, dict)) and id(v) not in ids:
            ids.add(id(v))
            stack.extend(v.values() if isinstance(v, dict) else v)
    return frozenset(ids)


def _check_refs(data: dict, kinds: dict[str, Kind], board: Board | None, diags: Diagnostics) -> None:
    """`kinds.K.refs: {attribute: target}`: each item's attribute must name an entity of the
    target kind (or a region), so that a card naming a province that does not exist is found."""
    spaces_in = data["board"].get("spaces") if isinstance(data["board"], dict) else None
    for kname, spec in data["kinds"].items():
        refs = spec.get("refs") or {}
        for attr, target in refs.items():
            if target == "region":
                valid = set(board.regions) if board is not None else set()
            elif target in kinds:
                valid = {str(i) for i in kinds[target].items}
            else:
                diags.add("R010", f"kind `{kname}`: refs says `{attr}` names a `{target}`, which is not a kind",
                          loc_of(refs, attr), hint=did_you_mean(str(target), [*kinds, "region"]))
                continue
            for iid, attrs in kinds[kname].items.items():
                source = spaces_in.get(iid) if board is not None and kname == board.space_kind \
                    and isinstance(spaces_in, dict) and isinstance(spaces_in.get(iid), dict) else attrs
                if not isinstance(attrs, dict) or attr not in attrs:
                    continue
                value = attrs[attr]
                names = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
                for i, name in names:
                    if name is None or str(name) in valid:
                        continue
                    loc = loc_of(source[attr], i) if i is not None else loc_of(source, attr)
                    diags.add("R010", f"{kname} `{iid}`: {attr} `{name}` is not a {target}",
                              loc if loc.line else loc_of(kinds[kname].items, iid, key=True),
                              hint=did_you_mean(str(name), valid))


def _fingerprint(combo: Combo, res: Resolved) -> str:
    """A short hash of the resolved ruleset and options: saves and logs name it so that a
    game is never continued under different rules."""
    blob = json.dumps([combo.name, combo.options, res.data], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
