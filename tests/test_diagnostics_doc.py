"""docs/diagnostics.md documents every diagnostic code the code base can produce, and only those."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "diagnostics.md"
# A code is a quoted capital letter and three digits: diags.add("P025", ...), self.error("G001", ...),
# _CompileError("D101", ...), code = "E002".
CODE = re.compile(r"""["']([A-Z][0-9]{3})["']""")
HEADING = re.compile(r"^\*\*([A-Z][0-9]{3}) — ", re.M)


def codes_in_code() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for folder in ("engine", "dsl", "tools"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for code in CODE.findall(path.read_text(encoding="utf-8")):
                found.setdefault(code, []).append(str(path.relative_to(REPO)))
    return found


def test_every_code_used_is_documented_and_every_documented_code_is_used() -> None:
    used = codes_in_code()
    documented = HEADING.findall(DOC.read_text(encoding="utf-8"))
    assert len(documented) == len(set(documented)), "a code is documented twice"
    undocumented = {c: files for c, files in used.items() if c not in documented}
    assert not undocumented, f"add these codes to docs/diagnostics.md: {undocumented}"
    unused = sorted(set(documented) - set(used))
    assert not unused, f"documented but never produced: {unused}"


def test_every_family_has_a_section_and_a_row_in_the_stage_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    for letter in sorted({c[0] for c in codes_in_code()}):
        assert re.search(rf"^\| {letter} \| ", text, re.M), f"no row for {letter} in the stage table"
        assert re.search(rf"^## {letter} — ", text, re.M), f"no section for the {letter} codes"


def test_documented_codes_have_an_explanation() -> None:
    text = DOC.read_text(encoding="utf-8")
    for m in HEADING.finditer(text):
        line = text[m.start():text.index("\n", m.start())]
        assert len(line) > len("**X000 — **") + 10, line
