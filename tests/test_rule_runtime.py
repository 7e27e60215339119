"""The rule runtime (dsl/codegen.py, dsl/compiler.py): how compiled rule text runs.

Functions and procedures are called by position, a few common operations are written out in
the generated code instead of calling a helper, and a modifier without layers is not called:
these tests pin down that the rules mean what they meant before (arguments bound and evaluated
in the written order, one budget step per call, the depth limit, bounds, copies into the state,
errors at the same `file:line:col`).
"""
from __future__ import annotations

import contextlib
import copy
import re
from types import SimpleNamespace
from typing import Any

import pytest

from dsl.codegen import MAX_CALL_DEPTH
from dsl.compiler import Callable_, Compiler, Symbols, _Plain
from dsl.runtime import Ctx, Meter, RuleError
from engine.base.diagnostics import Diagnostics, Loc
from engine.model.modifiers import apply_modifiers
from engine.model.procedures import announced


class Hooks:
    silent = True

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def modify(self, c: Ctx, name: str, base: Any, args: dict) -> Any:
        return apply_modifiers(c, name, base, args)

    def emit(self, c: Ctx, event: str, args: dict) -> None:
        self.events.append((event, dict(args)))


def ruleset(functions: dict[str, tuple[tuple[str, ...], str]] | None = None,
            procedures: dict[str, tuple[tuple[str, ...], str]] | None = None,
            modifiers: dict[str, list[tuple[str, str | None]]] | None = None,
            fields: set[str] | None = None) -> tuple[Compiler, SimpleNamespace, Diagnostics]:
    """A compiler and a model holding the given functions and procedures (name -> (params,
    text)), modifiers (name -> [(value text, when text)], each seeing `value` and `n`), a global
    `trace` and the state fields `fields` of any entity."""
    functions, procedures, modifiers = functions or {}, procedures or {}, modifiers or {}
    sym = Symbols(globals={"trace", "total"}, fields=fields or set(),
                  constants={"P1": "P1", "P2": "P2", "P3": "P3", "P4": "P4"})
    for i, (name, (params, text)) in enumerate(functions.items()):
        sym.functions[name] = Callable_(params, Loc("rules.yaml", 10 + i, 3), text)
    for i, (name, (params, _text)) in enumerate(procedures.items()):
        sym.procedures[name] = Callable_(params, Loc("rules.yaml", 30 + i, 3))
    for name, layers in modifiers.items():
        sym.modifiers[name] = Callable_(("n",), layered=bool(layers))
    diags = Diagnostics()
    comp = Compiler(sym, diags)
    model = SimpleNamespace(frozen_ids=set(), static={}, collections={}, board=None, modifiers={})
    model.functions = {name: comp.expression(text, Loc("rules.yaml", 10 + i, 12), set(params),
                                             f"function `{name}`", callee=(name, params))
                       for i, (name, (params, text)) in enumerate(functions.items())}
    model.procedures = {name: comp.effect(text, Loc("rules.yaml", 30 + i, 12), set(params),
                                          f"procedure `{name}`", callee=(name, params))
                        for i, (name, (params, text)) in enumerate(procedures.items())}
    model.modifiers = {name: [(f"L{i}", comp.expression(when, Loc("mods.yaml", 1 + i, 5), {"n", "value"})
                               if when else None, comp.expression(value, Loc("mods.yaml", 1 + i, 20), {"n", "value"}))
                              for i, (value, when) in enumerate(layers)]
                       for name, layers in modifiers.items()}
    return comp, model, diags


def run_effect(comp: Compiler, model: Any, text: str, ent: dict | None = None,
               budget: int = 1_000_000) -> tuple[Ctx, Hooks]:
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn is not None, comp.diags.items
    hooks = Hooks()
    c = Ctx({"globals": {"trace": [], "total": 0}, "ent": ent or {}}, model, hooks, {}, meter=Meter(budget))
    fn(c)
    return c, hooks


def test_arguments_are_bound_by_declared_position_and_evaluated_in_written_order():
    comp, model, diags = ruleset(
        procedures={"pair": (("zed", "abe"), "push(trace, zed - abe)"),
                    "three": (("c", "b", "a"), "push(trace, [c, b, a])")})
    c, _ = run_effect(comp, model, "pair(5, 3)\nthree(1, 2, 3)")
    assert not diags.items
    # `zed - abe` with zed=5, abe=3 (bound by name in sorted order, abe=5, it would be -2)
    assert c.state["globals"]["trace"] == [2, [1, 2, 3]]


def test_a_failure_inside_a_procedure_called_by_position_is_located_in_the_procedure():
    comp, model, _ = ruleset(procedures={"pair": (("zed", "abe"), "let d = zed - abe\npush(trace, d)"),
                                         "mark": (("tag",), "push(trace, tag)")})
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "pair(mark('first'), mark('second'))")
    assert err.value.loc == Loc("rules.yaml", 30, 12)  # the procedure's first line: `let d = zed - abe`
    assert "cannot evaluate this" in err.value.message


def test_arguments_run_in_written_order():
    comp, model, _ = ruleset(procedures={"two": (("b", "a"), "push(trace, [b, a])"),
                                         "mark": (("tag",), "push(trace, tag)")})
    c, _ = run_effect(comp, model, "two(mark('x'), mark('y'))")
    assert c.state["globals"]["trace"] == ["x", "y", [None, None]]


def test_a_call_is_a_step_of_the_budget_where_the_function_calls_a_rule_and_four_or_more_arguments_work():
    """docs/limits.md: a call of a function or procedure whose text calls a rule is a step; one
    whose text calls none is not (compiler `calls_rules`). Both forms count alike: the plain
    form, which writes the calls out, and the checked form alone."""
    from dsl.compiler import compile_cache
    functions = {"id1": (("n",), "n"), "sum4": (("a", "b", "c2", "d"), "a + b + c2 + d"), "zero": ((), "0"),
                 "plain": (("a", "b"), 7), "twice": (("n",), "id1(n) + id1(n)"), "thrice": (("n",), "twice(n) + n")}
    for validating in (False, True):
        comp, model, _ = ruleset(functions=functions)
        with compile_cache() if validating else contextlib.nullcontext():
            c, _ = run_effect(comp, model, "total = id1(1) + sum4(1, 2, 3, 4) + zero() + plain(1, 2)")
        assert c.state["globals"]["total"] == 1 + 10 + 0 + 7
        assert c.meter.used == 0  # four calls of functions that call no rule; the rest is plain arithmetic
        with compile_cache() if validating else contextlib.nullcontext():
            c, _ = run_effect(comp, model, "total = twice(2) + thrice(1)")
        assert c.state["globals"]["total"] == 4 + 3
        assert c.meter.used == 3  # twice twice (one inside thrice), and thrice; none for id1
    assert not model.functions["id1"].counted and model.functions["twice"].counted
    assert not model.functions["plain"].counted  # (a plain number)


def test_recursion_stops_at_the_depth_limit_at_the_line_of_the_call():
    comp, model, _ = ruleset(procedures={"down": (("n",), "total += 1\ndown(n + 1)")})
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "down(0)")
    assert err.value.message == f"`down` called itself more than {MAX_CALL_DEPTH} levels deep"
    assert err.value.loc == Loc("rules.yaml", 31, 12)  # line 2 of the procedure: the call
    assert err.value.code == "E001"


@pytest.mark.parametrize("combo", ["samurai-swords", "shogun+tennos-court+military-leaders+chambers+samurai-cards",
                                   "shogun-cards+shogun-cards-advanced+shogun-cards-wagers"])
def test_a_function_counts_its_calls_where_its_text_calls_a_rule_as_its_calls_written_out_do(combo):
    """A function's own compilation finds out whether it calls a rule as it compiles each call
    (`Unit.calls_rule`); a call written out in a plain form asks its text's tree
    (`calls_rules`). The two must agree, or a plain form would charge what its checked form
    does not: for every function of the bundled games, they do."""
    from dsl.compiler import calls_rules, parse
    from engine.model import load
    model = load(combo, {}, 4)
    texts = {name: d.body for name, d in model.symbols.functions.items() if isinstance(d.body, str)}
    assert len(texts) > 10
    counted = {name: calls_rules(parse(text + "\n", "expression").children[0], model.symbols)
               for name, text in texts.items()}
    assert counted == {name: model.functions[name].counted for name in texts}
    assert True in counted.values() and False in counted.values()


def test_the_budget_ends_a_calling_loop_at_the_call():
    comp, model, _ = ruleset(functions={"one": (("n",), "two(n)"), "two": (("n",), "n")})
    with pytest.raises(RuleError) as err:  # range(50) and the loop: 100 steps; then a step per call of `one`
        run_effect(comp, model, "for i in range(50):\n    total += one(i)", budget=120)
    assert err.value.code == "E002"
    assert err.value.loc == Loc("flow.yaml", 6, 13)  # the line of the call inside the loop
    # `two` calls no rule: its calls are no step, and the loop ends
    c, _ = run_effect(comp, model, "for i in range(50):\n    total += two(i)", budget=120)
    assert c.state["globals"]["total"] == sum(range(50)) and c.meter.used == 100


def test_a_procedure_that_announces_itself_is_called_by_position_too():
    comp, model, _ = ruleset(procedures={"pay": (("who", "amount"), "total += amount")})
    model.procedures["pay"] = announced(model.procedures["pay"], "pay", ("who", "amount"), True, True)
    c, hooks = run_effect(comp, model, "pay('P1', 4)")
    assert c.state["globals"]["total"] == 4
    assert hooks.events == [("before_pay", {"who": "P1", "amount": 4}), ("after_pay", {"who": "P1", "amount": 4})]


def test_a_modifier_without_layers_gives_its_base_and_layers_still_apply_in_order():
    comp, model, _ = ruleset(modifiers={"bare": [], "doubled": [("value * 2", None), ("value + n", "n > 0")],
                                        "nested": [("value(doubled, 7, 0) + value", None), ("value + n", "n > 0")]})
    c, _ = run_effect(comp, model, "push(trace, value(bare, 5, 1))\npush(trace, value(doubled, 5, 1))\n"
                                   "push(trace, value(doubled, 5, 0))\npush(trace, value(nested, 5, 1))")
    # (the layer asking another modifier sees its own `n` and `value` again after it: 14 + 5, + 1)
    assert c.state["globals"]["trace"] == [5, 11, 10, 20]


def test_a_modifier_without_layers_is_its_base_with_its_arguments_read_where_reading_can_fail():
    """No layer changes `bare`: `value(bare, ...)` is written as its base, without a call, where
    its arguments are values whose reading changes nothing and cannot fail. Any other argument
    is still run, with its errors where they were."""
    comp, model, _ = ruleset(modifiers={"bare": []}, procedures={"mark": (("tag",), "push(trace, tag)")})
    fn = comp.effect("push(trace, value(bare, total + 2, 1))", Loc("flow.yaml", 5, 9), set(), "effect")
    assert "_modify" not in fn.source
    c, _ = run_effect(comp, model, "total = 3\npush(trace, value(bare, total + 2, 1))\n"
                                   "push(trace, value(bare, 4, mark('arg')))")
    assert c.state["globals"]["trace"] == [5, "arg", 4]  # the argument that changes the game ran
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "push(trace, value(bare, 5, 1 + 'x'))")
    assert err.value.loc.line == 5
    with pytest.raises(RuleError) as err:  # a local no path has bound yet is read, and fails
        run_effect(comp, model, "if total > 0:\n    let k = 1\npush(trace, value(bare, 5, k))")
    assert "`k` has no value here yet" in err.value.message
    with pytest.raises(RuleError):  # the base is run
        run_effect(comp, model, "push(trace, value(bare, 5 + 'x', 1))")


def test_a_modifier_without_layers_may_sit_in_a_plain_form_and_one_with_layers_may_not():
    """`value(bare, ...)` is its base: a plain form may hold it (compiler `_unlayered_parts`),
    and it gives what the checked form gives, for an id and for a map alike. A layered
    modifier runs rules, so the expression holding it has no plain form."""
    comp, model, _ = ruleset(modifiers={"bare": [], "doubled": [("value * 2", None)]}, fields={"a", "b"})
    text = "let t = value(bare, P1.a + 1, P1.b) + P1.b\ntotal = t"
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert "except _MISS" in fn.source and "E['P1']['a']" in fn.source.split("except _MISS")[0]
    assert _run(model, fn, {"P1": {"a": 2, "b": 3}}).state["globals"]["total"] == 6
    with pytest.raises(RuleError) as err:  # the checked form decides, with its error at its place
        _run(model, fn, {"P1": {"a": "x", "b": 3}})
    assert err.value.loc.line == 5 and "cannot evaluate this" in err.value.message
    fn = comp.effect(text.replace("bare", "doubled"), Loc("flow.yaml", 5, 9), set(), "effect")
    assert "except _MISS" not in fn.source and "c.hooks.modify(c, 'doubled'" in fn.source
    assert _run(model, fn, {"P1": {"a": 2, "b": 3}}).state["globals"]["total"] == 9


def test_get_of_a_map_written_out_gives_what_the_primitive_gives_and_runs_its_arguments_in_order():
    comp, model, _ = ruleset(procedures={"mark": (("tag",), "push(trace, tag)")})
    c, _ = run_effect(comp, model, "let m = {'a': 1}\nlet xs = [7, 8]\ntrace = [get(m, 'a'), get(m, 'z'), "
                                   "get(m, 'z', 5), get(xs, 1), get(xs, 9, 'x'), get(m, 'a' + '', total + 1)]")
    assert c.state["globals"]["trace"] == [1, None, 5, 8, "x", 1]
    c, _ = run_effect(comp, model, "let m = {'a': 1}\npush(trace, get(m, mark('k'), mark('d')))")
    assert c.state["globals"]["trace"] == ["k", "d", None]
    with pytest.raises(RuleError) as err:  # not a map: the primitive, after the arguments ran
        run_effect(comp, model, "\npush(trace, get(5, mark('k')))")
    assert err.value.message == "get() needs a map or list, got `5`" and err.value.loc == Loc("flow.yaml", 6, 9)
    with pytest.raises(RuleError) as err:  # a key no map can hold
        run_effect(comp, model, "\nlet m = {'a': 1}\npush(trace, get(m, [1]))")
    assert "cannot evaluate" in err.value.message and err.value.loc == Loc("flow.yaml", 7, 9)


def test_an_option_read_where_it_is_gives_what_a_copy_of_the_options_gives():
    comp, model, _ = ruleset()
    comp.sym.option_names = {"limit", "xs", "gone"}
    model.combo = SimpleNamespace(options={"limit": 3, "xs": [1, [2]]})
    c, _ = run_effect(comp, model, "total = options.limit + len(options.xs)\npush(options.xs, 9)\n"
                                   "trace = options.xs\npush(trace, len([x for x in range(options.limit)]))")
    assert c.state["globals"]["total"] == 5 and c.state["globals"]["trace"] == [1, [2], 3]
    assert model.combo.options == {"limit": 3, "xs": [1, [2]]}  # a list option read is a copy
    assert c.meter.used == 6  # range(3) and the loop over it: the options are copied unpriced
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntotal = options.gone")
    assert err.value.message == "this map has no key `gone`" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_layers_that_each_name_a_text_of_one_parameter_are_asked_by_that_text():
    from engine.model.modifiers import KeyedLayers, layers_of
    comp, model, _ = ruleset()

    def layers(whens: list, values: list) -> list:
        return [(f"L{i}", comp.expression(w, Loc("mods.yaml", 1 + i, 5), {"kind", "n", "value"}) if w else None,
                 comp.expression(v, Loc("mods.yaml", 1 + i, 20), {"kind", "n", "value"}))
                for i, (w, v) in enumerate(zip(whens, values, strict=True))]

    whens = ["kind == 'a'", ' kind=="b" ', "kind == 'a'"]
    keyed = layers_of(("kind", "n"), layers(whens, ["value + 1", "value * 10", "value * 2"]), whens)
    assert type(keyed) is KeyedLayers and keyed.param == "kind" and list(keyed.by_text) == ["a", "b"]
    for other in (["kind == 'a'", None], ["kind == 'a'", "n == 'b'"], ["value == 'a'"], ["kind == '{n}'"],
                  ["kind != 'a'"], ["kind == 'a' or n == 1"]):
        assert type(layers_of(("kind", "n"), layers(other, ["value"] * len(other)), other)) is list, other
    assert type(layers_of(("value",), layers(["kind == 'a'"], ["value"]), ["value == 'a'"])) is list
    for kind in ("a", "b", "c", 5, ["a"], None):
        got = []
        for table in (keyed, list(keyed)):  # asked by text, and every layer asked in turn
            model.modifiers = {"m": table}
            c = Ctx({"globals": {"trace": [], "total": 0}, "ent": {}}, model, Hooks(), {})
            got.append(apply_modifiers(c, "m", 3, {"kind": kind, "n": 0}))
        assert got[0] == got[1] == {"a": 8, "b": 30}.get(kind, 3) if isinstance(kind, str) else got[0] == got[1] == 3
    keyed.by_text["a"] = []  # (a table that leaves out what the conditions pick: the table is what is asked)
    model.modifiers = {"m": keyed}
    assert apply_modifiers(Ctx({"globals": {}, "ent": {}}, model, Hooks(), {}), "m", 3, {"kind": "a", "n": 0}) == 3
    asked = []

    class Asked:  # a condition that says when it is asked
        def fast(self, c: Ctx) -> bool:
            asked.append(c.vars["kind"])
            return True

    # the layers a text picks hold (each condition is `kind == that text`): not asked again
    keyed.by_text["b"] = [(lid, Asked(), fn) for lid, _when, fn in keyed.by_text["b"]]
    assert apply_modifiers(Ctx({"globals": {}, "ent": {}}, model, Hooks(), {}), "m", 3, {"kind": "b", "n": 0}) == 30
    assert asked == []
    model.modifiers = {"m": list(keyed.by_text["b"])}  # (listed, each layer's condition is asked)
    assert apply_modifiers(Ctx({"globals": {}, "ent": {}}, model, Hooks(), {}), "m", 3, {"kind": "b", "n": 0}) == 30
    assert asked == ["b"]


def test_min_and_max_of_two_scalars_written_out_give_and_charge_what_the_primitive_does():
    comp, model, _ = ruleset(procedures={"mark": (("tag",), "push(trace, tag)")})
    c, _ = run_effect(comp, model, "trace = [min(3, 2), max(3, 2), min('b', 'a'), min(1, 1.0), max(1.0, 1), "
                                   "min(true, 2), max([1], [2])]")
    assert c.state["globals"]["trace"] == [2, 3, "a", 1, 1.0, True, [2]]
    assert c.meter.used == 7 * 2  # each the two items it compares, lists too
    with pytest.raises(RuleError) as err:  # the budget ends at the line, before the comparison
        run_effect(comp, model, "\ntotal = min(1, 2)", budget=1)
    assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 6, 9)
    # both arguments run whichever way it goes (the second's value is never one left from before)
    c, _ = run_effect(comp, model, "for p in [[1, 2], [[3], [4]]]:\n    push(trace, max(p[0], p[1]))")
    assert c.state["globals"]["trace"] == [2, [4]]
    c, _ = run_effect(comp, model, "total = 5\ntotal = max(total, len(trace) + 7)")
    assert c.state["globals"]["total"] == 7


def test_index_written_out_and_a_collections_length_give_and_charge_what_the_primitives_do():
    comp, model, _ = ruleset()
    comp.sym.collections = {"things": "things"}
    model.collections = {"things": ("a", "b", "c")}
    c, _ = run_effect(comp, model, "trace = [index([5, 6, 5], 5), index(things, 'c'), len(things), "
                                   "index({'k': 1, 'j': 2}, 'j'), index([[1], [2]], [2])]")
    assert c.state["globals"]["trace"] == [0, 2, 3, 1, 1]
    assert c.meter.used == 3 + 3 + 0 + 2 + 2  # each list's length (a map's keys), before it looks
    for text, message in (("index([1], 5)", "index(): `5` is not in the list"),
                          ("index(things, 'z')", "index(): `z` is not in the list"),
                          ("index('abc', 'b')", "index() needs a list, got `abc`")):
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, "\ntotal = " + text)
        assert err.value.message == message and err.value.loc == Loc("flow.yaml", 6, 9), text
    with pytest.raises(RuleError) as err:  # the budget ends at the line, before it looks
        run_effect(comp, model, "\ntotal = index(things, 'c')", budget=2)
    assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_failing_modifier_layer_is_located_at_the_layer():
    comp, model, _ = ruleset(modifiers={"broken": [("value + 'x'", None)]})
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "total = value(broken, 5, 1)")
    assert err.value.loc == Loc("mods.yaml", 1, 20)


def test_sums_and_differences_are_exact_and_bounded_past_the_inline_range():
    comp, model, _ = ruleset()
    big = 1 << 70  # past the range the generated code checks inline: the helper decides
    c, _ = run_effect(comp, model, f"total = {big} * 3\ntotal = total + total - {big}\npush(trace, total)\n"
                                   "push(trace, 'a' + 'b')\npush(trace, [1] + [2])\npush(trace, 2.5 - 1)")
    assert c.state["globals"]["trace"] == [5 * big, "ab", [1, 2], 1.5]
    for text in ("total = 10\nfor i in range(12):\n    total = total * total\n    total = total + total",
                 "total = 10\nfor i in range(12):\n    total = total * total\n    total = 0 - total - total"):
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, text)
        assert err.value.code == "E003" and "too large" in err.value.message


def test_values_stored_into_the_state_are_copies_and_plain():
    comp, model, _ = ruleset(fields={"hand", "score"})
    ent = {"P1": {"hand": [], "score": 0}}
    c, _ = run_effect(comp, model, "let cards = ['a', 'b']\nP1.hand = cards\npush(cards, 'c')\nP1.score = 3\n"
                                   "trace = {'x': [1, 2]}", ent={"P1": dict(ent["P1"])})
    assert c.state["ent"]["P1"] == {"hand": ["a", "b"], "score": 3}
    assert c.state["globals"]["trace"] == {"x": [1, 2]}
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let x = 10.5\nfor i in range(400):\n    x = x * 10.5\nP1.score = x",
                   ent={"P1": {"hand": [], "score": 0}})
    assert err.value.code == "E003" and err.value.message == "the number inf cannot be kept in the game state"
    assert err.value.loc == Loc("flow.yaml", 8, 9)


@pytest.mark.parametrize("text, line, kept", [
    ("P1.score += x", 8, "inf cannot be kept in the game state"),
    ("P1.score -= x", 8, "-inf cannot be kept in the game state"),
    ("P1.score = 2.5\nP1.score *= x", 9, "inf cannot be kept in the game state"),
    ("P1.score += x - x", 8, "nan cannot be kept in the game state"),
    ("total += x", 8, "inf cannot be kept in the game state"),
    ("trace = {'a': 1}\ntrace['a'] += x", 9, "inf cannot be kept in a map"),
    ("trace = [1.5]\ntrace[0] *= x", 9, "inf cannot be kept in a list"),
    ("trace = {}\nadd_count(trace, 'a', x)", 9, "inf cannot be kept in a map of counts"),
])
def test_an_infinity_computed_in_place_is_refused_where_it_would_be_kept(text: str, line: int, kept: str):
    # Saves and logs hold finite numbers only (their reader refuses the rest), and a state's
    # hash is the same whichever JSON writer takes it only for finite numbers.
    comp, model, _ = ruleset(fields={"score"})
    grow = "let x = 10.5\nfor i in range(9):\n    x = x * x\n"  # 10.5 ** 512: an infinity
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, grow + text, ent={"P1": {"score": 0}})
    assert err.value.code == "E003" and err.value.message == f"the number {kept}"
    assert err.value.loc == Loc("flow.yaml", line, 9)
    c, _ = run_effect(comp, model, "P1.score = 1.5\nP1.score += 2.25\nP1.score *= 2\ntotal += 0.5\ntotal -= 2",
                      ent={"P1": {"score": 0}})
    assert c.state["ent"]["P1"]["score"] == 7.5 and c.state["globals"]["total"] == -1.5


def test_len_of_any_value_and_count_any_all_with_a_condition():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "push(trace, len([1, 2]), len('abc'), len({'a': 1}))\n"
                                   "push(trace, count([1, 2, 3], where=x => x > 1), any([1, 2], where=x => x > 1),"
                                   " all([1, 2], where=x => x > 1), min([3, 1, 2]), sorted([3, 1, 2]))")
    assert c.state["globals"]["trace"] == [2, 3, 1, 2, True, False, 1, [1, 2, 3]]
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "total = len(5)")
    assert err.value.message == "len() needs a list, got `5`" and err.value.loc == Loc("flow.yaml", 5, 9)


def test_a_parameter_that_is_not_a_name_is_passed_by_name_and_never_written_into_code():
    # The schema refuses such names; the compiler must not rely on it: they would become the
    # generated function's parameters. A call of such a function binds by name instead.
    comp, model, _diags = ruleset(functions={"odd": (("n): pass  #", "m"), "m + 1")})
    assert "pass" not in model.functions["odd"].source
    c, _ = run_effect(comp, model, "total = odd(5, 6)")
    assert c.state["globals"]["total"] == 7 and c.meter.used == 0  # it calls no rule: no step, as by position
    comp, model, _diags = ruleset(functions={"odd": (("n): pass  #", "m"), "m + 1"),
                                             "odder": (("n): pass  #", "m"), "odd(m, m) + 1")})
    c, _ = run_effect(comp, model, "total = odder(5, 6)")
    assert c.state["globals"]["total"] == 8 and c.meter.used == 1  # `odder` calls a rule: its call's step


# ---- `count`, `filter`, `any`, `all` with their test written in place (compiler `_verdict_form`) ----

def test_a_test_written_in_place_gives_what_the_primitive_gives():
    comp, model, _ = ruleset()
    # `where=f` (a function held in a local) runs the primitive; `where=x => ...` the inline loop
    c, _ = run_effect(comp, model, "let f = x => x > 1\nlet xs = [3, 0, 2, 1]\nlet m = {'a': 1, 'b': 2}\n"
                                   "trace = [count(xs, where=x => x > 1), count(xs, where=f),"
                                   " any(xs, where=x => x > 1), any(xs, where=f),"
                                   " all(xs, where=x => x > 1), all(xs, where=f),"
                                   " filter(xs, x => x > 1), filter(xs, f), count(m, x => x == 'b'),"
                                   " any([], where=x => x), all([], where=x => x), count(xs, x => x)]")
    assert c.state["globals"]["trace"] == [2, 2, True, True, False, False, [3, 2], [3, 2], 1, False, True, 3]


def test_a_test_written_in_place_counts_one_step_before_each_test_and_any_stops_at_the_first():
    comp, model, _ = ruleset()
    for text, steps in (("total = count([1, 2, 3], where=x => x > 1)", 3),
                        ("trace = filter([1, 2, 3], x => x > 1)", 3),
                        ("total = any([1, 2, 3], where=x => x > 1)", 2),
                        ("total = all([1, 0, 3], where=x => x > 0)", 2)):
        c, _ = run_effect(comp, model, text)
        assert c.meter.used == steps, text
    # a step is counted before each test, not all at once: with a budget of 2 the second test runs
    # (and fails) before the budget runs out at the third
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "total = count([1, 'a', 3], where=x => x + 1 > 0)", budget=2)
    assert err.value.code == "E001" and "cannot evaluate" in err.value.message
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntotal = count([1, 2, 3], where=x => x > 0)", budget=2)
    assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_test_written_in_place_keeps_the_primitives_errors_and_their_place():
    comp, model, _ = ruleset(fields={"score"})
    for name in ("count", "any", "all", "filter"):
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, f"\n\ntotal = {name}(5, x => x)")
        assert err.value.message == f"{name}() needs a list, got `5`" and err.value.loc == Loc("flow.yaml", 7, 9)
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntotal = count([1, 2], where=x => x.score > 0)")
    assert err.value.message == "`1` has no attribute `score`" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_test_written_in_place_has_its_own_variable_and_sees_the_outer_ones():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "let x = 'outer'\nlet limit = 2\n"
                                   "total = count([[1, 2], [3]], where=x => any(x, where=y => y > limit))\n"
                                   "trace = [x, total, filter([0, 1, 2], x => x >= limit)]")
    assert c.state["globals"]["trace"] == ["outer", 1, [2]]


# ---- reads shared within one expression (compiler `_x_getattr`, `_reads_shared`) ----

def test_a_read_repeated_in_one_expression_gives_the_same_value_and_is_made_once():
    comp, model, _ = ruleset(functions={"size": (("x",), "x.force.a + x.force.b + x.hand.a")},
                             fields={"force", "hand", "a", "b"})
    ent = {"P1": {"force": {"a": 1, "b": 2}, "hand": {"a": 4}}}
    c, _ = run_effect(comp, model, "total = size('P1') + size({'force': {'a': 10, 'b': 20}, 'hand': {'a': 5}})",
                      ent=ent)
    assert c.state["globals"]["total"] == 7 + 35
    source = model.functions["size"].source
    assert source.count("E.get(v_x)") == 1 and source.count("'force' in") == 1  # one lookup of x, one of its force


def test_reads_are_not_shared_across_a_procedure_that_changes_them():
    comp, model, _ = ruleset(procedures={"bump": ((), "P1.score += 1")}, fields={"score"})
    c, _ = run_effect(comp, model, "trace = [P1.score, bump(), P1.score]", ent={"P1": {"score": 0}})
    assert c.state["globals"]["trace"] == [0, None, 1]


def test_a_read_in_a_part_that_did_not_run_is_made_again():
    comp, model, _ = ruleset(fields={"score"})
    ent = {"P1": {"score": 3}, "P2": {"score": 5}}
    # the first `p.score` runs only for P2, and `and` runs its right side only when the left holds:
    # the later reads must not take a value from a part that did not run (or ran for another p)
    c, _ = run_effect(comp, model, "for p in ['P1', 'P2', 'P1']:\n"
                                   "    trace = trace + [(p.score if p == 'P2' else 0) + p.score]\n"
                                   "    trace = trace + [(p == 'P2' and p.score > 4) or p.score]", ent=ent)
    assert c.state["globals"]["trace"] == [3, 3, 10, True, 3, 3]


def test_reads_of_several_fields_of_a_global_or_an_id_that_is_no_entity_read_the_map_or_fail_as_before():
    comp, model, _ = ruleset(fields={"score", "mate"})
    c, _ = run_effect(comp, model, "trace = {'score': 1, 'mate': 2}\ntotal = trace.score + trace.mate + trace.score")
    assert c.state["globals"]["total"] == 4
    c, _ = run_effect(comp, model, "total = P1.score + P1.mate", ent={"P1": {"score": 3, "mate": 4}})
    assert c.state["globals"]["total"] == 7
    with pytest.raises(RuleError) as err:  # P1 is no entity here
        run_effect(comp, model, "total = P1.score + P1.mate")
    assert err.value.message == "`P1` has no attribute `score`"


def test_a_repeated_read_that_fails_fails_at_its_place_with_its_message():
    comp, model, _ = ruleset(fields={"score"})
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let x = 5\ntotal = x.score + x.score")
    assert err.value.message == "`5` has no attribute `score`" and err.value.loc == Loc("flow.yaml", 6, 9)
    c, _ = run_effect(comp, model, "let m = {'score': 2}\ntotal = m.score * m.score + len(m)")
    assert c.state["globals"]["total"] == 5


def test_a_local_keeps_its_entity_only_where_the_first_read_surely_ran_and_the_local_is_the_same():
    comp, model, _ = ruleset(fields={"score", "mate"})

    def trace(text: str) -> Any:
        ent = {"P1": {"score": 3, "mate": "P2"}, "P2": {"score": 5, "mate": "P1"}}
        return run_effect(comp, model, text, ent=ent)[0].state["globals"]["trace"]
    # a local bound again reads its new entity
    assert trace("let x = 'P1'\ntrace = [x.score]\nx = 'P2'\ntrace = trace + [x.score]") == [3, 5]
    # a read inside an `if` that did not run, an `elif` condition that did not run, and the
    # arguments of `say` in a silent game (not built) leave nothing for the reads after them
    assert trace("let p = 'P2'\nif total > 0:\n    trace = [p.score]\ntrace = trace + [p.score]") == [5]
    assert trace("let p = 'P2'\nif total == 0:\n    pass\nelif p.score > 1:\n    pass\ntrace = [p.score]") == [5]
    assert trace("let p = 'P2'\nsay('{p.score}')\ntrace = [p.score, p.mate]") == [5, "P1"]
    # the target's object runs before the value: it must not use what the value read
    assert trace("let p = 'P1'\np.mate.score = p.score + p.mate.score\nlet r = 'P2'\ntrace = [r.score]") == [8]
    assert trace("let p = 'P1'\np.score = (total > 0 and p.mate) or 7\np.mate = p.score + 1\n"
                 "trace = [p.score, p.mate]") == [7, 8]
    with pytest.raises(RuleError) as err:
        trace("let q = 5\n\nq.score = 1")
    assert err.value.message == "`5` has no state field `score`" and err.value.loc == Loc("flow.yaml", 7, 9)
    # a loop's variable is a new entity each round; a `let` in the loop body is bound anew
    assert trace("for q in ['P1', 'P2', 'P1']:\n    let y = q.mate\n    trace = trace + [q.score, y.score]") \
        == [3, 5, 5, 3, 3, 5]


def test_a_function_that_calls_nothing_is_no_step_of_the_budget_and_still_checks_the_depth():
    comp, model, _ = ruleset(functions={"one": (("n",), "n + 1")},
                             procedures={"down": (("n",), "total += one(n)\ndown(n + 1)")})
    assert "c.depth = " not in model.functions["one"].source  # nothing in it looks at the depth
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "down(0)")
    # `down` runs at depths 1..200; at 200 its call of `one` is refused, at the call
    assert err.value.message == f"`one` called itself more than {MAX_CALL_DEPTH} levels deep"
    assert err.value.loc == Loc("rules.yaml", 30, 12)
    c, _ = run_effect(comp, model, "total = one(1) + one(2)")
    assert c.state["globals"]["total"] == 5 and c.meter.used == 0 and c.depth == 0


def test_a_list_or_map_written_out_is_stored_new_each_time():
    comp, model, _ = ruleset(fields={"hand"})
    c, _ = run_effect(comp, model, "for i in range(2):\n    trace = [{'n': 0}, []]\n    total = total + len(trace)\n"
                                   "    trace[0]['n'] += 1\n    push(trace[1], i)\n"
                                   "P1.hand = []\ntrace = trace + [P1.hand]",
                      ent={"P1": {"hand": ["x"]}})
    assert c.state["globals"]["trace"] == [{"n": 1}, [1], []] and c.state["globals"]["total"] == 4
    assert c.state["globals"]["trace"][2] is not c.state["ent"]["P1"]["hand"]


def test_adding_to_an_item_of_a_map_written_out_keeps_the_helpers_meaning():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "let m = {'a': 1}\nm['a'] += 2\nm['b'] -= 5\nm['c'] += 1.5\nm['a'] += true\n"
                                   "let xs = [1, 2]\nxs[1] += 3\ntrace = [m, xs]")
    assert c.state["globals"]["trace"] == [{"a": 4, "b": -5, "c": 1.5}, [1, 5]]
    big = 1 << 70
    c, _ = run_effect(comp, model, f"let m = {{'a': {big}}}\nm['a'] += {big}\nm['a'] -= 1\ntrace = [m]")
    assert c.state["globals"]["trace"] == [{"a": 2 * big - 1}]
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let m = {'a': 'x'}\n\nm['a'] += 1")
    assert "cannot evaluate" in err.value.message and err.value.loc == Loc("flow.yaml", 7, 9)


def test_a_constant_map_cannot_be_added_to_in_place():
    const = {"a": 1}
    sym_comp, sym_model, _ = ruleset()
    sym_comp.sym.constants["TABLE"] = const
    sym_model.frozen_ids = {id(const)}
    with pytest.raises(RuleError) as err:
        run_effect(sym_comp, sym_model, "TABLE['a'] += 1")
    assert "cannot change a constant" in err.value.message and const == {"a": 1}


def test_controller_written_out_gives_the_seat_and_refuses_what_is_not_a_player():
    comp, model, _ = ruleset()
    fn = comp.effect("trace = [controller('P1'), controller('P3')]", Loc("flow.yaml", 5, 9), set(), "effect")
    for seats, want in ((None, ["P1", "P3"]), ({"P1": "P1", "P3": "P1"}, ["P1", "P1"])):
        state = {"globals": {"trace": [], "total": 0}, "ent": {}, "players": ["P1", "P3"]}
        if seats:
            state["seats"] = seats
        c = Ctx(state, model, Hooks(), {})
        fn(c)
        assert c.state["globals"]["trace"] == want
    bad = comp.effect("\ntotal = controller(5)", Loc("flow.yaml", 5, 9), set(), "effect")
    with pytest.raises(RuleError) as err:
        bad(Ctx({"globals": {"trace": [], "total": 0}, "ent": {}, "players": ["P1"]}, model, Hooks(), {}))
    assert err.value.message == "controller(): `5` is not a player" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_joining_texts_and_lists_is_bounded_and_refuses_mixed_kinds():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "trace = ['a'] + ['b']\ntrace = trace + [len('xy' + 'z')]")
    assert c.state["globals"]["trace"] == ["a", "b", 3]
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let xs = range(1000) * 600\nxs = xs + xs")
    assert err.value.code == "E003" and err.value.loc == Loc("flow.yaml", 6, 9)
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "trace = [1] + 'a'")
    assert "cannot evaluate" in err.value.message


@pytest.mark.parametrize("text, big, value, steps", [
    # a side that may be a text or a list (a join written in the rule) joins first, as `_add` joins
    ("trace = big + ' ' + big + '!'", "ab", "ab ab!", 0),
    ("trace = big + ' ' + big", "y" * 40, "y" * 40 + " " + "y" * 40, 81),  # past FREE_WALK: priced
    ("trace = [big] + [big] + big", [1], [[1], [1], 1], 0),
    ("trace = big + [2] + big", [1] * 40, [1] * 40 + [2] + [1] * 40, 81),  # 41 items made free, then 81
    ("total = big + (big + 1)", 5, 11, 0),  # numbers where a join was guessed: summed, as `_add` sums
])
def test_a_join_guessed_from_the_rule_text_is_written_out_with_the_helpers_result(text, big, value, steps):
    comp, model, _ = ruleset()
    comp.sym.globals.add("big")
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    c = Ctx({"globals": {"trace": [], "total": 0, "big": big}, "ent": {}}, model, Hooks(), {}, meter=Meter(1_000_000))
    fn(c)
    assert c.state["globals"]["trace" if "trace" in text else "total"] == value
    stored = len(value) if isinstance(value, list) and len(value) > 64 else 0  # (the copy into the state)
    assert c.meter.used - stored == steps
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntrace = [big] + (big + 'x')".replace("big", "'a'"))
    assert "cannot evaluate" in err.value.message and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_list_comprehension_is_charged_its_length_at_the_start_and_runs_over_a_copy():
    comp, model, _ = ruleset(procedures={"grow": ((), "push(trace, 9)")})
    c, _ = run_effect(comp, model, "trace = [1, 2]\ntotal = len([grow() for x in trace if x > 0])\n"
                                   "trace = trace + [[k for k in {'a': 1, 'b': 2}],"
                                   " [y * 2 for y in range(3) if y != 1]]")
    # the loop ran over the two items it started with, though each round added one
    assert c.state["globals"]["total"] == 2 and c.state["globals"]["trace"] == [1, 2, 9, 9, ["a", "b"], [0, 4]]
    c, _ = run_effect(comp, model, "trace = [x for x in [5, 6, 7]]")
    assert c.meter.used == 3
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntrace = [x for x in 5]")
    assert err.value.message == "`for` needs a list, got `5`" and err.value.loc == Loc("flow.yaml", 6, 9)
    with pytest.raises(RuleError) as err:  # range(5) is 5 steps, the loop over it 5 more
        run_effect(comp, model, "\n\ntrace = [x for x in range(5)]", budget=7)
    assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 7, 9)


@pytest.mark.parametrize("text, value, steps", [
    ("trace = [i * 2 for i in range(4)]", [0, 2, 4, 6], 8),  # the list of range(4), then the loop over it
    ("trace = [i for i in range(2, 5) if i != 3]", [2, 4], 6),
    ("trace = [i for i in range(5, 2)]", [], 0),
    ("trace = [i for i in range(-3)]", [], 0),
    ("trace = [i for i in range(true)]", [0], 2),  # not a whole number to Python's eye: the built-in's
    ("trace = [i for i in range(mark(2), mark(4))]", [2, 3], 4),  # each argument runs once, in order
])
def test_a_comprehension_over_range_gives_and_charges_what_the_built_ins_list_gives(text, value, steps):
    comp, model, _ = ruleset(functions={"mark": (("n",), "n")})
    c, _ = run_effect(comp, model, text)
    assert c.state["globals"]["trace"] == value
    assert c.meter.used == steps  # (`mark` calls no rule: its calls are no step)


def test_a_comprehension_over_range_fails_where_the_built_in_fails():
    comp, model, _ = ruleset()
    for text, message in (("[i for i in range('x')]", "range() needs whole numbers"),
                          ("[i for i in range(100001)]", "range() of more than 100,000 items")):
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, "\ntrace = " + text)
        assert err.value.message == message and err.value.loc == Loc("flow.yaml", 6, 9)
    for budget in (5, 15):  # the end of the budget in the list's charge, and in the loop's
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, "\ntrace = [i for i in range(10)]", budget=budget)
        assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 6, 9)
    c, _ = run_effect(comp, model, "trace = [i for i in range(10)]", budget=20)
    assert c.meter.used == 20


def test_a_list_of_lists_stored_is_copied_to_the_last_level_and_bounded():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "let pairs = [[1, 'a'], [2, 'b'], 3]\ntrace = pairs\npush(pairs[0], 'x')")
    assert c.state["globals"]["trace"] == [[1, "a"], [2, "b"], 3]
    from dsl.runtime import store_value
    with pytest.raises(RuleError) as err:
        store_value([[0] * 999] * 1_002)
    assert err.value.code == "E003"
    assert store_value([[1.5], [[1]]]) == [[1.5], [[1]]]
    # rows of plain values and texts (a choice's pairs and its 'done'), copied without a walk
    rows = [[1, "a", None, True], [], "done", "x" * 1_000]
    kept = store_value(rows)
    assert kept == rows and all(k is not r for k, r in zip(kept, rows, strict=True) if type(r) is list)
    kept[0].append(2)
    assert rows[0] == [1, "a", None, True]
    deep = [[1, [2]], "done"]
    kept = store_value(deep)
    assert kept == deep and kept[0][1] is not deep[0][1]  # a row holding a list: copied to the last level
    for bad in ([[float("nan")], "done"], [["a", float("inf")]], [[1], [print]]):
        with pytest.raises(RuleError):
            store_value(bad)
    assert store_value([[0] * 999] * 1_000) == [[0] * 999] * 1_000


def _pushed(text: str, trace: Any = None, frozen: bool = False) -> tuple[Any, Any]:
    """`text` run as an effect over the global `trace` (a new list unless given, a constant with
    `frozen`): (what `trace` holds after it, or the RuleError it raised; the generated source)."""
    comp, model, _ = ruleset()
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    trace = [] if trace is None else trace
    if frozen:
        model.frozen_ids = {id(trace)}
    c = Ctx({"globals": {"trace": trace, "total": 0}, "ent": {}}, model, Hooks(), {}, meter=Meter(1_000_000))
    try:
        fn(c)
    except RuleError as e:
        return e, fn.source
    return c.state["globals"]["trace"], fn.source


@pytest.mark.parametrize("text, kept", [
    ("push(trace, 1)", [1]),
    ("let a = 1\nlet b = 'x'\npush(trace, [a, b])\ntrace[0][0] = 2", [[2, "x"]]),
    ("let a = [1]\nlet b = {'k': [2]}\npush(trace, [a, b])\npush(a, 3)\nb['k'][0] = 4", [[[1], {"k": [2]}]]),
    ("let a = 'x'\nlet b = [1]\npush(trace, [a, b])\npush(b, 3)", [["x", [1]]]),
    ("let a = 1\nlet b = 2\nlet d = 3\nlet e = 4\nlet f = [5]\npush(trace, [a, b, d, e, f])\npush(f, 6)",
     [[1, 2, 3, 4, [5]]]),
    ("let m = {'k': [1]}\npush(trace, m)\npush(m['k'], 2)", [{"k": [1]}]),
    ("let a = [1]\npush(trace, a)\npush(trace, a)\npush(a, 2)", [[1], [1]]),
])
def test_a_push_written_out_copies_what_it_pushes_as_the_primitive_does(text: str, kept: list):
    got, source = _pushed(text)
    assert ".append(" in source  # written out, not a call of the primitive
    assert got == kept


@pytest.mark.parametrize("text, trace, frozen, message, code", [
    ("let t = trace\npush(t, 1)", (1, 2), True, "push() cannot change a constant", "E001"),
    ("\ntrace = 5\npush(trace, 1)", None, False, "push() needs a list, got", "E001"),
    ("\npush(trace, 1)", [0] * 1_000_000, False, "push() would make a list of more than 1,000,000 items", "E003"),
    ("let x = 10.5\nfor i in range(9):\n    x = x * x\npush(trace, [1, x])", None, False,
     "the number inf cannot be kept in the game state", "E003"),
])
def test_a_push_written_out_fails_as_the_primitive_fails_at_its_place(text, trace, frozen, message, code):
    trace = list(trace) if isinstance(trace, tuple) else trace
    got, source = _pushed(text, trace, frozen)
    assert ".append(" in source
    assert isinstance(got, RuleError) and got.message.startswith(message), got
    assert got.code == code
    assert got.loc.line == 5 + text.count("\n")  # the push's own line
    if trace is not None:
        assert len(trace) in (2, 1_000_000)  # nothing was pushed


def test_a_change_to_a_value_of_the_state_is_not_tested_for_a_constant():
    """The state never holds a constant of the model (the engine makes it; rules' values are
    copied in), so the written-out push, removal and setting of an item test a container for a
    constant only where it may not come from the state: not a global, nor a state field read in
    its common case (compiler `_unfrozen`). Where that read gives way to `_attr`, which can find
    a static attribute, the test is made: a constant reached that way is still refused."""
    comp, model, _ = ruleset(fields={"hand", "marks"})
    global_src = comp.effect("push(trace, 1)\nremove(trace, 1)\ntrace[0] = 2", Loc("flow.yaml", 5, 9), set(),
                             "effect").source
    assert ".append(" in global_src and ".remove(" in global_src and "frozen_ids" not in global_src
    field = comp.effect("push(P1.hand, 'x')\nremove(P1.hand, 'x')\nP1.marks['k'] = 1\nP1.marks['n'] += 2",
                        Loc("flow.yaml", 5, 9), set(), "effect")
    assert field.source.count("frozen_ids") == 4  # each behind the fallback's `_attr`, not asked in the common case
    c, _ = run_effect(comp, model, "push(P1.hand, 'x')\nremove(P1.hand, 'y')\nP1.marks['k'] = 1\n"
                      "P1.marks['n'] += 2", ent={"P1": {"hand": ["y"], "marks": {"n": 1}}})
    assert c.state["ent"]["P1"] == {"hand": ["x"], "marks": {"n": 3, "k": 1}}
    hand, marks = [9], {"n": 1}  # a static attribute: shared read-only, so refused
    model.static = {"P1": {"hand": hand, "marks": marks}}
    model.frozen_ids = {id(hand), id(marks)}
    for text, message in (("push(P1.hand, 'x')", "push() cannot change a constant"),
                          ("remove(P1.hand, 9)", "remove() cannot change a constant"),
                          ("P1.marks['k'] = 1", "setting an item cannot change a constant"),
                          ("P1.marks['n'] += 2", "setting an item cannot change a constant")):
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, text, ent={})
        assert err.value.message.startswith(message), err.value.message
    assert hand == [9] and marks == {"n": 1}


@pytest.mark.parametrize("combo", ["shogun", "samurai-swords", "shogun-cards"])
def test_a_games_state_shares_no_container_with_the_models_constants(combo: str):
    """What `_unfrozen` relies on: no list or map of a game's state is a constant of the model,
    from the start, through play, and after a save is loaded."""
    from engine.model import load
    from engine.run.game import Game
    model = load(combo, players=4)
    assert model.frozen_ids

    def containers(v: Any) -> Any:
        if isinstance(v, (list, dict)):
            yield id(v)
            for x in (v.values() if isinstance(v, dict) else v):
                yield from containers(x)

    g = Game.new(model, 4, seed=3, log=False)
    for n in range(400):
        assert not model.frozen_ids & set(containers(g.state)), n
        if g.over:
            break
        g.apply(g.decision.options[n % len(g.decision.options)])
    loaded = Game.from_save(model, g.save())
    assert not model.frozen_ids & set(containers(loaded.state))


def test_remove_written_out_charges_and_fails_as_the_primitive_does():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "trace = [1, 2, 1, 'a']\nremove(trace, 1)\nremove(trace, 'a')\n"
                                   "let m = {'k': 1}\nremove(m, 'k')\ntotal = len(m)")
    assert c.state["globals"]["trace"] == [2, 1] and c.state["globals"]["total"] == 0
    assert c.meter.used == 4 + 3  # each list's length before the removal, as the primitive charges
    fn = comp.effect("trace = [[1], 2, 3, 4, 5]\nremove(trace, [1])\nremove(trace, 5)", Loc("flow.yaml", 5, 9),
                     set(), "effect")
    c = Ctx({"globals": {"trace": [], "total": 0}, "ent": {}}, model, Hooks(), {}, meter=Meter(8))
    with pytest.raises(RuleError) as err:  # the budget ends at the second removal, before it removes
        fn(c)
    assert err.value.code == "E002" and err.value.loc == Loc("flow.yaml", 7, 9)
    assert c.state["globals"]["trace"] == [2, 3, 4, 5]
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "\ntrace = [1]\nremove(trace, 5)")
    assert err.value.message == "remove(): `5` is not in the list" and err.value.loc == Loc("flow.yaml", 7, 9)
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "remove(5, 5)")
    assert err.value.message == "remove() needs a list or map, got `5`"
    # An item the list does not hold: the list is charged once, as by the primitive (the written
    # out form charges before it walks, and gives the charge back where the item is missing).
    fn = comp.effect("remove(trace, 5)", Loc("flow.yaml", 5, 9), set(), "effect")
    c = Ctx({"globals": {"trace": [1, 2, 3], "total": 0}, "ent": {}}, model, Hooks(), {}, meter=Meter(5))
    with pytest.raises(RuleError) as err:
        fn(c)
    assert err.value.message == "remove(): `5` is not in the list" and c.meter.used == 3


def test_neighbors_written_out_gives_a_new_list_or_the_primitives_error():
    comp, model, _ = ruleset()
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "trace = neighbors('a')")
    assert err.value.message == "this ruleset has no board"
    model.board = SimpleNamespace(neighbors={"a": ("b", "c")}, neighbors_by_kind={})
    c, _ = run_effect(comp, model, "let n = neighbors('a')\npush(n, 'x')\ntrace = n\n"
                                   "for s in neighbors('a'):\n    total += len(s)")
    assert c.state["globals"]["trace"] == ["b", "c", "x"] and c.state["globals"]["total"] == 2
    assert model.board.neighbors["a"] == ("b", "c")
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "trace = neighbors('zz')")
    assert err.value.message == "neighbors(): `zz` is not a space of the board"
    # Of one kind of link named in the text: the table's list, a new one; a space without such
    # links, or a kind the board lacks, gives none, as the primitive does.
    model.board = SimpleNamespace(neighbors={"a": ("b", "c")}, neighbors_by_kind={"sea": {"a": ("c",)}})
    c, _ = run_effect(comp, model, "let n = neighbors('a', 'sea')\npush(n, 'x')\ntrace = n\n"
                                   "total = len(neighbors('b', 'sea')) + len(neighbors('a', 'road'))")
    assert c.state["globals"]["trace"] == ["c", "x"] and c.state["globals"]["total"] == 0
    assert model.board.neighbors_by_kind["sea"]["a"] == ("c",)
    fn = comp.effect("trace = neighbors('a', 'sea')", Loc("flow.yaml", 5, 9), set(), "effect")
    assert "neighbors_by_kind.get('sea')" in fn.source and "P_neighbors(c, _t1, 'sea')" in fn.source


def test_push_with_more_items_or_a_procedure_named_push_is_a_call():
    got, source = _pushed("push(trace, 1, [2])")
    assert got == [1, [2]] and ".append(" not in source
    comp, model, _ = ruleset(procedures={"push": (("a", "b"), "trace = [a, b]")})
    c, _ = run_effect(comp, model, "push(1, 2)")
    assert c.state["globals"]["trace"] == [1, 2]  # the ruleset's own `push` ran


@pytest.mark.parametrize("text", [
    "let x = any(big)", "let x = all(big)", "insert(big, 0, 1)", "remove(big, 0)", "discard(big, 0)",
    "let x = pop(big, 0)", "let x = take(big, 1)", "shuffle(big)",
    "let x = pool_drop([{'a': 5000}], {'b': 5000}, 0.5, 0.5)",
    "let x = cascade_drop([{'a': 5000}], {'b': 5000}, 0.5, 0.0001)",
])
def test_a_built_in_that_walks_or_moves_every_item_costs_a_step_per_item(text: str):
    # Each is one call in a loop, whatever the list's size: unpriced, a loop of them over a
    # list of a million ran for hours (tests/broken/play-*-loop, play-tower-bomb).
    comp, model, _ = ruleset()
    comp.sym.globals.add("big")
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn is not None, comp.diags.items

    class Chance(Hooks):
        def chance(self, c: Ctx, kind: str, draw: Any, forced_apply: Any = None) -> Any:
            import random
            rng = random.Random(1)
            rng.below = lambda n: rng.randrange(n)  # (the engine generator's interface)
            return draw(rng)

    c = Ctx({"globals": {"trace": [], "total": 0, "big": [0] * 10_000}, "ent": {}}, model, Chance(), {},
            meter=Meter(1_000_000))
    fn(c)
    assert 10_000 <= c.meter.used < 10_100


# ---- operations on whole values: priced by the size they walk or make ----

def _cost(text: str, big: Any, **kwargs: Any) -> int:
    """The steps `text` costs, with the global `big` holding `big`."""
    comp, model, _ = ruleset(**kwargs)
    comp.sym.globals.add("big")
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn is not None, comp.diags.items
    c = Ctx({"globals": {"trace": [], "total": 0, "big": big}, "ent": {}}, model, Hooks(), {},
            meter=Meter(1_000_000))
    fn(c)
    return c.meter.used


@pytest.mark.parametrize("text, big, steps", [
    ("trace = big", list(range(10_000)), 10_000),                          # a copy into the state
    ("trace = big", [[i, i] for i in range(500)], 1_500),                  # rows: each row and its items
    ("trace = [big, big]", [0] * 5_000, 10_002),                           # a list held twice, copied twice
    ("push(trace, big)", [0] * 5_000, 5_000),                              # a pushed item is copied
    ("let x = big + big", [0] * 5_000, 10_000),                            # a join
    ("let x = big * 3", [0] * 5_000, 15_000),                              # a repeat
    ("let x = big + 'x'", "y" * 5_000, 5_001),                             # a text joined
    ("let x = '{big}{big}'", "y" * 5_000, 10_000),                         # a template
    ("let x = join([big, big], '')", "y" * 5_000, 2 + 10_000),             # join: the text made
    ("let x = big == [0] + big", [0] * 5_000, 10_001),                     # a join, then the left side walked
    ("let x = big in [[1], big]", [[0] * 5_000], 2 * 5_001),              # a list looked for, against each item
    ("let x = 'zz' in big", "y" * 5_000, 5_000),                           # a text searched
    ("let x = index([[0], big], big)", [0] * 5_000, 2 + 2 * 5_000),       # index, remove, discard: as `in`
    ("let x = sorted([big, big, big])", [0] * 5_000, 6 + 3 * 2 * 5_000),  # sorted: each item in log n comparisons
    ("let x = max([big, big])", [0] * 5_000, 2 + 2 * 5_000),
    ("let x = unique([big, big, big])", [0] * 5_000, 3 + 2 + 2 * 5_000),  # each against those kept
    # a comprehension's variable holds a scalar only over range() or a collection
    ("let x = len([y for y in big if y == big[1]])", [[0] * 5_000] * 2, 2 + 2 * 5_000),
    ("let ys = big\nlet x = len([y for y in ys if y == ys[1]])", [[0] * 5_000] * 2, 2 + 2 * 5_000),
    ("let x = len([y for y in reversed(big) if y == big[1]])", [[0] * 5_000] * 2, 2 + 2 + 2 * 5_000),
])
def test_an_operation_on_a_whole_value_costs_a_step_per_item_it_walks_or_makes(text: str, big: Any, steps: int):
    # Each was free, whatever the size: a loop of them over a list of a million ran for minutes
    # to hours, and one comparison of lists sharing a list could run for hours by itself
    # (tests/broken/play-compare-bomb and the other whole-value cases).
    assert abs(_cost(text, big) - steps) <= 10, _cost(text, big)


def test_a_line_said_costs_its_length_where_the_account_is_kept():
    # A loop of long lines would fill the memory with the account; a silent run skips `say`.
    comp, model, _ = ruleset()
    comp.sym.globals.add("big")
    fn = comp.effect("say(big)\nsay('short')", Loc("flow.yaml", 5, 9), set(), "effect")

    class Told(Hooks):
        silent = False

        def say(self, c: Ctx, text: str) -> None:
            self.events.append(("say", {"text": text}))

    for hooks, steps in ((Told(), 5_000), (Hooks(), 0)):
        c = Ctx({"globals": {"trace": [], "total": 0, "big": "y" * 5_000}, "ent": {}}, model, hooks, {},
                meter=Meter(1_000_000))
        fn(c)
        assert c.meter.used == steps and len(hooks.events) == (2 if steps else 0)


@pytest.mark.parametrize("text, steps", [
    ("trace = big", 0), ("let x = big + big", 0), ("let x = big * 2", 0), ("let x = 5 in big", 0),
    ("let x = sorted(big)", 3 + 2 * 3), ("let x = '{big}'", 0), ("let x = big + 'de'", 0),
    ("let x = big == big", 0), ("let x = [big] in [[1], [big]]", 0),
])
def test_a_short_value_costs_nothing_more_than_it_did(text: str, steps: int):
    # Up to FREE_WALK items copied, made or walked cost nothing: what the games handle most.
    assert _cost(text, "abc" if "'" in text else [1, 2, 3]) == steps


def test_two_lists_sharing_a_list_compared_stop_at_the_budget_at_once():
    # Each shares one list of 1,000 a million times: compared unpriced, 10**9 item comparisons
    comp, model, _ = ruleset()
    made = "let a = [[range(1000)] * 1000] * 1000\nlet b = [[range(1000)] * 1000] * 1000\n"
    for text in ("total = a == b", "total = a in [b, 1]", "total = len(sorted([a, b]))", "total = index([b], a)",
                 "total = len(max([a, b]))"):
        text = made + text
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, text)
        assert err.value.code == "E002", text
    with pytest.raises(RuleError) as err:  # a scalar first: max meets a list against it and fails, unwalked
        run_effect(comp, model, made + "total = max([1, a, b])")
    assert err.value.code == "E001" and "cannot evaluate" in err.value.message


def test_a_comparison_with_a_scalar_side_is_plain_python_and_a_parameter_is_asked_once():
    from dsl.compiler import Callable_
    comp, model, _ = ruleset(fields={"owner"})
    text = "len([x for x in big if x.owner == p])"
    comp.sym.functions["mine"] = Callable_(("p",), Loc("rules.yaml", 3, 3), text)
    comp.sym.globals.add("big")
    fn = comp.expression(text, Loc("rules.yaml", 3, 3), {"p"}, callee=("mine", ("p",)))
    assert "_s_p = _type(v_p) in _SC" in fn.source and "if _s_p else" in fn.source
    assert "_s_p or _miss()" in fn.source  # the plain form asks once, not at each item
    for other in ("total = 1 if trace == [] else 2", "total = 1 if len(trace) > 0 else 2",
                  "total = 1 if trace[0] == 'a' else 2", "total = 1 if trace[0] + 1 > 2 else 2",
                  "total = len([i for i in range(3) if trace[0] == i])"):
        assert "_SC" not in comp.effect(other, Loc("flow.yaml", 5, 9), set(), "effect").source, other
    # the parameter holding a list, in either way of calling: compared as any list is, and priced
    ent = {"a": {"owner": [0] * 5_000}, "b": {"owner": [0] * 5_000}}
    for call in (lambda c: fn(c), lambda c: fn.pos(c, c.vars["p"])):
        c = Ctx({"globals": {"trace": [], "total": 0, "big": ["a", "b"]}, "ent": ent}, model, Hooks(),
                {"p": [0] * 5_000}, meter=Meter(1_000_000))
        assert call(c) == 2 and c.meter.used >= 10_000
        c.vars["p"] = 7
        assert call(c) == 0


def test_a_loop_variable_bound_once_over_numbers_or_ids_holds_scalars_and_one_bound_again_may_not():
    comp, model, _ = ruleset()
    text = "for i in range(3):\n    push(trace, [i, i])"
    assert "_type(v_i) in _PL" not in comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect").source
    c, _ = run_effect(comp, model, text)
    assert c.state["globals"]["trace"] == [[0, 0], [1, 1], [2, 2]]
    # bound again, to a list: pushed as a copy, which a later change of the list leaves alone
    c, _ = run_effect(comp, model, "let xs = [1]\nfor i in range(2):\n    i = xs\n    push(trace, [i, i])\nxs[0] = 5")
    assert c.state["globals"]["trace"] == [[[1], [1]], [[1], [1]]]
    # bound by two loops: a scalar only if both run over scalars
    both = "for i in range(2):\n    push(trace, [i, i])\nfor i in range(1, 3):\n    push(trace, [i, i])"
    assert "_type(v_i) in _PL" not in comp.effect(both, Loc("flow.yaml", 5, 9), set(), "effect").source
    c, _ = run_effect(comp, model, "let xs = [[1]]\nfor i in range(2):\n    push(trace, [i])\n"
                      "for i in xs:\n    push(trace, [i, i])\nxs[0][0] = 5")
    assert c.state["globals"]["trace"] == [[0], [1], [[1], [1]]]


@pytest.mark.parametrize("n", [5, 0, -3, True, 100_001, "x", 30])
def test_a_for_over_range_of_a_local_runs_and_fails_as_over_the_built_ins_list(n: Any):
    # `range(n)` of a local is run over without its list; `range(max(n, n))` is the built-in's list
    comp, model, _ = ruleset()
    results = []
    for text in ("for i in range(n):\n    push(trace, i)", "for i in range(max(n, n)):\n    push(trace, i)"):
        fn = comp.effect(text, Loc("flow.yaml", 5, 9), {"n"}, "effect")
        assert ("_range(v_n)" in fn.source) == ("max(" not in text)
        c = Ctx({"globals": {"trace": [], "total": 0}, "ent": {}}, model, Hooks(), {"n": n}, meter=Meter(50))
        try:
            fn(c)
            results.append((c.state["globals"]["trace"], c.meter.used - 2 * ("max(" in text)))  # (max: 2 items)
        except RuleError as e:
            results.append((e.message, e.loc))
    assert results[0] == results[1]
    if n == 30:
        assert "more than 50 steps" in results[0][0]


def test_a_function_that_picks_items_of_a_collection_gives_scalars_and_one_that_wraps_them_does_not():
    comp, model, _ = ruleset()
    comp.sym.collections["units"] = "unit"
    model.collections["units"] = ["u1", "u2"]
    for i, (name, text) in enumerate((("picked", "[u for u in units if u != p]"), ("wrapped", "[[u] for u in units]"))):
        comp.sym.functions[name] = Callable_(("p",), Loc("rules.yaml", 10 + i, 3), text)
        model.functions[name] = comp.expression(text, Loc("rules.yaml", 10 + i, 12), {"p"}, f"function `{name}`",
                                                callee=(name, ("p",)))
    text = "for u in picked(none):\n    push(trace, [u, u])"
    assert "_type(v_u) in _PL" not in comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect").source
    c, _ = run_effect(comp, model, text)
    assert c.state["globals"]["trace"] == [["u1", "u1"], ["u2", "u2"]]
    c, _ = run_effect(comp, model, "let xs = wrapped(none)\nfor u in wrapped(none):\n    push(trace, [u, u])")
    trace = c.state["globals"]["trace"]
    assert trace == [[["u1"], ["u1"]], [["u2"], ["u2"]]] and trace[0][0] is not trace[0][1]  # each item a copy


@pytest.mark.parametrize("text", ["total = P1.a * 2 + P1.b", "total = (P1.a == P1.b) + P1.c"])
def test_a_plain_form_that_gives_way_after_a_priced_operation_charges_it_once(text: str):
    # A plain form either gives its charges back when it gives way (a repeat) or gives way
    # before charging (a comparison of long lists): play spends what validation does.
    values = [[0] * 5_000, [1], 3, 1 << 62]
    for a in values:
        for b in values:
            for c in (1, 1 << 62):
                plain, checked = _both_forms(text, {"P1": {"a": a, "b": b, "c": c}}, {"a", "b", "c"})
                assert plain == checked, (text, repr(a)[:12], repr(b)[:12], c)


def test_a_remainder_of_a_text_is_an_error_not_a_format():
    comp, model, _ = ruleset()
    c, _ = run_effect(comp, model, "let n = 7\ntotal = n % 3 + 10 % 4")
    assert c.state["globals"]["total"] == 3
    with pytest.raises(RuleError) as err:  # Python would format the list, walking all of it
        run_effect(comp, model, "let s = '%s'\ntotal = s % [[0] * 1000] * 1000")
    assert "remainder of two numbers" in err.value.message and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_value_nested_past_the_limit_is_refused_where_it_is_stored_so_saves_stay_readable():
    # A save may nest 200 levels (engine/run/state.py); a value kept in the state at most 100.
    from dsl.runtime import MAX_VALUE_DEPTH, store_value

    def nested(levels: int, leaf: Any) -> Any:
        v = leaf
        for _ in range(levels - 1):
            v = [v] if isinstance(leaf, list) else {"k": v}
        return v

    for leaf in ([], {}):
        assert store_value(nested(MAX_VALUE_DEPTH, leaf)) == nested(MAX_VALUE_DEPTH, leaf)
        with pytest.raises(RuleError) as err:
            store_value(nested(MAX_VALUE_DEPTH + 1, leaf))
        assert err.value.code == "E003" and "nested too deeply" in err.value.message
    comp, model, _ = ruleset()
    with pytest.raises(RuleError) as err:  # deep enough that copying it once overflowed Python's stack (E001)
        run_effect(comp, model, "let x = []\nfor i in range(5000):\n    x = [x]\ntotal = x")
    assert err.value.code == "E003" and err.value.loc == Loc("flow.yaml", 8, 9)


def test_copies_of_values_count_their_depth_instead_of_overflowing_the_stack():
    # What a save may hold (200 levels) copies; past MAX_COPY_DEPTH it is an error, the same in
    # the Python source and in the compiled engine, which has no stack check (setup.py).
    from dsl.runtime import MAX_COPY_DEPTH, copy_value
    for levels in (200, MAX_COPY_DEPTH + 1):
        v: Any = {}
        for _ in range(levels - 1):
            v = [v]
        assert copy_value(v) == v
    for levels in (MAX_COPY_DEPTH + 2, 100_000):
        v = []
        for _ in range(levels - 1):
            v = [v]
        with pytest.raises(RuleError) as err:
            copy_value(v)
        assert err.value.code == "E003" and "too deeply to copy" in err.value.message


# ---- the plain form of an expression that reads fields (compiler `_plain_form`) ----

def _functions(text: str, fields: set[str], statics: set[str] = frozenset(), static: dict | None = None):
    """A compiler and model with function `f(x) = text` and a procedure `g(x)` pushing f(x)."""
    sym = Symbols(globals={"trace", "total"}, fields=set(fields), statics=set(statics),
                  constants={"P1": "P1", "P2": "P2", "Q": "Q", "shape": {"a": 0, "b": 0}})  # (map keys a, b known)
    sym.functions["f"] = Callable_(("x",), Loc("rules.yaml", 10, 3))
    comp = Compiler(sym, Diagnostics())
    model = SimpleNamespace(frozen_ids=set(), static=static or {}, collections={}, board=None, modifiers={},
                            procedures={})
    model.functions = {"f": comp.expression(text, Loc("rules.yaml", 10, 12), {"x"}, "function `f`",
                                            callee=("f", ("x",)))}
    return comp, model


def _f(text: str, x: str, ent: dict, **kw: Any) -> tuple[Any, int]:
    comp, model = _functions(text, **kw)
    c, _ = run_effect(comp, model, f"push(trace, f({x}))", ent=ent)
    return c.state["globals"]["trace"][0], c.meter.used


def test_a_sum_of_fields_runs_plain_in_the_common_case_and_checked_otherwise():
    fields = {"force", "flag", "name"}
    _, model = _functions("x.force.a + x.force.b", fields)
    assert "except _MISS" in model.functions["f"].source  # the plain form is there...
    _, model = _functions("x.force.a + max(x.force.b, 1)", fields)  # a pure built-in: its work given back
    assert "except _MISS" in model.functions["f"].source and "c.meter.used = " in model.functions["f"].source
    ent = {"P1": {"force": {"a": 2, "b": 3}, "flag": True, "name": "ab"}}
    plain = _f("x.force.a + max(x.force.b, 1)", "P1", ent, fields=fields)
    assert plain[0] == 5 and plain == _f("x.force.a + max(x.force.b, 1)", "{'force': {'a': 2, 'b': 3}}", ent,
                                         fields=fields)  # (a map: the checked form, after the plain one failed)
    assert _f("x.force.a + x.force.b", "P1", ent, fields=fields) == (5, 0)  # (`f` calls no rule: no step)
    # a map given where an id is read: the entity lookup misses, the checked form reads the map
    assert _f("x.force.a + x.force.b", "{'force': {'a': 1, 'b': 1}}", ent, fields=fields)[0] == 2
    assert _f("x.flag + 1", "P1", ent, fields=fields)[0] == 2  # a truth value counts as Python counts it
    assert _f("x.name + x.name", "P1", ent, fields=fields)[0] == "abab"  # texts joined by the checked form
    assert _f("x.force.a + 0.5", "P1", ent, fields=fields)[0] == 2.5
    assert _f("x.id", "P1", ent, fields=fields)[0] == "P1"
    assert _f("len(x.name) + len(x.force) + len([x.flag])", "P1", ent, fields=fields) == (5, 0)  # `len` too
    comp, model = _functions("len(x.force.a)", fields)
    with pytest.raises(RuleError) as err:  # the length of a number: the checked form's error
        run_effect(comp, model, "push(trace, f(P1))", ent=ent)
    assert err.value.message == "len() needs a list, got `2`" and err.value.loc == Loc("rules.yaml", 10, 12)
    big = {"P1": {"force": {"a": 1 << 62, "b": 1 << 62}}}  # past the inline range: `_add` decides
    assert _f("x.force.a + x.force.b", "P1", big, fields=fields) == (1 << 63, 0)


def test_the_plain_form_reads_a_repeated_field_and_an_entity_once_but_not_across_a_branch():
    fields = {"force", "owner", "army", "ronin"}
    total = "x.force.a + x.force.b + x.force.a"
    _, model = _functions(total, fields)
    src = model.functions["f"].source.split("except _MISS")[0]
    assert src.count("E[v_x]") == 1 and src.count("['force']") == 1  # `x.force` once, then kept
    _, model = _functions("x.owner == Q and x.ronin < 2 and x.army == none", fields)
    src = model.functions["f"].source.split("except _MISS")[0]
    assert src.count("E[v_x]") == 1  # one lookup of x's entity serves its three fields...
    ent = {"P1": {"force": {"a": 1, "b": 2}, "owner": "Q", "army": None, "ronin": 1},
           "P2": {"force": {"a": 1}, "owner": "Q", "army": "A", "ronin": 4}}  # (no `b` in P2's force)
    assert _f(total, "P1", ent, fields=fields) == (4, 0)
    assert _f("x.owner == Q and x.ronin < 2 and x.army == none", "P1", ent, fields=fields)[0] is True
    assert _f("x.owner == Q and x.ronin < 2 and x.army == none", "P2", ent, fields=fields)[0] is False
    # ...but a lookup made where a part may not run is not counted on after it
    for x, want in (("P1", 2), ("P2", 4)):  # the branch ran, or not: `x.ronin` after it is read either way
        assert _f("(x.ronin if x.army == none else 0) + x.ronin", x, ent, fields=fields)[0] == want
        assert _f("(x.army == none and x.ronin > 0) or x.ronin > 3", x, ent, fields=fields)[0] is True
    # a map where an entity's id was expected: the checked form decides
    assert _f(total, "{'force': {'a': 1, 'b': 1}}", ent, fields=fields)[0] == 3
    comp, model = _functions(total, fields)
    with pytest.raises(RuleError) as err:  # a key missing after a kept read: the checked form's error
        run_effect(comp, model, "push(trace, f(P2))", ent=ent)
    assert err.value.message == "this map has no key `b`" and err.value.loc == Loc("rules.yaml", 10, 12)


def _inlining(text: str, **functions: tuple[tuple[str, ...], str]):
    """A ruleset with `functions` and fields a, b, and an effect setting `total` to `text` (by
    a `let`, which has a plain form) compiled in it."""
    comp, model, _ = ruleset(functions=functions, fields={"a", "b"})
    fn = comp.effect(f"let t = {text}\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn is not None, comp.diags.items
    return comp, model, fn


def _run(model: Any, fn: Any, ent: dict, budget: int = 1_000_000, depth: int = 0) -> Ctx:
    c = Ctx({"globals": {"trace": [], "total": 0}, "ent": ent}, model, Hooks(), {}, meter=Meter(budget))
    c.depth = depth
    fn(c)
    return c


SIZE = {"size": (("x",), "x.a + x.b"), "double": (("y",), "size(y) + size(y)")}
QUAD = {**SIZE, "quad": (("z",), "double(z) + double(z)")}  # (quad and double call rules: their calls are steps)


def test_a_small_function_is_written_out_in_place_of_its_call_with_the_calls_step():
    ent = {"P1": {"a": 2, "b": 3}}
    _, model, fn = _inlining("size(P1) + 1", **SIZE)
    plain = fn.source.split("except _MISS")[0]
    assert "].pos" not in plain and "['a']" in plain  # written out...
    assert ".pos)(" in fn.source.split("except _MISS")[1]  # ...and called by the checked form
    c = _run(model, fn, ent)
    assert c.state["globals"]["total"] == 6 and c.meter.used == 0  # (`size` calls no rule: no step)
    _, model, fn = _inlining("double(P1) + size(P1)", **SIZE)  # calls inside calls too
    assert "].pos" not in fn.source.split("except _MISS")[0]
    c = _run(model, fn, ent)
    assert c.state["globals"]["total"] == 15 and c.meter.used == 1  # one step: the call of `double`
    # what the calls give when no function is written out (a call in an effect's statement)
    comp, model2, _ = ruleset(functions=SIZE, fields={"a", "b"})
    called = comp.effect("push(trace, double(P1))", Loc("flow.yaml", 5, 9), set(), "effect")
    c = _run(model2, called, ent)
    assert c.state["globals"]["trace"] == [10] and c.meter.used == 1


def test_a_function_written_out_fails_as_its_call_fails():
    from dsl.compiler import compile_cache
    _, model, fn = _inlining("double(P1) + 1", **SIZE)
    for p1, message in (({"a": 2}, "`P1` has no attribute `b`"), ({"a": 1, "b": "x"}, "cannot evaluate this")):
        with pytest.raises(RuleError) as err:
            _run(model, fn, {"P1": p1})
        assert message in err.value.message and err.value.loc == Loc("rules.yaml", 10, 12), p1  # in `size`
    _, quad_model, quad_fn = _inlining("quad(P1) + 1", **QUAD)
    for budget in (1, 2):  # the budget ends where the checked form alone ends it: in the callee (3 steps)
        with pytest.raises(RuleError) as err:
            _run(quad_model, quad_fn, {"P1": {"a": 2, "b": 3}}, budget=budget)
        assert f"more than {budget} steps" in err.value.message and err.value.loc == Loc("rules.yaml", 12, 12)
        with compile_cache():  # (as validated: no plain form anywhere)
            _, checked_model, checked_fn = _inlining("quad(P1) + 1", **QUAD)
        with pytest.raises(RuleError) as checked:
            _run(checked_model, checked_fn, {"P1": {"a": 2, "b": 3}}, budget=budget)
        assert (err.value.message, err.value.loc) == (checked.value.message, checked.value.loc)
    with pytest.raises(RuleError) as err:  # at the depth limit the call refuses itself, at the call
        _run(model, fn, {"P1": {"a": 2, "b": 3}}, depth=MAX_CALL_DEPTH)
    assert "called itself more than" in err.value.message and err.value.loc == Loc("flow.yaml", 5, 9)
    c = _run(model, fn, {"P1": {"a": 2, "b": 3}}, depth=MAX_CALL_DEPTH - 2)  # below it: written out
    assert c.state["globals"]["total"] == 11


def test_a_plain_form_whose_calls_written_out_charge_nothing_has_no_budget_to_give_back():
    """`size` calls no rule and charges nothing: a plain form writing it out charges nothing, so
    where it gives way there is nothing to give back. `summed` walks a list (a step per item):
    a plain form writing it out gives its steps back before the checked form runs."""
    _, model, fn = _inlining("size(P1) + 1", **SIZE)
    assert "c.meter.used" not in fn.source
    _, model, fn = _inlining("summed(P1) + P1.b", summed=(("x",), "sum([x.a, x.a])"))
    assert "c.meter.used = " in fn.source
    assert _run(model, fn, {"P1": {"a": 1, "b": 2}}).meter.used == 2
    with pytest.raises(RuleError) as err:  # 2 steps in the plain form, given back; 2 in the checked form
        _run(model, fn, {"P1": {"a": 1, "b": "x"}}, budget=3)
    assert "cannot evaluate this" in err.value.message


def test_a_function_calling_itself_or_one_not_written_out_is_called():
    down = {"down": (("n",), "0 if n <= 0 else down(n - 1) + 1")}
    for functions in (down, {"many": (("n",), "[i for i in n] + [P1.a]")},
                      {"many": (("n",), "[i for i in n] + [P1.a]"), "outer": (("n",), "many(n) + [P1.b]")}):
        name = list(functions)[-1]
        _, model, fn = _inlining(f"{name}([3]) + [P1.a]", **functions)
        assert f"functions['{name}'].pos)(" in fn.source.split("except _MISS")[0], name
    _, model, fn = _inlining("down(3) + P1.a", **down)
    assert _run(model, fn, {"P1": {"a": 1, "b": 0}}).state["globals"]["total"] == 4
    _, model, fn = _inlining("outer([3]) + [P1.a]", many=(("n",), "[i for i in n] + [P1.a]"),
                             outer=(("n",), "many(n) + [P1.b]"))
    assert _run(model, fn, {"P1": {"a": 1, "b": 2}}).state["globals"]["total"] == [3, 1, 2, 1]


def test_functions_written_out_inside_each_other_check_the_depth_their_calls_would():
    chain = {"f1": (("x",), "x.a + 1"), "f2": (("x",), "f1(x) + 1"), "f3": (("x",), "f2(x) + 1"),
             "f4": (("x",), "f3(x) + 1")}
    _, model, fn = _inlining("f3(P1)", **chain)  # three levels: all written out
    assert "].pos" not in fn.source.split("except _MISS")[0]
    _, model, fn = _inlining("f4(P1)", **chain)  # four: f4 is called (and writes out the three inside)
    assert "functions['f4'].pos)(" in fn.source.split("except _MISS")[0]
    for depth in range(MAX_CALL_DEPTH - 4, MAX_CALL_DEPTH + 1):
        results = []
        for text in ("f3(P1)", "f3(P1) + len(trace)"):  # the plain form, and the checked form only
            comp, model, _ = ruleset(functions=chain, fields={"a"})
            fn = comp.effect(f"let t = {text}\ntotal = t" if "trace" not in text else
                             f"push(trace, {text})", Loc("flow.yaml", 5, 9), set(), "effect")
            try:
                c = _run(model, fn, {"P1": {"a": 1}}, depth=depth)
                results.append(("ok", c.meter.used))
            except RuleError as e:
                results.append((e.message, e.loc))
        assert results[0] == results[1], depth


def test_functions_written_out_once_per_item_are_charged_at_once_as_the_checked_form_charges_them():
    """A call written out in a comprehension's item counts its step as it runs; the plain form
    checks the depth and charges the count once: the same value, budget and errors as the
    checked form alone, whose calls check and charge each."""
    from dsl.compiler import compile_cache
    ent = {f"E{i}": {"a": i, "b": 1} for i in range(30)}
    for text in ("[double(x) for x in ids]", "count(ids, where=x => size(x) > 10)",
                 "len([x for x in ids if size(x) > 3 and double(x) < 40])"):
        results = []
        for validating in (False, True):
            for budget, depth in ((10**6, 0), (20, 0), (10**6, MAX_CALL_DEPTH - 1), (10**6, MAX_CALL_DEPTH)):
                comp, model, _ = ruleset(functions=SIZE, fields={"a", "b"})
                comp.sym.globals.add("ids")
                with compile_cache() if validating else contextlib.nullcontext():
                    fn = comp.effect(f"let t = {text}\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
                assert ("except _MISS" in fn.source) != validating
                if not validating and "double" in text:  # (`size` calls no rule: its calls are no step)
                    assert re.search(r"\((_t\d+) := \1 \+ 1\)", fn.source), text  # counted, not charged per call
                c = Ctx({"globals": {"trace": [], "total": 0, "ids": list(ent)}, "ent": copy.deepcopy(ent)}, model,
                        Hooks(), {}, meter=Meter(budget))
                c.depth = depth
                try:
                    fn(c)
                    results.append(("done", repr(c.state["globals"]["total"]), c.meter.used))
                except RuleError as e:
                    results.append((e.message, e.loc))
        assert results[:4] == results[4:], text
        assert results[0][0] == "done" and "more than 20 steps" in results[1][0] and "called itself" in results[3][0]


def test_texts_compiled_for_validation_only_have_no_plain_forms_and_write_no_function_out():
    """Validation's compile memo shares a text's code between builds where the names it looked
    up mean the same: a function's text is not among them, so no function may be written out
    there (and validation never plays the models it builds)."""
    from dsl.compiler import compile_cache
    comp, model, _ = ruleset(functions=SIZE, fields={"a", "b"})
    with compile_cache():
        fn = comp.effect("let t = size(P1) + P1.a\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
    assert "except _MISS" not in fn.source and ".pos)(" in fn.source
    assert _run(model, fn, {"P1": {"a": 2, "b": 3}}).state["globals"]["total"] == 7
    fn = comp.effect("let t = size(P1) + P1.a\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
    assert "except _MISS" in fn.source and "_miss()" in fn.source  # (outside it: plain, `size` written out)


def test_a_static_attribute_and_a_map_key_read_plainly_give_what_the_checked_form_gives():
    static = {"P1": {"cost": 4}, "Q": {"cost": 1}}
    ent = {"P1": {"score": 2}}
    got = _f("x.cost + x.score", "P1", ent, fields={"score"}, statics={"cost"}, static=static)
    assert got == (6, 0)
    _, model = _functions("x.cost + x.score", {"score"}, {"cost"}, static)
    assert "S[v_x]['cost']" in model.functions["f"].source  # read where `_attr` would find it, plainly
    # a state field of no entity here: the checked form finds it static (`_attr`)
    assert _f("x.score", "Q", ent, fields={"score"}, statics={"score"}, static={"Q": {"score": 9}})[0] == 9


def test_a_name_that_is_a_field_of_some_entities_and_static_for_others_is_read_plainly_for_both():
    """A player's `chests` (a state field) and a war chest card's `chests` (static): the plain form
    reads the entity's field, else the static attribute, as `_attr` does, without giving way."""
    static = {"Q": {"chests": 3}, "P1": {"chests": 7}}
    ent = {"P1": {"chests": 2}, "P2": {"other": 1}}
    _, model = _functions("x.chests", {"chests", "other"}, {"chests"}, static)
    plain = model.functions["f"].source.split("except _MISS")[0]
    assert "E.get(v_x)" in plain and "S[v_x]['chests']" in plain
    for who, value in (("P1", 2), ("Q", 3), ("P2", None)):  # the entity's own first; P2 has neither
        if value is None:
            comp, model = _functions("x.chests", {"chests", "other"}, {"chests"}, static)
            with pytest.raises(RuleError) as err:
                run_effect(comp, model, f"push(trace, f({who}))", ent=ent)
            assert err.value.message == "`P2` has no attribute `chests`"
        else:
            assert _f("x.chests", who, ent, fields={"chests", "other"}, statics={"chests"}, static=static) == \
                (value, 0)
    assert _f("x.chests", "{'chests': 5}", ent, fields={"chests"}, statics={"chests"}, static=static)[0] == 5


def test_a_failing_plain_form_fails_with_the_checked_forms_error_at_the_same_place():
    ent = {"P1": {"score": 2, "name": "ab", "long": "x" * 600_000}}
    for text, message in (("x.score + x.mate", "`P1` has no attribute `mate`"),
                          ("x.score + x.name", "cannot evaluate this"),
                          ("x.score // (x.score - 2)", "division by zero"),
                          ("x.long + x.long", "more than 1,000,000 items")):  # the bound `_add` keeps
        comp, model = _functions(text, {"score", "name", "mate", "long"})
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, "push(trace, f(P1))", ent=ent)
        assert message in err.value.message and err.value.loc == Loc("rules.yaml", 10, 12), text


def test_a_let_of_reads_runs_plain_and_what_follows_does_not_count_on_the_checked_form():
    comp, model, _ = ruleset(fields={"score", "mate", "gone"})
    ent = {"P1": {"score": 2, "mate": 3}}  # (`gone`: a field of other entities)
    text = "let x = P1\nlet n = x.score + x.mate\ntotal = n + x.mate"
    c, _ = run_effect(comp, model, text, ent=ent)  # the plain form ran: x's entity was never held
    assert c.state["globals"]["total"] == 8
    c, _ = run_effect(comp, model, "let x = {'score': 1, 'mate': 1}\nlet n = x.score + x.mate\ntotal = n + x.mate")
    assert c.state["globals"]["total"] == 3  # a map: the checked form ran
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let x = P1\nlet n = x.score + x.gone\ntotal = n", ent=ent)
    assert err.value.message == "`P1` has no attribute `gone`" and err.value.loc == Loc("flow.yaml", 6, 9)


def test_a_count_in_the_plain_form_that_falls_back_gives_its_steps_back_first():
    """`count(..., where=...)` charges a step per item; when its plain form stops half-way (a map
    among the ids), the checked form runs from the start with the steps given back."""
    ent = {"P1": {"score": 2}, "P2": {"score": 0}}
    comp, model = _functions("count(x, where=i => i.score > 0)", {"score"})
    assert "c.meter.used = " in model.functions["f"].source
    assert _f("count(x, where=i => i.score > 0)", "[P1, P2, P1]", ent, fields={"score"}) == (2, 3)
    # the map makes the plain form fail at the second item: 3 items, not 2 + 3 (`f` calls no rule: no step)
    assert _f("count(x, where=i => i.score > 0)", "[P1, {'score': 5}, P2]", ent, fields={"score"}) == (2, 3)
    # a list comprehension is charged its list's length once, whichever form ran
    assert _f("[i for i in x if i.score > 0]", "[P1, P2, P1]", ent, fields={"score"}) == (["P1", "P1"], 3)
    assert _f("[i for i in x if i.score > 0]", "[P1, {'score': 5}, P2]", ent, fields={"score"}) == \
        (["P1", {"score": 5}], 3)
    with pytest.raises(RuleError) as err:  # the budget ends the count at the same item either way
        run_effect(comp, model, "push(trace, f([P1, {'score': 5}, P2, P1]))", ent=ent, budget=3)
    assert "more than 3 steps of work" in err.value.message


def test_an_if_condition_of_reads_runs_plain_and_its_block_does_not_count_on_the_checked_form():
    comp, model, _ = ruleset(fields={"score", "mate", "gone"})
    ent = {"P1": {"score": 2, "mate": 3}}
    text = "let x = P1\nif x.score > 1 and x.mate > 1:\n    total = x.mate\nelif x.mate > 0:\n    total = 1"
    c, _ = run_effect(comp, model, text, ent=ent)  # the plain form ran: x's entity was never held
    assert c.state["globals"]["total"] == 3
    c, _ = run_effect(comp, model, text.replace("P1", "{'score': 0, 'mate': 5}"))
    assert c.state["globals"]["total"] == 1  # a map: the checked forms ran, the `elif` too
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, "let x = P1\nif x.score > 1 and x.gone:\n    total = 1", ent=ent)
    assert err.value.message == "`P1` has no attribute `gone`" and err.value.loc == Loc("flow.yaml", 6, 9)


@pytest.mark.parametrize("n", [11, 60])
def test_a_long_elif_chain_of_reads_picks_the_same_branch_and_fails_at_the_failing_elif(n):
    """The `if` of a chain and its `elif`s run their conditions in a plain form: an `elif` is
    written `else:` with a guarded `if` inside, one level of indentation more each, up to
    `_MAX_SHIFT` levels; past them the `elif`s are checked forms. Either way the same branch
    runs, with blocks nested inside as deep as a text may nest them."""
    from dsl.compiler import _MAX_SHIFT, MAX_BLOCKS
    comp, model, _ = ruleset(fields={"score", "gone"})
    deep = "".join("    " * (2 + i) + "if x.score >= 0:\n" for i in range(MAX_BLOCKS - 2))
    inner = "    " * MAX_BLOCKS + "total = total + 1000\n"
    text = "let x = P1\nif x.score == 0:\n    total = 100\n" + "".join(
        f"elif x.score == {k}:\n    total = {k}\n" for k in range(1, n + 1)) + \
        "else:\n    total = -1\n    if x.score > 999:\n" + deep + inner
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn is not None, comp.diags.items
    shifted = min(n, _MAX_SHIFT)
    assert fn.source.count("else:\n") >= shifted and len(re.findall(r"\n *elif ", fn.source)) == n - shifted
    for score in (0, 1, 8, 9, n, n + 1, 1000):
        want = 100 if score == 0 else score if score <= n else 999 if score == 1000 else -1
        c, _ = run_effect(comp, model, text, ent={"P1": {"score": score}})
        assert c.state["globals"]["total"] == want, score
        c, _ = run_effect(comp, model, text.replace("P1", f"{{'score': {score}}}", 1))  # a map: checked forms
        assert c.state["globals"]["total"] == want, score
    failing = ("let x = P1\nif x.score > 5:\n    total = 1\nelif x.score > 1:\n    total = 2\n"
               "elif x.gone:\n    total = 3")
    with pytest.raises(RuleError) as err:
        run_effect(comp, model, failing, ent={"P1": {"score": 0}})
    assert err.value.message == "`P1` has no attribute `gone`" and err.value.loc == Loc("flow.yaml", 10, 9)


def test_two_lists_or_texts_joined_in_either_form_are_bounded_and_refuse_mixed_kinds():
    fields = {"hand", "name", "long"}
    ent = {"P1": {"hand": ["a"], "name": "ab", "long": ["x"] * 600_000}}
    assert _f("x.hand + x.hand", "P1", ent, fields=fields)[0] == ["a", "a"]  # a plain form
    assert _f("x.name + x.name", "P1", ent, fields=fields)[0] == "abab"
    assert _f("x.hand + x.hand + [len(x.name)]", "P1", ent, fields=fields)[0] == ["a", "a", 2]
    comp, model, _ = ruleset(functions={"h": (("y",), "y.hand")}, fields=fields)
    c, _ = run_effect(comp, model, "trace = h(P1) + h(P1)", ent=ent)  # the checked form (a call)
    assert c.state["globals"]["trace"] == ["a", "a"]
    for text in ("x.long + x.long", "x.long + x.hand + x.long"):
        comp, model = _functions(text, fields)
        with pytest.raises(RuleError) as err:
            run_effect(comp, model, "push(trace, f(P1))", ent=ent)
        assert "more than 1,000,000 items" in err.value.message and err.value.loc == Loc("rules.yaml", 10, 12)
    comp, model, _ = ruleset(functions={"h": (("y",), "y.long")}, fields=fields)
    with pytest.raises(RuleError) as err:  # the checked form's bound
        run_effect(comp, model, "trace = h(P1) + h(P1)", ent=ent)
    assert "more than 1,000,000 items" in err.value.message
    comp, model, _ = ruleset(functions={"h": (("y",), "y.name")}, fields=fields)
    with pytest.raises(RuleError) as err:  # mixed kinds: the helper's error
        run_effect(comp, model, "trace = h(P1) + [1]", ent=ent)
    assert "cannot evaluate" in err.value.message


def test_every_bundled_rule_compiles_with_its_plain_forms_and_functions_written_out(monkeypatch):
    """Python compiles generated source on first use; here every text of every bundled combo is
    compiled at once, as played (plain forms on), and none needs the fallback without them."""
    from dsl import codegen
    from dsl.compiler import Compiler as Comp
    from engine.model import build
    from tools.instructions import DIGEST_SET

    def dropped(self, *args):
        pytest.fail(f"plain forms dropped from a text at {args[1]}")
    monkeypatch.setattr(codegen, "EAGER_SOURCE", 0)
    monkeypatch.setattr(Comp, "_without_plain_forms", dropped)
    for combo, _counts, _games in DIGEST_SET:
        diags = Diagnostics()
        model = build(combo, {}, 4, diags)
        assert model is not None and not diags.items, combo
    moves = model.procedures["list_force_moves"].source  # (Samurai Swords: the last of DIGEST_SET)
    assert "except _MISS" in moves and "_miss()" in moves  # with plain forms, and `force_size` written out


def test_a_text_whose_plain_form_python_refuses_runs_without_it(monkeypatch):
    from dsl import codegen
    monkeypatch.setattr(codegen, "EAGER_SOURCE", 0)  # compiled at once, as a long text is
    broken = _Plain("(" * 300 + ")" * 300, False)  # (past Python's 200 nested brackets)
    monkeypatch.setattr(Compiler, "_plain_form", lambda self, node, scope, ents: broken if self._plain_on else None)
    comp, model, diags = ruleset(fields={"a", "b"})
    c, _ = run_effect(comp, model, "let t = P1.a + P1.b\ntotal = t", ent={"P1": {"a": 2, "b": 3}})
    assert c.state["globals"]["total"] == 5 and not diags.items
    fn = comp.effect("let t = P1.a + P1.b\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
    assert "except _MISS" not in fn.source and "((((" not in fn.source  # the text went without plain forms


def test_a_long_chain_or_a_ring_of_functions_compiles_and_runs_as_calls():
    """Hostile rules: each function calls the next, 150 or 600 deep (past Python's recursion
    limit for the look at what may be written out), or two call each other."""
    for n in (150, 600):
        chain = {f"f{i}": (("x",), f"f{i + 1}(x) + 1") for i in range(n)}
        chain[f"f{n}"] = (("x",), "x.a")
        _, model, fn = _inlining("f0(P1) + 0", **chain)
        if n < MAX_CALL_DEPTH:
            assert _run(model, fn, {"P1": {"a": 1, "b": 0}}).state["globals"]["total"] == n + 1
        else:
            with pytest.raises(RuleError) as err:
                _run(model, fn, {"P1": {"a": 1, "b": 0}})
            assert "called itself more than" in err.value.message
    ring = {"ping": (("n",), "0 if n <= 0 else pong(n - 1) + P1.a"), "pong": (("n",), "ping(n) + 1")}
    _, model, fn = _inlining("ping(4)", **ring)
    assert _run(model, fn, {"P1": {"a": 1, "b": 0}}).state["globals"]["total"] == 8


def _both_forms(text: str, ent: dict, fields: set[str], joined: set[str] = frozenset()) -> list[tuple]:
    """What the effect `text` does with plain forms (as played) and without them (as validated,
    the checked form alone): the globals it leaves and the budget it used, or its error."""
    from dsl.compiler import compile_cache
    sym = Symbols(globals={"trace", "total"}, fields=set(fields), joined_fields=set(joined),
                  constants={"P1": "P1"})
    model = SimpleNamespace(frozen_ids=set(), static={}, collections={}, board=None, modifiers={},
                            functions={}, procedures={})
    out = []
    for validating in (False, True):
        comp = Compiler(sym, Diagnostics())
        if validating:
            with compile_cache():
                fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
            assert "except _MISS" not in fn.source
        else:
            fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
            assert "except _MISS" in fn.source
        try:
            c = _run(model, fn, copy.deepcopy(ent))
            out.append(("done", repr(c.state["globals"]), c.meter.used))
        except RuleError as e:
            out.append(("error", e.message, e.loc, e.code))
    return out


JOIN_VALUES = ["", "ab", "y" * 30, "y" * 31, "y" * 62, ["a"], [], 7, None, 0.5, True, {"k": 1}]


@pytest.mark.parametrize("text, written", [
    ("let a = P1.a\nlet b = P1.b\ntotal = a + ' ' + b + '-' + a", " + ' ' + v_b + '-' + v_a if "),
    ("let b = P1.b\ntotal = P1.a + ' ' + b + ' ' + P1", " + ' ' + v_b + ' ' + "),
    ("let b = P1.b\ntrace = [P1.a + ' ' + b for i in range(2)]", " + ' ' + v_b if "),
    ("let a = P1.a\ntotal = a + ' ' + P1.b + ' ' + a", None),  # a field read after the first: not joined at once
])
def test_a_chain_of_texts_joined_at_once_gives_what_each_join_gives(text, written, monkeypatch):
    """`a + ' ' + b + ...` (the keys rules build), where the operands after the first cannot
    fail: every text, with at most FREE_WALK characters in all, is joined at once. For every
    kind of operand (texts either side of the bound, lists, numbers, none), in both forms, the
    same result, budget used and error as joining them one `+` at a time."""
    fields = {"a", "b"}
    cases = [{"P1": {"a": a, "b": b}} for a in JOIN_VALUES for b in JOIN_VALUES]
    at_once = [_both_forms(text, ent, fields, fields) for ent in cases]
    if written is not None:
        assert written in Compiler(Symbols(globals={"trace", "total"}, fields=fields, joined_fields=fields,
                                           constants={"P1": "P1"}), Diagnostics()).effect(
            text, Loc("flow.yaml", 5, 9), set(), "effect").source
    monkeypatch.setattr(Compiler, "_text_chain", lambda self, node: None)  # one `+` at a time
    assert at_once == [_both_forms(text, ent, fields, fields) for ent in cases]
    assert any(run[0] == "error" for runs in at_once for run in runs)  # (mixed kinds fail, as they should)


IN_ITEMS = ["a", "k", 7, 7.0, None, 0.5, True, float("nan"), ["a"], ["a"] * 100, {"k": 1}]
IN_LISTS = [[], ["a", 7], ["a"] * 63 + [7], ["a"] * 64 + [7], [["a"]], [["a"] * 100, 7], [1.0, None], [True],
            {"k": 1, "a": 2}, {}, "abc", "y" * 70 + "a", 7, None]


@pytest.mark.parametrize("text", ["total = P1.a in P1.b", "total = P1.a not in P1.b",
                                  "if P1.a in P1.b:\n    total = true\nelse:\n    total = false"])
def test_in_written_out_gives_what_the_helper_gives(text):
    """`x in xs` is written out where `xs` is a list of at most FREE_WALK items or a map, and
    `x` a scalar (compiler `_expr`); everything else is `codegen._in`'s. For every kind of
    item and list either side of the bound: the value, the budget used and the error that
    `_in` gives."""
    from dsl.codegen import _in
    comp, model, _ = ruleset(fields={"a", "b"})
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    assert "_in(c, " in fn.source and "_dict" in fn.source  # (written out, with the helper for the rest)
    for a in IN_ITEMS:
        for b in IN_LISTS:
            c = Ctx({"globals": {}, "ent": {}}, model, Hooks(), {}, meter=Meter(1_000_000))
            try:
                want = _in(c, a, b)
            except (TypeError, RuleError) as e:
                want = type(e)
            try:
                got = _run(model, fn, {"P1": {"a": a, "b": b}})
            except RuleError as e:
                assert want in (TypeError, RuleError), (a, b, e)
                continue
            seen = got.state["globals"]["total"]
            assert (seen if "not" not in text else not seen) == want, (a, b)
            assert got.meter.used == c.meter.used, (a, b, got.meter.used)


SUM_VALUES = [0, 7, -3, (1 << 30) - 2, -(1 << 30) + 2, 1 << 30, 1 << 62, -(1 << 62), 1 << 3321, True, 0.5,
              float("nan"), float("inf"), "ab", ["a"], None, {"k": 1}]


@pytest.mark.parametrize("text", ["let t = P1.a + P1.b\ntotal = t", "let t = P1.a + P1.b + P1.c\ntotal = t",
                                  "let t = P1.a + P1.b - P1.c\ntotal = t", "if P1.a + P1.b > 3:\n    total = 1",
                                  "total = P1.a + P1.b", "let t = P1.a\nt += P1.b\ntotal = t",
                                  "let t = P1.c\nt -= P1.a + P1.b\ntotal = t",
                                  "let x = P1\nx.c = x.a + x.b\ntotal = x.c", "let x = P1\nx.c += x.a\ntotal = x.c"])
def test_a_sum_in_the_plain_form_gives_what_the_checked_form_gives_for_every_kind_of_value(text):
    """A sum in a plain form has no type test: anything but a number within ±(2**30 - 1) gives
    way to the checked form (a text or a list fails the bounds' comparison). Every value a
    field can hold, at every place of the sum, in a `let`, an `if` and the value of an
    assignment (to a global, a local, a field of an entity held in a local; `t += x` as
    `t + x`): the same result, budget and error as the checked form alone."""
    fields = {"a", "b", "c"}
    for a in SUM_VALUES:
        for b in SUM_VALUES:
            ent = {"P1": {"a": a, "b": b, "c": 1 << 3321 if b == 7 else 2}}
            plain, checked = _both_forms(text, ent, fields)
            assert plain == checked or (plain[0] == checked[0] == "done" and "nan" in plain[1] and
                                        plain[1:] == checked[1:]), (text, a, b, plain, checked)


def test_a_chain_of_sums_is_bounded_at_its_end_in_both_forms():
    """docs/limits.md: a chain of sums and differences (each step on the left of the next) has
    its number's size counted once, at its end, in the plain form and the checked form alike:
    `a + b - c` is refused only if its result is too large; a sum alone, a chain ended by a
    number written in the rule, and a sum on the right of a difference are each bounded."""
    big = 1 << 3321  # (a + b is one bit past the limit)
    fields = {"a", "b", "c", "d"}
    ent = {"P1": {"a": big, "b": big, "c": big, "d": 5}}
    for text, want in [("total = P1.a + P1.b - P1.c", big), ("total = P1.a + P1.b - P1.c + P1.d - 5", big),
                       ("total = P1.a + P1.b", None), ("total = P1.a + P1.b + 1", None),
                       ("total = P1.a + 1 + P1.b", None), ("total = P1.c - (P1.a + P1.b)", None)]:
        plain, checked = _both_forms(text, ent, fields)
        assert plain == checked, (text, plain, checked)
        if want is None:
            assert plain[0] == "error" and plain[3] == "E003", (text, plain)
        else:
            assert plain[0] == "done" and repr(want) in plain[1], (text, plain)
    # one bounds check for a chain of four in the plain form, where each step had its own
    sym = Symbols(globals={"trace", "total"}, fields=fields, constants={"P1": "P1"})
    fn = Compiler(sym, Diagnostics()).effect("total = P1.a + P1.b + P1.c - P1.d", Loc("flow.yaml", 5, 9),
                                              set(), "effect")
    assert fn.source.split("except _MISS")[0].count(" < 1073741823") == 1
    # a longer chain is bounded every four steps: a plain form joins at most five lists or
    # texts (of a name it cannot tell from a number) before its check gives way
    fields.add("e")
    sym = Symbols(globals={"trace", "total"}, fields=fields, constants={"P1": "P1"})
    fn = Compiler(sym, Diagnostics()).effect("total = P1.a + P1.b + P1.c - P1.d + P1.e - P1.a",
                                              Loc("flow.yaml", 5, 9), set(), "effect")
    assert fn.source.split("except _MISS")[0].count(" < 1073741823") == 2


def test_a_sum_with_a_side_that_may_be_a_text_or_a_list_is_added_by_the_helper_in_the_plain_form():
    """`+` of what may be a text or a list (a field that starts as one, a list written out, a
    comprehension, a built-in giving one) keeps `_add` in its plain form, which joins without
    giving way to the checked form; a sum of other reads has no call."""
    from dsl.compiler import compile_cache
    sym = Symbols(globals={"trace", "total"}, fields={"hand", "gold"}, joined_fields={"hand"},
                  constants={"P1": "P1"})
    comp = Compiler(sym, Diagnostics())

    def plain(text: str) -> str:
        fn = comp.effect(f"let t = {text}\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
        return fn.source.split("except _MISS")[0]
    assert "_add(" not in plain("P1.gold + P1.gold") and "_miss()" in plain("P1.gold + P1.gold")
    for joined in ("P1.hand + P1.hand", "P1.gold + [1]", "[x for x in P1.hand] + P1.gold",
                   "(P1.hand if P1.gold else []) + P1.gold", "sorted(P1.gold) + P1.gold", "'a' + P1.gold",
                   "P1.gold + P1.gold + P1.hand"):
        assert "_add(" in plain(joined), joined
    with compile_cache():  # (validation: no plain form at all)
        assert "except _MISS" not in comp.effect("let t = P1.gold + P1.gold\ntotal = t", Loc("flow.yaml", 5, 9),
                                                 set(), "effect").source
    ent = {"P1": {"hand": ["a"], "gold": ["g"]}}
    for text in ("let t = P1.hand + P1.hand\ntotal = t", "let t = P1.gold + P1.gold\ntotal = t",
                 "let t = P1.gold + P1.hand + [2]\ntotal = t"):
        plain_run, checked_run = _both_forms(text, ent, {"hand", "gold"}, {"hand"})
        assert plain_run == checked_run and plain_run[0] == "done", text


@pytest.mark.parametrize("text", ["let t = P1.a + P1.b\ntotal = t", "total = P1.a + P1.b + P1.a"])
def test_a_join_in_the_plain_form_is_bounded_as_the_helper_bounds_it(text):
    """`+` of sides that may be texts or lists, in a plain form: a join of two of one kind up
    to 1,000,000 items is kept as it is, and everything else (a join past the bound, mixed
    kinds, a number out of bounds, none) is left to `_add`: the same result, budget and error
    as the checked form alone."""
    values = ["y" * 500_000, "y" * 500_001, "ab", ["a"], [], 7, 1 << 62, None, 0.5]
    for a in values:
        for b in values:
            plain, checked = _both_forms(text, {"P1": {"a": a, "b": b}}, {"a", "b"}, {"a", "b"})
            assert plain == checked, (text, repr(a)[:20], repr(b)[:20], plain[:2], checked[:2])


def _played_and_checked(text: str, ent: dict, budget: int, functions: dict, plain: bool = True) -> list[tuple]:
    """The effect `text` run as played (plain forms, functions written out) and as validated
    (the checked forms alone): what it leaves and the budget it used, or its error. `plain`:
    whether the text itself has a plain form when played (its functions may have theirs)."""
    from dsl.compiler import compile_cache
    out = []
    for validating in (False, True):
        with compile_cache() if validating else contextlib.nullcontext():
            comp, model, _ = ruleset(functions=functions, fields={"a", "b", "owner"})
            fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
        assert ("except _MISS" in fn.source) is (plain and not validating)
        try:
            c = _run(model, fn, copy.deepcopy(ent), budget=budget)
            out.append(("done", c.state["globals"]["total"], c.meter.used))
        except RuleError as e:
            out.append(("error", e.message, e.loc))
    return out


ITEMS = {"P1": {"a": 1, "b": 2, "owner": "P1"}, "P2": {"a": 5, "b": 0, "owner": "P1"},
         "P3": {"a": 0, "b": 7, "owner": None}, "P4": {"a": 9, "b": 9, "owner": "P1"}}


@pytest.mark.parametrize("test", ["x.owner == P1", "x.a - x.b > 0", "size(x) > 4", "twice(x) > 4 and x.a > 0",
                                  "len([y for y in [x.a, x.b] if y > 0]) > 1", "big(x) > 0"])
def test_count_and_filter_in_a_plain_form_count_their_steps_at_once_and_end_as_the_checked_form(test):
    """In a plain form, `count` and `filter` whose test counts no steps of its own (no call but
    of functions written out) are charged their list's length before the first item instead of a
    step per item. The plain form gives way wherever a step would pass the budget, so at every
    budget, with every kind of item (a field missing, a number too large for a difference, a
    text where a number is read) the result, the steps used and the error are the checked
    form's."""
    functions = {"size": (("y",), "y.a + y.b"), "twice": (("y",), "size(y) + size(y)"),
                 "big": (("y",), "y.a - y.b")}
    faulty = [{}, {"P3": {"a": 0, "owner": None}}, {"P2": {"a": 1 << 3322, "b": -(1 << 3322), "owner": "P1"}},
              {"P4": {"a": "x", "b": 1, "owner": "P1"}}]
    for name in ("count", "filter"):
        text = f"let t = {name}([P1, P2, P3, P4], x => {test})\ntotal = t"
        if name == "count":
            text = f"let t = count([P1, P2, P3, P4], where=x => {test})\ntotal = t"
        for change in faulty:
            ent = {**ITEMS, **change}
            for budget in range(0, 16):
                played, checked = _played_and_checked(text, ent, budget, functions)
                assert played == checked, (text, change, budget, played, checked)
    comp, _, _ = ruleset(functions=functions, fields={"a", "b", "owner"})
    fn = comp.effect(f"let t = count([P1, P2], where=x => {test})\ntotal = t", Loc("flow.yaml", 5, 9), set(), "effect")
    plain = fn.source.split("except _MISS")[0]
    assert "c.tick() or" not in plain  # no step counted per item...
    assert "c.tick() or" in fn.source.split("except _MISS")[1]  # ...but in the checked form


def test_count_whose_test_calls_what_counts_its_own_steps_ends_the_budget_as_the_checked_form():
    """A function called in the test whose value calls a built-in that counts its work (written
    out) counts steps too, at a higher count in the plain form than in the checked form: the
    plain form meets the limit first, or with it, and gives way."""
    functions = {"m": (("y",), "max(y.a, y.b)")}
    for budget in range(0, 40):
        played, checked = _played_and_checked("let t = count([P1, P2, P3], where=x => m(x) > 1)\ntotal = t",
                                              ITEMS, budget, functions)
        assert played == checked, (budget, played, checked)


class _Runaway(BaseException):
    """Past any bound a test sets: stops it at once (no rule catches what is no Exception)."""


class _Counted:
    """A compiled function, with the calls made of it counted, and stopped past 10,000."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.calls = fn, 0

    def pos(self, *args: Any) -> Any:
        self.calls += 1
        if self.calls > 10_000:
            raise _Runaway("runs without end")
        return self.fn.pos(*args)


@pytest.mark.parametrize(("value", "ends"), [
    ("0 if n <= 0 else f(n - 1, m) + m.a", "done"),  # every level gives way (a map's field)
    ("m.gone if n <= 0 else f(n - 1, m) + m.a", "error"),  # and the last fails
    ("(m.a < 'x') if n <= 0 else f(n - 1, m) + P1.a", "error"),  # a plain form fails at the end
    ("P1.gone if n <= 0 else g(n) + f(n - 1, m) + P1.a", "error")])
def test_a_chain_of_calls_whose_plain_forms_give_way_runs_each_link_a_bounded_number_of_times(value, ends):
    """A plain form that gives way runs its checked form from the start, so what it called runs
    again. Were a plain form allowed to call a rule whose own plain form calls rules, a function
    calling itself 40 deep, giving way or failing at every level, would run its last level
    2**40 times: a hang. A plain form calls only functions that call no other rule (written out
    ones aside), so each level runs once or twice, whatever the depth."""
    functions = {"f": (("n", "m"), value), "g": (("k",), "P1.a + k")}
    text = "let t = f(40, {'a': 1}) + P1.a\ntotal = t"
    comp, model, _ = ruleset(functions=functions, fields={"a", "gone"})
    for fname in ("f", "g"):
        model.functions[fname] = _Counted(model.functions[fname])
    fn = comp.effect(text, Loc("flow.yaml", 5, 9), set(), "effect")
    ran_away = False
    try:
        _run(model, fn, {"P1": {"a": 1}})
    except RuleError:
        pass
    except _Runaway:  # (asserted outside the `except`: its chain of exceptions is too long to show)
        ran_away = True
    assert not ran_away and model.functions["f"].calls == 41 and model.functions["g"].calls <= 2 * 40
    assert "except _MISS" not in fn.source  # (it calls `f`, which calls a rule)
    played, checked = _played_and_checked(text.replace("40", "8"), {"P1": {"a": 1}}, 1_000_000, functions,
                                          plain=False)  # (8 deep: 2**8 runs at most, were the bound lost)
    assert played == checked
    assert played[0] == ends, played


def test_an_expression_that_only_reads_a_variable_names_it_so_the_flow_reads_it_without_a_call():
    """A choice's player or a step's argument written as a variable of the flow (`p`) is read
    from the variables without a call of its compiled text (`var`); anything else, a read of
    a field, a constant, a global, or a number, has none and is called."""
    comp, model, _ = ruleset(fields={"owner"})
    loc = Loc("flow.yaml", 5, 9)
    fn = comp.expression("p", loc, {"p", "q"})
    assert fn.var == "p"
    c = Ctx({"globals": {"trace": [], "total": 0}, "ent": {}}, model, Hooks(), {"p": "P2"}, meter=Meter(100))
    assert fn.fast(c) == c.vars.get(fn.var) == "P2"
    c.vars = {}
    assert fn.fast(c) is c.vars.get(fn.var) is None  # not set: none, either way
    assert comp.expression("(p)", loc, {"p", "q"}).var == "p"  # (the same tree)
    for text in ("p.owner", "P1", "trace", "q if p else p", "p + 0"):
        assert comp.expression(text, loc, {"p", "q"}).var is None, text
    assert comp.expression("p", loc, set()) is None  # an unknown name: a compile error, nothing to read
    assert comp.expression(3, loc, {"p"}).var is None  # a YAML number: nothing compiled
