"""Compile rule text (expressions and effects) into Python closures, once, at load time.

Every name is resolved here against the ruleset's declarations (`Symbols`): locals,
state globals, constants and entity ids, functions, procedures, events, modifiers, steps
and the whitelisted primitives. Unknown names are located diagnostics with a
"did you mean" hint. The closures reach only the evaluation context (`Ctx`): no Python
attribute access, no imports, no builtins. At play time no parsing happens.
"""
from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, ClassVar

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from dsl.primitives import PRIMITIVES, describe
from dsl.runtime import Ctx, RuleError, Stop, copy_value, writable
from engine.diagnostics import Diagnostics, Loc, did_you_mean

Fn = Callable[[Ctx], Any]
MAX_SOURCE = 100_000  # characters in one rule text
MAX_CALL_DEPTH = 200
MAX_SEQUENCE = 1_000_000  # items in a list or characters in a text built by `*`


class _Indent(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types: ClassVar[list[str]] = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types: ClassVar[list[str]] = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


@lru_cache(maxsize=1)
def parser() -> Lark:
    grammar = resources.files("dsl").joinpath("daimyo.lark").read_text(encoding="utf-8")
    # cache=True keeps the analysed grammar in the temp folder: building it takes ~0.3 s,
    # loading it ~15 ms, and every `daimyo` command that reads a ruleset pays this once.
    return Lark(grammar, parser="lalr", postlex=_Indent(), start=["effect", "expression"],
                propagate_positions=True, maybe_placeholders=False, cache=True)


_PARSED: dict[tuple[str, str], Tree | UnexpectedInput] = {}
MAX_PARSED = 50_000


def parse(text: str, start: str) -> Tree:
    """The parse tree of a rule text, remembered: validation builds a ruleset once per option
    value and combo, and most texts are the same each time. Trees are never changed by the
    compiler, and their positions are relative to the text, so sharing them is safe."""
    key = (text, start)
    got = _PARSED.get(key)
    if got is None:
        try:
            got = parser().parse(text, start=start)
        except UnexpectedInput as e:
            got = e
        if len(_PARSED) >= MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = got
    if isinstance(got, UnexpectedInput):
        raise got
    return got


# Within `compile_cache()`, compiled texts are remembered by (declarations, text, place,
# scope): validation builds each combo once per option value that gates files, and the
# builds share almost all of their texts and declarations.
_COMPILED: ContextVar[dict | None] = ContextVar("daimyo_compile_cache", default=None)


@contextmanager
def compile_cache() -> Iterator[None]:
    """Within this block, a text compiled against the same declarations is compiled once.

    For validation only: the models built inside share closures (and the constants those
    captured), so they must not be played."""
    token = _COMPILED.set({})
    try:
        yield
    finally:
        _COMPILED.reset(token)


@dataclass
class Callable_:
    """A user function, procedure, event, modifier or step as the compiler sees it."""

    params: tuple[str, ...]
    loc: Loc = field(default_factory=Loc)


@dataclass
class Symbols:
    """What names mean in a ruleset. Built by the loader from the declarations."""

    globals: set[str] = field(default_factory=set)
    constants: dict[str, Any] = field(default_factory=dict)  # name -> value (ids map to themselves)
    fields: set[str] = field(default_factory=set)  # dynamic fields of any kind
    statics: set[str] = field(default_factory=set)  # static attributes of any entity
    collections: dict[str, str] = field(default_factory=dict)  # name -> kind (all entities of it)
    functions: dict[str, Callable_] = field(default_factory=dict)
    procedures: dict[str, Callable_] = field(default_factory=dict)
    events: dict[str, Callable_] = field(default_factory=dict)
    modifiers: dict[str, Callable_] = field(default_factory=dict)
    steps: dict[str, Callable_] = field(default_factory=dict)
    option_names: set[str] = field(default_factory=set)  # keys of `options` (values are read at play time)

    def all_names(self) -> list[str]:
        return [*self.globals, *self.constants, *self.collections, *BUILTIN_NAMES]

    def known_keys(self) -> set[str]:
        keys: set[str] = set()

        def walk(v: Any, depth: int = 0) -> None:
            if depth > 8:
                return
            if isinstance(v, dict):
                for k, x in v.items():
                    keys.add(str(k))
                    walk(x, depth + 1)
            elif isinstance(v, list):
                for x in v[:200]:
                    walk(x, depth + 1)
        for v in self.constants.values():
            walk(v)
        return keys | self.option_names


# Names every ruleset has; their values come from the state.
BUILTIN_NAMES = {
    "players": lambda c: c.state["players"],
    "num_players": lambda c: len(c.state["players"]),
    "spaces": lambda c: list(c.model.board.spaces) if c.model.board else [],
    "options": lambda c: copy_value(c.model.combo.options),
}
BUILTIN_ATTRS = {"id", "kind", "region"}
SPECIAL_FORMS = {"value", "emit", "run"}

_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def _add(x: Any, y: Any) -> Any:
    # Doubling a list or a text in a loop reaches any size in a few steps: bound it.
    if type(x) in (str, list) and type(y) is type(x) and len(x) + len(y) > MAX_SEQUENCE:
        raise RuleError(f"this would make a list or text of more than {MAX_SEQUENCE:,} items")
    return x + y


def _mul(x: Any, y: Any) -> Any:
    seq, n = (x, y) if isinstance(x, (str, list)) else (y, x)
    if isinstance(seq, (str, list)) and isinstance(n, int) and len(seq) * n > MAX_SEQUENCE:
        raise RuleError(f"this would make a list or text of more than {MAX_SEQUENCE:,} items")
    if type(x) is int and type(y) is int and x.bit_length() + y.bit_length() > 4096:
        raise RuleError("this number is too large (more than 1,000 digits)")
    return x * y


_ARITH = {"+": _add, "-": operator.sub, "*": _mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod}
_INTERP = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


class _Reported(Exception):
    """Compilation stops; the diagnostic was already added."""


class _CompileError(Exception):
    def __init__(self, code: str, message: str, loc: Loc, hint: str = ""):
        super().__init__(message)
        self.code, self.message, self.loc, self.hint = code, message, loc, hint


class Compiler:
    """Compiles rule texts of one ruleset. Errors go to `diags`; failed texts compile to None."""

    def __init__(self, symbols: Symbols, diags: Diagnostics):
        self.sym = symbols
        self.diags = diags
        self._keys: set[str] | None = None
        self._meanings: dict[str, tuple] = {}
        self._used: set[str] | None = None  # names looked up while compiling one text (for the memo)

    # ---- public entry points ----

    def expression(self, src: Any, loc: Loc, local_names: tuple[str, ...] | set[str] = (),
                   what: str = "expression") -> Fn | None:
        """Compile a side-effect-free expression (a condition, a value)."""
        if isinstance(src, bool) or src is None or isinstance(src, (int, float)):
            value = src
            return lambda c: value
        return self._compile(str(src), loc, "expression", set(local_names), pure=True, what=what)

    def effect(self, src: Any, loc: Loc, local_names: tuple[str, ...] | set[str] = (),
               what: str = "effect") -> Fn | None:
        """Compile an effect (statements that change the state)."""
        return self._compile(str(src), loc, "effect", set(local_names), pure=False, what=what)

    # ---- driver ----

    def _compile(self, src: str, loc: Loc, start: str, local_names: set[str], pure: bool,
                 what: str) -> Fn | None:
        memo = _COMPILED.get()
        if memo is None:
            return self._compile_text(src, loc, start, local_names, pure, what)
        # The same text, at the same place, compiles to the same closure wherever each name it
        # looked up means the same: reuse it.
        key = (src, loc, start, frozenset(local_names), pure, what)
        known = memo.setdefault(key, [])
        for names, meanings, fn in known:
            if tuple(map(self._meaning, names)) == meanings:
                return fn
        before = len(self.diags.items)
        self._used = set()
        try:
            fn = self._compile_text(src, loc, start, local_names, pure, what)
        finally:
            used, self._used = self._used, None
        if fn is not None and len(self.diags.items) == before:  # texts with problems are never shared
            names = tuple(sorted(used))
            known.append((names, tuple(map(self._meaning, names)), fn))
        return fn

    def _meaning(self, name: str) -> tuple:
        """Everything the compiler could read about `name` in this ruleset's declarations."""
        got = self._meanings.get(name)
        if got is None:
            s = self.sym
            if self._keys is None:
                self._keys = s.known_keys()
            got = (name, name in s.globals, repr(s.constants[name]) if name in s.constants else None,
                   name in s.collections, name in s.fields, name in s.statics, name in self._keys,
                   *(t[name].params if name in t else None
                     for t in (s.functions, s.procedures, s.events, s.modifiers, s.steps)))
            self._meanings[name] = got
        return got

    def _compile_text(self, src: str, loc: Loc, start: str, local_names: set[str], pure: bool,
                      what: str) -> Fn | None:
        self._base = loc
        if len(src) > MAX_SOURCE:
            self.diags.add("D001", f"this {what} is {len(src):,} characters long; the limit is "
                           f"{MAX_SOURCE:,}", loc)
            return None
        text = src if src.endswith("\n") else src + "\n"
        try:
            tree = parse(text, start)
        except UnexpectedInput as e:
            self._syntax_error(e, src, what)
            return None
        except (LarkError, RecursionError) as e:  # lexer/indenter oddities
            self.diags.add("D001", f"cannot read this {what}: {e}", loc)
            return None
        try:
            scope = _Scope(set(local_names), pure)
            if start == "expression":
                fn = self._expr(tree.children[0], scope)
                return _guard(fn, loc)
            return self._block(tree.children, scope, top=True)
        except _CompileError as e:
            self.diags.add(e.code, e.message, e.loc, hint=e.hint)
        except _Reported:
            pass
        except RecursionError:
            self.diags.add("D002", f"this {what} is nested too deeply", loc)
        return None

    def _at(self, node: Tree | Token | None) -> Loc:
        b = self._base
        if node is None:
            return b
        if isinstance(node, Token):
            line, col = node.line, node.column or 1
        else:
            meta = node.meta
            line = None if meta.empty else meta.line
            col = meta.column if line else 1
        if not line or not b.line:
            return b
        return Loc(b.file, b.line + line - 1, b.col + col - 1)

    def _syntax_error(self, e: UnexpectedInput, src: str, what: str) -> None:
        line = getattr(e, "line", 1) or 1
        col = getattr(e, "column", 1) or 1
        b = self._base
        lines = src.splitlines() or [""]
        if line > len(lines):  # at end of input: point after the last character
            line, col = len(lines), len(lines[-1]) + 1
        loc = Loc(b.file, b.line + line - 1, b.col + col - 1) if b.line else b
        if isinstance(e, UnexpectedCharacters):
            ch = src.splitlines()[line - 1][col - 1:col] if line <= len(src.splitlines()) else "?"
            msg = f"unexpected character `{ch}` in this {what}"
            hint = "strings need matching quotes; names use letters, digits and _; ids with other " \
                   "characters go in backquotes, like `Awa-Boso`" if ch in "'\"-`" else ""
        elif isinstance(e, (UnexpectedToken, UnexpectedEOF)):
            tok = getattr(e, "token", None)
            shown = "end of the text" if tok is None or tok.type in ("$END", "_DEDENT") else (
                "end of line" if tok.type in ("_NL", "_INDENT") else f"`{tok}`")
            expected = _plain_expected(getattr(e, "expected", set()) or getattr(e, "accepts", set()))
            msg = f"unexpected {shown} in this {what}"
            hint = f"expected {expected}" if expected else ""
        else:
            msg, hint = f"cannot read this {what}", ""
        self.diags.add("D001", msg, loc, hint=hint)

    # ---- statements ----

    def _block(self, stmts: list, scope: _Scope, top: bool = False) -> Fn:
        fns = [self._stmt(s, scope) for s in stmts if isinstance(s, Tree)]
        if top:
            def run_top(c: Ctx) -> None:
                try:
                    for f in fns:
                        f(c)
                except Stop:
                    pass
            return run_top
        if len(fns) == 1:
            return fns[0]

        def run(c: Ctx) -> None:
            for f in fns:
                f(c)
        return run

    def _suite(self, node: Tree, scope: _Scope) -> Fn:
        return self._block(node.children, scope)

    def _stmt(self, node: Tree, scope: _Scope) -> Fn:
        loc = self._at(node)
        kind = node.data
        if kind in ("assign", "aug_assign"):
            if scope.pure:
                raise _CompileError("D104", "assignments are not allowed here (this text must not "
                                    "change the game)", loc)
            target = node.children[0]
            value = self._expr(node.children[-1], scope)
            op = _ARITH[str(node.children[1])[0]] if kind == "aug_assign" else None
            fn = self._assign(target, value, op, scope)
        elif kind == "let_stmt":
            name = str(node.children[0])
            value = self._expr(node.children[1], scope)
            scope.names.add(name)

            def fn(c: Ctx) -> None:
                c.vars[name] = value(c)
        elif kind == "call_stmt":
            call = self._expr(node.children[0], scope)

            def fn(c: Ctx) -> None:
                call(c)
        elif kind == "pass_stmt":
            def fn(c: Ctx) -> None:
                return None
        elif kind == "stop_stmt":
            def fn(c: Ctx) -> None:
                raise Stop()
        elif kind == "if_stmt":
            fn = self._if(node, scope)
        elif kind == "for_stmt":
            fn = self._for(node, scope)
        else:  # pragma: no cover - grammar and compiler out of step
            raise _CompileError("D001", f"unsupported statement {kind}", loc)
        return _guard(fn, loc)

    def _if(self, node: Tree, scope: _Scope) -> Fn:
        branches: list[tuple[Fn, Fn]] = []
        other: Fn | None = None
        cond = self._expr(node.children[0], scope)
        branches.append((cond, self._suite(node.children[1], scope)))
        for ch in node.children[2:]:
            if ch.data == "elif_clause":
                branches.append((self._expr(ch.children[0], scope), self._suite(ch.children[1], scope)))
            else:
                other = self._suite(ch.children[0], scope)

        def run(c: Ctx) -> None:
            for test, body in branches:
                if test(c):
                    body(c)
                    return
            if other is not None:
                other(c)
        return run

    def _for(self, node: Tree, scope: _Scope) -> Fn:
        name = str(node.children[0])
        items = self._expr(node.children[1], scope)
        scope.names.add(name)
        body = self._suite(node.children[2], scope)
        loc = self._at(node)

        def run(c: Ctx) -> None:
            seq = items(c)
            if isinstance(seq, dict):
                seq = list(seq)
            elif not isinstance(seq, list):
                raise RuleError(f"`for` needs a list, got {describe(seq)}", loc)
            for x in list(seq):  # a copy: the body may change the list
                c.tick(loc)
                c.vars[name] = x
                body(c)
        return run

    def _assign(self, target: Tree, value: Fn, op: Callable | None, scope: _Scope) -> Fn:
        loc = self._at(target)
        if target.data == "name_target":
            name = str(target.children[0])
            if self._used is not None:
                self._used.add(name)
            if name in scope.names:
                store = "vars"
            elif name in self.sym.globals:
                store = "g"
            else:
                hint = did_you_mean(name, [*scope.names, *self.sym.globals]) or \
                    "declare it under `globals:` or create a local with `let`"
                raise _CompileError("D105", f"cannot assign to `{name}`: it is not a local or a "
                                    "declared global", loc, hint)
            if store == "vars":
                def set_(c: Ctx) -> None:
                    v = value(c)
                    c.vars[name] = op(c.vars[name], v) if op else v
            else:
                def set_(c: Ctx) -> None:
                    v = value(c)
                    c.g[name] = op(c.g[name], v) if op else copy_value(v)
            return set_
        if target.data == "attr_target":
            obj = self._expr(target.children[0], scope)
            fname = str(target.children[1])
            loc = self._at(target.children[1])
            if self._used is not None:
                self._used.add(fname)
            if fname not in self.sym.fields:
                hint = ("static attributes never change during play; declare a state field "
                        "in the kind to track it") if fname in self.sym.statics else \
                    did_you_mean(fname, self.sym.fields)
                raise _CompileError("D106", f"`{fname}` is not a state field of any kind", loc, hint)

            def set_attr(c: Ctx) -> None:
                o = obj(c)
                d = c.ent.get(o) if type(o) is str else None
                if d is None or fname not in d:
                    raise RuleError(f"{describe(o)} has no state field `{fname}`", loc)
                v = value(c)
                d[fname] = op(d[fname], v) if op else copy_value(v)
            return set_attr
        # item target: container[key]
        cont = self._expr(target.children[0], scope)
        key = self._expr(target.children[1], scope)

        def set_item(c: Ctx) -> None:
            d = cont(c)
            k = key(c)
            v = value(c)
            writable(c, d, "setting an item")
            if isinstance(d, dict):
                d[k] = op(d.get(k, 0), v) if op else copy_value(v)
            elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
                d[k] = op(d[k], v) if op else copy_value(v)
            else:
                raise RuleError(f"cannot set item {describe(k)} of {describe(d)}", loc)
        return set_item

    # ---- expressions ----

    def _expr(self, node: Any, scope: _Scope) -> Fn:
        if isinstance(node, Token):  # bare tokens only occur as names here
            return self._name(node, scope)
        handler = getattr(self, "_x_" + node.data, None)
        if handler is None:  # pragma: no cover
            raise _CompileError("D001", f"unsupported expression {node.data}", self._at(node))
        return handler(node, scope)

    def _x_name(self, node: Tree, scope: _Scope) -> Fn:
        return self._name(node.children[0], scope)

    def _name(self, tok: Token, scope: _Scope) -> Fn:
        name = str(tok)
        if self._used is not None:
            self._used.add(name)
        if name in scope.names:
            loc = self._at(tok)

            def local(c: Ctx) -> Any:
                try:
                    return c.vars[name]
                except KeyError:
                    raise RuleError(f"`{name}` has no value yet here", loc) from None
            return local
        if name in self.sym.globals:
            return lambda c: c.g[name]
        if name in self.sym.constants:
            value = self.sym.constants[name]
            return lambda c: value  # shared: mutating primitives refuse constants (runtime.writable)
        if name in self.sym.collections:
            kind = name

            def coll(c: Ctx) -> list:
                return list(c.model.collections[kind])
            return coll
        if name in BUILTIN_NAMES:
            return BUILTIN_NAMES[name]
        what = "function" if name in PRIMITIVES or name in self.sym.functions else ""
        hint = did_you_mean(name, [*scope.names, *self.sym.all_names()])
        if what:
            hint = f"`{name}` is a function: call it as `{name}(...)`"
        raise _CompileError("D101", f"unknown name `{name}`", self._at(tok), hint)

    def _x_qname(self, node: Tree, scope: _Scope) -> Fn:
        tok = node.children[0]
        name = str(tok)[1:-1]
        if self._used is not None:
            self._used.add(name)
        if name not in self.sym.constants:
            raise _CompileError("D101", f"unknown id `{name}`", self._at(tok),
                                did_you_mean(name, self.sym.constants))
        value = self.sym.constants[name]
        return lambda c: value

    def _x_int_(self, node: Tree, scope: _Scope) -> Fn:
        v = int(node.children[0])
        return lambda c: v

    def _x_decimal(self, node: Tree, scope: _Scope) -> Fn:
        v = float(node.children[0])
        return lambda c: v

    def _x_true(self, node: Tree, scope: _Scope) -> Fn:
        return lambda c: True

    def _x_false(self, node: Tree, scope: _Scope) -> Fn:
        return lambda c: False

    def _x_none(self, node: Tree, scope: _Scope) -> Fn:
        return lambda c: None

    def _x_string(self, node: Tree, scope: _Scope) -> Fn:
        tok = node.children[0]
        raw = str(tok)[1:-1]
        text = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), raw)
        if "{" not in text and "}" not in text:
            return lambda c: text
        parts: list[Any] = []
        pos = 0
        base = self._at(tok)
        for m in _INTERP.finditer(text):
            parts.append(text[pos:m.start()])
            pos = m.end()
            if m.group(0) in ("{{", "}}"):
                parts.append(m.group(0)[0])
                continue
            inner = m.group(1)
            saved = self._base
            self._base = Loc(base.file, base.line, base.col + 1 + m.start(1)) if base.line else base
            try:
                sub = parse(inner + "\n", "expression")
            except UnexpectedInput as e:
                self._syntax_error(e, inner, "`{...}` insert of this text")
                self._base = saved
                raise _Reported() from None
            parts.append(self._expr(sub.children[0], scope))
            self._base = saved
        parts.append(text[pos:])

        def render(c: Ctx) -> str:
            out = []
            for p in parts:
                if isinstance(p, str):
                    out.append(p)
                else:
                    v = p(c)
                    out.append(v if isinstance(v, str) else describe(v).strip("`"))
            return "".join(out)
        return render

    def _x_list_(self, node: Tree, scope: _Scope) -> Fn:
        items = [self._expr(ch, scope) for ch in node.children]
        return lambda c: [f(c) for f in items]

    def _x_dict_(self, node: Tree, scope: _Scope) -> Fn:
        pairs = [(self._expr(p.children[0], scope), self._expr(p.children[1], scope)) for p in node.children]
        return lambda c: {k(c): v(c) for k, v in pairs}

    def _x_comprehension(self, node: Tree, scope: _Scope) -> Fn:
        elem_node, name_tok, seq_node, *cond_node = node.children
        name = str(name_tok)
        seq = self._expr(seq_node, scope)
        inner = scope.child({name})
        elem = self._expr(elem_node, inner)
        cond = self._expr(cond_node[0], inner) if cond_node else None
        loc = self._at(node)

        def comp(c: Ctx) -> list:
            xs = seq(c)
            if isinstance(xs, dict):
                xs = list(xs)
            elif not isinstance(xs, list):
                raise RuleError(f"`for` needs a list, got {describe(xs)}", loc)
            had = name in c.vars
            saved = c.vars.get(name)
            out = []
            try:
                for x in xs:
                    c.tick(loc)
                    c.vars[name] = x
                    if cond is None or cond(c):
                        out.append(elem(c))
            finally:
                if had:
                    c.vars[name] = saved
                else:
                    c.vars.pop(name, None)
            return out
        return comp

    def _x_lambda_(self, node: Tree, scope: _Scope) -> Fn:
        name = str(node.children[0])
        body = self._expr(node.children[1], scope.child({name}))

        def make(c: Ctx) -> Callable:
            outer = c.vars

            def fn(c2: Ctx, v: Any) -> Any:
                saved = c2.vars
                c2.vars = {**outer, name: v}
                try:
                    return body(c2)
                finally:
                    c2.vars = saved
            return fn
        return make

    def _x_ternary(self, node: Tree, scope: _Scope) -> Fn:
        a, cond, b = (self._expr(ch, scope) for ch in node.children)
        return lambda c: a(c) if cond(c) else b(c)

    def _x_or_(self, node: Tree, scope: _Scope) -> Fn:
        a, b = (self._expr(ch, scope) for ch in node.children)
        return lambda c: a(c) or b(c)

    def _x_and_(self, node: Tree, scope: _Scope) -> Fn:
        a, b = (self._expr(ch, scope) for ch in node.children)
        return lambda c: a(c) and b(c)

    def _x_not_(self, node: Tree, scope: _Scope) -> Fn:
        a = self._expr(node.children[0], scope)
        return lambda c: not a(c)

    def _x_neg(self, node: Tree, scope: _Scope) -> Fn:
        a = self._expr(node.children[0], scope)
        return lambda c: -a(c)

    def _x_compare(self, node: Tree, scope: _Scope) -> Fn:
        a = self._expr(node.children[0], scope)
        op = _CMP[str(node.children[1])]
        b = self._expr(node.children[2], scope)
        return lambda c: op(a(c), b(c))

    def _x_in_(self, node: Tree, scope: _Scope) -> Fn:
        a, b = self._expr(node.children[0], scope), self._expr(node.children[1], scope)
        return lambda c: a(c) in b(c)

    def _x_not_in(self, node: Tree, scope: _Scope) -> Fn:
        a, b = self._expr(node.children[0], scope), self._expr(node.children[1], scope)
        return lambda c: a(c) not in b(c)

    def _x_binop(self, node: Tree, scope: _Scope) -> Fn:
        a = self._expr(node.children[0], scope)
        op = _ARITH[str(node.children[1])]
        b = self._expr(node.children[2], scope)
        return lambda c: op(a(c), b(c))

    def _x_getitem(self, node: Tree, scope: _Scope) -> Fn:
        obj = self._expr(node.children[0], scope)
        key = self._expr(node.children[1], scope)
        loc = self._at(node)

        def item(c: Ctx) -> Any:
            o, k = obj(c), key(c)
            try:
                return o[k]
            except (KeyError, IndexError, TypeError):
                raise RuleError(f"{describe(o)} has no item {describe(k)}", loc) from None
        return item

    def _x_getattr(self, node: Tree, scope: _Scope) -> Fn:
        obj = self._expr(node.children[0], scope)
        tok = node.children[1]
        fname = str(tok)
        loc = self._at(tok)
        if self._used is not None:
            self._used.add(fname)
        if fname not in self.sym.fields and fname not in self.sym.statics and fname not in BUILTIN_ATTRS:
            if self._keys is None:
                self._keys = self.sym.known_keys()
            if fname not in self._keys:
                raise _CompileError("D102", f"unknown attribute `{fname}`", loc,
                                    did_you_mean(fname, [*self.sym.fields, *self.sym.statics, *BUILTIN_ATTRS]))

        def attr(c: Ctx) -> Any:
            o = obj(c)
            if type(o) is str:
                d = c.ent.get(o)
                if d is not None and fname in d:
                    return d[fname]
                s = c.model.static.get(o)
                if s is not None and fname in s:
                    return s[fname]
                if fname == "id":
                    return o
                raise RuleError(f"`{o}` has no attribute `{fname}`", loc)
            if type(o) is dict:
                if fname in o:
                    return o[fname]
                raise RuleError(f"this map has no key `{fname}`", loc)
            raise RuleError(f"{describe(o)} has no attribute `{fname}`", loc)
        return attr

    def _x_call(self, node: Tree, scope: _Scope) -> Fn:
        name_tok = node.children[0]
        name = str(name_tok)
        loc = self._at(name_tok)
        if self._used is not None:
            self._used.add(name)
        raw = node.children[1:]
        if name in SPECIAL_FORMS:
            return self._special(name, raw, scope, loc)
        args = [self._expr(a, scope) for a in raw if not (isinstance(a, Tree) and a.data == "kwarg")]
        kwargs = {str(a.children[0]): self._expr(a.children[1], scope)
                  for a in raw if isinstance(a, Tree) and a.data == "kwarg"}
        if name in self.sym.functions or name in self.sym.procedures:
            is_proc = name in self.sym.procedures
            decl = (self.sym.procedures if is_proc else self.sym.functions)[name]
            if is_proc and scope.pure:
                raise _CompileError("D104", f"procedure `{name}` changes the game and cannot be used "
                                    "here", loc, "conditions and values must not change the game")
            if kwargs or len(args) != len(decl.params):
                raise _CompileError("D103", f"`{name}` takes {len(decl.params)} argument(s) "
                                    f"({', '.join(decl.params)}), got {len(args) + len(kwargs)}", loc)
            return self._user_call(name, is_proc, decl.params, args, loc)
        prim = PRIMITIVES.get(name)
        if prim is None:
            raise _CompileError("D103", f"unknown function `{name}`", loc,
                                did_you_mean(name, [*PRIMITIVES, *self.sym.functions, *self.sym.procedures,
                                                    *SPECIAL_FORMS]))
        if scope.pure and prim.kind != "pure":
            raise _CompileError("D104", f"`{name}` changes the game and cannot be used here", loc,
                                "conditions and values must not change the game")
        if len(args) < prim.min_args or (prim.max_args >= 0 and len(args) > prim.max_args):
            want = prim.signature
            raise _CompileError("D103", f"wrong number of arguments to `{name}`: it is `{want}`", loc)
        for k in kwargs:
            if k not in prim.kwargs:
                raise _CompileError("D103", f"`{name}` has no option `{k}=`", loc,
                                    f"it is `{prim.signature}`")
        fn = prim.fn
        if name == "say":  # the account is text nobody reads in a silent sweep: skip building it
            def say(c: Ctx) -> None:
                if not c.hooks.silent:
                    fn(c, *[a(c) for a in args])
            return say
        if not kwargs:
            if len(args) == 1:
                a0 = args[0]
                return lambda c: fn(c, a0(c))
            if len(args) == 2:
                a0, a1 = args
                return lambda c: fn(c, a0(c), a1(c))
            return lambda c: fn(c, *[a(c) for a in args])
        return lambda c: fn(c, *[a(c) for a in args], **{k: v(c) for k, v in kwargs.items()})

    def _user_call(self, name: str, is_proc: bool, params: tuple[str, ...], args: list[Fn], loc: Loc) -> Fn:
        table = "procedures" if is_proc else "functions"

        def call(c: Ctx) -> Any:
            target = getattr(c.model, table)[name]
            values = [a(c) for a in args]
            c.tick(loc)
            if c.depth >= MAX_CALL_DEPTH:
                raise RuleError(f"`{name}` called itself more than {MAX_CALL_DEPTH} levels deep", loc)
            saved = c.vars
            c.vars = dict(zip(params, values, strict=True))
            c.depth += 1
            try:
                return target(c)
            finally:
                c.depth -= 1
                c.vars = saved
        return call

    def _special(self, name: str, raw: list, scope: _Scope, loc: Loc) -> Fn:
        table = {"value": self.sym.modifiers, "emit": self.sym.events, "run": self.sym.steps}[name]
        what = {"value": "modifier", "emit": "event", "run": "step"}[name]
        if not raw or not (isinstance(raw[0], Tree) and raw[0].data == "name"):
            raise _CompileError("D103", f"`{name}(...)` needs the name of a {what} first", loc)
        target_tok = raw[0].children[0]
        target = str(target_tok)
        if self._used is not None:
            self._used.add(target)
        decl = table.get(target)
        if decl is None:
            raise _CompileError("D107", f"unknown {what} `{target}`", self._at(target_tok),
                                did_you_mean(target, table))
        rest = raw[1:]
        if any(isinstance(a, Tree) and a.data == "kwarg" for a in rest):
            raise _CompileError("D103", f"`{name}(...)` takes no options", loc)
        args = [self._expr(a, scope) for a in rest]
        want = len(decl.params) + (1 if name == "value" else 0)
        if len(args) != want:
            shown = ("base value, " if name == "value" else "") + ", ".join(decl.params)
            raise _CompileError("D103", f"{what} `{target}` takes {want} argument(s) ({shown}), "
                                f"got {len(args)}", loc)
        if name in ("emit", "run") and scope.pure:
            raise _CompileError("D104", f"`{name}` changes the game and cannot be used here", loc)
        if name == "value":
            base, *rest_args = args
            params = decl.params

            def modified(c: Ctx) -> Any:
                return c.hooks.modify(c, target, base(c), dict(zip(params, [a(c) for a in rest_args], strict=True)))
            return modified
        hook = "emit" if name == "emit" else "schedule"
        params = decl.params

        def fire(c: Ctx) -> None:
            getattr(c.hooks, hook)(c, target, dict(zip(params, [a(c) for a in args], strict=True)))
        return fire


class _Scope:
    __slots__ = ("names", "pure")

    def __init__(self, names: set[str], pure: bool):
        self.names = names
        self.pure = pure

    def child(self, extra: set[str]) -> _Scope:
        return _Scope(self.names | extra, self.pure)


def _guard(fn: Fn, loc: Loc) -> Fn:
    """Turn Python failures inside rule code into located RuleErrors."""
    def guarded(c: Ctx) -> Any:
        try:
            return fn(c)
        except RuleError as e:
            if not e.loc.line:
                e.loc = loc
            raise
        except Stop:
            raise
        except ZeroDivisionError:
            raise RuleError("division by zero", loc) from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as e:
            raise RuleError(f"cannot evaluate this: {_plain_python_error(e)}", loc) from None
        except RecursionError:
            raise RuleError("rules nested too deeply (a procedure calling itself?)", loc) from None
    return guarded


def _plain_python_error(e: Exception) -> str:
    text = str(e)
    text = text.replace("NoneType", "none").replace("'str'", "text").replace("'int'", "number")
    text = text.replace("'list'", "list").replace("'dict'", "map")
    return text


_TOKEN_WORDS = {
    "NAME": "a name", "INT": "a number", "DECIMAL": "a number", "STRING": "a string",
    "QNAME": "a `quoted id`", "_NL": "the end of the line", "_INDENT": "an indented block",
    "_DEDENT": "the end of the block", "COLON": "`:`", "LPAR": "`(`", "RPAR": "`)`",
    "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`", "RBRACE": "`}`", "COMMA": "`,`",
    "EQUAL": "`=`", "DOT": "`.`", "COMP_OP": "a comparison", "ADD_OP": "`+` or `-`",
    "MUL_OP": "`*` or `/`", "AUGOP": "`+=`", "$END": "the end of the text",
    "VALUE": "a value (name, number, string, list)", "MINUS": "`-`",
}


def _plain_expected(expected: set[str]) -> str:
    if expected & {"NAME", "INT", "STRING"}:  # the start of any value: say so once
        expected = (expected - {"NAME", "INT", "DECIMAL", "STRING", "QNAME", "LPAR", "LSQB", "LBRACE",
                                "TRUE", "FALSE", "NONE", "MINUS", "NOT"}) | {"VALUE"}
    words = sorted({_TOKEN_WORDS.get(t, f"`{t.lower()}`" if t.isalpha() else "`=>`" if t.startswith("__ANON")
                                     else t) for t in expected})
    if not words:
        return ""
    if len(words) > 6:
        words = [*words[:6], "..."]
    return ", ".join(words)
