"""The `Model`: one combo's rules, compiled and frozen at load time.

Everything the game machine needs lives here and never changes during play: the kinds of
entity with their fields and visibility, the board, the compiled flow, procedures, triggers
and modifiers, and how the game is scored.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dsl.compiler import Symbols
from engine.base.diskcache import sha256
from engine.loading.layering import Resolved
from engine.loading.package import Combo
from engine.model.board import Board
from engine.model.flow import Node

PLAYER_KIND = "player"
MAX_PLAYERS = 16


@dataclass
class Kind:
    name: str
    collection: str = ""
    owner: str = ""
    fields: dict[str, Any] = field(default_factory=dict)  # field -> initial value
    visible: dict[str, str] = field(default_factory=dict)  # field -> all | owner | none
    items: dict[str, dict] = field(default_factory=dict)


@dataclass
class Model:
    combo: Combo
    resolved: Resolved
    kinds: dict[str, Kind]
    kind_of: dict[str, str]  # entity id -> kind
    static: dict[str, dict]
    board: Board | None
    collections: dict[str, tuple[str, ...]]  # collection name -> entity ids
    globals: dict[str, Any]
    globals_visible: dict[str, str]
    functions: dict[str, Callable]
    procedures: dict[str, Callable]
    triggers: dict[str, list[tuple[str, Callable | None, Callable]]]
    modifiers: dict[str, list[tuple[str, Callable | None, Callable]]]
    modifier_params: dict[str, tuple[str, ...]]
    nodes: list[Node]
    steps: dict[str, int]
    root: int
    score: Callable | None
    tiebreak: list[Callable]
    evaluate: Callable | None
    status: Callable | None
    player_names: list[str]
    symbols: Symbols
    checks: dict[str, Callable | None] = field(default_factory=dict)  # the compiled `checks:`
    frozen_ids: frozenset[int] = frozenset()  # ids of constant lists and maps (shared, read-only)
    label: Callable | None = None  # display.label: how an option is shown to a person
    reads: frozenset[str] = frozenset()  # names and attributes the rule texts (checks too) mention
    hints: dict[str, Any] = field(default_factory=dict)  # hints for bots: prefer, versus, scale, round
    # What the layers above make once per model and share between its games (the direct runner's
    # code for the flow): kept here so that a model and its derived code live and die together.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _fingerprint: str = field(default="", repr=False)

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
