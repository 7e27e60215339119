"""The `Model`: one combo's rules, compiled and frozen at load time.

Everything the game machine needs lives here and never changes during play: the kinds of
entity with their fields and visibility, the board, the compiled flow, procedures, triggers
and modifiers, and how the game is scored.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from dsl.compiler import Symbols
from engine.base.diskcache import sha256
from engine.base.record import Record
from engine.loading.layering import Resolved
from engine.loading.package import Combo
from engine.model.board import Board
from engine.model.flow import Node

PLAYER_KIND = "player"
MAX_PLAYERS = 16


class Kind(Record):
    FIELDS = ("name", "collection", "owner", "fields", "visible", "items")

    def __init__(self, name: str, collection: str = "", owner: str = "", fields: dict[str, Any] | None = None,
                 visible: dict[str, str] | None = None, items: dict[str, dict] | None = None) -> None:
        self.name = name
        self.collection = collection
        self.owner = owner
        self.fields = {} if fields is None else fields  # field -> initial value
        self.visible = {} if visible is None else visible  # field -> all | owner | none
        self.items = {} if items is None else items


def _intern_keys(table: dict) -> None:
    """Interns the names a table is keyed by, in place and in order: rule code looks them up by
    names Python interned when it compiled them (`c.model.collections['provinces']`), which
    finds an interned key at once and compares any other text character by character."""
    if any(type(k) is str and k is not sys.intern(k) for k in table):
        keyed = {(sys.intern(k) if type(k) is str else k): v for k, v in table.items()}
        table.clear()
        table.update(keyed)


class Model(Record):
    FIELDS = ("combo", "resolved", "kinds", "kind_of", "static", "board", "collections", "globals",
              "globals_visible", "functions", "procedures", "triggers", "modifiers", "modifier_params", "nodes",
              "steps", "root", "score", "tiebreak", "evaluate", "status", "player_names", "symbols", "checks",
              "frozen_ids", "label", "reads", "hints", "derived", "_fingerprint")
    COMPARE = tuple(f for f in FIELDS if f != "derived")
    REPR = tuple(f for f in FIELDS if f not in ("derived", "_fingerprint"))

    def __init__(self, combo: Combo, resolved: Resolved, kinds: dict[str, Kind], kind_of: dict[str, str],
                 static: dict[str, dict], board: Board | None, collections: dict[str, tuple[str, ...]],
                 globals: dict[str, Any], globals_visible: dict[str, str], functions: dict[str, Callable],
                 procedures: dict[str, Callable], triggers: dict[str, list[tuple[str, Callable | None, Callable]]],
                 modifiers: dict[str, list[tuple[str, Callable | None, Callable]]],
                 modifier_params: dict[str, tuple[str, ...]], nodes: list[Node], steps: dict[str, int], root: int,
                 score: Callable | None, tiebreak: list[Callable], evaluate: Callable | None,
                 status: Callable | None, player_names: list[str], symbols: Symbols,
                 checks: dict[str, Callable | None] | None = None, frozen_ids: frozenset[int] = frozenset(),
                 label: Callable | None = None, reads: frozenset[str] = frozenset(),
                 hints: dict[str, Any] | None = None, derived: dict[str, Any] | None = None,
                 _fingerprint: str = "") -> None:
        self.combo = combo
        self.resolved = resolved
        self.kinds = kinds
        self.kind_of = kind_of  # entity id -> kind
        self.static = static
        self.board = board
        self.collections = collections  # collection name -> entity ids
        self.globals = globals
        self.globals_visible = globals_visible
        self.functions = functions
        self.procedures = procedures
        self.triggers = triggers
        self.modifiers = modifiers
        self.modifier_params = modifier_params
        self.nodes = nodes
        self.steps = steps
        self.root = root
        self.score = score
        self.tiebreak = tiebreak
        self.evaluate = evaluate
        self.status = status
        self.player_names = player_names
        self.symbols = symbols
        self.checks = {} if checks is None else checks  # the compiled `checks:`
        self.frozen_ids = frozen_ids  # ids of constant lists and maps (shared, read-only)
        self.label = label  # display.label: how an option is shown to a person
        self.reads = reads  # names and attributes the rule texts (checks too) mention
        self.hints = {} if hints is None else hints  # hints for bots: prefer, versus, scale, round
        # What the layers above make once per model and share between its games (the direct runner's
        # code for the flow, the initial state of each player count marshalled): kept here so
        # that a model and what is derived from it live and die together.
        self.derived = {} if derived is None else derived
        self._fingerprint = _fingerprint
        for table in (collections, functions, procedures, modifiers, steps):
            _intern_keys(table)

    @property
    def name(self) -> str:
        return self.combo.name

    @property
    def fingerprint(self) -> str:
        """A short hash of the resolved ruleset and options: saves and logs name it so that a
        game is never continued under different rules. Worked out on first use (hashing the
        whole resolved data is a twentieth of a validation, which never needs it); the resolved
        data does not change after the build."""
        if not self._fingerprint:
            self._fingerprint = fingerprint_of(self.combo, self.resolved)
        return self._fingerprint


def fingerprint_of(combo: Combo, res: Resolved) -> str:
    """A short hash of the resolved ruleset and options: saves and logs name it so that a
    game is never continued under different rules."""
    try:
        blob = json.dumps([combo.name, combo.options, res.data], sort_keys=True, default=str)
    except TypeError:  # a mapping mixing number and text keys ({3: 20, default: 14}) cannot be sorted
        blob = json.dumps([combo.name, combo.options, _text_keys(res.data)], sort_keys=True, default=str)
    return sha256(blob.encode()).hexdigest()[:16]


def _text_keys(x: Any) -> Any:
    """`x` with every mapping key written as text (numbers tagged, so `3` and `"3"` stay apart)."""
    if isinstance(x, dict):
        return {(k if isinstance(k, str) else f"\u0000{type(k).__name__}:{k}"): _text_keys(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_text_keys(v) for v in x]
    return x
