"""A person at the terminal: numbered options, help, save and quit."""
from __future__ import annotations

import json
import sys
from typing import Any

from dsl.runtime import Ctx, RuleError
from engine.base.files import write_atomic
from engine.run.game import Decision, Game

HELP = """  a number  take that option
  v         show what you can see of the game (your view)
  s [FILE]  save the game (to FILE, or to the --save file)
  q         save and quit (resume later with --load)
  h         this help"""


def _show(game: Game, option: Any) -> str:
    """An option as a person reads it: the ruleset's `display.label` when it gives one."""
    if option is None:
        return "(pass)"
    label = game.model.label
    if label is not None:
        try:
            text = label(Ctx(game.state, game.model, game, {"item": option}))
        except RuleError:
            text = None
        if text not in (None, ""):
            return str(text)
    return option if isinstance(option, str) else json.dumps(option, ensure_ascii=False)


def status_line(game: Game, player: str) -> str:
    """The ruleset's `display.status` for a player, or '' when it has none."""
    fn = game.model.status
    if fn is None:
        return ""
    try:
        return str(fn(Ctx(game.state, game.model, game, {"player": player})))
    except RuleError:
        return ""


def ask(game: Game, d: Decision, names: dict[str, str], save_path: str | None,
        stdin: Any = None, out: Any = None) -> int | None:
    """Ask the person for an option; returns its index, or None after save-and-quit."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    status = status_line(game, d.player)
    print(f"\n{names.get(d.player, d.player)}{' [' + status + ']' if status else ''}: {d.prompt}", file=out)
    for i, o in enumerate(d.options, 1):
        print(f"  {i:>3}. {_show(game, o)}", file=out)
    while True:
        print("> ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line:  # end of input: save if we can, then stop
            if save_path:
                write_atomic(save_path, json.dumps(game.save()))
                print(f"\nsaved to {save_path}", file=out)
            return None
        word = line.strip()
        if word.isdigit() and 1 <= int(word) <= len(d.options):
            return int(word) - 1
        if word in ("h", "help", "?"):
            print(HELP, file=out)
        elif word == "v":
            print(json.dumps(game.view(d.player), indent=1, ensure_ascii=False)[:20000], file=out)
        elif word.startswith("s") or word == "q":
            parts = word.split(maxsplit=1)
            path = parts[1] if len(parts) > 1 else save_path
            if not path:
                print("  give a file: s FILE (or start with --save FILE)", file=out)
                continue
            write_atomic(path, json.dumps(game.save()))
            print(f"  saved to {path}; continue with: daimyo play --load {path}", file=out)
            if word == "q":
                return None
        else:
            print(f"  type a number from 1 to {len(d.options)}, or h for help", file=out)
