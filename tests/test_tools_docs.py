"""docs/reference/ is generated from the JSON Schemas and the DSL primitive declarations and kept current."""
from __future__ import annotations

import json
from pathlib import Path

from dsl.primitives import PRIMITIVES
from tools.docsgen import pages, schema_files, stale

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"


def test_the_reference_pages_are_current():
    bad = stale(REFERENCE)
    assert not bad, f"docs/reference is out of date ({', '.join(bad)}): run `daimyo docs` at the repository root"


def test_every_primitive_is_documented():
    text = pages()["primitives.md"]
    for name in PRIMITIVES:
        assert f"### {name}\n" in text


def test_every_schema_key_is_documented():
    generated = pages()
    for file, schema in schema_files():
        text = generated[file.replace(".schema.json", ".md")]
        for key in schema.get("properties", {}):
            assert f"| `{key}` |" in text, (file, key)
        for name in schema.get("$defs", {}):
            assert f"`{name}`" in text
        json.dumps(schema)  # the schema itself is plain JSON
