"""The JSON Schemas are what editors show while a modder types: every property explains
itself, and closed records reject unknown keys (so a typo is an error, not ignored). The
fast checker that `daimyo validate` uses (engine/schemacheck.py) gives the same verdicts as
the reference `jsonschema` implementation, on every ruleset file and on mutated ones."""
from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

SCHEMAS = sorted((Path(__file__).resolve().parent.parent / "schemas").glob("*.schema.json"))


def walk(node: Any, path: str = "#") -> Iterator[tuple[str, dict, str]]:
    """(path, schema, role) for every subschema; role says how its parent uses it."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in ("properties", "$defs"):
            for name, sub in value.items():
                yield f"{path}/{key}/{name}", sub, key
                yield from walk(sub, f"{path}/{key}/{name}")
        elif key in ("additionalProperties", "items", "not", "propertyNames") and isinstance(value, dict):
            yield f"{path}/{key}", value, key
            yield from walk(value, f"{path}/{key}")
        elif key in ("oneOf", "anyOf", "allOf"):
            for i, sub in enumerate(value):
                yield f"{path}/{key}/{i}", sub, key
                yield from walk(sub, f"{path}/{key}/{i}")


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema.get("description")


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_property_definition_and_map_entry_has_a_description(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    missing = [p for p, sub, role in walk(schema)
               if role in ("properties", "$defs") or (role == "additionalProperties" and len(sub) > 0)
               if not sub.get("description")]
    assert not missing, "no description: " + ", ".join(missing)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_closed_records_reject_unknown_keys(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    records = [("#", schema)] + [(p, sub) for p, sub, _ in walk(schema)]
    open_records = [p for p, sub in records if "properties" in sub and sub.get("additionalProperties") is not False]
    assert not open_records, "a record that lists its properties must set additionalProperties: false: " + \
        ", ".join(open_records)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_editors_that_know_only_draft_07_apply_the_same_checks(path: Path) -> None:
    """Draft-07 ignores the siblings of `$ref`: allow only a description there, and no keyword
    that draft-07 does not have (see docs/editor-setup.md)."""
    schema = json.loads(path.read_text(encoding="utf-8"))
    later = {"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
             "dependentSchemas", "$dynamicRef", "$anchor", "minContains", "maxContains"}
    for p, sub, _ in [("#", schema, "root"), *walk(schema)]:
        if "$ref" in sub:
            assert set(sub) <= {"$ref", "description"}, p
        assert not later & set(sub), p


# ---- engine/schemacheck.py agrees with the reference implementation ----

REPO = Path(__file__).resolve().parent.parent


def _documents() -> list[tuple[str, str, Any]]:
    from engine.base.diagnostics import Diagnostics
    from engine.loading.yamlio import load_yaml
    out = []
    for folder in ("rulesets", "tests/rulesets", "tests/broken"):
        for path in sorted((REPO / folder).rglob("*.yaml")):
            data = load_yaml(path, Diagnostics())
            if data is not None:
                kind = "manifest" if path.name == "ruleset.yaml" else "ruleset"
                out.append((str(path.relative_to(REPO)), kind, data))
    return out


def _both(kind: str, data: Any) -> tuple[list, list]:
    from engine.loading.schema import _validator, schema
    ours = sorted({tuple(map(str, e.absolute_path)) for e in _validator(kind).iter_errors(data)})
    theirs = sorted({tuple(map(str, e.absolute_path)) for e in Draft202012Validator(schema(kind)).iter_errors(data)})
    assert _validator(kind).is_valid(data) == (not ours)  # the fast verdict check_data asks first
    return ours, theirs


def test_the_fast_checker_agrees_with_jsonschema_on_every_file() -> None:
    docs = _documents()
    assert len(docs) > 100
    for name, kind, data in docs:
        ours, theirs = _both(kind, data)
        assert ours == theirs, name


_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) |
                     st.sampled_from(["", "x", "all", "none", "a-b", "3", "P1", "turn", "do"]),
                     lambda inner: st.lists(inner, max_size=3) |
                     st.dictionaries(st.sampled_from(["id", "name", "do", "on", "when", "flow", "step",
                                                      "value", "layer", "params", "spaces", "x", "visible",
                                                      "default", "values", "min", "max", "insert", "after"]),
                                     inner, max_size=3), max_leaves=8)


@cache
def _sample() -> list[tuple[str, str, Any]]:
    return _documents()[::5]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_fast_checker_agrees_with_jsonschema_on_mutated_files(data: st.DataObject) -> None:
    name, kind, doc = data.draw(st.sampled_from(_sample()))
    doc = json.loads(json.dumps(doc))  # plain data we may change
    node = doc
    for _ in range(data.draw(st.integers(0, 4))):  # walk down to a random mapping or list
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        inner = [c for c in children if isinstance(c, (dict, list)) and c]
        if not inner:
            break
        node = data.draw(st.sampled_from(inner))
    if isinstance(node, dict):
        node[data.draw(st.sampled_from([*node, "extra"]))] = data.draw(_json)
    elif isinstance(node, list) and node:
        node[data.draw(st.integers(0, len(node) - 1))] = data.draw(_json)
    ours, theirs = _both(kind, doc)
    assert ours == theirs, name
