"""engine/base/record.py: the plain classes that stand in for dataclasses on the validate path.
Each subclass names its fields twice (FIELDS and its __init__): these tests keep the two in
step, so that equality, repr and `replace` never silently leave a field out."""
from __future__ import annotations

import inspect

import pytest

import dsl.compiler
import dsl.primitives
import engine.base.diagnostics
import engine.loading.layering
import engine.loading.package
import engine.loading.schemacheck
import engine.model.flow
import engine.model.ruleset
import engine.model.unused
from engine.base.diagnostics import Loc
from engine.base.record import FrozenRecord, Record, replace


def _records(cls: type = Record) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        if sub is not FrozenRecord:
            out.append(sub)
        out.extend(_records(sub))
    return out


MODULES = (dsl.compiler, dsl.primitives, engine.base.diagnostics, engine.loading.layering,  # each defines records
           engine.loading.package, engine.loading.schemacheck, engine.model.flow, engine.model.ruleset,
           engine.model.unused)
RECORDS = _records()


def test_the_validate_path_records_are_all_found() -> None:
    names = {c.__name__ for c in RECORDS}
    assert {c.__module__ for c in RECORDS} <= {m.__name__ for m in MODULES}
    assert {"Loc", "Diagnostic", "Model", "Kind", "Node", "Combo", "Package", "Symbols", "Primitive"} <= names


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__qualname__)
def test_fields_are_the_init_parameters_in_order(cls: type) -> None:
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    assert list(cls.FIELDS) == params
    for narrowed in (cls.COMPARE, cls.REPR):
        assert narrowed is None or set(narrowed) <= set(cls.FIELDS)


def test_a_frozen_record_compares_hashes_and_replaces_like_a_frozen_dataclass() -> None:
    a = Loc("rules.yaml", 3, 5)
    b = Loc("rules.yaml", 3, 5)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    moved = replace(a, line=4)
    assert moved != a and moved.line == 4 and moved.file == "rules.yaml" and a.line == 3
    with pytest.raises(AttributeError):
        a.line = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        replace(a, colour="red")
    assert "line=3" in repr(a)
