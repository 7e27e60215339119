"""Parsed rule texts kept on disk, keyed by a hash of their content.

Parsing the ~1,000 distinct rule texts of the bundled rulesets with lark is about a third of a
cold `daimyo validate`; reading their trees back from JSON costs a tenth of that. The cache lives
in the user's cache folder: `$XDG_CACHE_HOME/daimyo/parse-N/` (else `~/.cache/daimyo/parse-N/`),
one file per text; `DAIMYO_NO_CACHE=1` turns it off. The key hashes the text, its start rule,
the grammar, lark's version and this format, so a changed grammar never meets an old tree.

A cache file is never trusted: an entry is used only if it is a regular file of sane size, valid
JSON of the expected shape, every node a rule of the grammar, every token of a terminal of the
grammar whose pattern it matches, found at its stated line and column of the text, in text order.
Anything else is ignored (and rewritten by the next parse). JSON, not pickle: loading a file
never runs code. The compiler also re-parses a text whenever a cached tree does not compile
cleanly (dsl/compiler.py), so an entry can at worst cost a parse, never a crash. Reading and
writing the files is engine/base/diskcache.py, shared with the located-YAML cache.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

from dsl.tree import Token, Tree
from engine.base import diskcache

FORMAT = 1
MAX_ENTRY = 64  # bytes of JSON per character of text (plus a fixed allowance), above which an entry is refused


class _Bad(Exception):
    """A cache entry that is not what this module writes."""


def cache_folder() -> Path | None:
    """Where parsed texts are kept, or None when caching is off."""
    return diskcache.cache_folder(f"parse-{FORMAT}")


class ParseCache(diskcache.DiskCache):
    """Load and store parse trees of one grammar in `folder`."""

    def __init__(self, folder: Path, grammar: str, version: str, terminals: Iterable[tuple[str, str]],
                 rules: Iterable[str]) -> None:
        super().__init__(folder)
        self.salt = hashlib.sha256(f"{FORMAT}\0{version}\0{grammar}".encode()).hexdigest()
        self.patterns = {name: re.compile(pattern) for name, pattern in terminals}
        self.rules = frozenset(rules)
        self.matched: set[tuple[str, str]] = set()  # (terminal, text) pairs already matched: most repeat

    def path_of(self, text: str, start: str) -> str:
        return self.path(f"{self.salt}\0{start}\0{text}")

    # ---- reading: anything unexpected means "not cached" ----

    def load(self, text: str, start: str) -> Tree | None:
        raw = self.read(self.path_of(text, start), MAX_ENTRY * len(text) + 4096)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if type(doc) is not list or len(doc) != 2 or doc[0] != start:
                raise _Bad
            return _decode(doc[1], text, self.patterns, self.rules, self.matched)
        except (_Bad, ValueError, TypeError, RecursionError, MemoryError):
            return None

    # ---- writing: best effort, a cache that cannot be written is simply not used ----

    def store(self, text: str, start: str, tree: Tree) -> None:
        if not self.writable:
            return
        try:
            data = json.dumps([start, _encode(tree)], separators=(",", ":"), ensure_ascii=False)
        except (RecursionError, ValueError, TypeError):
            return
        self.write(self.path_of(text, start), data)


def _encode(node: Tree | Token) -> list:
    if isinstance(node, Token):
        return [node.type, str(node), node.line, node.column]
    return [str(node.data), [_encode(c) for c in node.children]]


def _decode(doc: object, text: str, patterns: dict[str, re.Pattern], rules: frozenset[str],
            matched: set[tuple[str, str]]) -> Tree:
    """Rebuild a tree from its JSON form, checking it against the grammar and the text.

    One closure, each token decoded where its parent's children are (a call per token, and
    Token's own __new__, were a fifth of reading a thousand entries)."""
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    lines = len(starts)
    startswith = text.startswith
    pos = 0  # tokens must come in text order, without overlapping

    def node(item: object) -> Tree:
        nonlocal pos
        if type(item) is not list or len(item) != 2:
            raise _Bad
        data, children = item
        if type(data) is not str or data not in rules or type(children) is not list:
            raise _Bad
        out: list[Tree | Token] = []
        for child in children:
            if type(child) is not list or len(child) != 4:
                out.append(node(child))
                continue
            kind, value, line, col = child
            if type(kind) is not str or type(value) is not str or type(line) is not int or type(col) is not int:
                raise _Bad
            if (kind, value) not in matched:
                pattern = patterns.get(kind)
                if pattern is None or pattern.fullmatch(value) is None:
                    raise _Bad
                matched.add((kind, value))
            if not 1 <= line <= lines or col < 1:
                raise _Bad
            at = starts[line - 1] + col - 1
            if at < pos or not startswith(value, at):
                raise _Bad
            pos = at + len(value)
            token = _new_str(Token, value)  # Token(kind, value, at, line, col) without its Python __new__
            token.type, token.start_pos, token.line, token.column = kind, at, line, col
            out.append(token)
        return Tree(data, out)

    return node(doc)


_new_str = str.__new__
