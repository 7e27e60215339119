"""Check loaded YAML against the JSON Schemas in schemas/, with located, plain-words errors.

The checking itself is engine/schemacheck.py (the keywords our schemas use); this module
turns each schema error into a diagnostic a modder understands (codes S001-S099)."""
from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.files import package_dir
from engine.loading.schemacheck import Checker
from engine.loading.schemacheck import SchemaError as ValidationError
from engine.loading.yamlio import loc_of

SCHEMA_FILES = {"manifest": "manifest.schema.json", "ruleset": "ruleset.schema.json",
                "scenario": "scenario.schema.json"}
MAX_ERRORS_PER_FILE = 50


@cache
def schema(kind: str) -> dict:
    text = (package_dir("schemas") / SCHEMA_FILES[kind]).read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _validator(kind: str) -> Checker:
    return Checker(schema(kind))


def check_manifest(data: Any, file: str, diags: Diagnostics) -> bool:
    return _check("manifest", data, file, diags, "S")


def check_datafile(data: Any, file: str, diags: Diagnostics) -> bool:
    if not isinstance(data, dict):
        diags.add("S001", "a data file must be a mapping of sections (globals, kinds, steps, flow, ...)",
                  Loc(file, 1, 1))
        return False
    return _check("ruleset", data, file, diags, "S")


def check_scenario(data: Any, file: str, diags: Diagnostics) -> bool:
    return _check("scenario", data, file, diags, "S")


def _check(kind: str, data: Any, file: str, diags: Diagnostics, prefix: str) -> bool:
    return check_data(kind, data, diags, lambda path, key: _locate(data, path, file, key))


Locator = Callable[[list, bool], Loc]


def check_data(kind: str, data: Any, diags: Diagnostics, locate: Locator, note: str = "") -> bool:
    """Check `data` against schema `kind`; `locate(path, key)` says where the value (or key)
    at a path is written. `note` starts every message. True when there is no problem."""
    try:
        if _validator(kind).is_valid(data):  # the common case, without building any error
            return True
        errors = sorted(_validator(kind).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:  # pragma: no cover - the YAML reader bounds nesting far below this
        diags.add("S009", f"{note}the data is nested too deeply to check", locate([], False))
        return False
    for err in errors[:MAX_ERRORS_PER_FILE]:
        code, message, hint, loc = _explain(err, locate)
        diags.add(code, note + message, loc, hint=hint)
    if len(errors) > MAX_ERRORS_PER_FILE:
        loc = locate([], False)
        diags.add("S099", f"{note}{len(errors) - MAX_ERRORS_PER_FILE} more schema errors not shown",
                  Loc(loc.file))
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


def _explain(err: ValidationError, locate: Locator) -> tuple[str, str, str, Loc]:
    path = list(err.absolute_path)
    where = _where(path)
    v = err.validator
    if v == "additionalProperties":
        allowed = list((err.schema.get("properties") or {}).keys())
        extra = [k for k in err.instance if k not in allowed] if isinstance(err.instance, dict) else []
        key = extra[0] if extra else "?"
        loc = locate([*path, key], True)
        return ("S002", f"unknown key `{key}` in {where}", did_you_mean(str(key), allowed) or
                (f"allowed here: {', '.join(allowed)}" if allowed else ""), loc)
    loc = locate(path, False)
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "?"
        return "S003", f"{where} needs `{missing}`", "", loc
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        words = " or ".join(_TYPE_WORDS.get(w, w) for w in want)
        hint = "nothing is written after the `:`; a value starting with # must be quoted (an unquoted # " \
            "starts a comment)" if err.instance is None else ""
        return "S004", f"{where} must be {words}, not {_value_word(err.instance)}", hint, loc
    if v == "enum":
        allowed = [v for v in err.validator_value if v is not None or "none" not in err.validator_value]
        return ("S005", f"{where} cannot be `{err.instance}`",
                f"allowed: {', '.join('null' if v is None else str(v) for v in allowed)}", loc)
    if v == "pattern" and "propertyNames" in err.schema_path:
        # The error's path is the mapping; point at the offending key itself.
        loc = locate([*path, err.instance], True)
        return "S006", f"`{err.instance}` is not a valid name (letters, digits and _)", \
            "names start with a letter or _ and use only letters, digits and _", loc
    if v == "pattern":
        return "S006", f"{where}: `{err.instance}` does not have the expected form", \
            f"it must match {err.validator_value}", loc
    if v in ("oneOf", "anyOf"):
        return _explain_alternatives(err, where, loc, locate)
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


def _explain_alternatives(err: ValidationError, where: str, loc: Loc,
                          locate: Locator) -> tuple[str, str, str, Loc]:
    """A value that fits none of several forms: say what is wrong with the form it was
    closest to (the one whose type it has), else which types would do."""
    if not err.context:  # oneOf matched more than one form
        return "S007", f"{where} fits more than one form", \
            "give exactly one of the alternative keys (e.g. one of replace, merge, remove, insert)", loc
    by_alt: dict[Any, list[ValidationError]] = {}
    for e in err.context:
        by_alt.setdefault(e.relative_schema_path[0] if e.relative_schema_path else 0, []).append(e)
    wanted: list[str] = []
    candidates: list[list[ValidationError]] = []
    for errors in by_alt.values():
        top_type = [e for e in errors if e.validator == "type" and not e.relative_path]
        if top_type:
            want = top_type[0].validator_value
            wanted.extend(w for w in (want if isinstance(want, list) else [want]) if w not in wanted)
        else:
            candidates.append(errors)
    if not candidates:
        words = " or ".join(_TYPE_WORDS.get(w, w) for w in wanted)
        hint = "nothing is written after the `:`; a value starting with # must be quoted (an unquoted # " \
            "starts a comment)" if err.instance is None else ""
        return "S004", f"{where} must be {words}, not {_value_word(err.instance)}", hint, loc
    # The closest form: the fewest problems, then the deepest one (it says the most).
    errors = min(candidates, key=lambda es: (all(e.validator == "not" for e in es), len(es),
                                             -max(len(e.absolute_path) for e in es)))
    best = max(errors, key=lambda e: (e.validator not in ("not", "oneOf", "anyOf"), len(e.absolute_path)))
    if best.validator == "not":
        return "S007", f"{where} has an unexpected shape", best.message[:200], loc
    return _explain(best, locate)
