"""Compile rule text (expressions and effects) into Python functions, once, at load time.

Every name is resolved here against the ruleset's declarations (`Symbols`): locals,
state globals, constants and entity ids, functions, procedures, events, modifiers, steps
and the whitelisted primitives. Unknown names are located diagnostics with a
"did you mean" hint. Each checked text is written as a small Python function (see
dsl/codegen.py) that reaches only the evaluation context (`Ctx`), the helpers and the
whitelisted primitives: no Python attribute access of the rule's own, no imports, no
builtins. At play time no parsing happens.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from dsl.codegen import AUG_OPS, Unit, by_position
from dsl.parsecache import ParseCache, cache_folder
from dsl.primitives import MAX_RANGE, MAX_TEXT, PRIMITIVES
from dsl.rule import Rule
from dsl.runtime import FREE_WALK, Ctx
from dsl.tree import NAMES_FILE, Token, Tree, from_lark, grammar_text, known_names, names_of
from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.memo import ScopedMemo
from engine.base.record import Record

if TYPE_CHECKING:
    from lark import Lark

Fn = Callable[[Ctx], Any]
Callee = tuple[str, tuple[str, ...]]  # a function's or procedure's name and parameters
Pieces = tuple[tuple[int, Loc], ...]  # a joined text: (first line of a part, where that part is written)
MAX_SOURCE = 100_000  # characters in one rule text
MAX_BLOCKS = 50  # `if`/`for` blocks nested in one text (Python refuses 100 levels of indentation)
# `elif`s written as `else:` and `if` (compiler `_elif`), each a level of indentation more, open
# at once in one text (nested statements' included): with MAX_BLOCKS blocks inside, still under
# Python's 100 levels
_MAX_SHIFT = 40
MAX_LOOPS = 15  # `for` loops nested in one text (Python refuses 20 nested loops)
MAX_DIGITS = 300  # digits of a number written in a rule


@lru_cache(maxsize=1)
def parser() -> Lark:
    """lark's parser of the rules language, made on the first text not found in the parse cache
    (lark is imported only then: see dsl/tree.py)."""
    from typing import ClassVar

    from lark import Lark
    from lark.indenter import Indenter

    class _Indent(Indenter):
        NL_type = "_NL"
        OPEN_PAREN_types: ClassVar[list[str]] = ["LPAR", "LSQB", "LBRACE"]
        CLOSE_PAREN_types: ClassVar[list[str]] = ["RPAR", "RSQB", "RBRACE"]
        INDENT_type = "_INDENT"
        DEDENT_type = "_DEDENT"
        tab_len = 8

    # cache=True keeps the analysed grammar in the temp folder: building it takes ~0.3 s,
    # loading it ~15 ms, and every `daimyo` command that reads a ruleset pays this once.
    return Lark(grammar_text(), parser="lalr", postlex=_Indent(), start=["effect", "expression"],
                maybe_placeholders=False, cache=True)


def write_names() -> None:
    """Write dsl/names.json for the grammar as it is now (after editing dsl/daimyo.lark)."""
    path = Path(__file__).with_name(NAMES_FILE)
    path.write_text(json.dumps(names_of(parser(), grammar_text()), indent=1) + "\n", encoding="utf-8")


class ParseFailure(Exception):
    """A text lark cannot read; `error` is lark's exception (lark is loaded whenever one exists)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


_PARSED: dict[tuple[str, str], Tree | ParseFailure] = {}
MAX_PARSED = 50_000
_FROM_DISK: set[tuple[str, str]] = set()  # texts whose tree came from the disk cache
_DISK: list[ParseCache | None] = []  # the disk cache, made on first use ([None]: caching is off)


def _lark_version() -> str:
    """lark's version, read from its installed `__init__.py` without importing lark."""
    try:
        spec = importlib.util.find_spec("lark")
        origin = spec.origin if spec is not None else None
        if origin:
            found = re.search(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"'\n]+)["']""",
                              Path(origin).read_text(encoding="utf-8", errors="replace"), re.M)
            if found:
                return found.group(1)
    except (OSError, ValueError, ImportError):
        pass
    import lark
    return str(lark.__version__)


def _disk() -> ParseCache | None:
    if not _DISK:
        folder = cache_folder()
        cache = None
        if folder is not None:
            grammar = grammar_text()
            names = known_names(grammar)
            if names is None:  # names.json is out of date: ask lark's parser
                fresh = names_of(parser(), grammar)
                names = [tuple(t) for t in fresh["terminals"]], fresh["rules"]
            cache = ParseCache(folder, grammar, _lark_version(), names[0], names[1])
        _DISK.append(cache)
    return _DISK[0]


def parse(text: str, start: str, fresh: bool = False, source: str = "") -> Tree:
    """The parse tree of a rule text, remembered in this process and on disk (dsl/parsecache.py):
    validation builds a ruleset once per option value and combo, and most texts are the same
    each time and from one run to the next. Trees are never changed by the compiler, and their
    positions are relative to the text, so sharing them is safe. `fresh` parses again and
    replaces what was remembered (a cached tree that did not compile cleanly). `source`: the
    file the text is written in (its trees are kept together on disk).

    Raises ParseFailure for a text lark cannot read (lark's exception inside)."""
    key = (text, start)
    got = None if fresh else _PARSED.get(key)
    if got is None:
        disk = _disk()
        if disk is not None and not fresh:
            got = disk.load(text, start, source)
            if got is not None:
                _FROM_DISK.add(key)
        if got is None:
            _FROM_DISK.discard(key)
            got = _parse_with_lark(text, start)
            if disk is not None and isinstance(got, Tree):
                disk.store(text, start, got, source)
        if len(_PARSED) >= MAX_PARSED:
            _PARSED.clear()
            _FROM_DISK.clear()
        _PARSED[key] = got
    if isinstance(got, ParseFailure):
        raise got
    return got


def _parse_with_lark(text: str, start: str) -> Tree | ParseFailure:
    """lark's tree of `text`, or what it could not read. Failures are not kept on disk: they are
    rare, and reported from a real parse. Lexer and indenter oddities (other lark errors) are
    raised as they are; the compiler reports them."""
    from lark.exceptions import LarkError, UnexpectedInput
    try:
        return from_lark(parser().parse(text, start=start))
    except UnexpectedInput as e:
        return ParseFailure(e)
    except LarkError as e:
        raise ParseFailure(e) from None


# Within `compile_cache()`, compiled texts are remembered by (declarations, text, place,
# scope): validation builds each combo once per option value that gates files, and the
# builds share almost all of their texts and declarations.
_COMPILED = ScopedMemo("daimyo_compile_cache")


@contextmanager
def compile_cache() -> Iterator[None]:
    """Within this block, a text compiled against the same declarations is compiled once; at its
    end the parse cache writes the packs of the files whose texts were not all in theirs.

    For validation only: the models built inside share closures (and the constants those
    captured), so they must not be played."""
    with _COMPILED.scope():
        yield
    disk = _DISK[0] if _DISK else None
    if disk is not None:
        disk.flush()


class Callable_(Record):
    """A user function, procedure, event, modifier or step as the compiler sees it."""

    FIELDS = ("params", "loc", "body", "layered")

    def __init__(self, params: tuple[str, ...], loc: Loc | None = None, body: str | None = None,
                 layered: bool = True) -> None:
        self.params = params
        self.loc = Loc() if loc is None else loc
        self.body = body  # a function's value as written (a text), which callers may inline (`_inline`)
        self.layered = layered  # a modifier: whether any layer changes it (without, `value()` is its base)


class Symbols(Record):
    """What names mean in a ruleset. Built by the loader from the declarations."""

    FIELDS = ("globals", "constants", "fields", "statics", "collections", "functions", "procedures", "events",
              "modifiers", "steps", "option_names", "joined_fields")

    def __init__(self, globals: set[str] | None = None, constants: dict[str, Any] | None = None,
                 fields: set[str] | None = None, statics: set[str] | None = None,
                 collections: dict[str, str] | None = None, functions: dict[str, Callable_] | None = None,
                 procedures: dict[str, Callable_] | None = None, events: dict[str, Callable_] | None = None,
                 modifiers: dict[str, Callable_] | None = None, steps: dict[str, Callable_] | None = None,
                 option_names: set[str] | None = None, joined_fields: set[str] | None = None) -> None:
        self.globals = set() if globals is None else globals
        self.constants = {} if constants is None else constants  # name -> value (ids map to themselves)
        self.fields = set() if fields is None else fields  # dynamic fields of any kind
        self.statics = set() if statics is None else statics  # static attributes of any entity
        self.collections = {} if collections is None else collections  # name -> kind (all entities of it)
        self.functions = {} if functions is None else functions
        self.procedures = {} if procedures is None else procedures
        self.events = {} if events is None else events
        self.modifiers = {} if modifiers is None else modifiers
        self.steps = {} if steps is None else steps
        self.option_names = set() if option_names is None else option_names  # keys of `options` (read at play time)
        # fields that start as a list or a text in some kind: `+` of one is guessed a join (`_may_join`)
        self.joined_fields = set() if joined_fields is None else joined_fields

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
BUILTIN_NAMES = {  # as Python source for the generated code
    "players": 'c.state["players"]',
    "num_players": '_len(c.state["players"])',
    "spaces": "_spaces(c)",
    "options": "_copy(c.model.combo.options)",
}
BUILTIN_ATTRS = {"id", "kind", "region"}
SPECIAL_FORMS = {"value", "emit", "run"}

_INTERP = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_BRACES = re.compile(r"[{}]")  # a text holding either is a template (`_x_string`)


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
        self.mentioned: set[str] = set()  # every name and attribute any compiled text looked up
        self.recorder: set[str] | None = None  # when a set: also gets every name mentioned (flow memo)
        self._fresh = False  # re-parsing a text whose cached tree failed: no disk cache for inserts
        self._pieces: Pieces = ()  # where each part of a joined text is written (see `effect`)
        self._callee: Callee | None = None  # the function or procedure being compiled (see `expression`)
        self._plain_on = True  # plain forms are written (not for validation only: see `_compile`)
        self._bodies: dict[str, Tree | None] = {}  # functions' values that calls may inline (`_inline_body`)
        self._frees: dict[str, bool] = {}  # of those: whether such a call charges nothing (`_free`)
        self._rules_called: dict[str, bool] = {}  # of those: whether it calls a rule (`_rule_calling`)
        self._heights: dict[str, int] = {}  # of those: how many are written out inside each other, itself included
        self._leaves: dict[str, bool] = {}  # functions a plain form may call (`_leaf`)
        self._values: dict[str, Tree | None] = {}  # functions' values, parsed (`_value_tree`)
        self._subst: dict[str, str] = {}  # an inlined function's parameters: the generated source of each
        self._inlining: tuple[str, ...] = ()  # the functions being inlined, outermost first
        self._entry_once: set[str] = set()  # locals bound on entry only (`_compile_tree`)
        self._state_reads: set[str] = set()  # reads written by `_read` that find a state field in E

    # ---- public entry points ----

    def expression(self, src: Any, loc: Loc, local_names: tuple[str, ...] | set[str] = (),
                   what: str = "expression", callee: Callee | None = None) -> Fn | None:
        """Compile a side-effect-free expression (a condition, a value). `callee`: the name and
        parameters (in their declared order) of the function this is the value of: its calls
        pass them by position (codegen `Unit.build`)."""
        if isinstance(src, bool) or src is None or isinstance(src, (int, float)):
            value = src

            def constant(c: Any) -> Any:  # a plain YAML number or truth value: nothing to compile
                return value
            rule = Rule(constant, f"rule[{what}]", loc, counted=False)  # (it calls no rule: `calls_rules`)
            if callee is not None:
                rule.pos = by_position(constant, callee[1], callee[0], counted=False)
            return rule
        return self._compile(str(src), loc, "expression", set(local_names), pure=True, what=what, callee=callee)

    def effect(self, src: Any, loc: Loc, local_names: tuple[str, ...] | set[str] = (),
               what: str = "effect", pieces: Pieces = (), callee: Callee | None = None) -> Fn | None:
        """Compile an effect (statements that change the state).

        `pieces` is for a text joined from parts written in several places (a procedure's named
        blocks): each part's first line in `src` (from 1) and where the part is written, so that
        an error points into its own part. `callee`: the procedure's name and parameters (as for
        `expression`)."""
        return self._compile(str(src), loc, "effect", set(local_names), pure=False, what=what, pieces=pieces,
                             callee=callee)

    # ---- driver ----

    def _compile(self, src: str, loc: Loc, start: str, local_names: set[str], pure: bool,
                 what: str, pieces: Pieces = (), callee: Callee | None = None) -> Fn | None:
        self._pieces = pieces
        if callee is not None and not by_position_ok(callee[1]):  # calls of it pass a scope by name
            callee = None
        self._callee = callee
        memo = _COMPILED.get()
        # Models built for validation only (`compile_cache`) are never played: their rules go
        # without plain forms, which only make play faster (and cost a fifth of a build). So no
        # function is written out in a text remembered here: what it compiles to depends on
        # the meanings of the names it looked up alone.
        self._plain_on = memo is None
        if memo is None:
            self._used = set()
            try:
                return self._compile_text(src, loc, start, local_names, pure, what)
            finally:
                self._mention(self._used)
                self._used = None
        # The same text, at the same place, compiles to the same closure wherever each name it
        # looked up means the same: reuse it. (Places as plain tuples: hashing and comparing a
        # Loc runs Python code, and this runs for every text of every build.)
        key = (src, loc.file, loc.line, loc.col, start, frozenset(local_names), pure, what,
               tuple((first, w.file, w.line, w.col) for first, w in pieces) if pieces else (), callee)
        known = memo.setdefault(key, [])
        for names, meanings, fn in known:
            if self.meanings(names) == meanings:
                self._mention(names)
                return fn
        before = len(self.diags.items)
        self._used = set()
        try:
            fn = self._compile_text(src, loc, start, local_names, pure, what)
        finally:
            used, self._used = self._used, None
            self._mention(used)
        if fn is not None and len(self.diags.items) == before:  # texts with problems are never shared
            names = tuple(sorted(used))
            known.append((names, self.meanings(names), fn))
        return fn

    def _mention(self, names: Any) -> None:
        self.mentioned.update(names)
        if self.recorder is not None:
            self.recorder.update(names)

    def meanings(self, names: tuple[str, ...]) -> tuple:
        """What each of `names` means in this ruleset (see `_meaning`): equal for two builds
        exactly when a text that looked up these names compiles the same in both."""
        now = tuple(map(self._meanings.get, names))  # worked out once per build, then looked up in C
        return tuple(map(self._meaning, names)) if None in now else now

    def _meaning(self, name: str) -> tuple:
        """Everything the compiler could read about `name` in this ruleset's declarations."""
        got = self._meanings.get(name)
        if got is None:
            s = self.sym
            if self._keys is None:
                self._keys = s.known_keys()
            constants = s.constants
            got = (name, name in s.globals, repr(constants[name]) if name in constants else None,
                   name in s.collections, name in s.fields, name in s.statics, name in self._keys,
                   None if (f := s.functions.get(name)) is None else f.params,
                   None if (f := s.procedures.get(name)) is None else f.params,
                   None if (f := s.events.get(name)) is None else f.params,
                   None if (f := s.modifiers.get(name)) is None else (f.params, f.layered),
                   None if (f := s.steps.get(name)) is None else f.params)
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
        self._src = text
        try:
            tree = parse(text, start, source=loc.file)
        except ParseFailure as failure:
            from lark.exceptions import UnexpectedInput  # loaded: lark made this failure
            if isinstance(failure.error, UnexpectedInput):
                self._syntax_error(failure.error, src, what)
            else:  # lexer/indenter oddities
                self.diags.add("D001", f"cannot read this {what}: {failure.error}", loc)
            return None
        except RecursionError as e:
            self.diags.add("D001", f"cannot read this {what}: {e}", loc)
            return None
        if (text, start) not in _FROM_DISK:
            return self._compile_tree(tree, loc, start, local_names, pure, what)
        # A tree from the disk cache is used only if it compiles cleanly; otherwise the text is
        # parsed again and the entry rewritten, so a damaged entry costs a parse, never a crash.
        mark = len(self.diags.items)
        try:
            fn = self._compile_tree(tree, loc, start, local_names, pure, what)
            if fn is not None and len(self.diags.items) == mark:
                return fn
        except Exception:  # any failure of a cached tree means: parse again
            pass
        del self.diags.items[mark:]
        self._fresh = True
        try:
            tree = parse(text, start, fresh=True, source=loc.file)
            return self._compile_tree(tree, loc, start, local_names, pure, what)
        finally:
            self._fresh = False

    def _compile_tree(self, tree: Tree, loc: Loc, start: str, local_names: set[str], pure: bool,
                      what: str) -> Fn | None:
        self._base = loc
        self._unit = Unit()
        self._state_reads = set()
        self._no_walrus = 0
        self._depth = 0  # of `_expr` calls: 0 outside an expression
        self._avail: dict[tuple[str, str], str] | None = None  # reads of this expression so far (`_x_getattr`)
        self._twice: set[int] = set()
        self._objs_twice: set[int] = set()
        self._loops = 0
        self._incoming = set(local_names)
        self._loads = set()
        self._ents: dict[str, str] = {}  # locals whose entity's state dict a temporary holds here (`_x_getattr`)
        self._value_ents: dict[str, str] = {}  # those known once an assignment's value ran
        self._bindings = _bindings(tree, local_names)
        self._once = {name for name, places in self._bindings.items() if len(places) == 1}
        self._entry_once = self._once & self._incoming  # bound on entry only (`_x_compare`)
        self._plain = False  # writing the plain form of an expression (`_plain_form`)
        self._plain_flags: set[str] = set()  # the parameters it compares as scalars (`_guarded`)
        self._unbounded: dict[int, int] = {}  # steps of a chain of sums, bounded at its end: how far from it
        self._chain_ends: set[int] = set()  # those ends, bounded even with a number written out
        self._calls = ""  # the temporary counting the calls it writes out (`_inline`), once one is
        self._calls_deepest = 0  # how many calls it writes out are written out around the deepest one
        self._depth_asked = False  # it writes a call out: the depth its call would see is asked (`_guarded`)
        self._in_lambda = 0  # inside an `x => ...` function: its own scope (`_inline`)
        self._per_item = 0  # inside a part run once per item (`_apart`)
        self._dots = self._src.count(".") > 1  # (a text without two reads `o.f` shares none)
        try:
            scope = _Scope(set(local_names), pure)
            if start == "expression":
                checked = self._expr(tree.children[0], scope)
                plain = self._plain_form(tree.children[0], scope, {})
                if plain is not None:
                    self._guarded(0, "return ", plain, checked, loc)
                else:
                    self._unit.emit(0, f"return {checked}", loc)
            else:
                self._block(tree.children, scope, 0)
            fn = self._unit.build(sorted(self._loads), what, self._callee, self._unit.calls_rule)
            node = tree.children[0] if start == "expression" else None
            if isinstance(node, Tree) and node.data == "name" and str(node.children[0]) in local_names:
                fn.var = str(node.children[0])  # (dsl/rule.py `Rule.var`)
            fn.fresh = node is not None and self._made_list(node)
            return fn
        except _CompileError as e:
            self.diags.add(e.code, e.message, e.loc, hint=e.hint)
        except _Reported:
            pass
        except (RecursionError, SyntaxError, MemoryError):  # the parser's or Python's nesting limits
            if self._plain_on:
                return self._without_plain_forms(tree, loc, start, local_names, pure, what)
            self.diags.add("D002", f"this {what} is nested too deeply", loc)
        return None

    def _without_plain_forms(self, tree: Tree, loc: Loc, start: str, local_names: set[str], pure: bool,
                             what: str) -> Fn | None:
        """The text compiled as validation compiles it, without plain forms: with them, its
        source went past one of Python's limits of nesting."""
        self._plain_on = False
        try:
            return self._compile_tree(tree, loc, start, local_names, pure, what)
        finally:
            self._plain_on = True

    def _at(self, node: Tree | Token | None) -> Loc:
        if node is None:
            return self._base
        tok = node if isinstance(node, Token) else _first_token(node)
        line, col = (tok.line, tok.column or 1) if tok is not None else (None, 1)
        return self._place(line, col) if line else self._base

    def _place(self, line: int, col: int) -> Loc:
        """Where line `line`, column `col` of the text being compiled is written."""
        b = self._base
        for first, where in reversed(self._pieces):  # a joined text: find the part holding the line
            if line >= first:
                b, line = where, line - first + 1
                break
        return Loc(b.file, b.line + line - 1, b.col + col - 1) if b.line else b

    def _syntax_error(self, e: Exception, src: str, what: str) -> None:
        from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken  # lark made `e`
        line = getattr(e, "line", 1) or 1
        col = getattr(e, "column", 1) or 1
        lines = src.splitlines() or [""]
        if line > len(lines):  # at end of input: point after the last character
            line, col = len(lines), len(lines[-1]) + 1
        loc = self._place(line, col)
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

    # ---- statements: each emits Python lines into the unit ----

    def _block(self, stmts: list, scope: _Scope, depth: int) -> None:
        ents = dict(self._ents)  # what a block finds out is not known after it (it may not run)
        try:
            for s in stmts:
                if isinstance(s, Tree):
                    self._stmt(s, scope, depth)
        finally:
            self._ents = ents

    def _elif(self, clause: Tree, scope: _Scope, depth: int) -> None:
        """The line that opens an `elif` block. Where its condition has a plain form, as an `if`
        condition has, it is `else:` with the condition's plain form and an `if` inside: the
        lines from there on are indented one level more (`Unit.shift`, given back after the
        whole statement), so that `depth` still counts the blocks of the rule text. Past
        `_MAX_SHIFT` such levels (far from Python's limit of indentation) it stays an `elif`
        of the checked form."""
        u, loc = self._unit, self._stmt_at(clause)
        ents = dict(self._ents)
        cond = self._expr(clause.children[0], scope)
        plain = self._plain_form(clause.children[0], scope, ents) if u.shift < _MAX_SHIFT else None
        if plain is None:
            u.emit(depth, f"elif {cond}:", loc)
            return
        self._ents = ents  # (the checked form may not run: what it found out is not kept)
        u.emit(depth, "else:", loc)
        u.shift += 1
        held = u.temp()
        self._guarded(depth, f"{held} = ", plain, cond, loc)
        u.emit(depth, f"if {held}:", loc)

    def _stmt_at(self, node: Tree) -> Loc:
        """Where a statement starts, its keyword included (`for`, `if`, `let` are not kept as
        tokens: find the keyword before the statement's first kept token)."""
        loc = self._at(node)
        keyword = _KEYWORDS.get(node.data)
        tok = _first_token(node)
        if keyword and tok is not None and tok.line and loc.line:
            lines = self._src.splitlines()
            text = lines[tok.line - 1] if tok.line <= len(lines) else ""
            i = text.rfind(keyword, 0, (tok.column or 1) - 1)
            if i >= 0:
                return Loc(loc.file, loc.line, loc.col - ((tok.column or 1) - 1 - i))
        return loc

    def _stmt(self, node: Tree, scope: _Scope, depth: int) -> None:
        loc = self._stmt_at(node)
        kind = node.data
        u = self._unit
        if kind in ("if_stmt", "for_stmt") and depth >= MAX_BLOCKS:
            raise _CompileError("D002", f"blocks (`if`, `for`) nested more than {MAX_BLOCKS} deep", loc,
                                "move the inner part into a procedure")
        if kind == "for_stmt" and self._loops >= MAX_LOOPS:
            raise _CompileError("D002", f"`for` loops nested more than {MAX_LOOPS} deep", loc,
                                "move the inner loops into a procedure")
        if kind in ("assign", "aug_assign"):
            if scope.pure:
                raise _CompileError("D104", "assignments are not allowed here (this text must not "
                                    "change the game)", loc)
            hoist = self._runs_nothing(node.children[0], scope)
            before = dict(self._ents)
            value = self._expr(node.children[-1], scope)
            op = str(node.children[1])[0] if kind == "aug_assign" else None
            # the target's parts run before the value: they may not use what the value found out
            found, self._ents = self._ents, before
            if hoist:
                # a target with nothing to run before the value: the value's plain form, held
                # (as for a `let`); for `n += x` or `n -= x` on a local, that of `n + x`
                ents, tree, target = dict(before), node.children[-1], node.children[0]
                local = target.data == "name_target" and str(target.children[0]) in scope.names
                if op in ("+", "-") and local:
                    sign = node.children[1]
                    tree = Tree("binop", [Tree("name", [target.children[0]]),
                                          Token("ADD_OP", op, sign.start_pos, sign.line, sign.column), tree])
                    value, op = self._arith(op, f"v_{target.children[0]}", value), None
                plain = self._plain_form(tree, scope, ents)
                if plain is not None:
                    held = u.temp()
                    self._guarded(depth, f"{held} = ", plain, value, loc)
                    value, found = held, ents
            self._value_ents = found
            for line in self._assign(node.children[0], value, op, scope).split("\n"):
                u.emit(depth, line, loc)
            self._ents = {**found, **self._ents}
            if node.children[0].data == "name_target":
                self._ents.pop(f"v_{node.children[0].children[0]}", None)
        elif kind == "let_stmt":
            name = str(node.children[0])
            ents = dict(self._ents)
            value = self._expr(node.children[1], scope)
            plain = self._plain_form(node.children[1], scope, ents)
            scope.names.add(name)
            if plain is not None:  # (as for an expression rule: `_compile_tree`)
                self._ents = ents  # the checked form may not run: what it found out is not kept
                self._guarded(depth, f"v_{name} = ", plain, value, loc)
            else:
                u.emit(depth, f"v_{name} = {value}", loc)
            self._ents.pop(f"v_{name}", None)
        elif kind == "call_stmt":
            pushed = self._push_stmt(node.children[0], scope) or self._remove_stmt(node.children[0], scope)
            for line in (pushed or self._expr(node.children[0], scope)).split("\n"):
                u.emit(depth, line, loc)
        elif kind == "pass_stmt":
            u.emit(depth, "pass", loc)
        elif kind == "stop_stmt":
            u.emit(depth, "return None", loc)
        elif kind == "if_stmt":
            ents = dict(self._ents)
            cond = self._expr(node.children[0], scope)
            plain = self._plain_form(node.children[0], scope, ents)
            if plain is not None:  # (as for a `let`)
                self._ents = ents
                held = u.temp()
                self._guarded(depth, f"{held} = ", plain, cond, loc)
                cond = held
            u.emit(depth, f"if {cond}:", loc)
            self._block(node.children[1].children, scope, depth + 1)
            ents = dict(self._ents)  # an `elif` condition may not run
            shifted = u.shift
            for ch in node.children[2:]:
                if ch.data == "elif_clause":
                    self._elif(ch, scope, depth)
                    self._block(ch.children[1].children, scope, depth + 1)
                else:
                    u.emit(depth, "else:", self._at(ch))
                    self._block(ch.children[0].children, scope, depth + 1)
            u.shift = shifted
            self._ents = ents
        elif kind == "for_stmt":
            name = str(node.children[0])
            items = self._expr(node.children[1], scope)
            scope.names.add(name)
            if self._scalar_local(name):
                scope.scalars = scope.scalars | {name}
            self._ents.pop(f"v_{name}", None)
            # codegen `_iter` written out (a loop is charged its length when it starts, and runs
            # over a copy): lines of one statement, so one location
            t, m = u.temp(), u.temp()
            fresh = self._fresh_list(node.children[1], items)  # a new list: nothing else can change it
            counted = self._counted(node.children[1], scope)
            if counted is not None:  # `range(n)`: its numbers, without a list, as the built-in charges them
                items = (f"(_range({counted}) if _type({counted}) is _int and 0 <= {counted} <= {MAX_RANGE} and "
                         f"{_charged(counted)} else {items})")
            u.emit(depth, f"{t} = {items}", loc)
            if not fresh:
                u.emit(depth, f"if _type({t}) is not _list: {t} = _loop_list({t})", loc)
            u.emit(depth, f"{m} = c.meter; {m}.used += _len({t})", loc)
            u.emit(depth, f"if {m}.used > {m}.limit: {m}.over()", loc)
            u.emit(depth, f"for v_{name} in {t}:" if fresh else f"for v_{name} in {t}[:]:", loc)
            self._loops += 1
            try:
                self._block(node.children[2].children, scope, depth + 1)
            finally:
                self._loops -= 1
        else:  # pragma: no cover - grammar and compiler out of step
            raise _CompileError("D001", f"unsupported statement {kind}", loc)

    def _push_stmt(self, call: Any, scope: _Scope) -> str | None:
        """`push(xs, item)` as a statement, written out for its common case: a list that is not
        a constant and has room, and a plain scalar, or a list written out of locals that hold
        plain scalars (made anew: nothing else holds it, so it needs no copy); a value of any
        other kind is copied (`_copy`, as the primitive copies it). Anything else goes to the
        primitive, which checks in the same order and fails with its own error. Lines of one
        statement, so one location. None: not this form (the call is compiled as any other)."""
        if not (isinstance(call, Tree) and call.data == "call" and str(call.children[0]) == "push"):
            return None
        raw = call.children[1:]
        if (len(raw) != 2 or scope.pure or "push" in self.sym.functions or "push" in self.sym.procedures
                or any(isinstance(a, Tree) and a.data == "kwarg" for a in raw)):
            return None  # (any error of the call is the call's own)
        if self._used is not None:
            self._used.add("push")
        xs, item = (self._expr(a, scope) for a in raw)
        u = self._unit
        d, x = u.temp(), u.temp()
        names = _LOCAL_LIST.fullmatch(item)
        if names:  # a fresh list of locals: copied only if one holds a list or a map
            unknown = [n for n in names.group(1).split(", ") if n[2:] not in scope.scalars]
            plain = " and ".join(f"_type({n}) in _PL" for n in unknown)
        else:
            plain = "" if self._is_scalar(raw[1], scope) else f"_type({x}) in _PL"
        kept = f"{x} if {plain} else _copy({x}, c)" if plain else x  # (a scalar is kept as it is)
        found, unfrozen = self._unfrozen(xs, d)
        return (f"{found}; {x} = {item}\n"
                f"if _type({d}) is _list{unfrozen} and _len({d}) < {MAX_TEXT}: "
                f"{d}.append({kept})\n"
                f"else: P_push(c, {d}, {x})")

    def _remove_stmt(self, call: Any, scope: _Scope) -> str | None:
        """`remove(xs, item)` as a statement, written out for its common case: a list that is not
        a constant and holds the item, a plain scalar; charged the list's length, as the
        primitive charges it before it removes. Anything else goes to the primitive, which checks
        in the same order and fails with its own error: an item the list does not hold too, with
        the charge given back first (so the list is walked once where it holds the item, not
        asked first whether it does). None: not this form."""
        if not (isinstance(call, Tree) and call.data == "call" and str(call.children[0]) == "remove"):
            return None
        raw = call.children[1:]
        if (len(raw) != 2 or scope.pure or "remove" in self.sym.functions or "remove" in self.sym.procedures
                or any(isinstance(a, Tree) and a.data == "kwarg" for a in raw)):
            return None
        if self._used is not None:
            self._used.add("remove")
        xs, item = (self._expr(a, scope) for a in raw)
        u = self._unit
        d, x, m = u.temp(), u.temp(), u.temp()
        found, unfrozen = self._unfrozen(xs, d)
        return (f"{found}; {x} = {item}\n"
                f"if _type({d}) is _list{unfrozen} and _type({x}) in _PL:\n"
                f"    {m} = c.meter; {m}.used += _len({d}); {m}.used <= {m}.limit or {m}.over()\n"
                f"    try: {d}.remove({x})\n"
                f"    except _ValueError: {m}.used -= _len({d}); P_remove(c, {d}, {x})\n"
                f"else: P_remove(c, {d}, {x})")

    def _counted(self, node: Any, scope: _Scope) -> str | None:
        """For `range(n)` of the built-in, `n` a local: the local as the call's code reads it
        (`_name`). Else None."""
        if not (isinstance(node, Tree) and node.data == "call" and str(node.children[0]) == "range"
                and "range" not in self.sym.functions and "range" not in self.sym.procedures
                and len(node.children) == 2):
            return None
        arg = node.children[1]
        if isinstance(arg, Tree) and arg.data == "name" and (name := str(arg.children[0])) in scope.names \
                and name not in self._subst:
            return f"v_{name}"
        return None

    def _fresh_list(self, node: Any, source: str) -> bool:
        """Whether `source` (generated from `node`) is a list made anew each time it runs: a
        collection's list, or a built-in that returns a new list or fails."""
        if _COLLECTION.fullmatch(source):
            return True
        if not (isinstance(node, Tree) and node.data == "call"):
            return False
        name = str(node.children[0])
        return name in _NEW_LISTS and name not in self.sym.functions and name not in self.sym.procedures \
            and (source.startswith(f"P_{name}(") or (name == "neighbors" and source.startswith("(_list(")))

    @staticmethod
    def _runs_nothing(target: Tree, scope: _Scope) -> bool:
        """Whether assigning to `target` runs no rule text before its value: a local or a
        global, or a field of an entity held in a local."""
        if target.data == "name_target":
            return True
        obj = target.children[0]
        return (target.data == "attr_target" and isinstance(obj, Tree) and obj.data == "name"
                and str(obj.children[0]) in scope.names)

    def _assign(self, target: Tree, value: str, op: str | None, scope: _Scope) -> str:
        loc = self._at(target)
        fn = AUG_OPS.get(op or "")
        if target.data == "name_target":
            name = str(target.children[0])
            if self._used is not None:
                self._used.add(name)
            if name in scope.names:
                self._load(name)
                return f"v_{name} = {self._arith(op, f'v_{name}', value)}" if op else f"v_{name} = {value}"
            if name in self.sym.globals:
                return f"G[{name!r}] = {self._arith(op, f'G[{name!r}]', value, kept=True)}" if op else \
                    f"G[{name!r}] = {self._stored(value)}"
            hint = did_you_mean(name, [*scope.names, *self.sym.globals]) or \
                "declare it under `globals:` or create a local with `let`"
            raise _CompileError("D105", f"cannot assign to `{name}`: it is not a local or a "
                                "declared global", loc, hint)
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
            # Inline, on one line (so a failure keeps its location): the object, then the
            # value, then the entity's state dict (`_state_of` for every case but the common one).
            u = self._unit
            o, x, d = u.temp(), u.temp(), u.temp()
            f = repr(fname)
            first = f"{o} = {obj}; "
            if _LOCAL.fullmatch(obj) and (self._once is None or obj[2:] in self._once):
                # a local bound once: its entity's dict kept (`_read_kept`), the value run before
                # this lookup (so what the value found out is known here)
                o, first = obj, ""
                ent = self._value_ents.get(obj)
                if ent is None:
                    ent = self._ents[obj] = u.temp()
                    held = f"({ent} := (E.get({o}) if _type({o}) is _str else None))"
                else:
                    held = ent
                found = f"{d} = ({ent} if {held} is not None and {f} in {ent} else _state_of(c, {o}, {f}))"
            else:
                found = (f"{d} = ({d} if _type({o}) is _str and ({d} := E.get({o})) is not None and {f} in {d} "
                         f"else _state_of(c, {o}, {f}))")
            if _PLAIN_LITERAL.fullmatch(value) or _FRESH_LITERAL.fullmatch(value):
                x, then = value, ""  # nothing to run or copy
            else:
                then = f"{x} = {value}; "
            store = self._arith(op, f"{d}[{f}]", x, kept=True) if op else self._stored(x)
            return f"{first}{then}{found}; {d}[{f}] = {store}"
        cont = self._expr(target.children[0], scope)
        key = self._expr(target.children[1], scope)
        if op in ("+", "-"):
            # a whole number added to or taken from a whole number in a map written out, in
            # `_set_item`'s order (not a constant, then the item); any other case goes to it
            u = self._unit
            d, k, x, o, r = u.temp(), u.temp(), u.temp(), u.temp(), u.temp()
            found, unfrozen = self._unfrozen(cont, d)
            return (f"{found}; {k} = {key}; {x} = {value}\n"
                    f"if _type({d}) is _dict{unfrozen} and _type({x}) is _int "
                    f"and _type({o} := {d}.get({k}, 0)) is _int and {-_SMALL} < ({r} := {o} {op} {x}) < {_SMALL}: "
                    f"{d}[{k}] = {r}\n"
                    f"else: _set_item(c, {d}, {k}, {x}, {fn})")
        if op:
            return f"_set_item(c, {cont}, {key}, {value}, {fn})"
        # `_set_item` for every case but the common one (a plain value into a map that is not a
        # constant), which is written out: lines of one statement, so one location.
        u = self._unit
        d, k, x = u.temp(), u.temp(), u.temp()
        found, unfrozen = self._unfrozen(cont, d)
        return (f"{found}; {k} = {key}; {x} = {value}\n"
                f"if _type({d}) is _dict and _type({x}) in _PL{unfrozen}: {d}[{k}] = {x}\n"
                f"else: _set_item(c, {d}, {k}, {x})")

    # ---- expressions: each returns a Python expression ----

    def _expr(self, node: Any, scope: _Scope) -> str:
        if self._depth == 0:  # a whole expression: its repeated reads may be shared (`_x_getattr`)
            self._avail, self._twice, self._objs_twice = _reads_shared(node, self.sym) if self._dots \
                else _NOTHING_SHARED
            self._depth = 1
            try:
                return self._expr(node, scope)
            finally:
                self._depth = 0
                self._avail = None
        if isinstance(node, Token):  # bare tokens only occur as names here
            return self._name(node, scope)
        if node.data in ("in_", "not_in"):  # `in` walks a list: priced by its length (codegen._in)
            u = self._unit
            x, xs = u.temp(), u.temp()
            # The common case written out: a scalar looked for in a short list (free) or a map's
            # keys; the rest is `_in`'s. Both sides are read first, in order, as for `_in`.
            test = (f"({x} in {xs} if (({x} := {self._expr(node.children[0], scope)}) is {x}) and "
                    f"(_type({xs} := {self._expr(node.children[1], scope)}) is _list and _len({xs}) <= {FREE_WALK} "
                    f"or _type({xs}) is _dict) and _type({x}) in _SC else _in(c, {x}, {xs}))")
            return test if node.data == "in_" else f"(not {test})"
        infix = _INFIX.get(node.data)
        if infix:  # `a or b`, `a and b`, `a in b`, `a not in b`: Python's own operators
            left = self._expr(node.children[0], scope)
            return f"({left} {infix} {self._maybe(node.children[1], scope)})"
        handler = getattr(self, "_x_" + node.data, None)
        if handler is None:  # pragma: no cover
            raise _CompileError("D001", f"unsupported expression {node.data}", self._at(node))
        return handler(node, scope)

    def _plain_form(self, node: Any, scope: _Scope, ents: dict[str, str]) -> _Plain | None:
        """The expression with its reads of fields as plain subscripts (`E[x]['f']`), for the
        common case, or None where that cannot pay or cannot be right.

        Only for an expression that reads fields and does nothing a second run would change
        but the budget (`_plain_ok`): names, numbers, truth values, reads, arithmetic,
        comparisons, `and`, `or`, `not`, `if`, lists written out, texts without inserts, list
        comprehensions, `len`, `count`, `filter`, `any`, `all` with their test written in
        place, calls of functions (short ones written out, `_inline`) and pure built-ins, and
        `value` of a modifier no layer changes (its base). Its caller (`_guarded`) runs it
        first and, on any exception (`_MISS`), gives back the budget it charged and runs the
        checked form (what `_x_getattr` writes) from the start.
        Off its common case the plain form raises KeyError or TypeError, or gives way (`_miss`);
        where it fails, the checked form fails as it always did, with its own error at its own
        place (inside a function written out, that function's), and the budget too ends where
        the checked form ends it. A plain subscript gives a value exactly where the checked
        form's inline branch gives the same one: an entity's state dict is found only for an id
        (every key of the state's entities and of the static table is a text), a key only in
        a map (a list or a text refuses a text index), and everything else is left to the
        checked form, which finds a static attribute, an `id`, a map of another type, or
        raises the error it always raised. A sum or a difference is kept only within
        ±_SMALL (`_x_binop`, `_arith`). A `let` of such an expression, or an `if` condition, is
        written the same way (`_stmt`)."""
        if not self._plain_on:
            return None
        ok, charges = _plain_ok(node, self.sym, self._inline_body, leaf=self._leaf, free=self._free)
        if not ok:
            return None
        avail, now = self._avail, self._ents
        self._plain, self._ents = True, ents  # (the dicts held before the checked form, which may not run)
        self._plain_flags, self._calls, self._calls_deepest, self._depth_asked = set(), "", 0, False
        try:
            form = self._expr(node, scope)
            return _Plain(form, charges, tuple(sorted(self._plain_flags)), self._calls, self._calls_deepest,
                          self._depth_asked)
        finally:
            self._plain = False
            self._avail, self._ents = avail, now

    def _guarded(self, depth: int, to: str, plain: _Plain, checked: str, loc: Loc) -> None:
        """`to` (`return ` or `v_name = `) the plain form of an expression, or, where it raises
        anything, its checked form run from the start, with the budget it charged given back
        first (`_plain_form`). What the plain form asks once rather than at each use, which may
        be in a loop:
        - the parameters it compares as scalars (`_x_compare`): where one is not, the checked
          form decides;
        - the calls it writes out (`_inline`): their depth check first, at the depth of the
          deepest one (deeper, the checked form decides; `_dok`, asked as the text starts), and
          their steps of the budget (where the function calls a rule) counted as they run once
          per item, then charged at once.
          The form changes nothing, so an end of the budget found after it is the one found
          inside it, at the same line."""
        u = self._unit
        used = u.temp() if plain.charges else ""
        if plain.charges:
            u.emit(depth, f"{used} = c.meter.used", loc)
        u.emit(depth, "try:", loc)
        asks = [f"_s_{name}" for name in plain.flags]
        if plain.depth:
            u.depth_asked = max(u.depth_asked, plain.deepest)  # (asked once, on entry: codegen `Unit.build`)
            asks.append("_dok")
        if asks:
            u.emit(depth + 1, " and ".join(asks) + " or _miss()", loc)
        if not plain.calls:
            u.emit(depth + 1, f"{to}{plain.form}", loc)
        else:
            k, value, m = plain.calls, u.temp(), u.temp()
            u.emit(depth + 1, f"{k} = 0", loc)
            u.emit(depth + 1, f"{value} = {plain.form}", loc)
            u.emit(depth + 1, f"if {k}:", loc)
            u.emit(depth + 2, f"{m} = c.meter; {m}.used += {k}", loc)
            u.emit(depth + 2, f"if {m}.used > {m}.limit: {m}.over()", loc)
            u.emit(depth + 1, f"{to}{value}", loc)
        u.emit(depth, "except _MISS:  # not the common case: the checked form decides", loc)
        if plain.charges:
            u.emit(depth + 1, f"c.meter.used = {used}", loc)
        u.emit(depth + 1, f"{to}{checked}", loc)

    def _maybe(self, node: Any, scope: _Scope) -> str:
        """A part of the expression that may not run (the right of `and`, a branch of `if`): the
        reads it makes are not there for what comes after it."""
        avail, ents = self._avail, self._ents
        self._avail = None if avail is None else dict(avail)
        self._ents = dict(ents)
        try:
            return self._expr(node, scope)
        finally:
            self._avail, self._ents = avail, ents

    def _apart(self, node: Any, scope: _Scope) -> str:
        """A part that runs in a scope of its own, later or once per item (the body of a
        comprehension or an `x => ...` function): it shares no read with the rest. (Inside, no
        local is bound again while it runs: each may keep its entity.)"""
        avail, ents, once = self._avail, self._ents, self._once
        self._avail = None if avail is None else {}
        self._ents, self._once = {}, None
        self._per_item += 1
        try:
            return self._expr(node, scope)
        finally:
            self._avail, self._ents, self._once = avail, ents, once
            self._per_item -= 1

    def _load(self, name: str) -> None:
        if name in self._incoming:
            self._loads.add(name)

    def _x_name(self, node: Tree, scope: _Scope) -> str:
        return self._name(node.children[0], scope)

    def _name(self, tok: Token, scope: _Scope) -> str:
        name = str(tok)
        if self._used is not None:
            self._used.add(name)
        if name in scope.names:
            if name in self._subst:  # a parameter of a function inlined here (`_inline`)
                return self._subst[name]
            self._load(name)
            return f"v_{name}"
        if name in self.sym.globals:
            return f"G[{name!r}]"
        if name in self.sym.constants:
            return self._unit.const(self.sym.constants[name])
        if name in self.sym.collections:
            return f"_list(c.model.collections[{name!r}])"  # (codegen `_coll`, written out)
        if name in BUILTIN_NAMES:
            return BUILTIN_NAMES[name]
        what = "function" if name in PRIMITIVES or name in self.sym.functions else ""
        hint = did_you_mean(name, [*scope.names, *self.sym.all_names()])
        if what:
            hint = f"`{name}` is a function: call it as `{name}(...)`"
        raise _CompileError("D101", f"unknown name `{name}`", self._at(tok), hint)

    def _x_qname(self, node: Tree, scope: _Scope) -> str:
        tok = node.children[0]
        name = str(tok)[1:-1]
        if self._used is not None:
            self._used.add(name)
        if name not in self.sym.constants:
            raise _CompileError("D101", f"unknown id `{name}`", self._at(tok),
                                did_you_mean(name, self.sym.constants))
        return self._unit.const(self.sym.constants[name])

    def _x_int_(self, node: Tree, scope: _Scope) -> str:
        tok = node.children[0]
        if len(str(tok).lstrip("-")) > MAX_DIGITS:
            raise _CompileError("D003", f"a number of {len(str(tok).lstrip('-')):,} digits; numbers in rules have "
                                f"at most {MAX_DIGITS}", self._at(tok))
        return self._unit.const(int(tok))

    def _x_decimal(self, node: Tree, scope: _Scope) -> str:
        tok = node.children[0]
        if len(str(tok).split(".")[0]) > MAX_DIGITS:
            raise _CompileError("D003", f"a number of more than {MAX_DIGITS} digits; numbers in rules have "
                                f"at most {MAX_DIGITS}", self._at(tok))
        return self._unit.const(float(tok))

    def _x_true(self, node: Tree, scope: _Scope) -> str:
        return "True"

    def _x_false(self, node: Tree, scope: _Scope) -> str:
        return "False"

    def _x_none(self, node: Tree, scope: _Scope) -> str:
        return "None"

    def _x_string(self, node: Tree, scope: _Scope) -> str:
        tok = node.children[0]
        raw = str(tok)[1:-1]
        text = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), raw)
        if "{" not in text and "}" not in text:
            return repr(text)
        parts: list[str] = []
        pos = 0
        base = self._at(tok)
        for m in _INTERP.finditer(text):
            if m.start() > pos:
                parts.append(repr(text[pos:m.start()]))
            pos = m.end()
            if m.group(0) in ("{{", "}}"):
                parts.append(repr(m.group(0)[0]))
                continue
            inner = m.group(1)
            saved, saved_pieces = self._base, self._pieces
            self._base = Loc(base.file, base.line, base.col + 1 + m.start(1)) if base.line else base
            self._pieces = ()  # the insert is one line, placed by its own base
            try:
                sub = parse(inner + "\n", "expression", fresh=self._fresh, source=base.file)
            except ParseFailure as failure:
                from lark.exceptions import UnexpectedInput  # loaded: lark made this failure
                if not isinstance(failure.error, UnexpectedInput):
                    raise failure.error from None
                self._syntax_error(failure.error, inner, "`{...}` insert of this text")
                self._base, self._pieces = saved, saved_pieces
                raise _Reported() from None
            parts.append(f"_text({self._expr(sub.children[0], scope)})")
            self._base, self._pieces = saved, saved_pieces
        if pos < len(text):
            parts.append(repr(text[pos:]))
        return f"_join(c, ({', '.join(parts)},))"

    def _x_list_(self, node: Tree, scope: _Scope) -> str:
        return "[" + ", ".join(self._expr(ch, scope) for ch in node.children) + "]"

    def _x_dict_(self, node: Tree, scope: _Scope) -> str:
        pairs = [f"{self._expr(p.children[0], scope)}: {self._expr(p.children[1], scope)}" for p in node.children]
        return "{" + ", ".join(pairs) + "}"

    def _x_comprehension(self, node: Tree, scope: _Scope) -> str:
        elem_node, name_tok, seq_node, *cond_node = node.children
        name = str(name_tok)
        inner = scope.child({name}, scalar=self._scalar_items(seq_node, scope))
        if self._no_walrus:  # (inside a comprehension's list Python allows no `:=`)
            self._no_walrus += 1
            try:
                seq = self._expr(seq_node, scope)
            finally:
                self._no_walrus -= 1
            elem = self._apart(elem_node, inner)
            cond = f" if {self._apart(cond_node[0], inner)}" if cond_node else ""
            return f"[{elem} for v_{name} in _iter(c, {seq}){cond}]"
        # codegen `_iter` written out, before the loop: the list (a map's keys), charged its
        # length, and copied unless it is new (the body may change it)
        u = self._unit
        xs = u.temp()
        numbers = self._numbers(seq_node, scope, xs)
        if numbers is not None:
            elem = self._apart(elem_node, inner)
            cond = f" if {self._apart(cond_node[0], inner)}" if cond_node else ""
            return f"([{elem} for v_{name} in {xs}{cond}] if {numbers} else None)"
        seq = self._expr(seq_node, scope)
        items = xs if self._fresh_list(seq_node, seq) else f"{xs}[:]"
        elem = self._apart(elem_node, inner)
        cond = f" if {self._apart(cond_node[0], inner)}" if cond_node else ""
        return (f"([{elem} for v_{name} in {items}{cond}] if (_type({xs} := {seq}) is _list or "
                f"({xs} := _loop_list({xs})) is not None) and {_charged(f'_len({xs})')} else None)")

    def _numbers(self, seq_node: Any, scope: _Scope, xs: str) -> str | None:
        """For a comprehension over `range(n)` or `range(a, b)` of the built-in: a condition that
        puts in `xs` Python's range of whole numbers, charged what the built-in's list and the
        comprehension over it are charged (its length each), or else the built-in's list,
        charged its length; each argument runs once, first. None: not this form."""
        if not (isinstance(seq_node, Tree) and seq_node.data == "call" and str(seq_node.children[0]) == "range"
                and "range" not in self.sym.functions and "range" not in self.sym.procedures
                and len(seq_node.children) in (2, 3)
                and not any(isinstance(a, Tree) and a.data == "kwarg" for a in seq_node.children[1:])):
            return None
        if self._used is not None:
            self._used.add("range")
        u = self._unit
        args = [self._expr(a, scope) for a in seq_node.children[1:]]
        held = [u.temp() for _ in args]
        runs = " and ".join(_ran(h, a) for h, a in zip(held, args, strict=True))
        lo, hi = ("0", held[0]) if len(held) == 1 else held
        ints = " and ".join(f"_type({h}) is _int" for h in held)
        n = hi if lo == "0" else f"({hi} - {lo})"
        return (f"({runs} and ({ints} and 0 <= {n} <= {MAX_RANGE} and ({xs} := _range({', '.join(held)})) is not None "
                f"and {_charged(f'2 * {n}')} or ({xs} := P_range(c, {', '.join(held)})) is not None "
                f"and {_charged(f'_len({xs})')}))")

    def _x_lambda_(self, node: Tree, scope: _Scope) -> str:
        name = str(node.children[0])
        self._in_lambda += 1
        try:
            body = self._apart(node.children[1], scope.child({name}))
        finally:
            self._in_lambda -= 1
        return f"(lambda c, v_{name}: {body})"

    def _x_ternary(self, node: Tree, scope: _Scope) -> str:
        a_node, cond_node, b_node = node.children
        cond = self._expr(cond_node, scope)  # (Python runs the condition first)
        return f"({self._maybe(a_node, scope)} if {cond} else {self._maybe(b_node, scope)})"

    def _x_not_(self, node: Tree, scope: _Scope) -> str:
        return f"(not {self._expr(node.children[0], scope)})"

    def _x_neg(self, node: Tree, scope: _Scope) -> str:
        return f"(-{self._expr(node.children[0], scope)})"

    def _x_compare(self, node: Tree, scope: _Scope) -> str:
        """`a op b`: as Python compares, where that takes a bounded time, which is where a side
        is a scalar: one the rule writes or computes (`_SCALAR_KINDS`), or a list of such
        written out; else, where one holds a scalar when it runs. Two lists or maps are
        compared by codegen `_compare`, which prices the walk. A local bound once, on entry (a
        parameter), is asked once per call (`Unit.scalar_flags`): in the hottest comparisons a
        field is compared with a parameter, in a loop."""
        left, right = node.children[0], node.children[2]
        a = self._expr(left, scope)
        b = self._expr(right, scope)
        op = str(node.children[1])
        plain = f"({a} {op} {b})"
        if self._is_scalar(left, scope) or self._is_scalar(right, scope) or any(
                _PLAIN_LITERAL.fullmatch(x) or _FRESH_LITERAL.fullmatch(x) for x in (a, b)):
            return plain
        ctx = "None" if self._plain else "c"  # (a plain form charges nothing: codegen `_compare`)
        priced = f"_compare({ctx}, {a}, {b}, {op!r})"
        for side in (a, b):
            name = side[2:]
            if _LOCAL.fullmatch(side) and name in self._entry_once and name not in scope.inner and not self._inlining:
                self._unit.scalar_flags.add(name)
                if self._plain:  # (asked once, before the plain form runs: `_guarded`)
                    self._plain_flags.add(name)
                    return plain
                return f"({plain} if _s_{name} else {priced})"
        if self._no_walrus:  # (inside a comprehension's list Python allows no `:=`)
            return priced
        x = a if _TEMP.fullmatch(a) else self._unit.temp()
        held = x if x == a else f"({x} := {a})"
        return f"({x} {op} {b} if _type({held}) in _SC else _compare({ctx}, {x}, {b}, {op!r}))"

    def _x_binop(self, node: Tree, scope: _Scope) -> str:
        chain = self._text_chain(node)
        if chain is not None:
            return self._joined_chain(*chain, scope)
        far = self._unbounded.get(id(node), 0)
        if far < _CHAIN_STEPS - 1 and self._sum_step(node) and self._sum_step(node.children[0]):
            # A chain of sums and differences of numbers (`a + b + c - d`, each step on the left
            # of the next) is bounded at its end, not at each step (docs/limits.md): a step grows
            # a value by one of the chain's numbers at most, and the end refuses a number past
            # the limit, or (in a plain form) gives way to the checked form for anything but a
            # number within ±_SMALL, which then runs the chain alike. One check for a chain of
            # up to _CHAIN_STEPS steps; a longer one is bounded every _CHAIN_STEPS steps, so
            # that a plain form joins at most that many lists or texts before it gives way.
            self._unbounded[id(node.children[0])] = far + 1
            if not far:
                self._chain_ends.add(id(node))
        a = self._expr(node.children[0], scope)
        b = self._expr(node.children[2], scope)
        return self._binop(node, a, b)

    def _made_list(self, node: Any) -> bool:
        """Whether an expression's value, where it is a list, is one it makes as it runs, that
        nothing else holds: a list written out, a comprehension, a join (`+` makes a new list of
        two), `range()` of the built-in, or a choice between two such. The flow does not copy
        such a list of a choice's options (`Rule.fresh`, engine/run/direct.py `Offer`). (By the
        text; `_fresh_list` asks the same of a list a loop walks, by its generated source.)"""
        if not isinstance(node, Tree):
            return False
        if node.data in ("list_", "comprehension"):
            return True
        if node.data == "binop":
            return str(node.children[1]) == "+"
        if node.data == "ternary":
            return self._made_list(node.children[0]) and self._made_list(node.children[2])
        return (node.data == "call" and str(node.children[0]) == "range"
                and "range" not in self.sym.functions and "range" not in self.sym.procedures)

    def _sum_step(self, node: Any) -> bool:
        """Whether `node` is a difference, or a sum that is not a join (`_may_join`): a step
        of a chain of them (`_x_binop`)."""
        if not (isinstance(node, Tree) and node.data == "binop"):
            return False
        op = str(node.children[1])
        return op == "-" or (op == "+" and not (self._may_join(node.children[0]) or self._may_join(node.children[2])))

    def _text_chain(self, node: Tree) -> tuple[list, list] | None:
        """`a + 'text' + b + ...`, three or more operands joined, the second a text written out
        and each after it a text, a name or an id: its operands, and its `+` nodes innermost first
        (`_joined_chain`). Such chains make keys (`x.region + " " + b + " " + p`)."""
        if self._no_walrus or str(node.children[1]) != "+":
            return None
        parts, levels = [], []
        while isinstance(node, Tree) and node.data == "binop" and str(node.children[1]) == "+":
            levels.append(node)
            parts.append(node.children[2])
            node = node.children[0]
        parts.append(node)
        parts.reverse()
        levels.reverse()
        if len(parts) < 3 or not (isinstance(parts[1], Tree) and parts[1].data == "string") or not all(
                isinstance(x, Tree) and x.data in ("string", "name", "qname") for x in parts[1:]):
            return None
        return parts, levels

    def _joined_chain(self, parts: list, levels: list, scope: _Scope) -> str:
        """A chain of `_text_chain`, its operands compiled left to right as the nested `+`
        compiles them. When every operand after the first is a text written out, a local or
        an id (reading it cannot fail or change anything, so it may be read before the joins
        before it), all texts with at most FREE_WALK characters together are joined at once:
        each `+` of the nested form would join them inline, uncharged, to the same text.
        Otherwise, the nested form, on the operands as compiled."""
        exprs = [self._expr(x, scope) for x in parts]
        first, rest = exprs[0], exprs[1:]

        def nested(a: str) -> str:
            for level, b in zip(levels, rest, strict=True):
                a = self._binop(level, a, b)
            return a

        written = [_PLAIN_LITERAL.fullmatch(e) is not None and e[0] in "'\"" for e in rest]
        names = [e for w, e in zip(written, rest, strict=True) if not w]
        if _NUMBER.fullmatch(first) or not all(_UNFAILING.fullmatch(e) for e in names):
            return nested(first)
        x = self._unit.temp()
        size = sum(len(ast.literal_eval(e)) for w, e in zip(written, rest, strict=True) if w)
        checks = "".join(f" and _type({e}) is _str" for e in names)
        sizes = "".join(f" + _len({e})" for e in names)
        return (f"({' + '.join([x, *rest])} if _type({x} := {first}) is _str{checks} and _len({x}){sizes} + {size} "
                f"<= {FREE_WALK} else {nested(x)})")

    def _binop(self, node: Tree, a: str, b: str) -> str:
        """`a op b` of the binary operation `node`, its sides compiled (`a`, `b`)."""
        op = str(node.children[1])
        end = id(node) in self._chain_ends
        self._chain_ends.discard(id(node))
        if self._unbounded.pop(id(node), 0):  # a step of a chain that the chain's end bounds (`_x_binop`)
            if op == "-" or self._plain:  # (a text or a list fails at the end, or before)
                return f"({a} {op} {b})"
            if self._no_walrus:
                return f"_add(c, {a}, {b}, False)"
            x, y = self._unit.temp(), self._unit.temp()  # (texts and lists joined as `_add` joins them)
            return f"({x} + {y} if _type({x} := {a}) is _type({y} := {b}) is _int else _add(c, {x}, {y}, False))"
        if op in ("+", "-", "*") and not (op != "*" and (_NUMBER.fullmatch(a) or _NUMBER.fullmatch(b)) and not end):
            # `+` and `*` may build lists and texts, `+`, `-` and `*` huge numbers: bounded helpers
            # (a literal number added or taken away grows a value by one step of the budget at
            # most, unless it ends a chain whose steps are not bounded on their own)
            if self._plain_sum(node):
                # A number within ±_SMALL is what `_add` gives (it bounds only texts, lists and
                # huge whole numbers, and adds the rest as Python does). Anything else gives way
                # to the checked form: a text or a list fails the comparison (TypeError), a huge
                # number or NaN the bounds (`_miss`). So a sum costs what a difference costs.
                r = self._unit.temp()
                return f"({r} if {-_SMALL} < ({r} := {a} + {b}) < {_SMALL} else _miss())"
            return self._arith(op, a, b, joins=op == "+" and (
                self._may_join(node.children[0]) or self._may_join(node.children[2])))
        if op == "%" and not _NUMBER.fullmatch(a):  # (a text on the left would be formatted: codegen `_mod`)
            return f"_mod({a}, {b})"
        return f"({a} {op} {b})"

    def _plain_sum(self, node: Tree) -> bool:
        """Whether `a + b` is written as a sum of numbers, or `_miss()` (`_x_binop`)."""
        return (self._plain and str(node.children[1]) == "+" and not self._no_walrus
                and not (self._may_join(node.children[0]) or self._may_join(node.children[2])))

    def _is_scalar(self, node: Any, scope: _Scope) -> bool:
        """Whether `node` gives a scalar or fails, as it is written here: by its kind
        (`_scalar_kind`), a comprehension's variable over `range()` or a collection, a sum of
        numbers in a plain form, a number written in the rule added to anything, a branch of
        two such, a built-in that declares a scalar result, or a call of a function whose value
        is one by its kind."""
        if _scalar_kind(node):
            return True
        if not isinstance(node, Tree):
            return False
        if node.data == "name":
            return str(node.children[0]) in scope.scalars
        if node.data == "binop":  # (a number added to anything else is a number, or fails)
            return self._plain_sum(node) or (str(node.children[1]) == "+" and any(
                isinstance(x, Tree) and x.data in ("int_", "decimal") for x in node.children[::2]))
        if node.data == "ternary":
            return self._is_scalar(node.children[0], scope) and self._is_scalar(node.children[2], scope)
        if node.data == "call":
            name = str(node.children[0])
            if name in self.sym.functions:
                return _scalar_kind(self._value_tree(name))
            return name in _SCALAR_PRIMITIVES and name not in self.sym.procedures
        return False

    def _scalar_local(self, name: str) -> bool:
        """Whether the local `name` holds a scalar wherever it is read: every statement of the
        text that binds it is a `for` over ids or numbers (with every local of the text taken to
        hide a collection of its name, since one may be bound after the loop)."""
        places = self._bindings.get(name, ())
        bound = _Scope(set(self._bindings), False)
        return bool(places) and all(p is not None and p.data == "for_stmt" and self._scalar_items(p.children[1], bound)
                                    for p in places)

    def _scalar_items(self, node: Any, scope: _Scope, depth: int = 0) -> bool:
        """Whether the list `node` gives holds scalars only: `range(...)`, the spaces a board
        built-in gives (`_ID_LISTS`), a collection (ids; a name is one only where no local,
        global or constant has it: `_name`), or a function whose value picks items of one
        (`[a for a in armies if ...]`)."""
        if not isinstance(node, Tree):
            return False
        name = str(node.children[0])
        if node.data == "call":
            if name in self.sym.procedures:
                return False
            if name not in self.sym.functions:
                return name in _ID_LISTS
            value = self._value_tree(name)
            return (depth < 4 and isinstance(value, Tree) and value.data == "comprehension"
                    and isinstance(value.children[0], Tree) and value.children[0].data == "name"
                    and str(value.children[0].children[0]) == str(value.children[1])
                    and self._scalar_items(value.children[2], _Scope(set(self.sym.functions[name].params), True),
                                           depth + 1))
        return node.data == "name" and name in self.sym.collections and name not in scope.names \
            and name not in self.sym.globals and name not in self.sym.constants

    def _may_join(self, node: Any, depth: int = 0) -> bool:
        """Whether `node`, a side of a `+`, looks as if it could be a text or a list, by its kind:
        a text, a list written out or made by a comprehension or a built-in, a field that starts
        as one, a branch or a sum of one, a function whose value is one or cannot be seen. A
        guess, for the plain form of `+` (`_x_binop`): a text or a list guessed a number costs a
        second run, not a result."""
        if not isinstance(node, Tree):
            return False  # a name: most often a number, in a sum
        kind = node.data
        if kind in ("string", "list_", "comprehension"):
            return True
        if kind == "getattr":
            return str(node.children[1]) in self.sym.joined_fields
        if kind == "ternary":
            return self._may_join(node.children[0], depth) or self._may_join(node.children[2], depth)
        if kind == "binop":
            return str(node.children[1]) == "+" and (
                self._may_join(node.children[0], depth) or self._may_join(node.children[2], depth))
        if kind == "call":
            name = str(node.children[0])
            if name in self.sym.functions:
                body = self._inline_body(name) if depth < _INLINE_DEPTH else None
                return body is None or self._may_join(body, depth + 1)
            return name in _JOINED
        return False

    def _stored(self, value: str) -> str:
        """`value` as it goes into the state (runtime `store_value`): a copy, checked, except a
        plain scalar (text, whole number, truth value, none), kept as it is without a call."""
        if _PLAIN_LITERAL.fullmatch(value) or _FRESH_LITERAL.fullmatch(value):
            return value  # (a list or map written out of plain scalars is made anew each time: no copy)
        if _TEMP.fullmatch(value):  # a value already held in a temporary
            return f"({value} if _type({value}) in _PL else _copy({value}, c))"
        x = self._unit.temp()  # (assignments are statements: `:=` is allowed here)
        return f"({x} if _type({x} := {value}) in _PL else _copy({x}, c))"

    def _arith(self, op: str, a: str, b: str, kept: bool = False, joins: bool = False) -> str:
        """`a op b` bounded and priced (codegen `_add`, `_sub`, `_mul`), with the common case
        inline: two whole numbers added, or a difference, without a call while it is below
        2**62 either way, or a join of up to FREE_WALK items (beyond, the helper decides). Where
        a side is plainly a text or a list, or `joins` (its text looks like one: `_may_join`),
        the join is written out first and numbers go to the helper: the checks for numbers would
        only delay the call. `kept`: the result goes into the state (`+=` on a field or a global), so a
        helper's result is refused if it is NaN or an infinity (`finite`; an inline result is a
        whole number or a difference within 2**62)."""
        def helper(call: str) -> str:
            return f"_finite({call})" if kept else call

        if self._no_walrus:  # (inside a comprehension's list Python allows no `:=`)
            return helper(f"{AUG_OPS[op]}(c, {a}, {b})")
        u = self._unit
        if self._plain and op == "+":
            # a side that may be a text or a list (`_may_join`): a join or a number within
            # bounds is what `_add` gives (a text or a list results only from two of its kind);
            # anything else goes to `_add`, without giving way
            x, y, r, t = u.temp(), u.temp(), u.temp(), u.temp()
            # (a join that `_add` would price gives way: a plain form charges nothing, `_plain_ok`)
            return (f"({r} if ({t} := _type({r} := ({x} := {a}) + ({y} := {b}))) in _SEQT and _len({r}) <= "
                    f"{FREE_WALK} or {t} is _int and {-_SMALL} < {r} < {_SMALL} else _miss() if {t} in _SEQT "
                    f"else {helper(f'_add(c, {x}, {y})')})")
        if op == "+" and not (joins or _SEQUENCE.match(a) or _SEQUENCE.match(b)):
            # (two lists joined inline here cost more to compile than it saved: +4% of a cold
            # validation against -0.5% of a Shogun game)
            x, y, r = u.temp(), u.temp(), u.temp()
            return (f"({r} if _type({x} := {a}) is _type({y} := {b}) is _int and {-_SMALL} < ({r} := {x} + {y}) "
                    f"< {_SMALL} else {helper(f'_add(c, {x}, {y})')})")
        if op == "+":  # a text or a list on one side: two of one kind joined, as `_add` joins them
            x, y = u.temp(), u.temp()
            return (f"({x} + {y} if _type({x} := {a}) is _type({y} := {b}) in _SEQT and _len({x}) + _len({y}) "
                    f"<= {FREE_WALK} else {helper(f'_add(c, {x}, {y})')})")
        if op == "-":
            r = u.temp()
            return f"({r} if {-_SMALL} < ({r} := {a} - {b}) < {_SMALL} else {helper(f'_sub_result({r})')})"
        return helper(f"{AUG_OPS[op]}(c, {a}, {b})")

    def _x_getitem(self, node: Tree, scope: _Scope) -> str:
        return f"{self._expr(node.children[0], scope)}[{self._expr(node.children[1], scope)}]"

    def _x_getattr(self, node: Tree, scope: _Scope) -> str:
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
        if obj == BUILTIN_NAMES["options"] and not self._no_walrus:
            # an option's value read where it is, without copying every option first (the copy
            # is not priced): a plain scalar; else what the copy gives
            o, t, f = self._unit.temp(), self._unit.temp(), repr(fname)
            other = "_miss()" if self._plain else f"_attr(c, {obj}, {f})"
            return f"({t} if {f} in ({o} := c.model.combo.options) and _type({t} := {o}[{f}]) in _PL else {other})"
        if self._plain:  # (`_plain_form`)
            return self._plain_read(node, obj, fname)
        if self._no_walrus:  # inside the list of a comprehension Python allows no `:=`
            return f"_attr(c, {obj}, {fname!r})"
        # A read made again in one expression that changes nothing (`_reads_shared`) is the value
        # of its first: the same object, field and state, so the same value or the same error;
        # and reads of several state fields of one object share its entity's dict.
        avail = self._avail
        if avail is None:
            return self._read_kept(obj, obj, fname, False)
        held = avail.get(("", obj), obj)  # `(_t5 := x.size)`: the value is in _t5
        if not _STABLE.fullmatch(held):
            return self._read(obj, fname)
        got = avail.get((held, fname))
        if got is not None:
            return got
        return self._kept(avail, node, held, fname, self._read_kept(obj, held, fname, id(node) in self._objs_twice))

    def _kept(self, avail: dict, node: Tree, held: str, fname: str, read: str) -> str:
        """`read` (of `held.fname`), kept in a temporary where the expression makes it again
        (`_reads_shared`): the reads after it find the temporary in `avail`."""
        if id(node) not in self._twice:
            return read
        v = self._unit.temp()
        avail[(held, fname)] = v
        shared = f"({v} := {read})"
        avail[("", shared)] = v
        return shared

    def _inline_body(self, name: str) -> Tree | None:
        """The value of function `name` if its calls in a plain form may be written out in place
        of the call (`_inline`): a short text that parses, of reads, arithmetic, comparisons,
        texts, pure built-ins and calls of such functions, at most `_INLINE_DEPTH` inside each
        other (`_plain_ok` with `body`); a function reaching itself is not. Else None."""
        if name in self._bodies:
            return self._bodies[name]
        self._bodies[name] = None  # (while it is looked at: a function reaching itself is not written out)
        decl = self.sym.functions.get(name)
        if decl is None or not isinstance(decl.body, str) or len(decl.body) > _INLINE_TEXT \
                or not by_position_ok(decl.params):
            return None
        body = self._value_tree(name)
        if body is None:
            return None
        nodes = list(_subtrees(body))
        if len(nodes) > _INLINE_NODES:
            return None
        ok, charges = _plain_ok(body, self.sym, self._inline_body, body=True, free=self._free)
        if not ok:
            return None
        called = [str(n.children[0]) for n in nodes if n.data == "call"]
        height = 1 + max((self._heights[f] for f in called if f in self._heights), default=0)
        if height > _INLINE_DEPTH:
            return None
        self._bodies[name], self._heights[name] = body, height
        self._frees[name] = not charges and not self._rule_calling(name)
        return body

    def _rule_calling(self, name: str) -> bool:
        """Whether function `name`, written out (`_inline_body`), calls a rule: its calls are then
        steps of the budget, as its own compilation finds (`calls_rules`)."""
        got = self._rules_called.get(name)
        if got is None:
            got = self._rules_called[name] = calls_rules(self._value_tree(name), self.sym)
        return got

    def _free(self, name: str) -> bool:
        """Whether a call of function `name` written out charges the budget nothing: its text
        calls no rule (`calls_rules`) and charges nothing itself (`_plain_ok`)."""
        return self._inline_body(name) is not None and self._frees.get(name, False)

    def _leaf(self, name: str) -> bool:
        """Whether a plain form may call function `name` (not written out): only if its text calls
        no other rule (no function but those written out, no modifier, event or step). A plain
        form that gives way runs its checked form from the start, and so the calls it made run
        again: were calls of rules whose plain forms call rules allowed, a chain of them (a
        function calling itself) could run its last link twice per link above it."""
        got = self._leaves.get(name)
        if got is None:
            got = self._leaves[name] = False  # (while it is looked at)
            tree = self._value_tree(name)
            if tree is not None:
                calls = [str(n.children[0]) for n in _subtrees(tree) if n.data == "call"]
                got = self._leaves[name] = not any(
                    c in SPECIAL_FORMS or c in self.sym.procedures or (
                        c in self.sym.functions and self._inline_body(c) is None) for c in calls)
        return got

    def _value_tree(self, name: str) -> Tree | None:
        """The parse tree of function `name`'s value, parsed once per compiler; None if it has no
        text or the text does not parse (the function's own compilation reports that)."""
        if name not in self._values:
            decl = self.sym.functions.get(name)
            tree = None
            if decl is not None and isinstance(decl.body, str):
                with suppress(ParseFailure, RecursionError):
                    tree = parse(decl.body if decl.body.endswith("\n") else decl.body + "\n", "expression",
                                 source=decl.loc.file).children[0]
            self._values[name] = tree
        return self._values[name]

    def _inline(self, name: str, params: tuple[str, ...], args: list[str]) -> str | None:
        """A call of function `name` in a plain form, written out: its arguments (run by the
        caller, in order), the call's step of the budget and the depth check that the callee's
        first line makes (codegen `Unit.build`), then its value with the parameters as the
        arguments. Anything its checked form would do otherwise (an error inside the function,
        the depth limit) makes the plain form give way to the checked form, which calls it.
        None where it is not written out (the plain form then calls it)."""
        body = self._inline_body(name)
        if body is None:
            return None
        u = self._unit
        subst, binds = {}, []
        for p, a in zip(params, args, strict=True):
            if _NAMED.fullmatch(a) or _PLAIN_LITERAL.fullmatch(a):
                subst[p] = a
            else:
                t = u.temp()
                binds.append(f"({t} := {a}) is {t}")
                subst[p] = t
        # the callee's depth check at the depth its checked form would see there, asked once
        # before the plain form runs (`_guarded`; the depth does not change while a text runs:
        # a call gives it back): each function written out around this one would have counted
        # a level; and the call's step, where the function calls a rule (`calls_rules`)
        self._calls_deepest = max(self._calls_deepest, len(self._inlining))
        self._depth_asked = True
        if not self._rule_calling(name):
            step = ""
        elif self._in_lambda or not self._per_item:  # (once, or in a scope of its own: charged here)
            step = _charged('1')
        else:  # once per item: counted, and charged once for the whole plain form (`_guarded`)
            self._calls = self._calls or u.temp()
            step = f"({self._calls} := {self._calls} + 1)"
        saved = (self._subst, self._inlining, self._avail, self._twice, self._objs_twice, self._ents, self._once,
                 self._base, self._pieces)
        self._subst, self._inlining = subst, (*self._inlining, name)
        self._avail, self._twice, self._objs_twice = _reads_shared(body, self.sym)
        self._ents, self._once = {}, None
        self._base, self._pieces = self.sym.functions[name].loc, ()
        try:
            value = self._expr(body, _Scope(set(params), True))
        except _CompileError:
            return None  # (the function's own compilation reports it)
        finally:
            (self._subst, self._inlining, self._avail, self._twice, self._objs_twice, self._ents, self._once,
             self._base, self._pieces) = saved
        checks = [*binds, step] if step else binds
        return f"({value} if {' and '.join(checks)} else None)" if checks else f"({value})"

    def _plain_read(self, node: Tree, obj: str, fname: str) -> str:
        """`obj.fname` in the plain form (`_plain_form`): a plain subscript. As in the checked
        form, a read made again in the expression is the value of its first, kept in a
        temporary, and the state fields of one object read more than once share one lookup of
        its entity's dict; a part that may not run keeps nothing for what follows (`_maybe`)."""
        avail = None if self._no_walrus else self._avail
        held = obj if avail is None else avail.get(("", obj), obj)
        if avail is not None and not _STABLE.fullmatch(held):
            avail = None
        if avail is not None and (got := avail.get((held, fname))) is not None:
            return got
        f = repr(fname)
        if fname in self.sym.fields and fname in self.sym.statics and not self._no_walrus:
            # a state field of some entities and a static attribute of others (of another kind):
            # the entity's field, else the static one, as `_attr` finds them
            self._unit.static = True
            e = self._unit.temp()
            read = f"({e}[{f}] if ({e} := E.get({obj})) is not None and {f} in {e} else S[{obj}][{f}])"
        elif fname in self.sym.fields:
            ent = self._ents.get(obj)  # a local's entity dict, held since before this expression
            if ent is None and avail is not None and id(node) in self._objs_twice:
                ent = avail.get(("#E", held))
                if ent is None:
                    ent = avail[("#E", held)] = self._unit.temp()
                    ent = f"({ent} := E[{obj}])"
            read = f"{ent or f'E[{obj}]'}[{f}]"
        elif fname in self.sym.statics:
            self._unit.static = True
            read = f"S[{obj}][{f}]"
        else:
            read = f"{obj}[{f}]"
        return read if avail is None else self._kept(avail, node, held, fname, read)

    def _read_kept(self, obj: str, held: str, fname: str, twice: bool) -> str:
        """A read of a state field whose entity's dict a temporary may keep: that of a local bound
        once (an entity's dict is never replaced while rules run, only its fields change, so it
        is kept from the first read to the end of the block), or, in an expression that
        changes nothing, that of another object read `twice` (several fields of it)."""
        if fname not in self.sym.fields:
            return self._read(obj, fname)
        if _LOCAL.fullmatch(held) and (self._once is None or held[2:] in self._once):
            table = self._ents
            key = held
        elif twice and self._avail is not None:
            table = self._avail
            key = ("#E", held)  # type: ignore[assignment]
        else:
            return self._read(obj, fname)
        ent = table.get(key)  # type: ignore[call-overload]
        if ent is None:
            ent = table[key] = self._unit.temp()  # type: ignore[index]
            return self._read(obj, fname, ent, first=True)
        return self._read(held, fname, ent)

    def _read(self, obj: str, fname: str, ent: str | None = None, first: bool = False) -> str:
        """`obj.fname` read inline. `ent`: the temporary holding the entity's state dict (or
        None, for an object that is not an id), which `first` sets: every state field of it
        read again in the expression is one lookup in it."""
        # The common case inline, `_attr` for every other: a state field of an entity; a static
        # attribute where no kind has a state field of that name (so `_attr` would find it
        # there); a key of a map where the name is neither (only `id` is then found on an id).
        u = self._unit
        f = repr(fname)
        if ent is not None and not first:  # (`obj` is then a value read again: a local, a global...)
            return self._state_read(f"({ent}[{f}] if {ent} is not None and {f} in {ent} else _attr(c, {obj}, {f}))")
        if _NAMED.fullmatch(obj):  # a local or a temporary: read it again rather than keep it
            o, held = obj, obj
        elif self._avail is not None and ("", obj) in self._avail:  # `(_t5 := ...)`: kept in _t5
            o, held = self._avail[("", obj)], obj
        else:
            o = u.temp()
            held = f"({o} := {obj})"
        if ent is not None:
            return self._state_read(f"({ent}[{f}] if ({ent} := (E.get({o}) if _type({held}) is _str else None)) "
                                    f"is not None and {f} in {ent} else _attr(c, {o}, {f}))")
        d = u.temp()
        if fname in self.sym.fields or fname in self.sym.statics:
            table = "E"
            if fname not in self.sym.fields:
                table = "S"
                u.static = True
            read = (f"({d}[{f}] if _type({held}) is _str and ({d} := {table}.get({o})) is not None "
                    f"and {f} in {d} else _attr(c, {o}, {f}))")
            return self._state_read(read) if table == "E" else read
        return f"({o}[{f}] if _type({held}) is _dict and {f} in {o} else _attr(c, {o}, {f}))"

    def _state_read(self, read: str) -> str:
        """`read`, a read whose common case finds a state field of an entity (in E), noted as such
        for `_unfrozen`."""
        self._state_reads.add(read)
        return read

    def _unfrozen(self, cont: str, d: str) -> tuple[str, str]:
        """A container about to be changed, `cont`, as the statement computes it into `d`, and the
        test that it is not a constant, written after `and` (a constant is shared read-only: the
        primitive or helper then refuses the change). A value of the state never is one: the
        state holds what the engine made and rules' values copied in (`_stored`), never a
        constant of the model. So a global (`G['x']`) needs no test, nor a state field read in
        its common case; where such a read gives way to `_attr`, which can find a static
        attribute, the temporary it sets asks for the test."""
        if _GLOBAL.fullmatch(cont):
            return f"{d} = {cont}", ""
        if cont in self._state_reads:
            head, _, tail = cont.rpartition(" else _attr(")
            s = self._unit.temp()
            return f"{s} = None; {d} = {head} else ({s} := _attr({tail[:-1]}))", \
                f" and ({s} is None or _id({d}) not in c.model.frozen_ids)"
        return f"{d} = {cont}", f" and _id({d}) not in c.model.frozen_ids"

    def _x_call(self, node: Tree, scope: _Scope) -> str:
        name_tok = node.children[0]
        name = str(name_tok)
        loc = self._at(name_tok)
        if self._used is not None:
            self._used.add(name)
        raw = node.children[1:]
        if _calls_a_rule(name, self.sym):
            self._unit.calls_rule = True  # (its calls are steps of the budget: `calls_rules`)
        if name in SPECIAL_FORMS:
            return self._special(name, raw, scope, loc)
        if name in _VERDICT_FORMS:
            verdicts = self._verdict_form(name, raw, scope)
            if verdicts is not None:
                return verdicts
        ents_before = dict(self._ents) if name == "say" else self._ents
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
            table = "procedures" if is_proc else "functions"
            if self._plain and not is_proc and not self._no_walrus:
                inlined = self._inline(name, decl.params, args)
                if inlined is not None:
                    return inlined
            self._unit.calls_out = True
            if not by_position_ok(decl.params):  # (R015, a parameter named twice; or a name not a name)
                scope_ = "{" + ", ".join(f"{p!r}: {a}" for p, a in zip(decl.params, args, strict=True)) + "}"
                return f"_ucall(c, {table!r}, {name!r}, {scope_})"
            # by position: the callee counts the call and checks the depth itself (codegen Unit.build).
            # `pos` read into a temporary, not called as a method: the interpreter specializes a
            # read of a slot (LOAD_ATTR), not a method call of an attribute that is no method.
            callee = f"c.model.{table}[{name!r}].pos"
            if not self._no_walrus:  # (inside a comprehension's list Python allows no `:=`)
                callee = f"({self._unit.temp()} := {callee})"
            return f"{callee}({', '.join(['c', *args])})"
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
        if name == "controller" and len(args) == 1 and not kwargs and not self._no_walrus:
            # a player of the game: itself, or the seat's player (primitives.controller); any
            # other value goes to the primitive, which refuses it
            p, seats = self._unit.temp(), self._unit.temp()
            return (f"(({seats}[{p}] if ({seats} := c.state.get('seats')) else {p}) if ({p} := {args[0]}) "
                    f"in c.state['players'] else P_controller(c, {p}))")
        if name == "get" and len(args) in (2, 3) and not kwargs and not self._no_walrus:
            return self._get(args)
        if name in ("min", "max") and len(args) == 2 and not kwargs and not self._no_walrus:
            # two scalars: Python's own, charged the two items as the primitive charges them
            # before it compares; anything else goes to the primitive
            u = self._unit
            a, b = u.temp(), u.temp()
            return (f"(_{name}({a}, {b}) if {_ran(a, args[0])} and _type({b} := {args[1]}) in _SC "
                    f"and _type({a}) in _SC and {_charged('2')} else P_{name}(c, {a}, {b}))")
        if name == "neighbors" and (len(args) == 1 or (len(args) == 2 and _KIND.fullmatch(args[1]))) \
                and not kwargs and not self._no_walrus:
            # a space's neighbours from the board's table (of the kind of link the text names),
            # without a call; no board, no such kind or not a space: the primitive, which refuses
            # it or gives what it gives
            u = self._unit
            x = args[0] if _NAMED.fullmatch(args[0]) else u.temp()
            b, t = u.temp(), u.temp()
            first = "" if x == args[0] else f"{_ran(x, args[0])} and "
            if len(args) == 1:
                return (f"(_list({t}) if {first}({b} := c.model.board) is not None and "
                        f"({t} := {b}.neighbors.get({x})) is not None else P_neighbors(c, {x}))")
            kind = args[1]
            return (f"(_list({t}) if {first}({b} := c.model.board) is not None and "
                    f"({t} := {b}.neighbors_by_kind.get({kind})) is not None and "
                    f"({t} := {t}.get({x})) is not None else P_neighbors(c, {x}, {kind}))")
        if name == "index" and len(args) == 2 and not kwargs and not self._no_walrus:
            return self._index(args)
        if name == "len" and len(args) == 1 and (ids := _COLLECTION.fullmatch(args[0])):
            return f"_len({ids.group(1)})"  # a collection's ids, counted without a copy of them
        if name == "len" and len(args) == 1 and self._plain:  # (`_plain_form`: a list, a map or a text, else _MISS)
            return f"_len({args[0]})"
        if name == "len" and len(args) == 1 and not self._no_walrus:
            # `len` of a list, map or text, without a call; any other value goes to the primitive
            t = self._unit.temp()
            return f"(_len({t}) if _type({t} := {args[0]}) in _LENT else P_len(c, {t}))"
        call = f"P_{name}(c{''.join(', ' + a for a in args)}{''.join(f', {k}={v}' for k, v in kwargs.items())})"
        if name == "say":  # the account is text nobody reads in a silent sweep: skip building it
            self._ents = ents_before  # (its arguments may not run)
            return f"(None if c.hooks.silent else {call})"
        return call

    def _get(self, args: list[str]) -> str:
        """`get(d, k)` or `get(d, k, default)` of a map without a call (`dict.get`, what the
        primitive runs for a map); any other value goes to the primitive. Each argument runs
        once, in the written order, on either branch."""
        u = self._unit
        d = u.temp()
        rest, kept = [], []
        for a in args[1:]:
            if _NAMED.fullmatch(a) or _INERT.fullmatch(a):
                rest.append(a)
            else:
                t = u.temp()
                rest.append(t)
                kept.append(f" and {_ran(t, a)}")
        return (f"({d}.get({', '.join(rest)}) if _type({d} := {args[0]}) is _dict{''.join(kept)} "
                f"else P_get(c, {d}, {', '.join(args[1:])}))")

    def _index(self, args: list[str]) -> str:
        """`index(xs, x)` of a list holding `x`, a plain scalar, written out: charged the list's
        length, as the primitive charges it before it looks; a collection's own ids are looked
        up without a copy of them. Anything else goes to the primitive, both arguments run."""
        u = self._unit
        xs, x = u.temp(), u.temp()
        ids = _COLLECTION.fullmatch(args[0])
        seq = ids.group(1) if ids else args[0]  # (a collection's ids: a tuple)
        return (f"({xs}.index({x}) if {_ran(xs, seq)} and _type({x} := {args[1]}) in _PL "
                f"and _type({xs}) in _LT and {x} in {xs} and {_charged(f'_len({xs})')} else "
                f"P_index(c, {f'_list({xs})' if ids else xs}, {x}))")

    def _verdict_form(self, name: str, raw: list, scope: _Scope) -> str | None:
        """`count`, `filter`, `any` or `all` of a list with its test written in place (`where=x =>
        cond`) as a Python comprehension: no call of the test per item. What the primitive does,
        in the same order: the list checked (`_seq`, its message), then for each item one step of
        the budget counted before the test (`_verdicts`: `over` raised at the same line), then the
        test. None: not this form (the primitive is called)."""
        shape = None if self._no_walrus else _verdict_shape(name, raw, self.sym)
        if shape is None:
            return None
        seq_node, test = shape
        u = self._unit
        xs = u.temp()
        seq = self._expr(seq_node, scope)
        var = str(test.children[0])
        cond = self._apart(test.children[1], scope.child({var}))
        if ids := _COLLECTION.fullmatch(seq):  # a collection's ids, a tuple: walked without a copy
            got = f"(({xs} := {ids.group(1)}) is {xs})"
        else:
            got = f"(_type({xs} := {seq}) is _list or ({xs} := _seq({xs}, {name + '()'!r})) is not None)"
        if self._plain and name in ("count", "filter"):
            # Every item is tested: its steps are counted at once, before the first. So at every
            # point the plain form has counted as many steps as the checked form, or more, and the
            # same once it is done: where it meets the limit, it gives way (`_guarded`) and the
            # checked form, counting a step per item, ends the budget where it always did.
            loop = f"for v_{var} in {xs} if {cond}"
            form = f"_len([0 {loop}])" if name == "count" else f"[v_{var} {loop}]"
            return f"({form} if {got} and {_charged(f'_len({xs})')} else None)"
        tick = f"c.tick() or {cond}"  # (a step per item, before its test)
        loop = f"for v_{var} in {xs} if {tick}" if name in ("count", "filter") else f"for v_{var} in {xs}"
        form = {"count": f"_len([0 {loop}])", "filter": f"[v_{var} {loop}]",
                "any": f"_any({tick} {loop})", "all": f"_all({tick} {loop})"}[name]
        return f"({form} if {got} else None)"

    def _special(self, name: str, raw: list, scope: _Scope, loc: Loc) -> str:
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
            base, *args = args
            if not decl.layered and all(self._inert(a) for a in args):
                # no layer of this ruleset changes it: its value is the base, as `_modify` would give
                return f"({base})"
        self._unit.calls_out = True  # (a modifier's layers, an event's triggers and a step run rules)
        mapping = "{" + ", ".join(f"{p!r}: {a}" for p, a in zip(decl.params, args, strict=True)) + "}"
        if name == "value":
            # layered: the hooks' pipeline at once; else `_modify`, which gives the base
            call = "c.hooks.modify" if decl.layered else "_modify"
            return f"{call}(c, {target!r}, {base}, {mapping})"
        hook = "emit" if name == "emit" else "schedule"
        return f"c.hooks.{hook}(c, {target!r}, {mapping})"

    def _inert(self, value: str) -> bool:
        """Whether generated source `value` can be left unread: reading it can neither fail nor
        change anything (a local bound on entry, a temporary, a constant, an id, a number, a
        truth value or none)."""
        if _LOCAL.fullmatch(value):
            return value[2:] in self._incoming
        return bool(_INERT.fullmatch(value))


def _ran(t: str, source: str) -> str:
    """Generated source that runs `source` into the temporary `t` and is true: so an argument
    runs once, first, whichever branch of a written-out built-in then reads `t`."""
    return f"(({t} := {source}) is {t})"


def _charged(amount: str) -> str:
    """Generated source that charges `amount` steps to the budget (`Ctx.charge`) and is true,
    or ends the budget. A call, where statements write the charge out: in the compiled engine
    the method's call costs less than setting the meter's field through `setattr` (the only
    way an expression can), and in the source the same."""
    return f"c.charge({amount}) is None"


def by_position_ok(params: tuple[str, ...]) -> bool:
    """Whether calls pass these parameters by position: all different, and names (they become
    the generated function's own; the schema already asks for names, this holds without it)."""
    return len(set(params)) == len(params) and all(type(p) is str and _NAME.fullmatch(p) for p in params)


def _bindings(root: Any, incoming: set[str]) -> dict[str, list[Tree | None]]:
    """Where each local of a text is bound: its `let` and `for` statements, and None for a
    parameter or flow variable and (twice: it is bound again) for each assignment to it. A
    local with one place is bound once (see `Compiler._read_kept`). Only statements are
    visited (an expression binds no local of the text)."""
    places: dict[str, list[Tree | None]] = {name: [None] for name in incoming}
    stack = [ch for ch in root.children if isinstance(ch, Tree)] if root.data == "effect" else []
    while stack:
        node = stack.pop()
        data = node.data
        if data in ("let_stmt", "for_stmt"):
            places.setdefault(str(node.children[0]), []).append(node)
            if data == "for_stmt":
                stack.append(node.children[2])
        elif data in ("assign", "aug_assign"):
            if node.children[0].data == "name_target":
                places.setdefault(str(node.children[0].children[0]), []).extend((None, None))
        elif data in _BLOCKS:
            stack.extend(ch for ch in node.children if isinstance(ch, Tree) and ch.data in _BLOCKS_AND_STMTS)
    return places


_BLOCKS = frozenset({"if_stmt", "elif_clause", "else_clause", "suite"})
_BLOCKS_AND_STMTS = _BLOCKS | {"let_stmt", "for_stmt", "assign", "aug_assign"}


def _reads_shared(root: Any, sym: Symbols) -> tuple[dict | None, set[int], set[int]]:
    """Whether the reads `o.f` of one expression may share what they read (a fresh table for
    `Compiler._x_getattr`, or None); which reads are made more than once (the ids of their nodes,
    by what they read: `x.size` twice); and which read state fields of an object read more than
    once (`x.size`, `x.owner`: one lookup of `x`'s entity). Only in an expression that cannot
    change the game while it runs: no procedure, no built-in that is not pure, no `emit`, `run`
    or `value` (a modifier's layers), no text template (its inserts are compiled apart)."""
    if type(root) is not Tree or root.data in _LEAVES:
        return {}, set(), set()
    chains: list[Tree] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is not Tree:
            if "{" in node and node.type == "STRING":
                return None, set(), set()
            continue
        data = node.data
        if data == "call":
            name = str(node.children[0])
            if name in sym.procedures or name in SPECIAL_FORMS or (
                    name not in sym.functions and (prim := PRIMITIVES.get(name)) is not None and prim.kind != "pure"):
                return None, set(), set()
        elif data == "getattr":
            chains.append(node)
        stack.extend(node.children)
    if len(chains) < 2:
        return {}, set(), set()
    shapes: dict[int, str | None] = {}
    reads: dict[str, list[int]] = {}
    objects: dict[str, list[tuple[str, int]]] = {}  # the state fields read of each object
    for node in reversed(chains):  # inner reads before the reads of them
        obj, field_ = node.children
        if isinstance(obj, Tree) and obj.data in ("name", "qname", "string") and isinstance(obj.children[0], Token):
            base: str | None = str(obj.children[0])
        else:
            base = shapes.get(id(obj))
        shape = None if base is None or len(base) > 200 else f"{base}.{field_}"
        shapes[id(node)] = shape
        if shape is not None:
            reads.setdefault(shape, []).append(id(node))
            if str(field_) in sym.fields:
                objects.setdefault(base, []).append((str(field_), id(node)))  # type: ignore[arg-type]
    return {}, {i for ids in reads.values() if len(ids) > 1 for i in ids}, \
        {i for pairs in objects.values() if len({f for f, _i in pairs}) > 1 for _f, i in pairs}


_KIND = re.compile(r"'[A-Za-z_][A-Za-z0-9_ -]*'")  # a kind of link written in the text, as a literal
_NEW_LISTS = frozenset({"range", "neighbors", "keys", "values", "sorted", "reversed", "spaces_in", "board_set"})
# Built-ins that give a new list of a board's spaces (ids): their items are scalars (`_scalar_items`).
_ID_LISTS = frozenset({"range", "neighbors", "spaces_in", "board_set"})
_COLLECTION = re.compile(r"_list\((c\.model\.collections\['\w+'\])\)")  # (group 1: its ids, a tuple)
_NOTHING_SHARED: tuple[None, set[int], set[int]] = (None, set(), set())

# What an expression may hold to be run twice without a difference (`Compiler._plain_form`).
_PLAIN_KINDS = frozenset(("name", "qname", "int_", "decimal", "true", "false", "none", "ternary", "not_", "neg",
                          "compare", "binop", "getattr", "getitem", "or_", "and_", "list_"))


def _plain_ok(node: Any, sym: Symbols, inline: Callable[[str], Any], body: bool = False,
              leaf: Callable[[str], bool] | None = None, free: Callable[[str], bool] | None = None) \
        -> tuple[bool, bool]:
    """Whether `node` holds only `_PLAIN_KINDS`, texts without inserts, list comprehensions,
    `count`, `filter`, `any`, `all` with their test written in place (compiler
    `_verdict_form`), `value` of a modifier no layer changes, and calls of functions and pure
    built-ins, at least one of them a read of
    a field or a call of a function `inline` (compiler `_inline_body`) finds may be written out;
    and whether it charges the budget (a comprehension its list's length, those four a step
    per item, a call its step or its work, but for a function written out that `free` finds
    charges nothing). A function not written out must be one that `leaf` finds calls no other
    rule. With `body` (the value of a function to be written out): no
    comprehension and no test written in place (their variables would be its own), only
    functions that are written out too, and no read needed."""
    todo, reads, charges = [node], body, False
    while todo:
        n = todo.pop()
        if not isinstance(n, Tree):
            continue
        if n.data == "call":
            name = str(n.children[0])
            parts = _len_part(n, sym)  # (`len` of a list, a map or a text charges nothing)
            if parts is None and (parts := _unlayered_parts(n, sym)) is not None:
                todo.extend(parts)  # (written as its base: `Compiler._special`)
                continue
            if parts is None:
                charges = charges or not (free is not None and name in sym.functions and free(name))
                if not body:
                    parts = _verdict_parts(n, sym)
            if parts is None and (name in sym.functions or (
                    name not in sym.procedures and name not in SPECIAL_FORMS
                    and (prim := PRIMITIVES.get(name)) is not None and prim.kind == "pure")):
                # a function or a pure built-in: a second run changes nothing but the budget
                written_out = name in sym.functions and inline(name) is not None
                if name in sym.functions and not written_out and (body or leaf is None or not leaf(name)):
                    # (a call inside a function written out would see the wrong depth; and see
                    # `Compiler._leaf` for the others)
                    return False, False
                parts = [a.children[1] if isinstance(a, Tree) and a.data == "kwarg" else a for a in n.children[1:]]
                reads = reads or written_out
            if parts is None:
                return False, False
            todo.extend(parts)
        elif n.data in _PLAIN_KINDS or (n.data == "string" and not _BRACES.search(n.children[0])):
            reads = reads or n.data == "getattr"
            # (`*` may repeat a list, which is priced; a join or a comparison that would be
            # gives way to the checked form instead: `_arith`, `_x_compare`)
            charges = charges or (n.data == "binop" and str(n.children[1]) == "*")
            todo.extend(n.children)
        elif n.data == "comprehension" and not body:  # (charged its list's length when it starts)
            charges = True
            todo.extend(n.children)
        else:
            return False, False
    return reads, charges


def calls_rules(tree: Any, sym: Symbols) -> bool:
    """Whether a text (its tree) calls a rule: a function or procedure of the ruleset, a
    modifier, an event or a step (`value`, `emit`, `run`). A text being compiled finds it out
    as it goes (`Unit.calls_rule`, set by `Compiler._x_call`, which every call passes): a walk
    of every text's tree cost 1.2% of a validation of every combo. This walk is for the short
    texts of functions written out (`Compiler._rule_calling`).

    A call of a function or procedure whose text does is a step of the budget; one whose text
    calls no rule is not (docs/limits.md). Such a call runs its text once, and no more: the
    work it can do without end is in its loops (a list made by `[... for ...]`, a `for`, a
    built-in's walk), which count their steps, and the call itself is made by a text that is
    counted as it repeats (a loop's round, a step, or the call of a text that calls a rule,
    which may call itself)."""
    return any(n.data == "call" and _calls_a_rule(str(n.children[0]), sym) for n in _subtrees(tree))


def _calls_a_rule(name: str, sym: Symbols) -> bool:
    """Whether a call of `name` calls a rule (`calls_rules`)."""
    return name in SPECIAL_FORMS or name in sym.functions or name in sym.procedures


def _subtrees(root: Tree) -> Iterator[Tree]:
    """Every node of a tree (not its tokens)."""
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, Tree):
            yield node
            todo.extend(node.children)


def _len_part(node: Tree, sym: Symbols) -> list | None:
    """The argument of `len(x)` (the built-in), else None."""
    name, raw = str(node.children[0]), node.children[1:]
    if name != "len" or name in sym.functions or len(raw) != 1:
        return None
    if isinstance(raw[0], Tree) and raw[0].data == "kwarg":
        return None
    return [raw[0]]


def _unlayered_parts(node: Tree, sym: Symbols) -> list | None:
    """The arguments of `value(m, base, ...)` where no layer of the ruleset changes modifier `m`,
    else None. Such a call is its base (`Compiler._special`): it calls no rule, charges
    nothing and changes nothing, so a plain form may hold it (`_plain_ok`)."""
    if str(node.children[0]) != "value" or "value" in sym.functions or len(node.children) < 3:
        return None
    target, rest = node.children[1], node.children[2:]
    if not (isinstance(target, Tree) and target.data == "name") or any(
            isinstance(a, Tree) and a.data == "kwarg" for a in rest):
        return None
    decl = sym.modifiers.get(str(target.children[0]))
    if decl is None or decl.layered or len(rest) != len(decl.params) + 1:
        return None  # (a call `_special` refuses is left to the checked form, and its error)
    return list(rest)


def _verdict_parts(node: Tree, sym: Symbols) -> list | None:
    """The list and the test's body of `count`, `filter`, `any` or `all` written as
    `_verdict_form` writes them, else None."""
    shape = _verdict_shape(str(node.children[0]), node.children[1:], sym)
    return None if shape is None else [shape[0], shape[1].children[1]]


def _verdict_shape(name: str, raw: list, sym: Symbols) -> tuple[Any, Tree] | None:
    """The list and the test (`x => ...`) of a call of `count`, `filter`, `any` or `all` with its
    test written in place: a list and `x => test`, or a list and `where=x => test` (not for
    `filter`, whose test has no keyword: the primitive's error). None for any other call."""
    if name not in _VERDICT_FORMS or name in sym.functions or name in sym.procedures:
        return None
    named = [a for a in raw if isinstance(a, Tree) and a.data == "kwarg"]
    plain = [a for a in raw if not (isinstance(a, Tree) and a.data == "kwarg")]
    if len(named) == 1 and len(plain) == 1 and str(named[0].children[0]) == "where" and name != "filter":
        test = named[0].children[1]
    elif not named and len(plain) == 2:
        test = plain[1]
    else:
        return None
    return (plain[0], test) if isinstance(test, Tree) and test.data == "lambda_" else None


_LEAVES = frozenset({"name", "qname", "int_", "decimal", "true", "false", "none"})  # (a string may be a template)
_VERDICT_FORMS = ("count", "filter", "any", "all")  # primitives whose test may be written in place
# A function written out in place of its calls in a plain form (`Compiler._inline`): its text at
# most this long, its parse tree at most this many nodes, at most this many calls inside each other.
_INLINE_TEXT = 400
_INLINE_NODES = 60
_INLINE_DEPTH = 3
_INFIX = {"or_": "or", "and_": "and", "in_": "in", "not_in": "not in"}
_KEYWORDS = {"if_stmt": "if", "elif_clause": "elif", "for_stmt": "for", "let_stmt": "let"}


def _first_token(tree: Tree) -> Token | None:
    """Where a construct starts: its first kept token. (Asking lark to track positions on
    every tree node costs a third of the parse time; tokens carry theirs anyway.)"""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Token):
            return node
        stack.extend(reversed(node.children))
    return None


class _Plain(NamedTuple):
    """The plain form of an expression (`Compiler._plain_form`), and what `_guarded` asks once
    before it runs."""
    form: str
    charges: bool  # it charges the budget: given back where it gives way
    flags: tuple[str, ...] = ()  # parameters it compares as scalars
    calls: str = ""  # the temporary counting the calls written out in it
    deepest: int = 0  # how many calls are written out around the deepest one
    depth: bool = False  # it writes calls out: the depth is asked before it runs


class _Scope:
    __slots__ = ("inner", "names", "pure", "scalars")

    def __init__(self, names: set[str], pure: bool, inner: frozenset[str] = frozenset(),
                 scalars: frozenset[str] = frozenset()):
        self.names = names
        self.pure = pure
        self.inner = inner  # names bound by a comprehension or an `x => ...` function around here
        self.scalars = scalars  # of those, the ones that hold scalars (`Compiler._is_scalar`)

    def child(self, extra: set[str], scalar: bool = False) -> _Scope:
        return _Scope(self.names | extra, self.pure, self.inner | extra,
                      self.scalars | extra if scalar else self.scalars - extra)


# Expressions whose value is a scalar, or an error: a comparison with one is bounded (`_x_compare`).
_SCALAR_KINDS = frozenset({"int_", "decimal", "string", "true", "false", "none", "compare", "in_", "not_in", "not_",
                           "neg"})


# Built-ins that give a number, a text, a truth value or none, by what they declare.
_SCALAR_PRIMITIVES = frozenset(name for name, p in PRIMITIVES.items()
                               if p.fn.__annotations__.get("return") in ("int", "str", "bool", "None"))


def _scalar_kind(node: Any) -> bool:
    """Whether `node` computes a scalar by its kind: a number, text, truth value or none, a
    comparison, `not`, a negation, a difference, a quotient or a remainder."""
    return isinstance(node, Tree) and (node.data in _SCALAR_KINDS or (
        node.data == "binop" and str(node.children[1]) in ("-", "/", "//", "%")))


_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_TEMP = re.compile(r"_t[0-9]+")
_UNFAILING = re.compile(r"v_\w+|K[0-9]+")  # a local (bound wherever it is read) or an id: a read that cannot fail
# Generated source of a value that cannot change while an expression that changes nothing runs:
# a local, a global, a temporary, a constant, a quoted id (see `_reads_shared`).
_NAMED = re.compile(r"v_\w+|_t[0-9]+")  # generated source that is a Python local
_LOCAL = re.compile(r"v_\w+")  # a local of the rule text
_GLOBAL = re.compile(r"G\['\w+'\]")  # a global of the state, read
_LOCAL_LIST = re.compile(r"\[(v_\w+(?:, v_\w+){0,3})\]")  # a list written out of one to four locals
_STABLE = re.compile(r"v_\w+|G\['\w+'\]|_t[0-9]+|K[0-9]+|'[\w-]+'")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INERT = re.compile(r"_t[0-9]+|K[0-9]+|'[\w-]+'|-?[0-9]+(\.[0-9]+)?|True|False|None")  # (`Compiler._inert`)
_CHAIN_STEPS = 4  # steps of a chain of sums bounded once (`_x_binop`): five numbers, or five lists a plain form joins
_SMALL = (1 << 30) - 1  # numbers inside ±_SMALL are far inside the bounds of codegen.MAX_INT_BITS, and
# small enough for Python to compare as one digit (its fastest comparison of whole numbers)
# Built-ins whose value is a text or a list (`Compiler._may_join`, `_SEQUENCE`)
_JOINED = frozenset(("str", "join", "keys", "values", "sorted", "range", "filter", "reversed", "unique",
                     "neighbors", "spaces_in", "repeat", "take"))
# Generated source that is a text or a list (by how it starts): `+` of it is not of numbers.
_SEQUENCE = re.compile(r"""['"\[]|_join\(|""" + f"P_(?:{'|'.join(sorted(_JOINED))})\\(")
# Generated source of a scalar written out (a whole number, none, a truth value, a text)
_PLAIN_LITERAL = re.compile(r"-?[0-9]+|None|True|False|'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')
_PL_ = f"(?:{_PLAIN_LITERAL.pattern})"
# Generated source of a list or map written out of plain scalars (`_x_list_`, `_x_dict_`)
_FRESH_LITERAL = re.compile(rf"\[(?:{_PL_}(?:, {_PL_})*)?\]|\{{(?:{_PL_}: {_PL_}(?:, {_PL_}: {_PL_})*)?\}}")


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
