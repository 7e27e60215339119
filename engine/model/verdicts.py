"""What validating a combo found, kept on disk by a hash of everything it was found from.

`daimyo validate` run again on files that have not changed gives what it gave before (a
linter's result cache, as ruff and mypy keep one). An entry holds the diagnostics the builds of
one combo gave (`validate_combo`, after the packages were read: reading them always runs). Its
name is a hash of all that the builds read or are made of:

- the combo as named, and the working folder (locations are written relative to it);
- of every package: its folder and real path, the bytes of its manifest, and of each data file
  it loads (those the manifest lists, or without `files:` every `*.yaml` file of the folder),
  its name and bytes: the builds read no other file (whether a file is inside its package is
  decided when the package is read, which always runs);
- the engine: the status (size, times, inode) of every source file of `engine/`, `dsl/` and
  `schemas/` (the grammar and the schemas too) and of the readers it uses (PyYAML's, lark's and
  networkx's `__init__.py`), and Python's version: an edit, an install or a checkout writes
  files anew.

So an edited rule text, a file added to a folder, another working folder or an updated engine
finds no entry and is validated again. The hash is taken again after the builds, and an entry
is written only if nothing changed while they ran. A text the language server checks from an
editor's buffer (`overridden`) is never kept or looked up. The cache is the user's own, like
the other two (docs/performance.md, "The disk caches"): `DAIMYO_NO_CACHE=1` turns it off with
them, and an entry that is not exactly of the form written here is ignored.
"""
from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys
import time
from pathlib import Path

from engine.base import diskcache
from engine.base.diagnostics import Diagnostic, Loc
from engine.base.files import package_dir
from engine.loading.package import MANIFEST, Combo
from engine.loading.yamlio import MAX_FILE_BYTES, overriding

FORMAT = "verdict-1"
MAX_ENTRY = 50_000_000  # bytes of one entry: a combo with very many diagnostics is not kept
RACY = 2  # seconds: a file changed this recently is hashed at every look (`_add_file`)
_SOURCE_SUFFIXES = (".py", ".lark", ".json", ".pxd")
_READERS = ("yaml", "lark", "networkx")

_SALT: list[bytes | None] = []  # worked out once per process
_DIGESTS: dict[str, tuple[tuple, bytes]] = {}  # path -> (its status when read, the hash of its bytes)
_CACHE: list[diskcache.DiskCache | None] = []


def engine_salt() -> bytes | None:
    """What names the engine that validates: its sources, the readers it uses and Python's
    version (None if they cannot be looked at, or one changed a moment ago: nothing is kept)."""
    if not _SALT:
        _SALT.append(_salt([package_dir(name) for name in ("engine", "dsl", "schemas")]))
    return _SALT[0]


def _salt(folders: list[Path]) -> bytes | None:
    """A hash of the status of every source file in `folders` (name, size, times, inode) and of
    the readers' `__init__.py`: any edit, install or checkout gives files new times. Their
    bytes are not read: that was a tenth of a validation given from the cache. A file changed
    less than RACY seconds ago gives None, as in `_add_file`."""
    h = diskcache.sha256(f"{FORMAT}\0{sys.version}\0".encode())
    found = []
    try:
        for folder in folders:
            for here, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                found += [(os.path.relpath(os.path.join(here, f), folder), os.path.join(here, f))
                          for f in files if f.endswith(_SOURCE_SUFFIXES)]
        found.sort()
        for name in _READERS:
            spec = importlib.util.find_spec(name)
            found.append((name, spec.origin if spec is not None and spec.origin else os.devnull))
        now = time.time_ns()
        for name, path in found:
            st = os.stat(path)
            if not _settled(st, now):
                return None
            h.update(f"{name}\0{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}\0".encode())
    except (OSError, ValueError, ImportError):
        return None
    return h.digest()


def _store() -> diskcache.DiskCache | None:
    if not _CACHE:
        folder = diskcache.cache_folder(FORMAT)
        _CACHE.append(diskcache.DiskCache(folder) if folder is not None else None)
    return _CACHE[0]


def combo_key(text: str, combo: Combo) -> bytes | None:
    """The name of the entry for validating `combo` (named `text`), or None when nothing is kept:
    caching is off, a text comes from an editor's buffer, or a file cannot be read."""
    if _store() is None or overriding():
        return None
    salt = engine_salt()
    if salt is None:
        return None
    h = diskcache.sha256(salt)
    try:
        h.update(f"\0{text}\0{os.getcwd()}\0".encode("utf-8", "surrogateescape"))
        for pkg in combo.packages:
            root = pkg.root
            h.update(f"\0{root}\0{os.path.realpath(root)}\0".encode("utf-8", "surrogateescape"))
            _add_file(h, root / MANIFEST)
            for f in pkg.files:
                h.update(f"\0{f.display}\0".encode("utf-8", "surrogateescape"))
                _add_file(h, f.path)
    except (OSError, ValueError):
        return None
    return h.digest()


def _add_file(h: object, path: Path) -> None:
    """The hash of a regular file's bytes into `h` (OSError for anything else: a FIFO must not
    block, a file over the size the reader takes is not worth keeping). Each file is read and
    hashed once per process while its status says it is unchanged: the combos of one validation
    share their base's files, and each combo's are hashed again after its builds. As git does,
    a file changed less than RACY seconds before it was read is read again at every look: where
    a file system keeps times in whole seconds, a second edit of the same size within that
    second would leave its status as it was."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"not a regular file: {path}")
    mark = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    name = os.path.abspath(path)
    known = _DIGESTS.get(name)
    if known is None or known[0] != mark:
        read_at = time.time_ns()
        data = diskcache.DiskCache.read(path, MAX_FILE_BYTES)
        if data is None:
            raise OSError(f"cannot read {path}")
        known = (mark, diskcache.sha256(data).digest())
        if _settled(st, read_at):
            _DIGESTS[name] = known
    h.update(known[1])  # type: ignore[attr-defined]


def _settled(st: os.stat_result, now_ns: int) -> bool:
    """Whether a file with this status last changed more than RACY seconds before `now_ns`."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - RACY * 1_000_000_000


def load(key: bytes) -> list[Diagnostic] | None:
    """The diagnostics kept under `key`, or None (none kept, or not an entry of this form)."""
    store = _store()
    raw = store.read(store.path(key), MAX_ENTRY) if store is not None else None
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if type(doc) is not list or len(doc) != 2 or doc[0] != FORMAT or type(doc[1]) is not list:
            return None
        out = []
        for item in doc[1]:
            code, message, file, line, col, severity, hint = item
            if not (all(type(s) is str for s in (code, message, file, hint))
                    and type(line) is int and type(col) is int and severity in ("error", "warning")):
                return None
            out.append(Diagnostic(code, message, Loc(file, line, col), severity, hint))
        return out
    except (ValueError, TypeError, RecursionError):
        return None


def keep(key: bytes, found: list[Diagnostic]) -> None:
    """Keep what validating the combo named by `key` found."""
    store = _store()
    if store is None:
        return
    entry = [FORMAT, [[d.code, d.message, d.loc.file, d.loc.line, d.loc.col, d.severity, d.hint] for d in found]]
    text = json.dumps(entry, separators=(",", ":"))
    if len(text) <= MAX_ENTRY:
        store.write(store.path(key), text)

