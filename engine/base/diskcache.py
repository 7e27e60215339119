"""Files kept in the user's cache folder, named by a hash of what they were made from.

Shared by the parse cache (dsl/parsecache.py) and the located-YAML cache
(engine/loading/yamlcache.py). The folder is `$XDG_CACHE_HOME/daimyo/NAME/` (else
`~/.cache/daimyo/NAME/`); `DAIMYO_NO_CACHE=1` turns every cache off. Reading never trusts an
entry: only a regular file of sane size is read (a FIFO or folder planted in its place is
skipped without blocking); what it holds is for the caller to check. Writing is best effort: a
temporary file renamed into place, so a reader never sees half an entry, and a folder that
cannot be written only costs the cache.
"""
from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

try:  # Python's own SHA-256 (`_sha2` from 3.12): importing hashlib loads OpenSSL, ~0.6% of a cold validate
    from _sha2 import sha256  # type: ignore[import-not-found]
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment]


def cache_folder(name: str, env: Mapping[str, str] = os.environ) -> Path | None:
    """Where the cache `name` is kept, or None when caching is off: in this process, or in one
    started with the environment `env`."""
    if env.get("DAIMYO_NO_CACHE", "").strip() not in ("", "0"):
        return None
    base = env.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"  # XDG: relative is ignored
    return root / "daimyo" / name


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

# The files read in this process whose bytes the located-YAML cache hashed: the name a file is
# read under -> the hash of its bytes. The parse cache keeps the trees of one file's rule texts
# together under it (dsl/parsecache.py, packs); which file a text names changes only where its
# tree is looked for first, never what is trusted.
SOURCES: dict[str, str] = {}


class DiskCache:
    """Entries in one folder, each named by a hash of its key."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._prefix = os.path.join(folder, "")
        self.writable = True

    def path(self, key: str | bytes) -> str:
        """The file of an entry (a text path: a thousand Path objects cost a cold start 1%)."""
        digest = sha256(key.encode() if isinstance(key, str) else key).hexdigest()
        return f"{self._prefix}{digest[:2]}{os.sep}{digest[2:]}.json"

    @staticmethod
    def read(path: str | Path, limit: int) -> bytes | None:
        """The bytes of an entry, or None if it is missing, not a regular file or over `limit`."""
        try:  # O_NONBLOCK: a FIFO planted in the cache must not hang us
            fd = os.open(path, os.O_RDONLY | _NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            chunks = []
            left = min(st.st_size, limit) + 1  # one byte more: a file that grew is refused
            while left > 0:
                chunk = os.read(fd, left)
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            return data if len(data) <= limit else None
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, path: str | Path, data: str) -> None:
        """Store an entry; after the first failure (read-only, full) stop trying in this process."""
        if not self.writable:
            return
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # No fsync: an entry lost in a power cut only costs the work again.
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            self.writable = False
            with contextlib.suppress(OSError):
                os.unlink(tmp)
