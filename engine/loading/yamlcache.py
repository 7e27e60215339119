"""Located YAML kept on disk, keyed by a hash of the file's bytes.

Reading the YAML of a ruleset with every position was about a sixth of a cold `daimyo validate`;
reading the same values back from JSON costs a fraction of that. An entry is written only for
a file that loaded without any diagnostic, in the cache folder `yaml-N` beside the parse cache
(engine/base/diskcache.py; `DAIMYO_NO_CACHE=1` turns it off). Its key hashes the file's bytes,
this format, and the source of the code that gives the values (engine/loading/yamlio.py,
yamlbuild.py, located.py, this module, and PyYAML's version), so an edited file or reader never
meets an old entry. The file name is not in the entry: locations get the name the file is read
under.

An entry is never trusted: it is JSON (reading runs no code) of the expected shape, every value
a JSON scalar or a located mapping or list, every location inside the text and in text order,
and every scalar written where it says and as what it is (`_Decoder.written`). Anything else is
ignored and the file read again, so a damaged or planted entry costs a read, never a crash.
Files whose mappings or lists are shared through aliases are not kept (a copy would not be
shared).
"""
from __future__ import annotations

import importlib.util
import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from engine.base import diskcache
from engine.base.diagnostics import Diagnostics, Loc
from engine.base.diskcache import sha256
from engine.loading.yamlio import MAX_FILE_BYTES, LocDict, LocList, load_yaml_text, read_source

FORMAT = 1
MAX_ENTRY = 64  # bytes of JSON per byte of YAML (plus a fixed allowance), above which an entry is refused
_SCALARS = (str, int, float, bool, type(None))
_KEYS = (str, int)
_one_more = (1).__add__
_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks other than \n: such files are not kept
# How much of a text must be found where it is written: up to the first space, or quote or
# backslash (which a quoted text may write as an escape).
_START = re.compile(r" *[^\s'\"\\]{0,24}")
# Plain scalars YAML 1.1 reads as something other than text (a superset: a text that merely looks
# like one is refused, which costs only the cache of that file).
_NOT_TEXT = re.compile(r"[-+]?(\.?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|\.[0-9_]+([eE][-+]?[0-9]+)?"
                       r"|0[xob][0-9a-fA-F_]+|[0-9][0-9_]*(:[0-9_.]+)+|\.?(inf|Inf|INF|nan|NaN|NAN))"
                       r"|~|null|Null|NULL|none|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|")
_NULLS = ("~", "null", "Null", "NULL", "none")
_EMPTY_END = frozenset(("", " ", "\t", "\n", ",", "}", "]", "#"))
_BOOL_START = frozenset("tTfFyYnNoO")
_FLOAT_START = frozenset("+-.0123456789")


# Per text value: how much of it must be found where it is written (`_START`), whether it looks
# like something other than text (`_NOT_TEXT`), and that start again when finding it where it
# is written is enough (`_Decoder.node`: not empty, not an alias's `*`, a form that is only
# text), else None. Ids and names repeat across a ruleset's files: each is matched once.
_TEXTS: dict[str, tuple[str, bool, str | None]] = {}
MAX_TEXTS = 100_000


def _text_form(value: str) -> tuple[str, bool, str | None]:
    if len(_TEXTS) >= MAX_TEXTS:
        _TEXTS.clear()
    start = _START.match(value).group()
    not_text = _NOT_TEXT.fullmatch(value) is not None
    got = _TEXTS[value] = (start, not_text, start if start and start[0] != "*" and not not_text else None)
    return got


class _Bad(Exception):
    """An entry that is not what this module writes, or a value it cannot keep."""


def _salt() -> str | None:
    """What the located values depend on besides the file: this format, our reader (its source,
    so that an edited reader never meets old entries), PyYAML's version."""
    h = sha256(f"{FORMAT}\0".encode())
    try:
        spec = importlib.util.find_spec("yaml")
        here = Path(__file__)
        sources = [*(here.with_name(name) for name in ("yamlio.py", "yamlbuild.py", "located.py", here.name)),
                   Path(spec.origin if spec and spec.origin else "")]
        for source in sources:
            h.update(source.read_bytes())
    except (OSError, ValueError, ImportError):
        return None  # cannot tell which reader made an entry: keep none
    return h.hexdigest()


class YamlCache(diskcache.DiskCache):
    """Load and store the located values of YAML files."""

    def __init__(self, folder: Path, salt: str) -> None:
        super().__init__(folder)
        self.salt = salt.encode()

    def path_of(self, data: bytes) -> str:
        return self.path(self.salt + b"\0" + data)

    def load(self, data: bytes, text: str, file: str) -> Any:
        """The value of the file whose bytes are `data` (decoded: `text`), or None if not kept."""
        path = self.path_of(data)
        diskcache.SOURCES[file] = path[len(self._prefix):]  # names this content's pack of parsed texts
        raw = self.read(path, MAX_ENTRY * len(data) + 4096)
        if raw is None or _BREAKS.search(text):
            return None
        try:
            doc = json.loads(raw)
            if type(doc) is not list or len(doc) != 2 or doc[0] != FORMAT:
                raise _Bad
            return _Decoder(text, file).node(doc[1])
        except (_Bad, ValueError, TypeError, IndexError, RecursionError, MemoryError):
            return None

    def store(self, data: bytes, text: str, value: Any) -> None:
        """Keep `value`, the clean reading of `data`, if it can be read back exactly."""
        if not self.writable or _BREAKS.search(text) or not isinstance(value, (LocDict, LocList)):
            return
        try:
            entry = [FORMAT, _Encoder(value.file).node(value, value.loc)]
            _Decoder(text, value.file).node(entry[1])  # an entry that would be refused is not written
            out = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        except (_Bad, ValueError, TypeError, IndexError, KeyError, RecursionError):
            return
        self.write(self.path_of(data), out)


_CACHE: list[YamlCache | None] = []  # made on first use ([None]: caching is off)


def yaml_cache() -> YamlCache | None:
    """The cache of this process (None when caching is off)."""
    if not _CACHE:
        folder = diskcache.cache_folder(f"yaml-{FORMAT}")
        salt = _salt() if folder is not None else None
        _CACHE.append(YamlCache(folder, salt) if folder is not None and salt is not None else None)
    return _CACHE[0]


def load_yaml_cached(path: str | Path, diags: Diagnostics, display_name: str | None = None) -> Any:
    """`load_yaml` (engine/loading/yamlio.py) with the default limits, from the disk cache when
    these bytes were read cleanly before: the same values, locations and diagnostics."""
    file = display_name if display_name is not None else str(path)
    source = read_source(path, diags, file)
    if source is None or type(source) is not bytes:  # unreadable, or an editor's unsaved text
        diskcache.SOURCES.pop(file, None)  # its rule texts' trees are no pack's
    if source is None:
        return None
    cache = yaml_cache()
    if cache is None or type(source) is not bytes or len(source) > MAX_FILE_BYTES:
        return load_yaml_text(source, file, diags)
    text = source.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    value = cache.load(source, text, file)
    if value is not None:
        return value
    local = Diagnostics()
    value = load_yaml_text(source, file, local)
    diags.extend(local)
    if not local.items:
        cache.store(source, text, value)
    return value


class _Encoder:
    """Located values as JSON lists: a scalar [line, col, value], a mapping
    ["m", line, col, [[key line, key col, key, value], ...]], a list ["l", line, col, [item, ...]]."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.seen: set[int] = set()

    def node(self, value: Any, loc: Loc) -> list:
        if loc.file != self.file:
            raise _Bad
        if type(value) is LocDict or type(value) is LocList:
            if id(value) in self.seen or value.loc != loc or value.file != self.file:
                raise _Bad  # shared through an alias
            self.seen.add(id(value))
            if type(value) is LocDict:
                pairs = []
                for k, v in value.items():
                    kl = value.key_locs[k]
                    if kl.file != self.file:
                        raise _Bad
                    pairs.append([kl.line, kl.col, k, self.node(v, value.value_locs[k])])
                return ["m", loc.line, loc.col, pairs]
            return ["l", loc.line, loc.col, [self.node(v, il) for v, il in zip(value, value.item_locs, strict=True)]]
        if type(value) not in _SCALARS:
            raise _Bad
        return [loc.line, loc.col, value]


class _Decoder:
    """Rebuild located values from their JSON form, checking them against the text."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        # Where each line starts, and len(text) + 1 after the last (one loop in C, not one per line).
        self.starts = [0, *accumulate(map(_one_more, map(len, text.split("\n"))))]
        self.pos = 0  # locations must come in text order
        self._last = Loc()  # the location of the node just decoded

    def loc(self, line: object, col: object) -> tuple[Loc, int]:
        if type(line) is not int or type(col) is not int or not 1 <= line < len(self.starts) or col < 1:
            raise _Bad
        at = self.starts[line - 1] + col - 1
        if at >= self.starts[line] or at < self.pos:  # past its line's end, or out of order
            raise _Bad
        self.pos = at
        return Loc(self.file, line, col), at

    def written(self, value: Any, at: int, key: bool = False) -> None:
        """A scalar must be written at its location, as what it is: a whole number as it reads,
        a text by its start (see `_START`: quoted and block texts fold and escape), a plain
        text not in a form YAML reads as a number, truth value or nothing (unless a key: `on:`),
        nothing as `~`, `null`, `none` or nothing at all; a number or truth value not in quotes.
        An alias has its `*` there. An entry that disagrees is refused, at worst costing a read."""
        text = self.text
        if text.startswith("*", at):
            return
        t = type(value)
        quoted = text[at - 1:at] in ("'", '"') if at else False
        if t is str:
            start, not_text, _ = _TEXTS.get(value) or _text_form(value)
            ok = text.startswith(start, at) and (quoted or key or not not_text)
        elif value is None:
            ok = text.startswith(_NULLS, at) or text[at:at + 1] in _EMPTY_END
        elif quoted:
            ok = False
        elif t is int:
            ok = text.startswith(str(value), at)
        else:
            ok = text[at:at + 1] in (_BOOL_START if t is bool else _FLOAT_START)
        if not ok:
            raise _Bad

    def scalar(self, item: list) -> tuple[Any, Loc]:
        """A scalar node `[line, col, value]` and its location: a text whose start is enough
        (`_TEXTS`) checked by that start alone, anything else by `written`."""
        line, col, value = item
        starts = self.starts
        if type(value) not in _SCALARS or type(line) is not int or type(col) is not int \
                or not 0 < line < len(starts) or col < 1:
            raise _Bad
        at = starts[line - 1] + col - 1
        if at >= starts[line] or at < self.pos:  # past its line's end, or out of order
            raise _Bad
        self.pos = at
        start = (_TEXTS.get(value) or _text_form(value))[2] if type(value) is str else None
        if start is None or not self.text.startswith(start, at):
            self.written(value, at)
        return value, Loc(self.file, line, col)

    def node(self, item: object) -> Any:
        """The value of an entry's node (its scalars by `scalar`)."""
        if type(item) is not list:
            raise _Bad
        if len(item) == 3:
            value, self._last = self.scalar(item)
            return value
        if len(item) != 4 or type(item[3]) is not list:
            raise _Bad
        kind, line, col, children = item
        loc, _ = self.loc(line, col)
        starts, file, text, texts = self.starts, self.file, self.text, _TEXTS
        lines, startswith = len(starts), text.startswith
        if kind == "m":
            out = dict.__new__(LocDict)
            key_locs: dict[Any, Loc] = {}
            value_locs: dict[Any, Loc] = {}
            for pair in children:
                if type(pair) is not list or len(pair) != 4:
                    raise _Bad
                kline, kcol, key, child = pair
                if type(key) not in _KEYS or key in out or type(kline) is not int or type(kcol) is not int \
                        or not 0 < kline < lines or kcol < 1:
                    raise _Bad
                at = starts[kline - 1] + kcol - 1
                if at >= starts[kline] or at < self.pos:
                    raise _Bad
                self.pos = at
                key_locs[key] = Loc(file, kline, kcol)
                if text[at] in "'\"":
                    at += 1  # a key's location is its quote
                start = (texts.get(key) or _text_form(key))[2] if type(key) is str else None
                if start is None or not startswith(start, at):
                    self.written(key, at, key=True)
                if type(child) is list and len(child) == 3:
                    out[key], value_locs[key] = self.scalar(child)
                else:
                    out[key] = self.node(child)
                    value_locs[key] = self._last
            out.file, out.loc, out.key_locs, out.value_locs = file, loc, key_locs, value_locs
        elif kind == "l":
            out = list.__new__(LocList)
            item_locs: list[Loc] = []
            for child in children:
                if type(child) is list and len(child) == 3:
                    value, vloc = self.scalar(child)
                    out.append(value)
                    item_locs.append(vloc)
                else:
                    out.append(self.node(child))
                    item_locs.append(self._last)
            out.file, out.loc, out.item_locs = file, loc, item_locs
        else:
            raise _Bad
        self._last = loc
        return out
