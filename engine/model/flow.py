"""The flow: rounds, phases and steps from data, compiled into a table of nodes.

The game's position in the flow is an explicit stack of frames (plain data: node index,
a counter, local variables), so it can be saved, compared and cloned. The machine in
engine/game.py pops and pushes frames until it reaches a decision.

Flow items (see docs/ruleset-format.md):
    step_name                            run a named step
    {step: name, with: {param: expr}}    run a named step with arguments
    {do: "statements"}                   run an effect
    {repeat: n, as: i, do: [...]}        loop n times
    {for: x, in: list, do: [...]}        loop over a list
    {while: cond, do: [...]}             loop while a condition holds
    {if: cond, then: [...], else: [...]}
    {choose: x, from: list, player: p, prompt: "...", secret: bool, optional: bool,
     then: [...], else: [...]}           ask a player; `else` runs when there is no option
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from dsl.compiler import Compiler
from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.memo import ScopedMemo
from engine.base.record import Record
from engine.loading.yamlio import loc_of

Fn = Callable[[Any], Any]


class Node(Record):
    """One item of the flow, in the model's node table (children and bodies by index)."""

    FIELDS = ("kind", "loc", "label", "children", "fn", "var", "var_global", "body", "other", "player", "prompt",
              "secret", "optional", "step", "args", "title", "title_fn", "params")

    def __init__(self, kind: str, loc: Loc | None = None, label: str = "", children: list[int] | None = None,
                 fn: Fn | None = None, var: str = "", var_global: bool = False, body: int = -1, other: int = -1,
                 player: Fn | None = None, prompt: Fn | None = None, secret: bool = False, optional: bool = False,
                 step: str = "", args: dict[str, Fn] | None = None, title: str = "", title_fn: Fn | None = None,
                 params: tuple[str, ...] = ()) -> None:
        self.kind = kind  # seq effect step repeat for while if choose
        self.loc = Loc() if loc is None else loc
        self.label = label
        self.children = [] if children is None else children  # seq
        self.fn = fn  # effect; condition; list; count
        self.var = var  # loop or choice variable
        self.var_global = var_global  # the loop variable is a declared global
        self.body = body  # repeat/for/while body, if-then, choose-then
        self.other = other  # if-else, choose-else
        self.player = player  # choose
        self.prompt = prompt
        self.secret = secret
        self.optional = optional
        self.step = step  # step call
        self.args = {} if args is None else args
        self.title = title
        self.title_fn = title_fn  # a title with {inserts}, evaluated when the step starts
        self.params = params


# Within `flow_cache()` (validation), the flow of a step compiled without any diagnostic is
# remembered with what it depended on, and a later build whose step is the very same object
# (the data files' values are shared and never changed: engine/loading/layering.py `_own`) and
# where all of that is the same gets a copy of its nodes instead of walking it again.
_FLOWS = ScopedMemo("daimyo_flow_cache")


def flow_cache() -> AbstractContextManager[None]:
    """Within this block, the flow of a step is walked once per set of declarations it uses."""
    return _FLOWS.scope()


class _Walked:
    """A step's flow as one build compiled it: its nodes (indices from `start`), the node it
    starts at, and everything the walk read besides the step itself. (A plain class: making a
    dataclass costs every `daimyo` start about a millisecond.)"""

    __slots__ = ("body", "calls", "loop_vars", "meanings", "names", "nodes", "spec", "start")

    def __init__(self, spec: Any, nodes: list[Node], start: int, body: int, names: tuple[str, ...],
                 meanings: tuple, calls: dict[str, tuple], loop_vars: dict[str, bool]) -> None:
        self.spec = spec  # the step (held, so that its id stays its own)
        self.nodes, self.start, self.body = nodes, start, body
        self.names, self.meanings = names, meanings  # every name its texts looked up, with what each meant
        self.calls = calls  # steps it calls, with their parameters
        self.loop_vars = loop_vars  # loop variables, with whether each is a global


class FlowCompiler:
    """Turns the `flow` list and the `steps` section into a node table."""

    def __init__(self, steps: dict, compiler: Compiler, globals_: set[str], diags: Diagnostics):
        self.steps = steps
        self.comp = compiler
        self.globals = globals_
        self.diags = diags
        self.nodes: list[Node] = []
        self.step_index: dict[str, int] = {}
        self._calls: dict[str, tuple] | None = None  # while a step's flow is remembered (`_step_flow`)
        self._loop_vars: dict[str, bool] | None = None

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def compile_steps(self) -> None:
        # Reserve an index per step first so steps may call each other in any order.
        for name in self.steps:
            self.step_index[name] = self.add(Node("step", label=name))
        for name, spec in self.steps.items():
            idx = self.step_index[name]
            params = tuple(spec.get("params") or ())
            node = self.nodes[idx]
            node.params = params
            node.title = str(spec.get("title", ""))
            if "{" in node.title:
                tloc = loc_of(spec, "title")
                tloc = Loc(tloc.file, tloc.line, max(1, tloc.col - 1)) if tloc.line else tloc
                node.title_fn = self.comp.expression(_as_string_expr(node.title), tloc, set(params),
                                                     f"title of step `{name}`")
            node.loc = loc_of(self.steps, name, key=True)
            if "do" in spec and "flow" in spec:
                self.diags.add("F001", f"step `{name}` has both `do` and `flow`; give one", node.loc)
            if "flow" in spec:
                node.body = self._step_flow(name, spec, params)
            elif "do" in spec:
                fn = self.comp.effect(spec["do"], loc_of(spec, "do"), set(params), what=f"step `{name}`")
                node.body = self.add(Node("effect", loc_of(spec, "do"), name, fn=fn))
            else:
                self.diags.add("F001", f"step `{name}` needs `do` (statements) or `flow` (items)", node.loc)

    def _step_flow(self, name: str, spec: Any, params: tuple[str, ...]) -> int:
        """`items` of a step's `flow`, or a copy of what an earlier build made of the same step."""
        memo = _FLOWS.get()
        if memo is None:
            return self.items(spec["flow"], set(params), name, spec, "flow")
        known = memo.setdefault((name, id(spec)), [])
        for walked in known:
            if walked.spec is spec and self._same(walked):
                return self._copy(walked)
        start, mark = len(self.nodes), len(self.diags.items)
        self.comp.recorder, self._calls, self._loop_vars = set(), {}, {}
        try:
            body = self.items(spec["flow"], set(params), name, spec, "flow")
        finally:
            names, calls, loop_vars = tuple(sorted(self.comp.recorder)), self._calls, self._loop_vars
            self.comp.recorder, self._calls, self._loop_vars = None, None, None
        if len(self.diags.items) == mark:
            known.append(_Walked(spec, self.nodes[start:], start, body, names, self.comp.meanings(names),
                                 calls, loop_vars))
        return body

    def _same(self, walked: _Walked) -> bool:
        """Whether walking the step again here would read the same as it did then."""
        for step, params in walked.calls.items():
            if step not in self.steps or tuple(self.steps[step].get("params") or ()) != params:
                return False
        return all((var in self.globals) == was for var, was in walked.loop_vars.items()) \
            and self.comp.meanings(walked.names) == walked.meanings

    def _copy(self, walked: _Walked) -> int:
        """The remembered nodes added to this table (indices moved to where they now stand)."""
        shift = len(self.nodes) - walked.start
        for old in walked.nodes:
            node = object.__new__(Node)
            node.__dict__.update(old.__dict__)
            if old.children:
                node.children = [c + shift for c in old.children]
            if old.body >= 0:
                node.body = old.body + shift
            if old.other >= 0:
                node.other = old.other + shift
            self.nodes.append(node)
        self.comp.mentioned.update(walked.names)
        return walked.body + shift

    def items(self, items: Any, scope: set[str], label: str, parent: Any, key: Any) -> int:
        loc = loc_of(parent, key)
        if not isinstance(items, list):
            if isinstance(items, str) and key in ("then", "else", "do"):
                # statements written as one text: compiled at the text's own place in the file
                fn = self.comp.effect(items, loc, scope, what=f"{label} effect")
                return self.add(Node("effect", loc, label, fn=fn))
            else:
                self.diags.add("F002", f"{label}: expected a list of flow items", loc)
                return self.add(Node("seq", loc, label))
        scope = set(scope)
        children = [self.item(x, scope, label, items, i) for i, x in enumerate(items)]
        if len(children) == 1:
            return children[0]
        return self.add(Node("seq", loc, label, children=children))

    def item(self, x: Any, scope: set[str], label: str, parent: Any, key: Any) -> int:
        loc = loc_of(parent, key)
        if isinstance(x, str):
            return self._call(x, {}, loc, scope)
        if not isinstance(x, dict):
            self.diags.add("F002", f"{label}: a flow item is a step name or a mapping", loc)
            return self.add(Node("seq", loc, label))
        lab = str(x.get("label", label))
        c = self.comp
        if "choose" in x:
            var = str(x["choose"])
            n = Node("choose", loc, lab, var=var, secret=bool(x.get("secret", False)),
                     optional=bool(x.get("optional", False)))
            n.fn = c.expression(x.get("from", "[]"), loc_of(x, "from"), scope, "list of options")
            n.player = c.expression(x.get("player", "player"), loc_of(x, "player"), scope, "player")
            prompt = x.get("prompt", f"choose {var}")
            ploc = loc_of(x, "prompt")  # the prompt becomes a string expression: one quote to the left
            ploc = Loc(ploc.file, ploc.line, max(1, ploc.col - 1)) if ploc.line else ploc
            n.prompt = c.expression(_as_string_expr(prompt), ploc, scope, "prompt")
            if "from" not in x:
                self.diags.add("F003", f"choice `{var}` needs `from:` (the options)", loc)
            inner = scope | {var}
            n.body = self.items(x["then"], inner, lab, x, "then") if "then" in x else -1
            n.other = self.items(x["else"], scope, lab, x, "else") if "else" in x else -1
            return self.add(n)
        if "repeat" in x:
            var = str(x.get("as", ""))
            n = Node("repeat", loc, lab, var=var, var_global=self._is_global(var))
            n.fn = c.expression(x["repeat"], loc_of(x, "repeat"), scope, "repeat count")
            n.body = self.items(x.get("do", []), scope | ({var} if var and not n.var_global else set()),
                                lab, x, "do")
            return self.add(n)
        if "for" in x:
            var = str(x["for"])
            n = Node("for", loc, lab, var=var, var_global=self._is_global(var))
            if "in" not in x:
                self.diags.add("F003", f"`for: {var}` needs `in:` (the list)", loc)
            n.fn = c.expression(x.get("in", "[]"), loc_of(x, "in"), scope, "list")
            n.body = self.items(x.get("do", []), scope | ({var} if not n.var_global else set()), lab, x, "do")
            return self.add(n)
        if "while" in x:
            n = Node("while", loc, lab)
            n.fn = c.expression(x["while"], loc_of(x, "while"), scope, "condition")
            n.body = self.items(x.get("do", []), scope, lab, x, "do")
            return self.add(n)
        if "if" in x:
            n = Node("if", loc, lab)
            n.fn = c.expression(x["if"], loc_of(x, "if"), scope, "condition")
            n.body = self.items(x.get("then", []), scope, lab, x, "then")
            n.other = self.items(x["else"], scope, lab, x, "else") if "else" in x else -1
            return self.add(n)
        if "step" in x:
            args = x.get("with") or {}
            return self._call(str(x["step"]), args, loc, scope, x)
        if "dispatch" in x:  # the step to run is a value (a dispatch table in data): checked at play
            args = x.get("with") or {}
            compiled = {k: c.expression(v, loc_of(args, k), scope, f"argument {k}") for k, v in args.items()}
            fn = c.expression(x["dispatch"], loc_of(x, "dispatch"), scope, "step name")
            return self.add(Node("call", loc_of(x, "dispatch"), lab, fn=fn, args=compiled))
        if "do" in x:
            if isinstance(x["do"], list):
                return self.items(x["do"], scope, lab, x, "do")
            fn = c.effect(x["do"], loc_of(x, "do"), scope, what=f"{lab} effect")
            return self.add(Node("effect", loc_of(x, "do"), lab, fn=fn))
        self.diags.add("F002", f"{label}: this flow item has none of step, dispatch, do, repeat, for, while, if, "
                       "choose", loc)
        return self.add(Node("seq", loc, lab))

    def _is_global(self, var: str) -> bool:
        answer = var in self.globals
        if self._loop_vars is not None:
            self._loop_vars[var] = answer
        return answer

    def _call(self, name: str, args: dict, loc: Loc, scope: set[str], parent: dict | None = None) -> int:
        if name not in self.steps:
            self.diags.add("F004", f"unknown step `{name}`", loc, hint=did_you_mean(name, self.steps))
            return self.add(Node("seq", loc, name))
        params = tuple(self.steps[name].get("params") or ())
        if self._calls is not None:
            self._calls[name] = params
        missing = [p for p in params if p not in args]
        extra = [a for a in args if a not in params]
        if missing or extra:
            self.diags.add("F005", f"step `{name}` takes {', '.join(params) or 'no arguments'}; "
                           f"{'missing ' + ', '.join(missing) if missing else 'unknown ' + ', '.join(extra)}", loc)
        compiled = {k: self.comp.expression(v, loc_of(args, k), scope, f"argument {k}") for k, v in args.items()}
        return self.add(Node("call", loc, name, step=name, args=compiled))


def _as_string_expr(text: Any) -> str:
    """A prompt is text with {inserts}: turn it into a string expression."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{s}"'
