"""A small, fast JSON Schema checker for the keywords daimyo's schemas use.

`daimyo validate` checks every data file against schemas/*.schema.json. The `jsonschema`
package does this correctly but slowly for our purpose (its import alone costs more than
reading a ruleset), so this module implements exactly the keywords our schemas use, with
draft 2020-12 meaning: type, enum, properties, additionalProperties, required,
propertyNames, pattern, items, minItems, maxItems, minimum, maximum, minLength, oneOf,
anyOf, not and local `$ref`s (`#/$defs/...`). Annotations (`description`, `title`...) are
ignored. A schema using any other keyword is refused when the checker is built, so a new
keyword cannot be silently skipped; tests/test_schemas.py compares the verdicts with
`jsonschema` on every fixture and on mutated files.

Errors look like jsonschema's (`validator`, `validator_value`, `instance`, `schema`,
`absolute_path`, `relative_path`, `schema_path`, `relative_schema_path`, `context`,
`message`), which is what engine/schema.py explains to modders.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "default", "examples", "$comment"}
KEYWORDS = {"type", "enum", "properties", "additionalProperties", "required", "propertyNames", "pattern",
            "items", "minItems", "maxItems", "minimum", "maximum", "minLength", "oneOf", "anyOf", "not",
            "$ref"}


@dataclass
class SchemaError:
    """One way an instance breaks a schema (the fields engine/schema.py reads)."""

    validator: str
    validator_value: Any
    instance: Any
    schema: dict
    message: str
    absolute_path: list = field(default_factory=list)
    relative_path: list = field(default_factory=list)
    schema_path: list = field(default_factory=list)
    relative_schema_path: list = field(default_factory=list)
    context: list[SchemaError] = field(default_factory=list)


def _is_type(x: Any, t: str) -> bool:
    if t == "object":
        return isinstance(x, dict)
    if t == "array":
        return isinstance(x, list)
    if t == "string":
        return isinstance(x, str)
    if t == "boolean":
        return isinstance(x, bool)
    if t == "null":
        return x is None
    if isinstance(x, bool):
        return False
    if t == "integer":
        return isinstance(x, int) or (isinstance(x, float) and x.is_integer())
    if t == "number":
        return isinstance(x, (int, float))
    raise ValueError(f"unknown JSON type {t!r}")


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


class Checker:
    """Checks instances against one schema document."""

    def __init__(self, schema: dict):
        self.root = schema
        self._patterns: dict[str, re.Pattern] = {}
        self._check_keywords(schema, "#")

    def _check_keywords(self, node: Any, where: str) -> None:
        if not isinstance(node, dict):
            if isinstance(node, bool):
                return
            raise ValueError(f"{where}: a schema must be an object")
        unknown = set(node) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise ValueError(f"{where}: keyword(s) {sorted(unknown)} are not supported by engine/schemacheck.py")
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and ref.startswith("#/")):
            raise ValueError(f"{where}: only local $refs (#/...) are supported")
        for key in ("properties", "$defs"):
            for name, sub in (node.get(key) or {}).items():
                self._check_keywords(sub, f"{where}/{key}/{name}")
        for key in ("additionalProperties", "items", "not", "propertyNames"):
            if isinstance(node.get(key), dict):
                self._check_keywords(node[key], f"{where}/{key}")
        for key in ("oneOf", "anyOf"):
            for i, sub in enumerate(node.get(key) or []):
                self._check_keywords(sub, f"{where}/{key}/{i}")

    def _resolve(self, ref: str) -> dict:
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _regex(self, pattern: str) -> re.Pattern:
        got = self._patterns.get(pattern)
        if got is None:
            got = self._patterns[pattern] = re.compile(pattern)
        return got

    def is_valid(self, instance: Any) -> bool:
        """Whether `iter_errors` would find nothing: the same verdict, without building errors
        (most files are valid, and this is several times faster than collecting none)."""
        return self._ok(instance, self.root)

    def _ok(self, x: Any, s: Any) -> bool:  # one branch per keyword, as in _errors
        if s is True:
            return True
        if s is False:
            return False
        if not s:
            return True
        ref = s.get("$ref")
        if ref is not None and not self._ok(x, self._resolve(ref)):
            return False
        t = s.get("type")
        if t is not None and not (any(_is_type(x, ty) for ty in t) if isinstance(t, list) else _is_type(x, t)):
            return False
        if "enum" in s and not any(_equal(x, v) for v in s["enum"]):
            return False
        if isinstance(x, dict):
            if any(name not in x for name in s.get("required", ())):
                return False
            props = s.get("properties") or {}
            names = s.get("propertyNames")
            extra = s.get("additionalProperties", True)
            for k, v in x.items():
                if names is not None and not self._ok(k, names):
                    return False
                if k in props:
                    if not self._ok(v, props[k]):
                        return False
                elif extra is False or (isinstance(extra, dict) and not self._ok(v, extra)):
                    return False
        elif isinstance(x, list):
            if ("minItems" in s and len(x) < s["minItems"]) or ("maxItems" in s and len(x) > s["maxItems"]):
                return False
            items = s.get("items")
            if isinstance(items, dict) and not all(self._ok(v, items) for v in x):
                return False
        elif isinstance(x, str):
            if ("pattern" in s and not self._regex(s["pattern"]).search(x)) or \
                    ("minLength" in s and len(x) < s["minLength"]):
                return False
        elif isinstance(x, (int, float)) and not isinstance(x, bool) and (
                ("minimum" in s and x < s["minimum"]) or ("maximum" in s and x > s["maximum"])):
            return False
        if "anyOf" in s and not any(self._ok(x, sub) for sub in s["anyOf"]):
            return False
        if "oneOf" in s and sum(1 for sub in s["oneOf"] if self._ok(x, sub)) != 1:
            return False
        return not ("not" in s and self._ok(x, s["not"]))

    def iter_errors(self, instance: Any) -> Iterator[SchemaError]:
        yield from self._errors(instance, self.root, [], [])

    def _errors(self, x: Any, s: Any, path: list, spath: list) -> Iterator[SchemaError]:
        if s is True or s == {}:
            return
        if s is False:
            yield SchemaError("false", False, x, {}, f"{x!r} is not allowed here", list(path), [], list(spath), [])
            return

        def err(kw: str, message: str, context: list | None = None) -> SchemaError:
            return SchemaError(kw, s[kw], x, s, message, list(path), [], [*spath, kw], [kw], context or [])

        if "$ref" in s:
            for e in self._errors(x, self._resolve(s["$ref"]), path, [*spath, "$ref"]):
                e.relative_schema_path = ["$ref", *e.relative_schema_path]
                yield e
        t = s.get("type")
        if t is not None:
            types = t if isinstance(t, list) else [t]
            if not any(_is_type(x, ty) for ty in types):
                yield err("type", f"{x!r} is not of type {', '.join(map(repr, types))}")
                return  # like jsonschema, other keywords still apply, but they only add noise here
        if "enum" in s and not any(_equal(x, v) for v in s["enum"]):
            yield err("enum", f"{x!r} is not one of {s['enum']!r}")
        if isinstance(x, dict):
            yield from self._object(x, s, path, spath, err)
        elif isinstance(x, list):
            yield from self._array(x, s, path, spath, err)
        elif isinstance(x, str):
            if "pattern" in s and not self._regex(s["pattern"]).search(x):
                yield err("pattern", f"{x!r} does not match {s['pattern']!r}")
            if "minLength" in s and len(x) < s["minLength"]:
                yield err("minLength", f"{x!r} is too short")
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            if "minimum" in s and x < s["minimum"]:
                yield err("minimum", f"{x!r} is less than the minimum of {s['minimum']!r}")
            if "maximum" in s and x > s["maximum"]:
                yield err("maximum", f"{x!r} is greater than the maximum of {s['maximum']!r}")
        for kw in ("anyOf", "oneOf"):
            if kw not in s:
                continue
            context: list[SchemaError] = []
            valid = 0
            for i, sub in enumerate(s[kw]):
                errors = list(self._errors(x, sub, path, [*spath, kw, i]))
                for e in errors:
                    e.relative_schema_path = [i, *e.relative_schema_path]
                    e.relative_path = e.absolute_path[len(path):]
                context.extend(errors)
                if not errors:
                    valid += 1
                    if kw == "anyOf":
                        break
            if valid == 0:
                yield err(kw, f"{x!r} is not valid under any of the given schemas", context)
            elif kw == "oneOf" and valid > 1:
                yield err(kw, f"{x!r} is valid under each of more than one of the given schemas")
        if "not" in s and next(self._errors(x, s["not"], path, [*spath, "not"]), None) is None:
            yield err("not", f"{x!r} should not be valid under {s['not']!r}")

    def _object(self, x: dict, s: dict, path: list, spath: list, err: Any) -> Iterator[SchemaError]:
        for name in s.get("required", ()):
            if name not in x:
                yield err("required", f"{name!r} is a required property")
        props = s.get("properties") or {}
        names = s.get("propertyNames")
        extra = s.get("additionalProperties", True)
        unknown = []
        for k, v in x.items():
            if names is not None:
                for e in self._errors(k, names, path, [*spath, "propertyNames"]):
                    e.relative_schema_path = ["propertyNames", *e.relative_schema_path]
                    yield e
            if k in props:
                yield from self._errors(v, props[k], [*path, k], [*spath, "properties", k])
            elif extra is False:
                unknown.append(k)
            elif isinstance(extra, dict):
                yield from self._errors(v, extra, [*path, k], [*spath, "additionalProperties"])
        if unknown:
            shown = ", ".join(repr(k) for k in unknown)
            yield err("additionalProperties", f"Additional properties are not allowed ({shown} "
                      f"{'was' if len(unknown) == 1 else 'were'} unexpected)")

    def _array(self, x: list, s: dict, path: list, spath: list, err: Any) -> Iterator[SchemaError]:
        if "minItems" in s and len(x) < s["minItems"]:
            yield err("minItems", f"{x!r} should be non-empty" if s["minItems"] == 1 else f"{x!r} is too short")
        if "maxItems" in s and len(x) > s["maxItems"]:
            yield err("maxItems", f"{x!r} is too long")
        items = s.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(x):
                yield from self._errors(v, items, [*path, i], [*spath, "items"])
