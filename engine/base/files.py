"""Writing files so that nothing of a user's work is lost."""
from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | Path, text: str) -> None:
    """Write a file so that a crash never leaves half of it: temp file, fsync, rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:  # report the file the user named, not our temporary one
        raise OSError(e.errno, e.strerror, str(path)) from None
