"""Building a `Model` from a combo.

`load(combo_text, options, players)` goes from a COMBO string to a `Model`: packages are
found and ordered, their data files loaded and checked against the schemas, merged by
layering, the board frozen, every DSL text compiled and every name resolved. Problems
are collected as diagnostics; nothing here runs game code.
"""
from __future__ import annotations

import re
import sys
from contextlib import AbstractContextManager
from typing import Any

from dsl.compiler import BUILTIN_NAMES, Callable_, Compiler, Symbols
from dsl.primitives import PRIMITIVES
from dsl.runtime import copy_value
from engine.base.diagnostics import Diagnostics, Loc, RulesetError, did_you_mean
from engine.base.memo import ScopedMemo
from engine.loading.layering import Resolved, copy_map, resolve
from engine.loading.package import Combo, resolve_combo
from engine.loading.yamlio import LocDict, loc_of
from engine.model.board import Board, build_board
from engine.model.checks import interned, run_checks
from engine.model.flow import FlowCompiler, Node
from engine.model.modifiers import layers_of
from engine.model.procedures import announced, procedure_body
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


HOOKS = ("before", "after")  # every step is announced as before_STEP and after_STEP


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
        section = data["board"]
        if isinstance(section, LocDict) and not section.loc.line:  # merged from several files: locate
            where = next((loc for path, (_, loc) in res.provenance.items() if path.startswith("board.") and loc.line),
                         None)
            section = copy_map(section)
            section.loc = where if where is not None else section.loc
        board = _board(section, data["board"], diags)
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
            # (ids, attribute names and texts interned, as in the state: see engine/model/checks.py
            # `interned`; a static text is often an id or a key a rule looks up)
            s = {(sys.intern(a) if type(a) is str else a): interned(copy_value(x)) for a, x in attrs.items()} \
                if isinstance(attrs, dict) else {}
            s["kind"] = sys.intern(k.name)
            if board is not None and iid in board.region_of:
                s["region"] = board.region_of[iid]
            static[sys.intern(iid)] = s
    collections = {k.collection: tuple(sys.intern(str(i)) for i in k.items) for k in kinds.values() if k.collection}
    _check_refs(data, kinds, board, diags)
    _check_reserved(data, kinds, diags)
    _check_constant_names(data, kinds, board, diags)
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
    sym.joined_fields = {f for k in kinds.values() for f, v in k.fields.items() if isinstance(v, (list, str))}
    sym.statics = set().union(*static.values())  # every attribute name (a set made in C)
    sym.collections = {c: c for c in collections}
    for gname in globals_:
        if gname in sym.constants or gname in collections:
            diags.add("R003", f"global `{gname}` has the same name as an id or constant",
                      loc_of(data["globals"], gname, key=True))
    for table, target in (("functions", sym.functions), ("procedures", sym.procedures),
                          ("events", sym.events), ("modifiers", sym.modifiers), ("steps", sym.steps)):
        for name, spec in data[table].items():
            params = tuple(spec.get("params") or ())
            _check_params_once(table, name, spec, params, diags)
            value = spec.get("value") if table == "functions" else None  # (a function's text, for inlining)
            target[name] = Callable_(params, loc_of(data[table], name, key=True),
                                     str(value) if isinstance(value, str) else None,
                                     table != "modifiers" or bool(spec.get("layers")))
    # Every step is announced before and after it runs: `before_STEP` / `after_STEP`, with the
    # step's params, so a variant listens to any step without copying it (a declared event of
    # the same name wins).
    # Declared only where a trigger listens, so reports list only events the rules name.
    listened = {str(t.get("on")) for t in data["triggers"].values() if isinstance(t, dict)}
    for name, step in sym.steps.items():
        for hook in (f"{w}_{name}" for w in HOOKS):
            if hook in listened:
                sym.events.setdefault(hook, Callable_(step.params, step.loc))
    # Procedures likewise (a step of the same name keeps the hook; an event declared by the hook's
    # name is the ruleset's own, emitted where it says). Only procedures listened to are wrapped.
    proc_hooks: dict[str, tuple[bool, bool]] = {}
    for name, proc in sym.procedures.items():
        hooks = [f"{w}_{name}" for w in HOOKS]
        wanted = [h in listened and h not in sym.events and name not in sym.steps for h in hooks]
        if any(wanted):
            proc_hooks[name] = (wanted[0], wanted[1])
            for hook, want in zip(hooks, wanted, strict=True):
                if want:
                    sym.events[hook] = Callable_(proc.params, proc.loc)
    for name in [*sym.functions, *sym.procedures]:
        if name in PRIMITIVES:
            diags.add("R004", f"`{name}` is a built-in function; choose another name",
                      loc_of(data["functions"] if name in sym.functions else data["procedures"], name, key=True))
    comp = Compiler(sym, diags)
    # ---- compile rule texts ----
    functions = {n: comp.expression(s["value"], loc_of(s, "value"), set(s.get("params") or ()), f"function `{n}`",
                                    callee=(n, sym.functions[n].params))
                 for n, s in data["functions"].items()}
    procedures = {}
    for n, s in data["procedures"].items():  # `do:` may be named blocks (engine/model/procedures.py)
        text, where, pieces = procedure_body(n, s, diags)
        procedures[n] = comp.effect(text, where, set(s.get("params") or ()), f"procedure `{n}`", pieces,
                                    callee=(n, sym.procedures[n].params))
        if n in proc_hooks and procedures[n] is not None:
            procedures[n] = announced(procedures[n], n, sym.procedures[n].params, *proc_hooks[n])
    triggers: dict[str, list] = {}
    pkg_rank = {p.id: i for i, p in enumerate(combo.packages)}
    tlist = []
    for tid, t in data["triggers"].items():
        ev = t["on"]
        if ev not in sym.events:
            diags.add("R005", f"trigger `{tid}` listens to unknown event `{ev}`", loc_of(t, "on"),
                      hint=did_you_mean(ev, [*sym.events, *(f"{w}_{s}" for s in [*sym.steps, *sym.procedures]
                                                            for w in HOOKS)]))
            continue
        params = set(sym.events[ev].params)
        when = comp.expression(t["when"], loc_of(t, "when"), params, "condition") if "when" in t else None
        do = comp.effect(t["do"], loc_of(t, "do"), params, f"trigger `{tid}`")
        rank = pkg_rank.get(res.provenance.get(f"triggers.{tid}", ("", Loc()))[0], 0)
        tlist.append((int(t.get("order", 0)), rank, tid, ev, when, do))
    for _order, _rank, tid, ev, when, do in sorted(tlist, key=lambda x: (x[0], x[1], _id_key(x[2]))):
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
            entries.append((layer_order.index(layer["layer"]), rank, lid, when, value, layer.get("when")))
        entries.sort(key=lambda e: (e[0], e[1], _id_key(e[2])))
        modifiers[mname] = layers_of(params, [(lid, when, value) for _, _, lid, when, value, _w in entries],
                                     [w for *_, w in entries])
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
    if "until" in hints:
        bot_hints["until"] = _until_steps(hints, fc.step_index, diags)
    if "prefer" in hints:
        bot_hints["prefer"] = comp.expression(hints["prefer"], loc_of(hints, "prefer"), {"player", "item"},
                                              "preference")
    if "breakdown" in hints:
        bot_hints["breakdown"] = {name: comp.expression(expr, loc_of(hints["breakdown"], name), {"player"},
                                                        f"breakdown `{name}`")
                                  for name, expr in hints["breakdown"].items()}
    if "round_breakdown" in hints:
        bot_hints["round_breakdown"] = {
            name: comp.expression(expr, loc_of(hints["round_breakdown"], name), {"player"},
                                  f"round breakdown `{name}`")
            for name, expr in hints["round_breakdown"].items()}
    display = data["display"]
    status = comp.expression(display["status"], loc_of(display, "status"), {"player"}, "status") \
        if "status" in display else None
    label = comp.expression(display["label"], loc_of(display, "label"), {"item"}, "label") \
        if "label" in display else None
    checks = {cid: comp.expression(chk["expect"], loc_of(chk, "expect"), set(), f"check `{cid}`")
              for cid, chk in data["checks"].items()}
    reads = frozenset(comp.mentioned)  # for R011 (engine/model/unused.py)
    if diags.errors:
        return None
    model = Model(combo, res, kinds, kind_of, static, board, collections, globals_, globals_visible,
                  functions, procedures, triggers, modifiers, modifier_params, fc.nodes, fc.step_index, root,
                  score, tiebreak, evaluate, status, list(display.get("player_names") or []), sym, checks)
    model.frozen_ids = _container_ids(sym.constants.values())
    model.label = label
    model.reads = reads
    model.hints = bot_hints
    run_checks(model, checks, diags)
    return None if diags.errors else model


# Within `board_cache()` (validation), a board section that built cleanly is built once: the
# builds of one base game for each option value and expansion mostly share one map.
_BOARDS = ScopedMemo("daimyo_board_cache")


def board_cache() -> AbstractContextManager[None]:
    """Within this block, a board section equal to one already built without any diagnostic
    gives that same Board (read-only). For validation: its models share boards."""
    return _BOARDS.scope()


def _board(section: dict, resolved: dict, diags: Diagnostics) -> Board | None:
    """build_board, remembered within `board_cache()`. Only a clean build is kept (a Board holds
    no locations, so the same content gives the same Board wherever it is written); the key is
    the section's repr, which tells apart every type the checks do. `resolved` is the section as
    layering left it (`section` may be a located copy): within validation the builds share it
    unchanged (engine/loading/layering.py `_own`), so its repr is worked out once."""
    memo = _BOARDS.get()
    if memo is None:
        return build_board(section, diags)
    known = memo.get(("repr", id(resolved)))
    if known is not None and known[0] is resolved:
        key = known[1]
    else:
        key = repr(section)
        memo[("repr", id(resolved))] = (resolved, key)  # held: an id is only unique while its object lives
    if "[...]" in key or "{...}" in key:
        return build_board(section, diags)
    if key in memo:
        return memo[key]
    mark = len(diags.items)
    board = build_board(section, diags)
    if board is not None and len(diags.items) == mark:
        memo[key] = board
    return board


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


def _check_constant_names(data: dict, kinds: dict[str, Kind], board: Board | None, diags: Diagnostics) -> None:
    """R014: a list in the constants (a set-up table, a deck) most of whose items name spaces,
    regions or items of one kind must name only those: `[Suruga, Mino, Surugaa]` is a typo, or a name from
    another board, that play would trip over. Keys of a mapping are checked the same way."""
    category: dict[str, str] = {}
    for kname, k in kinds.items():
        for iid in k.items:
            category.setdefault(str(iid), f"{kname}")
    if board is not None:
        for sid in (data["board"].get("spaces") or {}):
            category[str(sid)] = board.space_kind or "space"
        for rid in board.regions:
            category.setdefault(str(rid), "region")

    def check(names: list[tuple[str, Loc]], where: str) -> None:
        kinds_seen = [category[n] for n, _ in names if n in category]
        # Only where most names are known ids: a map like {turn: ..., ronin: ...} merely shares a word.
        if len(kinds_seen) < 2 or len(kinds_seen) == len(names) or 2 * len(kinds_seen) <= len(names):
            return
        what = max(set(kinds_seen), key=kinds_seen.count)
        valid = [n for n, c in category.items() if c == what]
        for name, loc in names:
            if name not in category:
                diags.add("R014", f"{where}: `{name}` is not a {what} (the other names here are {what}s)", loc,
                          hint=did_you_mean(name, valid) or f"no {what} is called `{name}` in this combo")

    stack: list[tuple[Any, str, int]] = [(v, f"constants.{k}", 0) for k, v in data["constants"].items()]
    while stack:
        value, where, depth = stack.pop()
        if depth > 8:
            continue
        if isinstance(value, list):
            if value and all(isinstance(x, str) for x in value):
                check([(x, loc_of(value, i)) for i, x in enumerate(value)], where)
            else:
                stack.extend((x, f"{where}[{i}]", depth + 1) for i, x in enumerate(value))
        elif isinstance(value, dict):
            keys = list(value)
            if keys and all(isinstance(x, str) for x in keys):
                check([(x, loc_of(value, x, key=True)) for x in keys], where)
            stack.extend((x, f"{where}.{k}", depth + 1) for k, x in value.items())


_PLAYER_ID = re.compile(r"P[0-9]+")


def _check_reserved(data: dict, kinds: dict, diags: Diagnostics) -> None:
    """Names that would silently change a game: a global, constant or collection named like a
    built-in (`players` would replace the list of players in every rule), and items named like
    players (`P1` would share the first player's state)."""
    for section in ("globals", "constants"):
        for name in data[section]:
            if name in BUILTIN_NAMES:
                diags.add("R013", f"{section[:-1]} `{name}` has the name of a built-in; every rule would read it "
                          f"instead of the built-in `{name}`", loc_of(data[section], name, key=True),
                          hint="choose another name")
    for kname, k in kinds.items():
        spec = data["kinds"].get(kname) if isinstance(data["kinds"], dict) else None
        if k.collection in BUILTIN_NAMES and isinstance(spec, dict):
            diags.add("R013", f"collection `{k.collection}` has the name of a built-in; every rule would read it "
                      f"instead of the built-in `{k.collection}`", loc_of(spec, "collection"),
                      hint="choose another name")
        if kname == PLAYER_KIND:
            continue
        for iid in k.items:
            if _PLAYER_ID.fullmatch(str(iid)):
                where = loc_of(k.items, iid, key=True)
                diags.add("R013", f"item `{iid}` of `{kname}` is named like a player (P1, P2, ...): it would share "
                          "that player's state", where if where.line else loc_of(data["kinds"], kname, key=True),
                          hint="choose another name")


def _id_key(x: Any) -> tuple:
    """Sort ids that may mix numbers and text (YAML keys): numbers first, in order, then texts."""
    return (0, x, "") if isinstance(x, (int, float)) and not isinstance(x, bool) else (1, 0, str(x))


def _check_params_once(table: str, name: str, spec: LocDict, params: tuple, diags: Diagnostics) -> None:
    """R015: a parameter named twice. A call binds its values by name, so the second would
    silently take the first's place."""
    seen: set = set()
    for k, p in enumerate(params):
        if p in seen:
            diags.add("R015", f"{table[:-1]} `{name}` names the parameter `{p}` twice",
                      loc_of(spec["params"], k), hint="give each parameter its own name")
        seen.add(p)


def _until_steps(hints: LocDict, steps: dict[str, int], diags: Diagnostics) -> tuple[str, ...]:
    """hints.until: the step or steps where the heuristic bot's look-ahead stops (F004 for an unknown one)."""
    raw = hints["until"]
    names = raw if isinstance(raw, list) else [raw]
    for k, name in enumerate(names):
        if name not in steps:
            loc = loc_of(raw, k) if isinstance(raw, list) else loc_of(hints, "until")
            diags.add("F004", f"hints.until: unknown step `{name}`", loc, hint=did_you_mean(name, list(steps)))
    return tuple(names)

