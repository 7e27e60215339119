"""Safe YAML loading that remembers where everything came from, and never crashes.

Every later check (schema, DSL, references) must point a modder at `file:line:col`, so
mappings and lists come back as `LocDict` / `LocList`: ordinary dicts and lists that also
carry the location of each key and value. Problems become diagnostics (codes Y001-Y009,
see docs/diagnostics.md), never exceptions.

How (engine/loading/yamlbuild.py, imported only when a file is really parsed): instead of
`yaml.safe_load` we read PyYAML's *event* stream (the C parser when libyaml is available) and
build the values ourselves, with an explicit stack. That gives
us the marks of every node and alias, lets us reject duplicate keys, merge keys and
unknown tags, and bound depth and size before anything big is built. Nothing recurses,
so pathological nesting cannot blow the Python stack.
"""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

from engine.base.diagnostics import Diagnostics, Loc
from engine.loading.located import LocDict, LocList, line_breaks, loc_of

__all__ = ["LocDict", "LocList", "load_yaml", "load_yaml_text", "loc_of", "overridden", "overriding", "read_source"]

# Characters YAML forbids (same set as PyYAML's reader, which allows only \t \n \r, 20-7E, 85,
# A0-D7FF, E000-FFFD and 10000-10FFFF), plus the lone surrogates that `surrogateescape` decoding
# produces for bytes that are not UTF-8. Written as the forbidden ranges: the same set, compiled
# in a seventh of the time of the allowed ranges negated (tests/test_yamlio.py checks every character).
# Compiled on first use: only a file that is really parsed (not read from the cache) is checked.
@cache
def _bad_char() -> re.Pattern:
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


# Texts that replace files on disk while they are being edited (the language server checks an
# editor's unsaved buffer): absolute real path -> text. See `overridden`.
_OVERRIDES: ContextVar[dict[str, str]] = ContextVar("daimyo_yaml_overrides", default={})  # noqa: B039


@contextmanager
def overridden(texts: dict[str, str]) -> Iterator[None]:
    """Within this block, `load_yaml` of one of these paths reads the given text instead of
    the file (which need not be saved), so validation sees what an editor shows."""
    token = _OVERRIDES.set({**_OVERRIDES.get(), **{os.path.realpath(k): v for k, v in texts.items()}})
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def overriding() -> bool:
    """Whether some text is read from an editor's buffer instead of its file (`overridden`)."""
    return bool(_OVERRIDES.get())


MAX_FILE_BYTES = 2_000_000  # one YAML file (Y006)
MAX_DEPTH = 64  # nesting of mappings and lists (Y005)
MAX_NODES = 200_000  # values a file may expand to, aliases included (Y004)


def load_yaml(path: str | os.PathLike, diags: Diagnostics, *, max_bytes: int = MAX_FILE_BYTES,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES, display_name: str | None = None) -> Any:
    """Load one YAML file; return its value (LocDict/LocList/scalar), or None on error.

    Problems are added to `diags` (Y001-Y009); this never raises. An empty file, or one
    with only comments, is None without any diagnostic. `display_name` is the file name
    used in locations (default: `path` as given). Locations are 1-based; a value's loc is
    where its content starts: the first character of a plain scalar, the character after
    the opening quote of a quoted one, and for a `|` / `>` block the first character of
    its first content line, so that line k, column c of a literal block's text is at
    `(loc.line + k - 1, loc.col + c - 1)` in the file.
    """
    file = display_name if display_name is not None else str(path)
    source = read_source(path, diags, file)
    if source is None:
        return None
    return load_yaml_text(source, file, diags, max_bytes=max_bytes, max_depth=max_depth, max_nodes=max_nodes)


def read_source(path: str | os.PathLike, diags: Diagnostics, file: str,
                max_bytes: int = MAX_FILE_BYTES) -> str | bytes | None:
    """The content of a YAML file as `load_yaml` reads it: the bytes on disk (at most one more
    than `max_bytes`), or the editor's text that overrides them (`overridden`); None after a
    diagnostic (Y009) when the file cannot be read."""
    overrides = _OVERRIDES.get()
    if overrides:
        text = overrides.get(os.path.realpath(path))
        if text is not None:
            return text
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):
            diags.add("Y009", "cannot read file: not a regular file", Loc(file))
            return None
        with open(path, "rb") as fh:
            return fh.read(max_bytes + 1)  # never read more than we would accept
    except FileNotFoundError:
        diags.add("Y009", "cannot read file: it does not exist", Loc(file))
    except IsADirectoryError:
        diags.add("Y009", "cannot read file: it is a directory", Loc(file))
    except PermissionError:
        diags.add("Y009", "cannot read file: permission denied", Loc(file))
    except (OSError, ValueError, TypeError) as exc:
        diags.add("Y009", f"cannot read file: {getattr(exc, 'strerror', None) or exc}", Loc(file))
    return None


def load_yaml_text(text: str | bytes, file: str, diags: Diagnostics, **limits: int) -> Any:
    """Load YAML from a string (or bytes, which must be UTF-8) as `load_yaml` does.

    `file` goes into every Loc; `limits` are `max_bytes`, `max_depth`, `max_nodes`.
    """
    max_bytes = limits.get("max_bytes", MAX_FILE_BYTES)
    try:
        if isinstance(text, (bytes, bytearray)):
            if len(text) > max_bytes:
                diags.add("Y006", f"file is larger than {max_bytes} bytes", Loc(file))
                return None
            if text[:2] in (b"\xff\xfe", b"\xfe\xff"):
                diags.add("Y003", "file is UTF-16 text, not UTF-8", Loc(file, 1, 1),
                          hint="save the file with UTF-8 encoding")
                return None
            text = bytes(text).decode("utf-8", "surrogateescape")
        elif len(text) > max_bytes or (4 * len(text) > max_bytes  # only encode when it may matter
                                       and len(text.encode("utf-8", "surrogatepass")) > max_bytes):
            diags.add("Y006", f"file is larger than {max_bytes} bytes", Loc(file))
            return None
        text = text.removeprefix("\ufeff")  # a BOM is invisible in editors: columns start after it
        if not _check_chars(text, file, diags):
            return None
        from engine.loading.yamlbuild import build  # PyYAML: only when a file is really parsed

        return build(text, file, diags, limits.get("max_depth", MAX_DEPTH), limits.get("max_nodes", MAX_NODES))
    except Exception as exc:
        diags.add("Y001", f"could not read YAML: {type(exc).__name__}: {exc}", Loc(file))
        return None


def _loc_at(text: str, index: int, file: str) -> Loc:
    """The 1-based line and column of `text[index]`, counting YAML line breaks."""
    line, start = 1, 0
    for m in line_breaks().finditer(text, 0, index):
        line, start = line + 1, m.end()
    return Loc(file, line, index - start + 1)


def _check_chars(text: str, file: str, diags: Diagnostics) -> bool:
    """Y003 at the first NUL byte, non-UTF-8 byte or control character, if any."""
    m = _bad_char().search(text)
    if not m:
        return True
    ch = m.group()
    code = ord(ch)
    if ch == "\0":
        msg, hint = "file is binary, not text (it contains a NUL byte)", "is this really a YAML file?"
    elif 0xDC80 <= code <= 0xDCFF:  # a byte that surrogateescape could not decode
        msg, hint = f"file is not valid UTF-8 text (byte 0x{code - 0xDC00:02X})", \
            "save the file with UTF-8 encoding"
    else:
        msg, hint = f"control character U+{code:04X} is not allowed in YAML text", \
            "remove it; is this really a YAML file?"
    diags.add("Y003", msg, _loc_at(text, m.start(), file), hint=hint)
    return False
