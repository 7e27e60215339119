"""Validation never crashes and never hangs, whatever a modder's files look like.

Hypothesis mutates the files of valid test rulesets (a base game with a board and
options, an expansion with patches, and the race fixture): it deletes, duplicates,
replaces and swaps lines, changes values to other types, corrupts rule text with stray
characters and swaps keys. Each mutated folder goes through `validate_targets` and the
`daimyo validate` command: the only allowed outcome is a list of diagnostics (exit 0 or
1), quickly. A second property feeds random token soup straight to the DSL compiler.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.compiler import Compiler, Symbols
from engine.base.diagnostics import Diagnostics, Loc
from engine.cli import main
from engine.model.validate import validate_targets

REPO = Path(__file__).resolve().parent.parent
SOURCES = [REPO / "tests" / "rulesets" / name for name in ("mini-map", "mini-map-plus", "race")]
SECONDS_PER_EXAMPLE = 5.0  # generous for slow CI machines; a typical example takes ~0.2 s
# Examples per run, from the environment: CI runs the short default; a long run is
# `DAIMYO_FUZZ_EXAMPLES=20000 python -m pytest -q tests/test_validation_fuzz.py -x` (docs/limits.md).
EXAMPLES = int(os.environ.get("DAIMYO_FUZZ_EXAMPLES", "100"))

SCALARS = ["1", "-3.5", "x", "''", "null", "true", "[]", "{}", "[a, b]", "{a: 1}", "|", "&a", "*a",
           "!!str 1", "'", '"', "P1", "players", "1e999", "~", "- x", "? k"]
NOISE = [*"()[]{}:=.,'\"`#-+*/<>!@&|%\\\t", " ", "\n", "é", "\x00", "  ", ": ", "{{", "=>", "if "]

mutation = st.tuples(st.sampled_from(["delete", "duplicate", "replace", "swap", "retype", "noise",
                                      "swap_keys", "indent", "dedent"]),
                     st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))


def mutate(lines: list[str], op: str, a: int, b: int, c: int) -> list[str]:
    if not lines:
        return lines
    i, j = a % len(lines), b % len(lines)
    line = lines[i]
    if op == "delete":
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, line)
    elif op == "replace":
        lines[i] = lines[j]
    elif op == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "retype":
        value = SCALARS[c % len(SCALARS)]
        lines[i] = (line.split(": ", 1)[0] + ": " + value) if ": " in line else f"{line} {value}"
    elif op == "noise":
        at = c % (len(line) + 1)
        lines[i] = line[:at] + NOISE[b % len(NOISE)] + line[at:]
    elif op == "swap_keys" and ":" in line and ":" in lines[j]:
        (ka, ra), (kb, rb) = line.split(":", 1), lines[j].split(":", 1)
        lines[i] = ka[:len(ka) - len(ka.lstrip())] + kb.strip() + ":" + ra
        lines[j] = kb[:len(kb) - len(kb.lstrip())] + ka.strip() + ":" + rb
    elif op == "indent":
        lines[i] = "  " + line
    elif op == "dedent":
        lines[i] = line[2:]
    return lines


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 1000), mutation), min_size=1, max_size=4))
def test_mutated_rulesets_give_diagnostics_not_crashes(edits: list[tuple[int, tuple]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for src in SOURCES:
            shutil.copytree(src, root / src.name)
        files = sorted(root.rglob("*.yaml"))
        for pick, (op, a, b, c) in edits:
            path = files[pick % len(files)]
            lines = path.read_text(encoding="utf-8").split("\n")
            path.write_text("\n".join(mutate(lines, op, a, b, c)), encoding="utf-8")
        start = time.monotonic()
        diags, _ = validate_targets([str(root)])
        for d in diags:
            assert d.code[:1] in "YSDRGPFE" and len(d.code) == 4 and d.message
            assert d.severity in ("error", "warning")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["validate", "--format", "json", str(root)])
        assert status == (1 if diags.errors else 0)
        assert len(json.loads(out.getvalue())) == len(diags)
        assert time.monotonic() - start < SECONDS_PER_EXAMPLE


TOKENS = ["x", "player", "players", "P1", "1", "2.5", '"t"', "'{x}'", '"{"', "(", ")", "[", "]", "{", "}", ":",
          ",", ".", "+", "-", "*", "/", "//", "%", "==", "<", "and", "or", "not", "in", "if", "else", "for",
          "let", "=", "+=", "=>", "\n", "\n    ", "    ", "max", "count", "roll", "emit", "value", "run",
          "stop", "pass", "elif", "none", "true", "`A-b`", "#c", "\\", "\t", "score", "total"]


@settings(max_examples=8 * EXAMPLES, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.booleans())
def test_random_rule_text_compiles_or_gives_diagnostics(tokens: list[str], as_effect: bool) -> None:
    diags = Diagnostics()
    sym = Symbols(globals={"total"}, fields={"score"}, constants={"P1": "P1"})
    comp = Compiler(sym, diags)
    text = " ".join(tokens)
    loc = Loc("rules.yaml", 3, 9)
    fn = comp.effect(text, loc, {"player"}) if as_effect else comp.expression(text, loc, {"player"})
    assert (fn is None) == bool(diags.errors)
    for d in diags:
        assert d.code.startswith("D") and d.loc.file == "rules.yaml" and d.loc.line >= 3
