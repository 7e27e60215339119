"""Rule scenarios: set up a position, script the moves and the chance, check expectations.

A scenario file (YAML, see docs/scenarios.md) names a ruleset, players, options and a
seed; optionally a step to start at instead of the whole game; a `setup` effect applied
to the fresh state; forced chance outcomes; scripted moves; and `expect` conditions in
the rules language. Failures point at the scenario file's line.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsl.compiler import Compiler, Symbols
from dsl.runtime import Ctx, RuleError
from engine.base.console import add_format_option, print_json, usage_error
from engine.base.diagnostics import Diagnostics, Loc, RulesetError
from engine.loading.schema import check_scenario
from engine.loading.yamlio import load_yaml, loc_of
from engine.model import Model, build
from engine.run.game import Game, IllegalMove

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
    game = _fresh_game(model, players, int(sc.get("seed", 0)), sc, comp, fail)
    if game is None:
        return out
    game.forced = [dict(f) for f in (sc.get("forced") or [])]
    account_start = len(game.log)
    expect_error = sc.get("expect_error")
    try:
        game.run()
        for i, move in enumerate(sc.get("moves") or []):
            mloc = loc_of(sc["moves"], i)
            d = game.decision
            if d is None:
                state = "over" if game.over else "running"
                return fail(mloc, f"move {i + 1}: no decision is pending (the game is {state})")
            if isinstance(move, dict) and "choose" in move:
                if "player" in move and move["player"] != d.player:
                    return fail(mloc, f"move {i + 1}: expected {move['player']} to choose, but {d.player} is "
                                f"choosing at `{d.step}` ({d.prompt})")
                if "step" in move and move["step"] != d.step:
                    return fail(mloc, f"move {i + 1}: expected step `{move['step']}`, "
                                f"but the decision is at `{d.step}`")
                choice = move["choose"]
            else:
                choice = move
            try:
                game.apply(_plain(choice))
            except IllegalMove as e:
                return fail(mloc, f"move {i + 1}: {e}")
    except RuleError as e:
        if expect_error and str(expect_error) in e.message:
            return out
        return fail(e.loc if e.loc.line else where, f"rule error: {e.message}")
    if expect_error:
        return fail(loc_of(sc, "expect_error"), f"expected an error containing `{expect_error}`; none happened")
    if game.forced:
        fail(loc_of(sc, "forced"), f"{len(game.forced)} forced chance outcome(s) were never used "
             f"(next: {game.forced[0]})")
    out.account = [e["text"] for e in game.log[account_start:] if e["t"] == "say"]
    _check_expectations(sc, game, comp, comp_diags, fail)
    return out


def _scenario_symbols(model: Model, players: int) -> Symbols:
    base = model.symbols
    sym = Symbols(**{k: (dict(v) if isinstance(v, dict) else set(v) if isinstance(v, set) else v)
                     for k, v in base.__dict__.items()})
    for i in range(players):
        sym.constants[f"P{i + 1}"] = f"P{i + 1}"
    return sym


def _fresh_game(model: Model, players: int, seed: int, sc: dict, comp: Compiler, fail: Any) -> Game | None:
    start = sc.get("start")
    game = Game.new(model, players, seed, log=True, defer=True)  # setup first, then run
    if start is not None:
        if isinstance(start, str):
            start = {"step": start}
        step = start.get("step")
        if step not in model.steps:
            fail(loc_of(sc, "start"), f"start: unknown step `{step}`")
            return None
        args = {}
        for k, src in (start.get("with") or {}).items():
            fn = comp.expression(src, loc_of(start["with"], k), (), "argument")
            if fn is None:
                _report(comp, fail)
                return None
            args[k] = fn(Ctx(game.state, model, game))
        game.state["flow"] = [{"n": model.steps[step], "i": 0, "v": args}]
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


def _check_expectations(sc: dict, game: Game, comp: Compiler, diags: Diagnostics, fail: Any) -> None:
    expects = sc.get("expect") or []
    if isinstance(expects, dict):
        expects = [{k: v} for k, v in expects.items()]
    for i, item in enumerate(expects):
        if isinstance(sc["expect"], list):
            loc = loc_of(sc["expect"], i)
        else:
            loc = loc_of(sc["expect"], next(iter(item)), key=True)
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
    texts = [e["text"] for e in game.log if e["t"] == "say"]
    for i, want in enumerate(sc.get("expect_log") or []):
        if not any(str(want) in t for t in texts):
            fail(loc_of(sc["expect_log"], i), f"the account has no line containing `{want}`")


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
    s = sub.add_parser("scenario", help="run rule scenarios (see docs/scenarios.md)",
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
            print(f"ok    {o.file}: {o.title}")
        else:
            failed += 1
            print(f"FAIL  {o.file}: {o.title}")
            for loc, msg in o.failures:
                print(f"      {loc}: {msg}")
        if args.verbose and o.account:
            for line in o.account:
                print(f"        | {line}")
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0
