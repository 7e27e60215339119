"""Building located values from PyYAML's event stream (the reader behind engine/loading/yamlio.py).

Kept apart from yamlio so that PyYAML is imported only when a file is really parsed: a cold
`daimyo validate` finds every file of the bundled rulesets in the disk cache (yamlcache.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from engine.base.diagnostics import Diagnostics, Loc
from engine.loading.located import LocDict, LocList, line_breaks

_BREAK = line_breaks()  # this module is imported only when a file is really parsed

# The C loader is ~10x faster; both produce identical, character-based marks.
_LOADER = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

_T = "tag:yaml.org,2002:"
_MERGE = _T + "merge"
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_NUMBER = {_T + "int": yaml.constructor.SafeConstructor.construct_yaml_int,
           _T + "float": yaml.constructor.SafeConstructor.construct_yaml_float}
# Scalars that stay text. Timestamps are kept as the written string (not datetime) so
# every value is JSON-like; `<<` and `=` outside key position are just text.
_TEXT_TAGS = {_T + "str", _T + "timestamp", _MERGE, _T + "value"}


def build(text: str, file: str, diags: Diagnostics, max_depth: int, max_nodes: int) -> Any:
    """The value of one YAML document (see yamlio.load_yaml), or None after a diagnostic."""
    if _LOADER is yaml.SafeLoader:
        return _Builder(text, file, diags, max_depth, max_nodes).run(_LOADER)
    found = Diagnostics()
    value = _Builder(text, file, found, max_depth, max_nodes).run(_LOADER)
    if any(_C_TOO_DEEP in d.message for d in found.items):
        # Newer libyaml stops at its own nesting limit (1,000 levels) while it scans ahead,
        # before our limit is reached in the events; the Python reader scans lazily, so the
        # error is ours (Y005, where the nesting first passes `max_depth`) whatever libyaml
        # a PyYAML wheel ships. Only files nested a thousand levels deep pay for it.
        found = Diagnostics()
        value = _Builder(text, file, found, max_depth, max_nodes).run(yaml.SafeLoader)
    diags.extend(found.items)
    return value


_C_TOO_DEEP = "exceeded maximum nesting depth"  # libyaml 0.2.6's words


class _Abort(Exception):
    """Stops building after a fatal diagnostic was added."""


@dataclass(slots=True)
class _Node:
    """A finished value with its expanded size (node count) and nesting height."""

    value: Any
    size: int
    height: int
    loc: Loc     # where the content starts
    start: Loc   # where the node is written, including any &anchor / !tag
    tag: str
    text: str = ""  # the scalar as written (keys like `on:` need it)


@dataclass(slots=True)
class _Frame:
    """A mapping or sequence whose end we have not reached yet."""

    value: Any
    anchor: str | None
    loc: Loc
    start: Loc
    tag: str
    size: int = 1
    height: int = 1
    key: _Node | None = None  # a mapping's key waiting for its value


_OPEN = object()  # anchors of collections still being built: an alias to one is a cycle


class _Builder:
    """Turns the parser's events into values, enforcing every rule the parser does not."""

    def __init__(self, text: str, file: str, diags: Diagnostics, max_depth: int, max_nodes: int):
        self.text, self.file, self.diags = text, file, diags
        self.max_depth, self.max_nodes = max_depth, max_nodes
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}
        self.nodes = 0
        self.root: Any = None

    def run(self, reader: type) -> Any:
        loader = reader(self.text)
        try:
            docs = 0
            while True:
                ev = loader.get_event()
                kind = type(ev)
                if kind is ScalarEvent:
                    self.scalar(ev)
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    self.start(ev, kind is MappingStartEvent)
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    self.end()
                elif kind is AliasEvent:
                    self.alias(ev)
                elif kind is DocumentStartEvent:
                    docs += 1
                    if docs > 1:
                        self.fail("Y001", "the file holds more than one YAML document ('---')",
                                  self.mark(ev.start_mark), "keep one document per file")
                elif kind is StreamEndEvent or ev is None:
                    return self.root
        except _Abort:
            return None
        except yaml.YAMLError as exc:
            code, msg, loc, hint = _explain(exc, self.text, self.file)
            self.diags.add(code, msg, loc, hint=hint)
            return None
        finally:
            loader.dispose()

    # -- events -------------------------------------------------------------------------

    def scalar(self, ev: ScalarEvent) -> None:
        start = self.mark(ev.start_mark)
        self.count(1, start)
        tag = ev.tag
        if tag is None or tag == "!":  # not explicitly tagged: quoted is text, plain is resolved
            tag = _RESOLVER.resolve(yaml.ScalarNode, ev.value, ev.implicit) if ev.implicit[0] else _T + "str"
            if ev.implicit[0] and ev.value == "none":
                tag = _T + "null"  # plain `none` means nothing, as it does in the rules language
        value: Any = ev.value
        if tag == _T + "null":
            value = None
        elif tag == _T + "bool":
            value = yaml.constructor.SafeConstructor.bool_values.get(ev.value.lower())
            if value is None:
                self.bad_value(ev.value, tag, start, explicit=True)
        elif tag in _NUMBER:
            try:
                value = _NUMBER[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, ev.value))
            except (ValueError, ArithmeticError):  # e.g. `!!int abc`, or a 5000-digit number
                self.bad_value(ev.value, tag, start, explicit=ev.tag not in (None, "!"))
        elif tag not in _TEXT_TAGS:
            self.bad_tag(tag, start)
        node = _Node(value, 1, 0, self.content_loc(ev, start), start, tag, ev.value)
        if ev.anchor is not None:
            self.anchors[ev.anchor] = node
        self.emit(node)

    def start(self, ev: MappingStartEvent | SequenceStartEvent, is_map: bool) -> None:
        start = self.mark(ev.start_mark)
        self.count(1, start)
        loc = self.content_loc(ev, start)
        if len(self.stack) >= self.max_depth:
            self.fail("Y005", f"nesting is deeper than {self.max_depth} levels", loc,
                      "flatten the structure")
        default = _T + ("map" if is_map else "seq")
        if ev.tag not in (None, "!", default):
            self.bad_tag(ev.tag, start)
        value: LocDict | LocList = LocDict() if is_map else LocList()
        value.file, value.loc = self.file, loc
        if ev.anchor is not None:
            self.anchors[ev.anchor] = _OPEN
        self.stack.append(_Frame(value, ev.anchor, loc, start, default))

    def end(self) -> None:
        f = self.stack.pop()
        node = _Node(f.value, f.size, f.height, f.loc, f.start, f.tag)
        if f.anchor is not None:
            self.anchors[f.anchor] = node
        self.emit(node)

    def alias(self, ev: AliasEvent) -> None:
        loc = self.mark(ev.start_mark)
        target = self.anchors.get(ev.anchor)
        if target is None:
            self.fail("Y001", f"unknown alias `*{ev.anchor}`", loc,
                      f"define the anchor `&{ev.anchor}` before using it, or quote the value")
        if target is _OPEN:
            self.fail("Y004", f"alias `*{ev.anchor}` is used inside the value it names "
                      "(it would expand forever)", loc)
        # The alias stands for a full copy of its target: count it as such (sizes are
        # memoised on the anchor, so a "billion laughs" file is caught in linear time).
        self.count(target.size, loc, ev.anchor)
        if len(self.stack) + target.height > self.max_depth:
            self.fail("Y005", f"alias `*{ev.anchor}` makes nesting deeper than {self.max_depth} levels",
                      loc)
        self.emit(_Node(target.value, target.size, target.height, loc, loc, target.tag))

    # -- building -------------------------------------------------------------------------

    def emit(self, node: _Node) -> None:
        """Attach a finished value to the collection being built (or make it the root)."""
        if not self.stack:
            self.root = node.value
            return
        parent = self.stack[-1]
        parent.size += node.size
        if node.height >= parent.height:
            parent.height = node.height + 1
        if isinstance(parent.value, LocList):
            parent.value.append(node.value)
            parent.value.item_locs.append(node.loc)
        elif parent.key is None:
            parent.key = node
        else:
            key, parent.key = parent.key, None
            self.put(parent.value, key, node)

    def put(self, mapping: LocDict, key: _Node, value: _Node) -> None:
        k = key.value
        if type(k) is bool and key.tag == _T + "bool":
            # YAML 1.1 reads plain `on`, `off`, `yes`, `no` as booleans; as keys they are names.
            k = key.text
        if key.tag == _MERGE:
            self.diags.add("Y007", "merge keys (`<<`) are not supported", key.start,
                           hint="repeat the keys you need instead of merging an anchor")
        elif isinstance(k, (LocDict, LocList)):
            kind = "mapping" if isinstance(k, LocDict) else "list"
            self.diags.add("Y007", f"a {kind} cannot be used as a key", key.start,
                           hint="keys must be text, whole numbers or true/false")
        elif type(k) not in (str, int, bool):
            shown = "an empty (null) value" if k is None else f"`{k}` ({type(k).__name__})"
            self.diags.add("Y007", f"{shown} cannot be used as a key", key.start,
                           hint="keys must be text, whole numbers or true/false; quote it")
        elif k in mapping:
            first = mapping.key_locs[k]
            self.diags.add("Y002", f"duplicate key `{k}` (first defined on line {first.line})",
                           key.start, hint="each key may appear only once in a mapping")
        else:
            mapping[k] = value.value
            mapping.key_locs[k] = key.start
            mapping.value_locs[k] = value.loc

    def count(self, n: int, loc: Loc, alias: str | None = None) -> None:
        self.nodes += n
        if self.nodes > self.max_nodes:
            if alias is not None:
                self.fail("Y004", f"alias `*{alias}` expands to too much data (more than "
                          f"{self.max_nodes} values in all)", loc,
                          "nested aliases multiply: each level copies the one below it")
            self.fail("Y004", f"the file holds too many values (more than {self.max_nodes})", loc,
                      "split it into several files")

    def bad_tag(self, tag: str, loc: Loc) -> None:
        shown = "!!" + tag[len(_T):] if tag.startswith(_T) else tag
        self.diags.add("Y008", f"unsupported tag `{shown}`", loc,
                       hint="rulesets use plain YAML values only; remove the tag")

    def bad_value(self, text: str, tag: str, loc: Loc, *, explicit: bool) -> None:
        kind = tag[len(_T):]
        shown = text if len(text) <= 40 else text[:40] + "..."
        self.diags.add("Y008", f"`{shown}` is not a valid {kind}", loc,
                       hint=f"fix the value or remove the `!!{kind}` tag" if explicit
                       else "a number this long is not supported; quote it to keep it as text")

    def fail(self, code: str, message: str, loc: Loc, hint: str = "") -> NoReturn:
        self.diags.add(code, message, loc, hint=hint)
        raise _Abort

    # -- locations ------------------------------------------------------------------------

    def mark(self, m: yaml.Mark) -> Loc:
        return Loc(self.file, m.line + 1, m.column + 1)

    def content_loc(self, ev: Any, start: Loc) -> Loc:
        """Where a node's content starts: after &anchor / !tag, inside quotes, under `|`."""
        style = getattr(ev, "style", None)
        if ev.anchor is None and ev.tag is None and not style:
            return start  # the common case: a plain scalar or a collection without properties
        text, m = self.text, ev.start_mark
        i, line, col = m.index, m.line, m.column
        # Scalars cannot extend past their end mark; an empty scalar ends where it starts.
        end = ev.end_mark.index if isinstance(ev, ScalarEvent) else len(text)
        if ev.anchor is not None or ev.tag is not None:  # the mark is on the properties
            while i < end:
                c = text[i]
                if c in "&!":
                    while i < end and text[i] not in " \t\r\n\x85\u2028\u2029":
                        i, col = i + 1, col + 1
                elif c in " \t":
                    i, col = i + 1, col + 1
                elif c == "#":
                    while i < end and text[i] not in "\r\n\x85\u2028\u2029":
                        i += 1
                elif (b := _BREAK.match(text, i)) is not None:
                    i, line, col = b.end(), line + 1, 0
                else:
                    break
        if style in ("'", '"'):
            col += 1
        elif style in ("|", ">"):
            return self.block_loc(ev, i, line)
        return Loc(self.file, line + 1, col + 1)

    def block_loc(self, ev: ScalarEvent, i: int, line: int) -> Loc:
        """First content line of a block scalar; column = block indentation + 1."""
        text = self.text
        header_end = _BREAK.search(text, i)
        if header_end is None:
            return Loc(self.file, line + 2, 1)
        lines = _BREAK.split(text[header_end.end():ev.end_mark.index])
        first_file = next((s for s in lines if s.strip(" ")), None)
        first_value = next((s for s in ev.value.split("\n") if s.strip(" ")), None)
        indent = 0
        if first_file is not None and first_value is not None:
            # The file line is indentation + content; content may itself start with spaces.
            indent = (len(first_file) - len(first_file.lstrip(" "))) - \
                     (len(first_value) - len(first_value.lstrip(" ")))
        return Loc(self.file, line + 2, max(indent, 0) + 1)


# -- syntax errors ---------------------------------------------------------------------------

_SPECIAL_HINT = "quote values that start with one of  [ ] { } , : # & * ! | > ' \" % @ `"
# (substring of PyYAML's problem text, message, hint); libyaml and pure-Python wordings.
_REWRITES = [
    ("mapping values are not allowed", "unexpected ':' (a value containing ': ' needs quotes)",
     'put the whole value in quotes, e.g. text: "Note: this"'),
    ("could not find expected ':'", "expected ':' after this key (each line must be `key: value`)",
     "add the ':' or fix the indentation of the line below"),
    ("expected ',' or ']'", "a [ ] list is not closed, or two items lack a ',' between them",
     "separate items with ',' and end the list with ']'; quote items containing ':'"),
    ("expected ',' or '}'", "a { } mapping is not closed, or two entries lack a ',' between them",
     "separate entries with ',' and end the mapping with '}'"),
    ("expected '-' indicator", "expected a list item ('- ...') at this indentation",
     "items of one list must start at the same column"),
    ("while parsing a block collection", "expected a list item ('- ...') at this indentation",
     "items of one list must start at the same column"),
    ("sequence entries are not allowed", "unexpected list item ('- ') here",
     "a list under a key starts on the next line, indented"),
    ("expected key", "this line does not fit the mapping it is in",
     "keys of one mapping must start at the same column; a value with several parts needs quotes"),
    ("<block end>", "this line does not fit the mapping it is in",
     "keys of one mapping must start at the same column; a value with several parts needs quotes"),
    ("unknown escape character", "unknown escape sequence (\\...) in a double-quoted string",
     "use single quotes, or write a backslash as \\\\"),
    # libyaml says "hexdecimal number", PyYAML "hexadecimal numbers"
    ("decimal number", "an escape like \\x, \\u or \\U in a double-quoted string needs hex digits",
     "use single quotes, or write a backslash as \\\\"),
    ("alphabetic or numeric character", "'&' or '*' must be followed by a name",
     "quote the value if it really starts with '&' or '*'"),
    ("while scanning a block scalar", "unexpected text after a '|' or '>' block indicator",
     "the text of a block starts on the next line"),
    ("document indicator", "a line starting with '---' or '...' ends the document here",
     "indent that line, or close the quoted string before it"),
    ("document separator", "a line starting with '---' or '...' ends the document here",
     "indent that line, or close the quoted string before it"),
    ("<document start>", "unexpected content after the end of the data",
     "look for a stray ']' or '}', or a line indented less than the first one"),
    ("node content", "expected a value here", _SPECIAL_HINT),
    ("mapping keys are not allowed", "unexpected '?' ('? ' starts a complex key in YAML)",
     "put the value in quotes"),
    ("found unexpected ':'", "unexpected ':' inside [ ] or { }",
     "quote the value, or put a space after ':' to write `key: value`"),
    ("while parsing a tag", "a value starting with '!' is read as a tag",
     "put the value in quotes if it really starts with '!'"),
    ("while scanning a tag", "a value starting with '!' is read as a tag",
     "put the value in quotes if it really starts with '!'"),
    ("while scanning a directive", "a line starting with '%' is read as a YAML directive",
     "put the value in quotes if it really starts with '%'"),
]


def _explain(exc: yaml.YAMLError, text: str, file: str) -> tuple[str, str, Loc, str]:
    """(code, message, loc, hint) for a PyYAML error, in words a modder understands."""
    problem = str(getattr(exc, "problem", "") or exc)
    context = str(getattr(exc, "context", "") or "")
    pm, cm = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    loc = Loc(file, pm.line + 1, pm.column + 1) if pm is not None else Loc(file)
    ctx_loc = Loc(file, cm.line + 1, cm.column + 1) if cm is not None else loc
    char = text[pm.index] if pm is not None and 0 <= pm.index < len(text) else ""
    if char == "\t" or "tab character" in problem:
        if pm is not None and not text[pm.index - pm.column:pm.index].strip(" \t"):
            return ("Y001", "tab character used for indentation; YAML allows only spaces", loc,
                    "replace the tabs with spaces (set your editor to insert spaces)")
        return "Y001", "unexpected tab character", loc, "use spaces instead of tabs"
    if "end of stream" in problem and "quoted scalar" in context:
        # The parser notices at the end of the file; the culprit is the opening quote.
        return "Y001", "this quoted text is never closed", ctx_loc, "add the closing quote"
    if "could not find expected ':'" in problem:
        # Reported on the line after; the key that lacks its ':' starts at the context mark.
        loc = ctx_loc
    if "cannot start any token" in problem and char:
        return ("Y001", f"a value cannot start with `{char}`", loc,
                "put the value in quotes" if char in "@`%" else _SPECIAL_HINT)
    if "tag handle" in problem:
        return "Y008", "unknown tag (`!...!`)", loc, "remove the tag"
    for needle, msg, hint in _REWRITES:
        if needle in problem or needle in context:
            return "Y001", msg, loc, hint
    if "end of stream" in problem:
        return "Y001", "the file ends in the middle of a value", loc, ""
    return "Y001", f"YAML syntax error: {problem}" + (f" ({context})" if context else ""), loc, ""
