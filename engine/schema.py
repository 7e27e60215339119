"""Check loaded YAML against the JSON Schemas in schemas/, with located, plain-words errors."""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from engine.diagnostics import Diagnostics, Loc, did_you_mean
from engine.yamlio import loc_of

SCHEMA_FILES = {"manifest": "manifest.schema.json", "ruleset": "ruleset.schema.json"}
MAX_ERRORS_PER_FILE = 50


@lru_cache(maxsize=None)
def schema(kind: str) -> dict:
    text = resources.files("schemas").joinpath(SCHEMA_FILES[kind]).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(schema(kind))


def check_manifest(data: Any, file: str, diags: Diagnostics) -> bool:
    return _check("manifest", data, file, diags, "S")


def check_datafile(data: Any, file: str, diags: Diagnostics) -> bool:
    if not isinstance(data, dict):
        diags.add("S001", "a data file must be a mapping of sections (globals, kinds, steps, flow, ...)",
                  Loc(file, 1, 1))
        return False
    return _check("ruleset", data, file, diags, "S")


def _check(kind: str, data: Any, file: str, diags: Diagnostics, prefix: str) -> bool:
    errors = sorted(_validator(kind).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors[:MAX_ERRORS_PER_FILE]:
        code, message, hint, loc = _explain(err, data, file)
        diags.add(code, message, loc, hint=hint)
    if len(errors) > MAX_ERRORS_PER_FILE:
        diags.add("S099", f"{len(errors) - MAX_ERRORS_PER_FILE} more schema errors not shown", Loc(file))
    return not errors


def _locate(data: Any, path: list, file: str, key: bool = False) -> Loc:
    """The location of the value at `path` (or of its key), walking the loaded containers."""
    cur = data
    loc = Loc(file, 1, 1)
    for i, part in enumerate(path):
        try:
            last = i == len(path) - 1
            got = loc_of(cur, part, key=key and last)
            if got.line:
                loc = got
            cur = cur[part]
        except (KeyError, IndexError, TypeError):
            break
    return loc


def _where(path: list) -> str:
    return ".".join(str(p) for p in path) or "the file"


_TYPE_WORDS = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
               "object": "a mapping (key: value lines)", "array": "a list", "null": "nothing"}


def _explain(err: ValidationError, data: Any, file: str) -> tuple[str, str, str, Loc]:
    path = list(err.absolute_path)
    where = _where(path)
    v = err.validator
    if v == "additionalProperties":
        allowed = list((err.schema.get("properties") or {}).keys())
        extra = [k for k in err.instance if k not in allowed] if isinstance(err.instance, dict) else []
        key = extra[0] if extra else "?"
        loc = _locate(data, [*path, key], file, key=True)
        return ("S002", f"unknown key `{key}` in {where}", did_you_mean(str(key), allowed) or
                (f"allowed here: {', '.join(allowed)}" if allowed else ""), loc)
    loc = _locate(data, path, file)
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "?"
        return "S003", f"{where} needs `{missing}`", "", loc
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        words = " or ".join(_TYPE_WORDS.get(w, w) for w in want)
        return "S004", f"{where} must be {words}, not {_value_word(err.instance)}", "", loc
    if v == "enum":
        return ("S005", f"{where} cannot be `{err.instance}`",
                f"allowed: {', '.join(map(str, err.validator_value))}", loc)
    if v == "pattern" and "propertyNames" in str(err.schema_path):
        return "S006", f"`{err.instance}` is not a valid name (letters, digits and _)", "", loc
    if v == "pattern":
        return "S006", f"{where}: `{err.instance}` does not have the expected form", \
            f"it must match {err.validator_value}", loc
    if v in ("oneOf", "anyOf"):
        return "S007", f"{where} has an unexpected shape", _shape_hint(err), loc
    if v in ("minimum", "maximum", "minItems", "maxItems", "minLength"):
        return "S008", f"{where}: {err.message}", "", loc
    return "S009", f"{where}: {err.message}", "", loc


def _value_word(x: Any) -> str:
    if isinstance(x, bool):
        return "true/false"
    if x is None:
        return "empty"
    if isinstance(x, int):
        return f"the number {x}"
    if isinstance(x, float):
        return f"the number {x}"
    if isinstance(x, str):
        return f"the text `{x[:40]}`"
    if isinstance(x, list):
        return "a list"
    return "a mapping"


def _shape_hint(err: ValidationError) -> str:
    if err.context:
        best = min(err.context, key=lambda e: len(list(e.absolute_path)))
        return best.message[:200]
    return ""
