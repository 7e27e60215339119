"""Rule scenarios: set up a position, script the moves and the chance, check expectations.

A scenario file (YAML, see docs/scenarios.md) names a ruleset, players, options and a
seed; optionally a step (or a short run of steps) to start at instead of the whole game; a
`setup` effect applied to the fresh state, which must keep the ruleset's invariants; forced
chance outcomes; scripted moves with checkpoints between them (expectations, the options on
offer); `expect` conditions in the rules language; and the `result`. Failures point at the
scenario file's line, and keep the account up to the failure.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsl.compiler import Compiler, Symbols
from dsl.runtime import Ctx, RuleError
from engine.base.console import add_format_option, print_json, usage_error
from engine.base.diagnostics import Diagnostics, Loc, RulesetError, did_you_mean
from engine.base.text import safe_text
from engine.cli import help_of
from engine.loading.schema import check_scenario
from engine.loading.yamlio import load_yaml, loc_of
from engine.model import Model, build
from engine.model.checks import CHECK_BUDGET
from engine.run.game import Game, IllegalMove, _short  # _short: options as IllegalMove shows them

_MODEL_CACHE: dict[tuple, Model] = {}

@dataclass
class Outcome:
    file: str
    title: str
    failures: list[tuple[Loc, str]] = field(default_factory=list)
    account: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def model_for(ruleset: str, options: dict, players: int, diags: Diagnostics) -> Model | None:
    key = (ruleset, tuple(sorted((k, str(v)) for k, v in options.items())), players)
    if key not in _MODEL_CACHE:
        m = build(ruleset, options, players, diags)
        if m is None:
            return None
        _MODEL_CACHE[key] = m
    return _MODEL_CACHE[key]


def run_file(path: str | Path) -> list[Outcome]:
    """Run one scenario file (a mapping, or a list of scenario mappings)."""
    diags = Diagnostics()
    display = str(path)
    data = load_yaml(path, diags, display_name=display)
    if diags.errors or data is None:
        out = Outcome(display, Path(path).stem)
        for d in diags.errors or [None]:
            out.failures.append((d.loc if d else Loc(display), d.message if d else "empty scenario file"))
        return [out]
    if not check_scenario(data, display, diags):
        out = Outcome(display, Path(path).stem)
        out.failures.extend((d.loc, f"{d.message}{' (' + d.hint + ')' if d.hint else ''}") for d in diags.errors)
        return [out]
    items = data if isinstance(data, list) else [data]
    return [run_one(item, display, loc_of(data, i) if isinstance(data, list) else Loc(display, 1, 1))
            for i, item in enumerate(items)]


def run_one(sc: Any, file: str, where: Loc) -> Outcome:
    title = str(sc.get("scenario", Path(file).stem)) if isinstance(sc, dict) else Path(file).stem
    out = Outcome(file, title)

    def fail(loc: Loc, msg: str) -> Outcome:
        out.failures.append((loc if loc.line else where, msg))
        return out
    if not isinstance(sc, dict):
        return fail(where, "a scenario is a mapping (scenario, ruleset, players, moves, expect ...)")
    if "ruleset" not in sc or "players" not in sc:
        return fail(where, "a scenario needs `ruleset:` and `players:`")
    players = sc["players"]
    if not isinstance(players, int) or isinstance(players, bool):
        return fail(loc_of(sc, "players"), "`players:` must be a whole number")
    diags = Diagnostics()
    model = model_for(str(sc["ruleset"]), dict(sc.get("options") or {}), players, diags)
    if model is None:
        for d in diags.errors:
            fail(d.loc, d.message)
        return out
    comp_diags = Diagnostics()
    symbols = _scenario_symbols(model, players)
    comp = Compiler(symbols, comp_diags)
    start_steps: list[str] = []  # named when a move finds the start steps ended
    game = _fresh_game(model, players, int(sc.get("seed", 0)), sc, comp, fail, start_steps)
    if game is None:
        return out
    if "setup" in sc and not _check_invariants(sc, game, fail):
        return out
    game.forced = [dict(f) for f in (sc.get("forced") or [])]
    account_start = len(game.log)
    try:  # the account so far goes with any failure (`--verbose` prints it)
        if not _play(sc, game, comp, fail, start_steps):
            return out
    finally:
        out.account = [e["text"] for e in game.log[account_start:] if e["t"] == "say"]
    if game.forced:
        fail(loc_of(sc, "forced"), f"{len(game.forced)} forced chance outcome(s) were never used "
             f"(next: {game.forced[0]})")
    _check_expectations(sc.get("expect"), sc, "expect", game, comp, fail)
    _check_account(sc, game, fail)
    if "result" in sc:
        _check_result(sc["result"], loc_of(sc, "result"), game, fail, start_steps)
    return out


def _play(sc: dict, game: Game, comp: Compiler, fail: Any, start_steps: list[str]) -> bool:
    """Run the flow through the scripted moves and checkpoints; False once the scenario
    has ended (a failure, or the expected rule error)."""
    expect_error = sc.get("expect_error")
    try:
        game.run()
        moves = sc.get("moves") or []
        n = 0  # moves taken, for the messages
        for i, entry in enumerate(moves):
            mloc = loc_of(moves, i)
            is_move = not isinstance(entry, dict) or "choose" in entry
            label = f"move {n + 1}" if is_move else f"checkpoint (moves entry {i + 1})"
            if entry == {}:
                fail(mloc, f"{label} is empty: give `choose:`, or what to check here")
                return False
            checks = entry if isinstance(entry, dict) else {}
            if not _check_decision(checks, label, mloc, game, fail, is_move, start_steps):
                return False
            if not is_move:
                if "expect" in entry:
                    _check_expectations(entry["expect"], entry, "expect", game, comp, fail)
                _check_account(entry, game, fail)
                continue
            n += 1
            try:
                game.apply(_plain(entry["choose"] if isinstance(entry, dict) else entry))
            except IllegalMove as e:
                fail(mloc, f"{label}: {e}")
                return False
    except RuleError as e:
        if expect_error and str(expect_error) in e.message:
            return False
        fail(e.loc if e.loc.line else loc_of(sc, "moves"), f"rule error: {e.message}")
        return False
    if expect_error:
        fail(loc_of(sc, "expect_error"), f"expected an error containing `{expect_error}`; none happened")
        return False
    return True


def _check_decision(entry: dict, label: str, loc: Loc, game: Game, fail: Any, needed: bool,
                    start_steps: list[str]) -> bool:
    """The checks a moves entry makes of the pending decision; False if the scenario cannot go on."""
    d = game.decision
    if "over" in entry and entry["over"] != (d is None):
        fail(loc, f"{label}: expected {'the end' if entry['over'] else 'a pending decision'}, but "
             f"{_where_now(game, start_steps)}")
        return False
    asks = [k for k in ("player", "step", "options", "offers", "illegal") if k in entry]
    if d is None:
        if needed or asks:
            fail(loc, f"{label}: no decision is pending: {_where_now(game, start_steps)}")
            return False
        return True
    if "player" in entry and entry["player"] != d.player:
        fail(loc, f"{label}: expected {entry['player']} to choose, but {d.player} is choosing at `{d.step}` "
             f"({d.prompt})")
        return False
    if "step" in entry and entry["step"] != d.step:
        fail(loc, f"{label}: expected step `{entry['step']}`, but the decision is at `{d.step}`")
        return False
    offered = [_key(o) for o in d.options]
    if "options" in entry and sorted(map(_key, _plain(entry["options"]))) != sorted(offered):
        fail(loc_of(entry, "options"), f"{label}: {d.player} at `{d.step}` is offered {_list(d.options)}, "
             f"not {_list(_plain(entry['options']))}")
    for o in _plain(entry.get("offers") or []):
        if _key(o) not in offered:
            fail(loc_of(entry, "offers"), f"{label}: {d.player} at `{d.step}` is not offered {_short(o)}; "
                 f"offered: {_list(d.options)}")
    for o in _plain(entry.get("illegal") or []):
        if _key(o) in offered:
            fail(loc_of(entry, "illegal"), f"{label}: {_short(o)} is a legal option for {d.player} at "
                 f"`{d.step}`, expected it to be illegal")
    return True


def _where_now(game: Game, start_steps: list[str]) -> str:
    """Where the game stands, in words: which step ended, or who is choosing."""
    d = game.decision
    if d is not None:
        return f"{d.player} is choosing at `{d.step}`"
    if start_steps:
        steps = ", ".join(f"`{s}`" for s in start_steps)
        return f"the scenario's start step{'s' if len(start_steps) > 1 else ''} {steps} ended"
    last = next((e["step"] for e in reversed(game.log) if e["t"] == "step"), None)
    return f"the game ended{f' (last step begun: `{last}`)' if last else ''}"


def _check_invariants(sc: dict, game: Game, fail: Any) -> bool:
    """The ruleset's invariants (`checks:` with `invariant: true`) on the hand-made position."""
    spec = game.model.resolved.data.get("checks") or {}
    skip = sc.get("unchecked", False)
    invariants = [cid for cid, chk in spec.items() if chk.get("invariant")]
    if isinstance(skip, list):
        for i, cid in enumerate(skip):
            if cid not in invariants:
                fail(loc_of(skip, i), f"unchecked: `{cid}` is not an invariant of this ruleset "
                     f"(invariants: {', '.join(invariants) or 'none'}){_hint(cid, invariants)}")
        invariants = [cid for cid in invariants if cid not in skip]
    elif skip is True:
        invariants = []
    ok = True
    for cid in invariants:
        fn, chk = game.model.checks.get(cid), spec[cid]
        if fn is None or (chk.get("players") and len(game.state["players"]) not in chk["players"]):
            continue
        try:
            holds = fn(Ctx(game.state, game.model, game, budget=CHECK_BUDGET))
        except RuleError as e:
            holds, why = False, f"cannot be evaluated: {e.message}"
        else:
            why = chk.get("message") or f"`{chk['expect']}` does not hold"
        if not holds:
            ok = False
            fail(loc_of(sc, "setup", key=True), f"setup: the position breaks the ruleset's invariant `{cid}` "
                 f"({loc_of(chk, 'expect')}): {why}; fix the setup, or list `{cid}` under `unchecked:`")
    return ok


def _check_result(want: dict, loc: Loc, game: Game, fail: Any, start_steps: list[str]) -> None:
    res = game.result
    if res is None:
        fail(loc, f"result: the game is not over ({_where_now(game, start_steps)})")
        return
    winners, ranking = res["winners"], res["ranking"]
    shown = f"winners {', '.join(winners)}; ranking {', '.join(ranking)}; scores {res['scores']}"
    if "winner" in want and winners != [want["winner"]]:
        fail(loc_of(want, "winner"), f"expected {want['winner']} to win alone, but the result is: {shown}")
    if "winners" in want and sorted(want["winners"]) != sorted(winners):
        fail(loc_of(want, "winners"), f"expected winners {', '.join(want['winners'])}, but the result is: {shown}")
    if "ranking" in want and list(want["ranking"]) != ranking:
        fail(loc_of(want, "ranking"), f"expected ranking {', '.join(want['ranking'])}, but the result is: {shown}")
    if "tie" in want and want["tie"] != (len(winners) > 1):
        fail(loc_of(want, "tie"), f"expected {'a tie' if want['tie'] else 'one winner'}, but the result is: {shown}")
    for p, score in (want.get("scores") or {}).items():
        if res["scores"].get(p) != score:
            fail(loc_of(want["scores"], p), f"expected {p} to score {score}, but the result is: {shown}")


def _hint(name: Any, candidates: Any) -> str:
    hint = did_you_mean(str(name), candidates)
    return f"; {hint}" if hint else ""


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True, ensure_ascii=False)


def _list(xs: list) -> str:
    return ", ".join(_short(x) for x in xs[:12]) + (" ..." if len(xs) > 12 else "")


def _scenario_symbols(model: Model, players: int) -> Symbols:
    base = model.symbols
    sym = Symbols(**{k: (dict(v) if isinstance(v, dict) else set(v) if isinstance(v, set) else v)
                     for k, v in base.__dict__.items()})
    for i in range(players * model.combo.base.hands.get(players, 1)):  # every hand is a player of the rules
        sym.constants[f"P{i + 1}"] = f"P{i + 1}"
    return sym


def _fresh_game(model: Model, players: int, seed: int, sc: dict, comp: Compiler, fail: Any,
                start_steps: list[str]) -> Game | None:
    start = sc.get("start")
    game = Game.new(model, players, seed, log=True, defer=True)  # setup first, then run
    if start is not None:
        calls = start if isinstance(start, list) else [start]
        frames = []
        for i, call in enumerate(calls):
            cloc = loc_of(calls, i) if isinstance(start, list) else loc_of(sc, "start")
            call = {"step": call} if isinstance(call, str) else call
            step = call.get("step")
            if step not in model.steps:
                fail(cloc, f"start: unknown step `{step}`{_hint(step, model.steps)}")
                return None
            args = {}
            for k, src in (call.get("with") or {}).items():
                fn = comp.expression(src, loc_of(call["with"], k), (), "argument")
                if fn is None:
                    _report(comp, fail)
                    return None
                args[k] = fn(Ctx(game.state, model, game))
            frames.append({"n": model.steps[step], "i": 0, "v": args})
            start_steps.append(step)
        game.state["flow"] = frames[::-1]  # a stack: the first step on top runs first
    if "setup" in sc:
        fn = comp.effect(sc["setup"], loc_of(sc, "setup"), (), "setup")
        if fn is None:
            _report(comp, fail)
            return None
        try:
            fn(Ctx(game.state, model, game))
        except RuleError as e:
            fail(e.loc, f"setup: {e.message}")
            return None
    return game


def _report(comp: Compiler, fail: Any) -> None:
    for d in comp.diags.errors:
        fail(d.loc, f"{d.message}{' (' + d.hint + ')' if d.hint else ''}")
    comp.diags.items.clear()


def _check_expectations(expects: Any, holder: dict, key: str, game: Game, comp: Compiler, fail: Any) -> None:
    """`expect:` (at the end, or in a checkpoint): expressions that must hold, or
    `expression: expected value` pairs."""
    if not expects:
        return
    items = [{k: v} for k, v in expects.items()] if isinstance(expects, dict) else expects
    for i, item in enumerate(items):
        if isinstance(expects, list):
            loc = loc_of(expects, i)
        else:
            loc = loc_of(expects, next(iter(item)), key=True)
        if not loc.line:
            loc = loc_of(holder, key)
        if isinstance(item, dict):
            for expr, want in item.items():
                iloc = loc_of(item, expr, key=True) if loc_of(item, expr, key=True).line else loc
                got = _evaluate(expr, iloc, game, comp, fail)
                if got is not _FAILED and got != _plain(want):
                    fail(iloc, f"expected `{expr}` to be {want!r}, but it is {got!r}")
        else:
            got = _evaluate(item, loc, game, comp, fail)
            if got is not _FAILED and not got:
                fail(loc, f"expected `{item}` to hold; it does not")


def _check_account(holder: dict, game: Game, fail: Any) -> None:
    """`expect_log:` texts that the account so far must contain."""
    texts = [e["text"] for e in game.log if e["t"] == "say"]
    for i, want in enumerate(holder.get("expect_log") or []):
        if not any(str(want) in t for t in texts):
            fail(loc_of(holder["expect_log"], i), f"the account has no line containing `{want}`")


_FAILED = object()


def _evaluate(expr: Any, loc: Loc, game: Game, comp: Compiler, fail: Any) -> Any:
    """The value of an expectation, or _FAILED after reporting why it has none."""
    fn = comp.expression(str(expr), loc, (), "expectation")
    if fn is None:
        _report(comp, fail)
        return _FAILED
    try:
        return fn(Ctx(game.state, game.model, game))
    except RuleError as e:
        fail(loc, f"cannot evaluate `{expr}`: {e.message}")
        return _FAILED


def _plain(x: Any) -> Any:
    """YAML containers as plain lists and dicts (options compare by value)."""
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def run_paths(paths: list[str]) -> list[Outcome]:
    files: list[Path] = []
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            files.extend(sorted(pp.rglob("*.yaml")))
        else:
            files.append(pp)
    outcomes: list[Outcome] = []
    for f in files:
        try:
            outcomes.extend(run_file(f))
        except RulesetError as e:  # pragma: no cover - build() reports instead of raising
            outcomes.append(Outcome(str(f), f.stem, [(Loc(str(f)), str(e))]))
    return outcomes


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("scenario", help=help_of("scenario"),
                       description="Run scenario files or folders of them. Exit 1 if any fails.")
    s.add_argument("paths", nargs="+", metavar="FILE")
    s.add_argument("--verbose", "-v", action="store_true", help="print each scenario's account")
    add_format_option(s)
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        return usage_error(f"no such file or folder: {', '.join(missing)}")
    outcomes = run_paths(args.paths)
    failed = sum(1 for o in outcomes if not o.ok)
    if args.format == "json":
        print_json({"passed": len(outcomes) - failed, "failed": failed, "scenarios": [
            {"file": o.file, "title": o.title, "ok": o.ok, "account": o.account,
             "failures": [{"file": loc.file, "line": loc.line, "col": loc.col, "message": msg}
                          for loc, msg in o.failures]} for o in outcomes]})
        return 1 if failed else 0
    failed = 0
    for o in outcomes:
        if o.ok:
            print(f"ok    {o.file}: {safe_text(str(o.title), False)}")
        else:
            failed += 1
            print(f"FAIL  {o.file}: {safe_text(str(o.title), False)}")
            for loc, msg in o.failures:
                print(f"      {loc}: {safe_text(str(msg))}")
        if args.verbose and o.account:
            for line in o.account:
                print(f"        | {safe_text(str(line), False)}")
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0
