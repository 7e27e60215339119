"""Text from rulesets, saves and logs made safe to print: no terminal control characters.

A ruleset can hold any character (YAML escapes such as `\\e` make an ESC), so a mod could clear
the screen, move the cursor or colour a fake line. Every text the engine prints or logs that
came from outside goes through `safe_text`: control characters become visible escapes.
"""
from __future__ import annotations

import re
from functools import cache


@cache
def _control() -> re.Pattern:
    """C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides
    (which can make a line read differently from what it holds). Compiled on first use: a
    clean `daimyo validate` prints none of the rulesets' texts."""
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str, newlines: bool = True) -> str:
    """`text` with control characters shown as escapes (`\\x1b`); newlines kept unless
    `newlines` is false (then shown as `\\n` too)."""
    if not newlines:
        text = text.replace("\n", "\\n")
    control = _control()
    return control.sub(_escape, text) if control.search(text) else text
