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

import json
import re
from collections.abc import Iterable
from pathlib import Path

from dsl.tree import Token, Tree
from engine.base import diskcache
from engine.base.diskcache import sha256

FORMAT = 1
MAX_ENTRY = 64  # bytes of JSON per character of text (plus a fixed allowance), above which an entry is refused
PACK = "pack-1"  # the format of a pack (the entries of one source file's texts together)
MAX_PACK = 64_000_000  # bytes of a pack, above which it is refused


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
        self.salt = sha256(f"{FORMAT}\0{version}\0{grammar}".encode()).hexdigest()
        self.patterns = {name: re.compile(pattern) for name, pattern in terminals}
        self.rules = frozenset(rules)
        self.matched: set[tuple[str, str]] = set()  # (terminal, text) pairs already matched: most repeat
        self.sources = diskcache.SOURCES  # file name -> digest of its bytes, for packs
        self.packs: dict[str, dict] = {}  # pack of each source digest read so far
        self.used: dict[str, dict] = {}  # source digest -> the entries this process used from that file
        self.stale: set[str] = set()  # packs that lacked (or held a bad) entry: written by `flush`

    def path_of(self, text: str, start: str) -> str:
        return self.path(f"{self.salt}\0{start}\0{text}")

    # ---- reading: anything unexpected means "not cached" ----

    def load(self, text: str, start: str, source: str = "") -> Tree | None:
        """The cached tree of `text`, or None. `source` names the file the text is written in:
        its pack (below) is read first, then the text's own entry."""
        key = f"{start}\0{text}"
        digest = self.sources.get(source) if source else None
        if digest is not None:
            pack = self._pack(digest)
            doc = pack.get(key)
            if doc is not None:
                tree = self._tree(doc, text)
                if tree is not None:
                    return tree
        raw = self.read(self.path_of(text, start), MAX_ENTRY * len(text) + 4096)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if type(doc) is not list or len(doc) != 2 or doc[0] != start:
                raise _Bad
            tree = _decode(doc[1], text, self.patterns, self.rules, self.matched)
        except (_Bad, ValueError, TypeError, RecursionError, MemoryError):
            return None
        if digest is not None:
            self.used[digest][key] = doc[1]
            self.stale.add(digest)
        return tree

    def _tree(self, doc: object, text: str) -> Tree | None:
        try:
            return _decode(doc, text, self.patterns, self.rules, self.matched)
        except (_Bad, ValueError, TypeError, RecursionError, MemoryError):
            return None

    def _pack(self, digest: str) -> dict:
        """The entries of the pack of a source file (read once per process; {} if none)."""
        pack = self.packs.get(digest)
        if pack is None:
            pack = {}
            raw = self.read(self.pack_path(digest), MAX_PACK)
            if raw is not None:
                try:
                    doc = json.loads(raw)
                    if type(doc) is list and len(doc) == 2 and doc[0] == PACK and type(doc[1]) is dict:
                        pack = doc[1]
                except (ValueError, RecursionError, MemoryError):
                    pass
            self.packs[digest] = pack
            self.used[digest] = {}
        return pack

    def pack_path(self, digest: str) -> str:
        return self.path(f"{self.salt}\0pack\0{digest}")

    # ---- writing: best effort, a cache that cannot be written is simply not used ----

    def store(self, text: str, start: str, tree: Tree, source: str = "") -> None:
        if not self.writable:
            return
        try:
            doc = _encode(tree)
            data = json.dumps([start, doc], separators=(",", ":"), ensure_ascii=False)
        except (RecursionError, ValueError, TypeError):
            return
        self.write(self.path_of(text, start), data)
        digest = self.sources.get(source) if source else None
        if digest is not None:
            self._pack(digest)
            self.used[digest][f"{start}\0{text}"] = doc
            self.stale.add(digest)

    def flush(self) -> None:
        """Write the pack of each source file some text of which was not found in it: what its
        pack held, with every tree this process used from that file."""
        for digest in sorted(self.stale):
            if not self.writable:
                break
            entries = {**self.packs.get(digest, {}), **self.used.get(digest, {})}
            try:
                data = json.dumps([PACK, entries], separators=(",", ":"), ensure_ascii=False)
            except (RecursionError, ValueError, TypeError):
                continue
            self.write(self.pack_path(digest), data)
            self.packs[digest] = entries
        self.stale.clear()


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
        if data not in rules or type(children) is not list:  # rules holds texts only
            raise _Bad
        out: list[Tree | Token] = []
        for child in children:
            if type(child) is not list or len(child) != 4:
                out.append(node(child))
                continue
            kind, value, line, col = child
            if (kind, value) not in matched:  # (texts only: a pattern matched each)
                pattern = patterns.get(kind)
                if pattern is None or type(value) is not str or pattern.fullmatch(value) is None:
                    raise _Bad
                matched.add((kind, value))
            if type(line) is not int or type(col) is not int or not 1 <= line <= lines or col < 1:
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
