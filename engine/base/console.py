"""Conventions shared by every `daimyo` command, the front door's and the tools' alike:
exit codes, `--option NAME=VALUE` pairs, the COMBO help text, and diagnostics output in the
human and JSON formats."""
from __future__ import annotations

import json
import sys
from typing import Any

from engine.base.diagnostics import Diagnostics

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2  # success; the input is wrong; the command line is wrong

EPILOG = "COMBO is a base ruleset and expansions joined by +, each a bundled id or a folder path " \
         "(e.g. shogun, shogun+tennos-court+chambers, ./my-variant)."


def usage_error(msg: str) -> int:
    """Say what is wrong with the command line; returns the usage exit code."""
    print(f"daimyo: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def parse_options(pairs: list[str]) -> dict[str, str]:
    """`--option NAME=VALUE` pairs as a dict; a malformed pair exits with a usage error."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(usage_error(f"--option needs NAME=VALUE, got `{pair}`"))
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def report(diags: Diagnostics, fmt: str = "human", stream: Any = None) -> None:
    """Print diagnostics: rendered with source lines to stderr, or as JSON to stdout."""
    stream = stream or sys.stderr
    if fmt == "json":
        print(diags.to_json(), file=sys.stdout)
    elif len(diags):
        print(diags.render(), file=stream)
        n_err, n_warn = len(diags.errors), len(diags) - len(diags.errors)
        print(f"{n_err} error(s), {n_warn} warning(s)", file=stream)


# ---- machine-readable output (docs/output-formats.md) ----

FORMAT_HELP = "human: text for people (default); json: one JSON document on stdout (docs/output-formats.md)"


def add_format_option(parser: Any, extra: tuple[str, ...] = ()) -> None:
    """The one `--format` flag every reporting command takes: `human` (default) or `json`."""
    parser.add_argument("--format", choices=["human", *extra, "json"], default="human", help=FORMAT_HELP)


def print_json(value: Any) -> None:
    """The whole result as one JSON document on stdout (UTF-8 text, keys in a stable order)."""
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def rate_text(per_second: float, unit: str) -> str:
    """A rate people can read at any speed: `1,234 games/s`, `3.4 games/s`, or, below one per
    second, `25.0 s per game` (never `0.0 games/s`)."""
    if per_second <= 0:
        return f"0 {unit}s/s"
    if per_second >= 100:
        return f"{per_second:,.0f} {unit}s/s"
    if per_second >= 1:
        return f"{per_second:.1f} {unit}s/s"
    return f"{1 / per_second:.1f} s per {unit}"
