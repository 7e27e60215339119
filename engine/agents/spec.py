"""Agent specs: how a bot is named on the command line, in a tournament and on the web page.

    random                      a kind alone: its default settings
    search:time=0.5             a kind and settings, `key=value` separated by commas
    search:iterations=200,rollout=heuristic

Every front door builds bots from the same spec with `make_agent(spec, seed)`, so a bot named
the same way plays the same way whichever door started it. A list of specs (`--seats`,
`--agents`) is comma-separated too: a piece that holds `=` but no `:` continues the spec
before it (`search:time=0.5,rollout=random,heuristic` is two bots).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class SpecError(ValueError):
    """A bot spec that cannot be built; the message says what is wrong and what is allowed."""


@dataclass(frozen=True)
class Param:
    """One setting of an agent kind: its type, default, allowed values or range, and help."""
    kind: type
    default: Any
    help: str
    choices: tuple = ()
    low: float | None = None
    high: float | None = None

    def parse(self, text: str, key: str, spec: str) -> Any:
        try:
            value = self.kind(text)
        except ValueError:
            raise SpecError(f"bot `{spec}`: `{key}` takes {self.kind.__name__} values, not `{text}`") from None
        if self.choices and value not in self.choices:
            raise SpecError(f"bot `{spec}`: `{key}` is one of {', '.join(map(str, self.choices))}, not `{text}`")
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise SpecError(f"bot `{spec}`: `{key}` must be between {self.low:g} and {self.high:g}, not `{text}`")
        return value


def split_specs(text: str) -> list[str]:
    """`a,b:x=1,y=2,c` -> [`a`, `b:x=1,y=2`, `c`]: a piece with `=` and no `:` continues the one before."""
    out: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if "=" in piece and ":" not in piece and out and ":" in out[-1]:
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def parse_spec(spec: str, kinds: dict[str, dict[str, Param]]) -> tuple[str, dict[str, Any]]:
    """(kind, settings) from `kind` or `kind:key=value,...`; SpecError names the problem."""
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip()
    if kind not in kinds:
        raise SpecError(f"unknown bot `{kind}`; choose from {', '.join(kinds)}")
    params = kinds[kind]
    settings: dict[str, Any] = {}
    for item in (i.strip() for i in rest.split(",")) if rest.strip() else ():
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SpecError(f"bot `{spec}`: settings are key=value, not `{item}`")
        if key not in params:
            known = ", ".join(params) or "none"
            raise SpecError(f"bot `{spec}`: `{kind}` has no setting `{key}` (settings: {known})")
        if key in settings:
            raise SpecError(f"bot `{spec}`: `{key}` is given twice")
        settings[key] = params[key].parse(value.strip(), key, spec)
    return kind, settings


def describe(kinds: dict[str, dict[str, Param]]) -> str:
    """The kinds and their settings, for help texts and docs."""
    lines = []
    for kind, params in kinds.items():
        lines.append(kind + (":" + ",".join(f"{k}={p.default}" for k, p in params.items()) if params else ""))
        for k, p in params.items():
            allowed = f" ({'|'.join(map(str, p.choices))})" if p.choices else ""
            lines.append(f"    {k}{allowed}: {p.help}")
    return "\n".join(lines)
