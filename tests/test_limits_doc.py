"""docs/limits.md lists every budget and cap with the value the code uses and a documented code."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| (?P<what>[^|]+) \| (?P<value>[0-9,]+) \| (?P<code>[^|]+) "
                 r"\| `(?P<file>[^:]+): (?P<name>\w+)` \|$", re.M)


def rows() -> list[re.Match]:
    return list(ROW.finditer((REPO / "docs" / "limits.md").read_text(encoding="utf-8")))


def test_every_limit_in_the_doc_is_the_value_in_the_code() -> None:
    found = rows()
    assert len(found) >= 25
    for row in found:
        module = importlib.import_module(row["file"].removesuffix(".py").replace("/", "."))
        value = getattr(module, row["name"])
        assert value == int(row["value"].replace(",", "")), f"{row['name']}: code {value}, doc {row['value']}"


def test_every_limit_has_a_documented_code() -> None:
    doc = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for row in rows():
        code = row["code"].strip()
        if code.startswith("("):  # the prompt asks again: no error at all
            continue
        assert re.search(rf"^\*\*{code} — ", doc, re.M), f"{code} ({row['name']}) is not in diagnostics.md"


INTERNAL = {"MAX_PARSED"}  # a cache's size: no input is ever refused by it


def test_every_cap_constant_in_the_code_is_in_the_doc() -> None:
    named = {(r["file"], r["name"]) for r in rows()}
    for path in ("dsl/runtime.py", "dsl/codegen.py", "dsl/compiler.py", "dsl/primitives.py", "engine/run/machine.py",
                 "engine/run/state.py", "engine/cli/replay.py", "engine/loading/package.py", "engine/model/checks.py"):
        text = (REPO / path).read_text(encoding="utf-8")
        for name in re.findall(r"^((?:MAX|CHECK|WORK)_[A-Z_]+) = ", text, re.M):
            assert (path, name) in named or name in INTERNAL, f"{path}: {name} is a limit missing from docs/limits.md"
