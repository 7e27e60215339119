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
from collections.abc import Callable, Iterator
from typing import Any

from engine.base.record import Record

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "default", "examples", "$comment"}
KEYWORDS = {"type", "enum", "properties", "additionalProperties", "required", "propertyNames", "pattern",
            "items", "minItems", "maxItems", "minimum", "maximum", "minLength", "oneOf", "anyOf", "not",
            "$ref"}


class SchemaError(Record):
    """One way an instance breaks a schema (the fields engine/schema.py reads)."""

    FIELDS = ("validator", "validator_value", "instance", "schema", "message", "absolute_path", "relative_path",
              "schema_path", "relative_schema_path", "context")

    def __init__(self, validator: str, validator_value: Any, instance: Any, schema: dict, message: str,
                 absolute_path: list | None = None, relative_path: list | None = None,
                 schema_path: list | None = None, relative_schema_path: list | None = None,
                 context: list[SchemaError] | None = None) -> None:
        self.validator = validator
        self.validator_value = validator_value
        self.instance = instance
        self.schema = schema
        self.message = message
        self.absolute_path = [] if absolute_path is None else absolute_path
        self.relative_path = [] if relative_path is None else relative_path
        self.schema_path = [] if schema_path is None else schema_path
        self.relative_schema_path = [] if relative_schema_path is None else relative_schema_path
        self.context = [] if context is None else context


def _is_type(x: Any, t: str) -> bool:
    test = _TYPE_TESTS.get(t)
    if test is None:
        raise ValueError(f"unknown JSON type {t!r}")
    return test(x)


def _yes(x: Any) -> bool:
    return True


def _no(x: Any) -> bool:
    return False


_PLAIN_TYPES = {"object": dict, "array": list, "string": str}
# JSON's types (true is not a number)
_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": lambda x: not isinstance(x, bool) and (isinstance(x, int) or (isinstance(x, float) and x.is_integer())),
    "number": lambda x: not isinstance(x, bool) and isinstance(x, (int, float)),
}


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
        self._valid: Callable[[Any], bool] | None = None  # made on first use (see `_test`)

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
        if self._valid is None:
            self._compiled: dict[int, Callable[[Any], bool]] = {}
            self._valid = self._test(self.root)
        return self._valid(instance)

    def _test(self, s: Any) -> Callable[[Any], bool]:
        """The yes/no check of one schema node as a closure, made once: each keyword looked up
        here rather than for every value checked. One branch per keyword, as in `_errors`."""
        got = self._compiled.get(id(s))
        if got is not None:
            return got
        if s is True or (isinstance(s, dict) and not s):
            return _yes
        if s is False:
            return _no
        later: list[Callable[[Any], bool]] = []  # a $ref back to a node being made: its test, once made

        def forward(x: Any) -> bool:
            return later[0](x)
        self._compiled[id(s)] = forward
        test = self._make(s)
        later.append(test)
        self._compiled[id(s)] = test
        return test

    def _make(self, s: dict) -> Callable[[Any], bool]:
        test = self._test
        ref = test(self._resolve(s["$ref"])) if s.get("$ref") is not None else None
        t = s.get("type")
        types = None if t is None else tuple(_TYPE_TESTS[ty] for ty in (t if isinstance(t, list) else [t]))
        plain = _PLAIN_TYPES.get(t) if isinstance(t, str) else None  # one type tested by isinstance alone
        if plain is not None:
            types = None
        enum = s.get("enum")
        required = tuple(s.get("required", ()))
        props = {k: test(v) for k, v in (s.get("properties") or {}).items()}
        names = test(s["propertyNames"]) if s.get("propertyNames") is not None else None
        extra = s.get("additionalProperties", True)
        no_extra = extra is False
        extra_test = test(extra) if isinstance(extra, dict) else None
        objects = bool(required or props or names or no_extra or extra_test)
        min_items, max_items = s.get("minItems"), s.get("maxItems")
        items = test(s["items"]) if isinstance(s.get("items"), dict) else None
        arrays = min_items is not None or max_items is not None or items is not None
        pattern = self._regex(s["pattern"]).search if "pattern" in s else None
        min_length = s.get("minLength")
        minimum, maximum = s.get("minimum"), s.get("maximum")
        any_of = tuple(test(sub) for sub in s["anyOf"]) if "anyOf" in s else None
        one_of = tuple(test(sub) for sub in s["oneOf"]) if "oneOf" in s else None
        not_ = test(s["not"]) if "not" in s else None

        def ok(x: Any) -> bool:
            if ref is not None and not ref(x):
                return False
            if plain is not None and not isinstance(x, plain):
                return False
            if types is not None and not any(is_type(x) for is_type in types):
                return False
            if enum is not None and not any(_equal(x, v) for v in enum):
                return False
            if isinstance(x, dict):
                if objects:
                    for name in required:
                        if name not in x:
                            return False
                    for k, v in x.items():
                        if names is not None and not names(k):
                            return False
                        check = props.get(k)
                        if check is not None:
                            if not check(v):
                                return False
                        elif no_extra or (extra_test is not None and not extra_test(v)):
                            return False
            elif isinstance(x, list):
                if arrays:
                    if (min_items is not None and len(x) < min_items) or (max_items is not None and len(x) > max_items):
                        return False
                    if items is not None and not all(items(v) for v in x):
                        return False
            elif isinstance(x, str):
                if (pattern is not None and not pattern(x)) or (min_length is not None and len(x) < min_length):
                    return False
            elif isinstance(x, (int, float)) and not isinstance(x, bool) and (
                    (minimum is not None and x < minimum) or (maximum is not None and x > maximum)):
                return False
            if any_of is not None and not any(sub(x) for sub in any_of):
                return False
            if one_of is not None and sum(1 for sub in one_of if sub(x)) != 1:
                return False
            return not (not_ is not None and not_(x))
        return ok

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
