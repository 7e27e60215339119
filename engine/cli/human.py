"""A person at the terminal: numbered options, a readable view, help, save and quit.

Nothing a person typed or played is lost: a save that fails says why and asks again, and the
numbers of options stay the same from one prompt to the next (an option keeps its number while
it is offered). When every option is a number, the number typed is the value itself.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from dsl.runtime import Ctx, RuleError
from engine.base.files import write_atomic
from engine.base.text import safe_text
from engine.run.game import Decision, Game

HELP = """  a number  take that option (the number shown in front of it)
  v         show what you can see of the game (your view)
  s [FILE]  save the game (to FILE, or to the --save file); `save` works too
  q [FILE]  save and quit; resume later with daimyo play --load FILE
  h         this help"""
MAX_TYPED = 12  # characters of a number worth reading; longer input is refused, not converted
LIST_ITEMS = 12  # items of a list shown in the view before "... and N more"


class Unsaved(Exception):
    """Input ended and the game was not saved (the person was warned)."""


def _show(game: Game, option: Any, viewer: str | None = None) -> str:
    """An option as a person reads it: the ruleset's `display.label` when it gives one, and the
    owner of an entity whose kind declares `owner:` or has an `owner` field (so a target says
    whose it is)."""
    if option is None:
        return "(pass)"
    text = None
    label = game.model.label
    if label is not None:
        try:
            text = label(Ctx(game.state, game.model, game, {"item": option}))
        except RuleError:
            text = None
    if text in (None, ""):
        text = option if isinstance(option, str) else json.dumps(option, ensure_ascii=False)
    text = str(text)
    owner = _owner(game, option)
    if owner == "":
        text += "  [no owner]"
    elif owner is not None and owner not in text:
        text += f"  [{_player_name(game, owner)}]"
    return safe_text(text, newlines=False)


def _owner(game: Game, option: Any) -> str | None:
    """The player owning an entity option ('' when it has none), None when ownership means nothing."""
    if not isinstance(option, str):
        return None
    kind = game.model.kinds.get(game.model.kind_of.get(option, ""))
    if kind is None:
        return None
    field = kind.owner or ("owner" if "owner" in kind.fields else "")  # declared, or the usual name
    if not field:
        return None
    fields = game.state["ent"].get(option) or {}
    value = fields.get(field)
    return value if isinstance(value, str) and value in game.state["players"] else ""


def _player_name(game: Game, player: str) -> str:
    names = game.model.player_names
    i = game.state["players"].index(player) if player in game.state["players"] else -1
    return f"{player} ({names[i]})" if 0 <= i < len(names) else player


def status_line(game: Game, player: str) -> str:
    """The ruleset's `display.status` for a player, or '' when it has none."""
    fn = game.model.status
    if fn is None:
        return ""
    try:
        return safe_text(str(fn(Ctx(game.state, game.model, game, {"player": player}))), newlines=False)
    except RuleError:
        return ""


# ---- the view, readable ----

def _value(v: Any) -> str:
    if isinstance(v, list):
        if v and all(x == "?" for x in v):
            return f"{len(v)} hidden"
        shown = ", ".join(_value(x) for x in v[:LIST_ITEMS])
        more = f", ... and {len(v) - LIST_ITEMS} more" if len(v) > LIST_ITEMS else ""
        return f"[{shown}{more}]"
    if isinstance(v, dict):
        if set(v) == {"?"}:
            return f"{v['?']} hidden"
        items = list(v.items())
        shown = ", ".join(f"{k}: {_value(x)}" for k, x in items[:LIST_ITEMS])
        more = f", ... and {len(items) - LIST_ITEMS} more" if len(items) > LIST_ITEMS else ""
        return "{" + shown + more + "}"
    if v == "?":
        return "hidden"
    if v is None:
        return "none"
    if v == "":
        return "(empty)"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def render_view(game: Game, player: str) -> str:
    """What `player` may see, as lines a person reads: the game's counters, each player, then the
    other things whose state is not at its starting value. Every list says how long it is."""
    v = game.view(player)
    lines = [f"What {_player_name(game, player)} can see:"]
    if v["globals"]:
        lines.append("  game: " + "; ".join(f"{k} {_value(x)}" for k, x in v["globals"].items()))
    for p in v["players"]:
        me = "  (you)" if p == player else ""
        status = status_line(game, p)
        lines.append(f"  {_player_name(game, p)}{me}{': ' + status if status else ''}")
        fields = v["ent"].get(p, {})
        if fields:
            lines.append("      " + "; ".join(f"{k} {_value(x)}" for k, x in fields.items()))
    others = []
    for eid, fields in v["ent"].items():
        if eid in v["players"]:
            continue
        kind = game.model.kinds.get(game.model.kind_of.get(eid, ""))
        start = kind.fields if kind else {}
        changed = {k: x for k, x in fields.items() if x != start.get(k)}
        if changed:
            others.append(f"    {eid}: " + "; ".join(f"{k} {_value(x)}" for k, x in changed.items()))
    if others:
        lines.append(f"  everything else not at its starting value ({len(others)}):")
        lines += others
    return safe_text("\n".join(lines))


# ---- numbering ----

def _key(option: Any) -> str:
    return json.dumps(option, sort_keys=True, ensure_ascii=False, default=str)


def numbered(d: Decision, numbering: dict | None = None) -> list[tuple[int, int]]:
    """(number shown, option index) for each option. Numeric choices are numbered by their own
    value; others by a number each option keeps while it is offered at this step (`numbering`
    remembers them between prompts)."""
    opts = d.options
    if _numeric(opts):
        return [(o, i) for i, o in enumerate(opts) if o is not None]
    if numbering is None:
        return [(i + 1, i) for i in range(len(opts))]
    table = numbering.setdefault((d.player, d.step), {})
    current = {_key(o) for o in opts}
    for k in [k for k in table if k not in current]:  # an option no longer offered frees its number
        del table[k]
    taken = set(table.values())
    out = []
    for i, o in enumerate(opts):
        k = _key(o)
        if k not in table:
            n = 1
            while n in taken:
                n += 1
            table[k] = n
            taken.add(n)
        out.append((table[k], i))
    return sorted(out)


def _numeric(opts: list) -> bool:
    """Every option (but a pass) is a distinct whole number: the number typed is the value."""
    values = [o for o in opts if o is not None]
    return bool(values) and all(type(o) is int for o in values) and len(set(values)) == len(values)


def _range_text(nums: list[int]) -> str:
    lo, hi = min(nums), max(nums)
    return f"from {lo} to {hi}" if len(nums) == hi - lo + 1 else "shown: " + ", ".join(map(str, nums[:20]))


# ---- asking ----

def save_game(game: Game, path: str, seats: list[str] | None, out: Any) -> bool:
    """Save to `path`; on failure say why (the game goes on) and return False."""
    try:
        write_atomic(path, json.dumps(game.save(seats)))
    except OSError as e:
        print(f"  could not save to {path}: {e.strerror or e}; try another file (s FILE)", file=out)
        return False
    print(f"  saved to {path}; continue with: daimyo play --load {path}", file=out)
    return True


def _read(stdin: Any) -> str | None:
    """A line of input ('' is a blank line), None at the end of input. Bytes that are not UTF-8
    are shown as replacement characters, never a crash."""
    try:
        line = stdin.readline()
    except UnicodeDecodeError:  # a terminal in strict UTF-8 mode
        return "\ufffd\n"
    if not line:
        return None
    if isinstance(line, bytes):
        return line.decode("utf-8", "replace")
    # bytes a surrogate-escaping stdin could not decode become replacement characters
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if not line.isascii() else line


def ask(game: Game, d: Decision, names: dict[str, str], save_path: str | None,
        stdin: Any = None, out: Any = None, seats: list[str] | None = None,
        numbering: dict | None = None) -> int | None:
    """Ask the person for an option; returns its index, or None after save-and-quit or at the end
    of input once saved. At the end of input with nowhere to save, warns and raises Unsaved."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    status = status_line(game, d.player)
    print(f"\n{safe_text(names.get(d.player, d.player))}{' [' + status + ']' if status else ''}: {d.prompt}",
          file=out)
    shown = numbered(d, numbering)
    by_number = {n: i for n, i in shown}
    nums = [n for n, _ in shown]
    numeric = _numeric(d.options)
    if len(shown) > 40 and nums == list(range(min(nums), max(nums) + 1)) and numeric:
        print(f"  a number {_range_text(nums)}", file=out)  # a long run of numbers: no list of each
    else:
        for n, i in shown:
            print(f"  {n:>3}. {_show(game, d.options[i], d.player)}", file=out)
    has_pass = None in d.options and numeric
    if has_pass:
        print("  pass. (pass)", file=out)
    while True:
        print("> ", end="", file=out, flush=True)
        line = _read(stdin)
        if line is None:  # end of input: save if we can, then stop
            if save_path and save_game(game, save_path, seats, out):
                return None
            print("\ndaimyo: end of input: this game was NOT saved (start with --save FILE to keep it)",
                  file=sys.stderr)
            raise Unsaved()
        word = line.strip()
        if word.isascii() and word.isdigit() and len(word) <= MAX_TYPED:
            if int(word) in by_number:
                return by_number[int(word)]
            print(f"  {word} is not one of the options; type a number {_range_text(nums)}, or h for help", file=out)
            continue
        if word and all(ch.isdigit() or ch == "-" for ch in word):
            if not word.isascii():
                print("  only the digits 0-9 are read as numbers", file=out)
            elif word.startswith("-") and word[1:].isdigit() and len(word) <= MAX_TYPED and int(word) in by_number:
                return by_number[int(word)]
            else:
                print(f"  {word[:20]}{'...' if len(word) > 20 else ''} is not one of the options", file=out)
            continue
        cmd, _, arg = word.partition(" ")
        arg = arg.strip()
        if has_pass and word == "pass":
            return d.options.index(None)
        if cmd in ("h", "help", "?"):
            print(HELP, file=out)
        elif word == "v":
            print(render_view(game, d.player), file=out)
        elif cmd in ("s", "save", "q", "quit"):
            path = arg or save_path
            if not path:
                print(f"  give a file: {cmd} FILE (or start with --save FILE)", file=out)
                continue
            if save_game(game, path, seats, out) and cmd in ("q", "quit"):
                return None
        else:
            print(f"  type a number {_range_text(nums)}, or h for help", file=out)


def hand_over(player_name: str, stdin: Any, out: Any) -> bool:
    """Between two people at one screen: hide what is there and wait until the next person is
    ready, so nobody sees another's secret choices. False at the end of input."""
    if getattr(out, "isatty", lambda: False)():
        print("\x1b[2J\x1b[H", end="", file=out)  # our own clear-screen: rule text never gets one
    else:
        print("\n" * 40, end="", file=out)
    print(f"== Hand over to {player_name}. {player_name}: press Enter when only you can see the screen.",
          file=out)
    print("> ", end="", file=out, flush=True)
    return _read(stdin) is not None
