"""Diagnostics: every problem found in a ruleset is a value, never an exception.

A `Diagnostic` carries a stable code (documented in docs/diagnostics.md), a severity,
where it happened (file, 1-based line and column) and a message a modder understands,
with an optional hint. Loaders and checkers append to a `Diagnostics` collection and
carry on, so a user sees every problem at once, not only the first.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from engine.base.record import FrozenRecord
from engine.base.text import safe_text


class Loc(FrozenRecord):
    """A place in a source file: 1-based line and column; 0 when unknown. Immutable."""

    FIELDS = ("file", "line", "col")
    file: str
    line: int
    col: int

    def __init__(self, file: str = "", line: int = 0, col: int = 0) -> None:
        # The fields written straight into the instance (it refuses assignment): reading a
        # ruleset makes ~10^5 of these.
        d = self.__dict__
        d["file"], d["line"], d["col"] = file, line, col

    def __str__(self) -> str:
        if not self.line:
            return self.file or "<unknown>"
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, line_offset: int, col: int) -> Loc:
        """The location `line_offset` lines below this one, at column `col`."""
        return Loc(self.file, self.line + line_offset, col)


class Diagnostic(FrozenRecord):
    """One problem: its code, message, place, severity and hint. Immutable."""

    FIELDS = ("code", "message", "loc", "severity", "hint")
    code: str
    message: str
    loc: Loc
    severity: str  # "error" | "warning"
    hint: str

    def __init__(self, code: str, message: str, loc: Loc | None = None, severity: str = "error",
                 hint: str = "") -> None:
        d = self.__dict__
        d["code"], d["message"], d["loc"], d["severity"], d["hint"] = \
            code, message, Loc() if loc is None else loc, severity, hint

    def to_json(self) -> dict:
        loc = self.loc
        out = {"code": self.code, "severity": self.severity, "file": loc.file, "line": loc.line, "col": loc.col,
               "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out

    def render(self, source_lines: list[str] | None = None) -> str:
        """Human form: `file:line:col: error[CODE]: message`, the source line and a caret."""
        head = safe_text(f"{self.loc}: {self.severity}[{self.code}]: {self.message}")
        parts = [head]
        if source_lines and 0 < self.loc.line <= len(source_lines):
            text = source_lines[self.loc.line - 1].rstrip("\n")
            if len(text) > 200:
                text = text[:200] + "..."
            gutter = f"{self.loc.line:>5} | "
            parts.append(gutter + safe_text(text, newlines=False))
            caret_col = max(1, min(self.loc.col, len(text) + 1))
            parts.append(" " * (len(gutter) - 2) + "| " + " " * (caret_col - 1) + "^")
        if self.hint:
            parts.append(safe_text(f"  hint: {self.hint}"))
        return "\n".join(parts)


class Diagnostics:
    """An ordered collection of diagnostics, with helpers to add and report them."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, code: str, message: str, loc: Loc | None = None, *, hint: str = "",
            severity: str = "error") -> Diagnostic:
        d = Diagnostic(code, message, loc or Loc(), severity, hint)
        self.items.append(d)
        return d

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=lambda d: (d.loc.file, d.loc.line, d.loc.col, d.code))

    def to_json(self) -> str:
        return json.dumps([d.to_json() for d in self.sorted()], indent=2)

    def render(self) -> str:
        """Every diagnostic in human form, quoting the source line where the file is readable."""
        cache: dict[str, list[str] | None] = {}
        out = []
        for d in self.sorted():
            if d.loc.file not in cache:
                cache[d.loc.file] = _read_lines(d.loc.file)
            out.append(d.render(cache[d.loc.file]))
        return "\n".join(out)


class RulesetError(Exception):
    """Raised by the public API when a ruleset cannot be loaded; carries the diagnostics."""

    def __init__(self, diagnostics: Diagnostics):
        self.diagnostics = diagnostics
        first = diagnostics.errors[0] if diagnostics.errors else None
        super().__init__(f"{len(diagnostics.errors)} error(s); first: {first.loc}: {first.message}"
                         if first else "ruleset error")


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """A hint naming the closest known name, or '' when nothing is close."""
    import difflib  # only when a name is unknown: not imported by a clean run

    close = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else ""


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(2_000_000).splitlines()
    except OSError:
        return None
