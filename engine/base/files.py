"""Writing files so that nothing of a user's work is lost; finding our installed data folders."""
from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
from pathlib import Path


def package_dir(name: str) -> Path:
    """The folder of one of our installed packages (`rulesets`, `schemas`, `dsl`), which are
    plain folders, found without importing it or importlib.resources (whose import alone is a
    fiftieth of a cold `daimyo validate`). ModuleNotFoundError if it is not installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"no package named {name!r}", name=name)
    return Path(next(iter(spec.submodule_search_locations)))


def write_atomic(path: str | Path, text: str) -> None:
    """Write a file so that a crash never leaves half of it: temp file, fsync, rename. The temp
    file is removed when the write fails or is interrupted (Ctrl-C, a full disk)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    _remove_stale(path)
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:  # report the file the user named, not our temporary one
        _remove(tmp)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove_stale(path: Path) -> None:
    """Temporary files of this path left by a process that was killed outright (no handler ran)."""
    prefix = f".{path.name}.tmp"
    with contextlib.suppress(OSError):
        for old in path.parent.glob(glob.escape(prefix) + "*"):
            pid = old.name[len(prefix):]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                _remove(old)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is not ours
        return True
    return True


def _remove(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        tmp.unlink()


def output_problem(path: str | Path) -> str | None:
    """Why `path` cannot be written, or None when it can: checked before a long task (a game)
    starts, so a bad `--save` or `--log` is found at once, not when the work is done."""
    p = Path(path)
    if not str(path).strip():
        return "the file name is empty"
    if p.is_dir():
        return f"`{path}` is a folder"
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        return f"the folder `{folder}` does not exist"
    if p.exists() and not os.access(p, os.W_OK):
        return f"`{path}` cannot be written (permission denied)"
    if not p.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder `{folder}` cannot be written (permission denied)"
    return None
