"""Parse trees of rule texts, as the compiler reads them, without importing lark.

lark parses a text (dsl/compiler.py `parse`), and its tree is turned into these plain
classes at once; trees read back from the disk cache (dsl/parsecache.py) are made of them
directly. So a `daimyo validate` whose texts all come from the cache never imports lark
(about 50 ms of a cold run). They have what the compiler uses of lark's: a node's rule name
(`data`) and `children`; a token is its text (a `str`) with its terminal's name (`type`) and
its place in the text (`start_pos`, `line`, `column`, from 1).

`names.json` beside this module lists the grammar's rule and terminal names with each
terminal's pattern, as lark reads dsl/daimyo.lark: the parse cache checks its entries against
them without building the parser. tests/test_speed.py checks that it matches the grammar;
after editing the grammar, write it again with
`python -c "from dsl.compiler import write_names; write_names()"`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.base.diskcache import sha256

NAMES_FILE = "names.json"


class Tree:
    """A node: the grammar rule that matched, and its children (trees and tokens)."""

    __slots__ = ("children", "data")

    def __init__(self, data: str, children: list) -> None:
        self.data = data
        self.children = children

    def __eq__(self, other: object) -> bool:  # as lark's: same rule, same children
        try:
            return self.data == other.data and self.children == other.children  # type: ignore[attr-defined]
        except AttributeError:
            return False

    def __hash__(self) -> int:
        return hash((self.data, tuple(self.children)))

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"


class Token(str):
    """A token: its text, the name of its terminal, and where it starts in the text."""

    __slots__ = ("column", "line", "start_pos", "type")

    def __new__(cls, type: str, value: str, start_pos: int | None = None, line: int | None = None,
                column: int | None = None) -> Token:
        token = super().__new__(cls, value)
        token.type, token.start_pos, token.line, token.column = type, start_pos, line, column
        return token

    def __reduce__(self) -> tuple:
        return (Token, (self.type, str(self), self.start_pos, self.line, self.column))

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {str(self)!r})"


def from_lark(root: Any) -> Tree | Token:
    """A tree lark made, in these classes (lark's tokens are `str` too; its rule names may be).
    Without recursion: a text nested deeper than Python's stack is the compiler's to report."""
    def convert(node: Any) -> Tree | Token:
        if getattr(node, "children", None) is None:
            return Token(str(node.type), str(node), node.start_pos, node.line, node.column)
        return Tree(str(node.data), list(node.children))  # children converted below

    out = convert(root)
    stack = [out] if isinstance(out, Tree) else []
    while stack:
        tree = stack.pop()
        tree.children = [convert(c) for c in tree.children]
        stack.extend(c for c in tree.children if isinstance(c, Tree))
    return out


def grammar_text() -> str:
    return Path(__file__).with_name("daimyo.lark").read_text(encoding="utf-8")


def names_of(parser: Any, grammar: str) -> dict:
    """What `names.json` holds, from lark's parser of `grammar`."""
    rules = {str(r.origin.name) for r in parser.rules} | {str(r.alias) for r in parser.rules if r.alias}
    return {"grammar_sha256": sha256(grammar.encode()).hexdigest(),
            "terminals": sorted([t.name, t.pattern.to_regexp()] for t in parser.terminals),
            "rules": sorted(rules)}


def known_names(grammar: str) -> tuple[list[tuple[str, str]], list[str]] | None:
    """(terminals with their patterns, rule names) of `grammar` from `names.json`; None if that
    file is missing, damaged or written for another grammar (the caller asks lark instead)."""
    try:
        doc = json.loads(Path(__file__).with_name(NAMES_FILE).read_text(encoding="utf-8"))
        if doc["grammar_sha256"] != sha256(grammar.encode()).hexdigest():
            return None
        terminals = [(str(name), str(pattern)) for name, pattern in doc["terminals"]]
        return terminals, [str(r) for r in doc["rules"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None

