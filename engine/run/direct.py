# cython: annotation_typing=True, nonecheck=True
"""Direct execution of the flow: frames only where a game stops.

The reference machine (`FlowMachine.run_frames`) keeps the whole flow position as a stack of
frames, pushing a frame (a dict, with a copy of its parent's variables) for every item it
enters. Most items finish without a decision, so those frames are made only to be thrown
away. Here each item runs as a call of its `run` instead, and frames are made only when the
game stops at a decision: the calls on the way up each add the frame the reference machine
would hold at that moment. The stack is then exactly the reference machine's, so saves,
clones, views and the log's state hashes are the same byte for byte, and a saved game can be
continued by either machine.

Each item of the flow is compiled once per model into an `Item` (`flow_code`): its children,
rule functions and constants are its fields, so running an item looks nothing up by name or
kind. Rules run bare (`fn.fast`, without the wrapper that locates their failures): `run`
locates whatever fails inside them, as the wrapper would (dsl/rule.py `raise_located`).

Every count is kept as the reference machine keeps it: one unit of the work budget per turn
of a step or a loop (`COUNTED`: entered, each round, left), the same rule calls in the same
order, the same checks. tests/test_direct.py plays seeded games of every bundled combo with both machines and
compares their logs byte for byte; `daimyo difftest` does it at scale.

Deep nesting (a step that runs itself) is left to the reference machine: past `SPILL` levels
the items are handed over as frames, so Python's own stack stays small and the flow's depth
limit (E002) is reported exactly where the reference machine reports it.

The compiled engine (setup.py) reads this module's annotations as types (the directive on its
first line): `m: Runner` makes the machine's fields C fields of a C type (direct.pxd), `fn:
Rule` a rule's `fast` (dsl/rule.pxd), and `c: Ctx` and `meter: Meter` the fields of the
context and the meter (dsl/runtime.pxd), read without a lookup by name (compiled code reads
an attribute of a Python object by its name, at some 150 instructions a read). The items
themselves are C types there, and their `run` a C method whose `depth` and `start` are C
integers: direct.pxd declares those, so `run` gives them no annotation (an `int` here would
mean a Python number, and not match).
Each annotated argument is checked on entry, and each annotated local when it is set; each
holds what its annotation says (a value of another type would be a TypeError in the compiled
engine only, and None an AttributeError: `nonecheck`). The source runs without any of it.
"""
from __future__ import annotations

from typing import Any

from dsl.primitives import describe
from dsl.rule import Rule, raise_located
from dsl.runtime import _PLAIN, FREE_WALK, Ctx, Meter, RuleError, scalars, store_value
from engine.base.text import safe_text

LOOP_ITEMS = "a loop of the flow"  # what `store_value` names in its errors (both machines)
MAX_WHILE = 100_000  # rounds of one `while` of the flow (both machines)
SPILL = 48  # flow levels run as calls; deeper ones become frames (the bundled games use < 20)

# Every item returns None when it has run to its end, or, when the game stopped inside it (a
# decision, or a hand-over to frames), the list of frames held at that moment, innermost
# first: each item on the way up adds its own frame and returns the list. (A return value, not
# an exception: raising one through every level on the way up cost more than the frames.)
Frames = list[dict] | None

_CONTINUED = ("seq", "step", "repeat", "for", "while")  # the kinds whose frames keep a counter
# The kinds whose every turn costs a step of work (docs/limits.md): a step entered and left, a
# loop's rounds. The rest (a sequence, an effect, an `if`, a call, a choice) can only do
# unbounded work through a loop or a step, so they are not counted on their own: a block of
# items costs what its rules and loops cost.
COUNTED = frozenset(("step", "repeat", "for", "while"))


class Ended(Exception):
    """`end_game` ran: nothing on the way up runs on. `sched` are the steps the same rule
    scheduled after it, which the reference machine still runs (on an empty stack)."""

    def __init__(self, sched: list):
        super().__init__()
        self.sched = sched


class Runner:
    """The parts of a flow machine that the items below use at every turn: its model, state and
    recorder, the context rules run in (`_c`: one per game, reused), the work budget between
    two decisions (`meter`), the steps a rule scheduled (`_sched`), whether `end_game` ran
    (`_ended`: the direct runner stops at once), how often each step, trigger and event ran
    (`counts`, for reports) and `silent`. `FlowMachine` (engine/run/machine.py, which imports
    this module) is a Runner with the rest of the machine."""

    def __init__(self, model: Any, state: dict, recorder: Any):
        self.model = model
        self.state = state
        self.recorder = recorder
        self.counts = {}
        self._sched = []
        self.meter = Meter()
        self._ended = False
        self._c = Ctx(state, model, self, {}, meter=self.meter)  # the hooks rules reach are the machine itself
        # No log and no listener: rules may skip building account text. An attribute, since
        # rules ask it before every line they might build; `Game.on_log` keeps it up to date.
        self.silent = recorder.silent
        # Who answers a decision without the game stopping (`Game.play_out`): None, or a
        # function of the pending decision that returns the index of the option taken. The
        # flow sets it back to None where it stops instead, with what `pick` raised, if
        # anything, in `pick_error`.
        self.pick = None
        self.pick_error = None


if not __file__.endswith(".py"):  # the compiled engine: rule code reads `c.hooks.silent` before each
    fields_as_members(Runner)  # noqa: F821 - line it might say; as a member, without a call (dsl/cfields.pxd)


class Direct:
    """Runs the flow of one machine with the compiled items. `run()` of the machine uses it."""

    def __init__(self, machine: Runner):
        self.m = machine
        self.code, self.turns, self.offers, self.chosen = flow_code(machine.model)

    def run(self, enter=-1, v: dict | None = None) -> None:
        """Advance until a decision is pending or the game is over (FlowMachine.run): take the
        frame on top of the stack and run its item on from where the frame says. `enter`, `v`:
        an item to run first, with these variables, as if its fresh frame were on top (the body
        of the choice just made: `Game.apply` makes no frame for it)."""
        m = self.m
        code, turns = self.code, self.turns
        item: Item
        state = m.state
        stack: list = state["flow"]
        meter: Meter = m.meter
        meter.used = 0
        # The first item is run as the loop below runs an item, written out again: folded into
        # the loop, or both through one helper, the turn cost 0.8% and 1.5% of a Shogun game.
        if enter >= 0:
            if len(stack) >= SPILL:  # deep: its frame goes to the reference machine below
                stack.append({"n": enter, "i": 0, "v": v})
            else:
                m._ended = False
                try:
                    item = code[enter]
                    held = item.run(m, v, len(stack) + 1, -1, None)
                    if held is not None:
                        held.reverse()  # (the list is ours: reversed in place, it extends the stack as a list)
                        stack.extend(held)
                except Ended as e:
                    stack.clear()
                    m._sched = e.sched
                    m._flush_schedule()
                except Exception as e:
                    raise_located(e)
        # Until a decision is pending or the game is over. Only a stop (a list of frames held)
        # or a turn of the reference machine can make a decision pending, so it is asked there
        # and not at every turn of the loop.
        if state["pending"] is not None or state["over"]:
            return
        while True:
            if not stack:
                m._finish()
                return
            if len(stack) > SPILL:  # deep: frame by frame, as the reference machine does
                m.step_frame()
                if state["pending"] is not None:
                    return
                continue
            frame: dict = stack.pop()
            idx = frame["n"]
            m._ended = False
            try:
                if frame["i"] == 0 and "x" not in frame:  # not entered yet
                    item = code[idx]
                    held = item.run(m, frame["v"], len(stack) + 1, -1, None)
                else:
                    turn = turns[idx]
                    if turn is None:  # pragma: no cover - only the kinds of _CONTINUED keep a counter
                        node = m.model.nodes[idx]
                        raise RuleError(f"cannot continue a flow item of kind {node.kind}", node.loc)
                    if turn:  # the reference machine's turn that found the child done
                        meter.used = used = meter.used + 1
                        if used > meter.limit:
                            meter.over(m.model.nodes[idx].loc)
                    item = code[idx]
                    held = item.run(m, frame["v"], len(stack) + 1, frame["i"], frame.get("x"))
                if held is not None:
                    held.reverse()  # (`reversed(held)`, an iterator, cost 4% of a compiled choice's turn)
                    stack.extend(held)
                    if state["pending"] is not None:
                        return
            except Ended as e:
                stack.clear()
                m._sched = e.sched
                m._flush_schedule()
            except Exception as e:  # rules run bare here: locate their failures
                raise_located(e)


def kept(v: Any, c: Any, what: str, loc: Any, rows=True) -> Any:
    """`store_value` of what the flow copies (a step's arguments, a loop's items, a choice's
    options), its copy charged: a failure is located at the flow item (no rule is running).
    (`rows`: see `store_value`.)"""
    if type(v) is list and len(v) <= FREE_WALK and scalars(v):
        return v[:]  # a short list of scalars, the common case: what `store_value` gives, uncharged
    try:
        return store_value(v, c, what, rows)
    except RuleError as e:
        if not e.loc.line:
            e.loc = loc
        raise


def flow_code(model: Any) -> tuple[list[Item], list[bool | None], list[Offer | None], list[tuple | None]]:
    """The `Item` of every item of `model`'s flow, made once per model and shared by its games;
    what continuing each item's frame costs: None if it cannot be continued, True for a
    counted kind (a turn of the budget), False otherwise; the `Offer` of each choice (both
    machines use it); and the body of each choice with the variable it sets (`Game.apply`
    runs it with the option taken)."""
    got = model.derived.get("direct")
    if got is None:
        nodes = model.nodes
        turns = [(n.kind in COUNTED) if n.kind in _CONTINUED else None for n in nodes]
        offers = [Offer(n) if n.kind == "choose" else None for n in nodes]
        chosen = [(n.body, n.var) if n.kind == "choose" else None for n in nodes]
        got = model.derived["direct"] = (_Compiler(model, offers).all(), turns, offers, chosen)
    return got


class Offer:
    """Offers a choice: its options (with `none` when it is optional). With more than one, the
    choice becomes the pending decision; with one, the caller takes it without asking (the
    chooser is still checked); with none, or only `none`, the caller takes `otherwise`. One
    method for the three, since a choice is met before every decision; its node's parts are
    kept once, as fields (the compiled engine would look an attribute of the node up at each
    use). Both machines use it (`flow_code`)."""

    def __init__(self, node: Any):
        self.player_fn, self.var, self.loc, self.optional = node.player, node.var, node.loc, node.optional
        self.fn = node.fn  # (a C type in the compiled engine: its `fast` a C field)
        self.player_var = getattr(node.player, "var", None)
        self.label, self.secret, self.prompt_fn = node.label, node.secret, node.prompt

    def offer(self, m: Runner, v: dict, answered=False) -> list:
        c: Ctx = m._c  # (`_ctx`, without a call)
        c.vars = v
        fn: Rule = self.fn
        options = fn.fast(c)
        if type(options) is list and len(options) <= FREE_WALK and scalars(options):
            if not fn.fresh:  # (a list the text made as it ran is nobody else's: not copied)
                options = options[:]  # (`kept`'s common case written out: its call cost 0.8% of a Shogun game)
        else:
            if isinstance(options, dict):
                options = list(options)
            if not isinstance(options, list):
                raise RuleError(f"the options of `{self.var}` must be a list, got {describe(options)}", self.loc)
            # To be `answered` at once (`pick`), they are never kept: only the one taken is
            # copied (`_Choose.taken`), or all of them where the game stops after all (`answer`).
            options = kept(options, c, "a choice's options", self.loc, not answered or len(options) < 2)
        if self.optional:
            options.append(None)
        if not options or (len(options) == 1 and options[0] is None):
            return options
        player_var = self.player_var
        player = v.get(player_var) if player_var is not None else self.player_fn.fast(c)  # (a variable: without a call)
        state = m.state
        if player not in state["players"]:
            raise RuleError(f"choice `{self.var}`: {describe(player)} is not a player", self.loc)
        if len(options) > 1:
            # A silent game (a sweep, a bot's lookahead) has no reader: the prompt is rendered on demand.
            prompt = None if m.silent else safe_text(str(self.prompt_fn(c)))
            # who decides for `player` (`controller` in engine/run/state.py, written out: a call from
            # the compiled engine into that module's source cost 0.8% of a Shogun game)
            seats = state.get("seats")
            owner = seats.get(player, player) if seats and isinstance(player, str) else player
            state["pending"] = {"player": owner, "options": options, "prompt": prompt,
                                "step": self.label, "secret": self.secret, "n": state["seq"] + 1}
        return options


def _scheduled(m: Runner, code: list, sched: list, depth: int, below: list[dict] | None = None) -> Frames:
    """Run the steps a rule scheduled, in order; on a stop, the ones not yet started (and
    `below`, the frames under them) wait as frames, as the reference machine pushed them.
    `depth` counts one more than the stack holds: a step that schedules itself nests Python
    calls without growing the stack, and must reach the spill (and the budget), not
    Python's recursion limit. Where frames are made does not change what they are."""
    if m._ended:
        raise Ended(sched)
    steps = m.model.steps
    item: Item
    for j, (name, args) in enumerate(sched):
        item = code[steps[name]]
        held = item.run(m, dict(args), depth, -1, None)
        if held is not None:
            held.extend({"n": steps[n], "i": 0, "v": dict(a)} for n, a in sched[j + 1:])
            if below:
                held.extend(below)
            return held
    return None


class Item:
    """The code of one item of the flow, made once per model (`_Compiler`): its children, rules
    and constants are its fields, so running it looks nothing up by name or kind.

    `run(m, v, depth, start, x)` runs it for the machine `m` with the variables `v`, `depth`
    levels of calls down. With `start` < 0 it is entered afresh: the spill check, and for a
    counted kind its first unit of work, as the reference machine's loop counts them. Later
    units come after a child has run, where the reference machine takes another turn.
    Otherwise it continues from the counter its frame kept (`x`: the list a loop runs over).
    It returns None when it has run to its end, or the frames held where the game stopped.

    A unit of work is counted by two lines written out where it is taken (`meter.used = used =
    meter.used + 1`, then `meter.over(loc)` past the limit), not by a helper: a call per unit
    cost more than 1% of a game. The new count is kept in a local, so the meter's field is
    read once. The compiled engine makes each kind a C type, its fields C fields and `run` a C
    method (direct.pxd): one item runs another without the Python call that a closure, as the
    items were before, cost (docs/performance.md, session 27)."""

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:  # pragma: no cover
        raise NotImplementedError  # (every kind has its own)


class _Seq(Item):
    def __init__(self, idx: int, children: tuple, distinct: bool):
        self.idx, self.children, self.distinct = idx, children, distinct  # (distinct: a child's position is its index)

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        child: Item
        if start < 0:
            if depth > SPILL:
                return [{"n": self.idx, "i": 0, "v": v}]
            start = 0
        children: tuple = self.children
        if start == 0 and self.distinct:  # over the children themselves: a position is found only at a stop
            for child in children:
                held = child.run(m, v, depth + 1, -1, None)
                if held is not None:
                    held.append({"n": self.idx, "i": children.index(child) + 1, "v": v})
                    return held
            return None
        for i in range(start, len(children)):
            child = children[i]
            held = child.run(m, v, depth + 1, -1, None)
            if held is not None:
                held.append({"n": self.idx, "i": i + 1, "v": v})
                return held
        return None


class _Effect(Item):
    def __init__(self, idx: int, fn: Any, code: list):
        self.idx, self.fn, self.code = idx, fn, code

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        if depth > SPILL:
            return [{"n": self.idx, "i": 0, "v": v}]
        fn: Rule = self.fn
        if fn is None:
            return None
        if m._sched:  # (left over by a rule that failed)
            m._sched = []
        c: Ctx = m._c
        c.vars = v  # rule code only reads its variables (no copy, unlike the reference machine's)
        fn.fast(c)
        sched = m._sched  # what the rule scheduled (end_game replaces the list)
        if sched or m._ended:
            m._sched = []
            return _scheduled(m, self.code, sched, depth + 1)
        return None


class _Call(Item):
    def __init__(self, idx: int, node: Any, code: list, target: int):
        # (`getattr`: an argument whose text failed to compile is None, and fails only if the call runs)
        self.idx, self.node, self.code, self.target = idx, node, code, target
        self.args = tuple((k, fn, getattr(fn, "var", None)) for k, fn in node.args.items())

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        if depth > SPILL:
            return [{"n": self.idx, "i": 0, "v": v}]
        c: Ctx = m._c
        c.vars = v
        given = {}
        for k, fn, var in self.args:
            a = v.get(var) if var is not None else fn.fast(c)  # (a variable: without a call)
            given[k] = a if type(a) in _PLAIN else kept(a, c, "a step's arguments", self.node.loc)
        target = self.target  # a named step; otherwise `dispatch:` names it as it runs
        if target < 0:
            target = m.model.steps[m._dispatched(self.node, v, given)]
        item: Item = self.code[target]
        return item.run(m, given, depth, -1, None)


class _Step(Item):
    def __init__(self, idx: int, node: Any, code: list, body: Item | None, has_before: bool, has_after: bool):
        self.idx, self.node, self.code, self.body = idx, node, code, body
        self.loc, self.label, self.title, self.title_fn = node.loc, node.label, node.title, node.title_fn
        self.before, self.after = "before_" + node.label, "after_" + node.label
        self.has_before, self.has_after = has_before, has_after  # fixed per model

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        body: Item = self.body
        if start < 0:
            if depth > SPILL:
                return [{"n": self.idx, "i": 0, "v": v}]
            meter: Meter = m.meter
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)
            counts = m.counts
            label = self.label
            counts[label] = counts.get(label, 0) + 1
            if self.title and m.recorder.logging:  # a game without a log drops the entry: not built
                text = self.title_fn(m._ctx(v)) if self.title_fn else self.title
                text = safe_text(text) if isinstance(text, str) else text
                m.recorder.record({"t": "step", "step": label, "title": text})
            if self.has_before:  # the steps it schedules run before the body
                sched = m._step_event(self.before, self.node, v)
                if sched or m._ended:
                    below = [{"n": self.node.body, "i": 0, "v": v}] if body is not None else []
                    held = _scheduled(m, self.code, sched, depth + 1, [*below, {"n": self.idx, "i": 1, "v": v}])
                    if held is not None:
                        return held
            if body is not None:
                held = body.run(m, v, depth + 1, -1, None)
                if held is not None:
                    held.append({"n": self.idx, "i": 1, "v": v})
                    return held
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)
        # its body is done: only leaving it is left
        if self.has_after:
            sched = m._step_event(self.after, self.node, v)
            if sched or m._ended:
                return _scheduled(m, self.code, sched, depth + 1)
        return None


class _Loop(Item):
    """A `repeat` (it counts) or a `for` (over a list)."""

    def __init__(self, idx: int, node: Any, body: Item):
        self.idx, self.node, self.body, self.fn = idx, node, body, node.fn
        self.loc, self.var, self.var_global = node.loc, node.var, node.var_global
        self.over_list = node.kind == "for"

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        meter: Meter = m.meter
        if start < 0:
            if depth > SPILL:
                return [{"n": self.idx, "i": 0, "v": v}]
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)
            start = 0
        items = x
        if items is None:
            c: Ctx = m._c
            c.vars = v
            fn: Rule = self.fn
            got = fn.fast(c)
            # a list, the common case, without the checks of `_loop_items` for the others
            items = kept(got, c, LOOP_ITEMS, self.loc) if self.over_list and type(got) is list else \
                m._loop_items(self.node, got, c)
        # The body's variables: the loop's, with its variable set for each item. One dict
        # serves every item: when an item's body is done, no frame refers to it any more.
        var, var_global = self.var, self.var_global
        inner = dict(v) if var and not var_global else v
        body: Item = self.body
        for i in range(start, len(items)):
            value = items[i]
            if var_global:
                m.state["globals"][var] = value
            elif var:
                inner[var] = value
            held = body.run(m, inner, depth + 1, -1, None)
            if held is not None:
                held.append({"n": self.idx, "i": i + 1, "v": v, "x": items})
                return held
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)
        return None


class _While(Item):
    def __init__(self, idx: int, node: Any, body: Item):
        self.idx, self.node, self.body, self.fn, self.loc = idx, node, body, node.fn, node.loc

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        meter: Meter = m.meter
        if start < 0:
            if depth > SPILL:
                return [{"n": self.idx, "i": 0, "v": v}]
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)
            start = 0
        count = start
        fn: Rule = self.fn
        body: Item = self.body
        while True:
            if count > MAX_WHILE:
                m._while_guard(self.node, count)
            c: Ctx = m._c
            c.vars = v
            if not fn.fast(c):
                return None
            count += 1
            held = body.run(m, v, depth + 1, -1, None)
            if held is not None:
                held.append({"n": self.idx, "i": count, "v": v})
                return held
            meter.used = used = meter.used + 1
            if used > meter.limit:
                meter.over(self.loc)


class _If(Item):
    def __init__(self, idx: int, fn: Any, then: Item | None, other: Item | None):
        self.idx, self.fn, self.then, self.other = idx, fn, then, other

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        if depth > SPILL:
            return [{"n": self.idx, "i": 0, "v": v}]
        c: Ctx = m._c
        c.vars = v
        fn: Rule = self.fn
        branch: Item = self.then if fn.fast(c) else self.other
        return branch.run(m, v, depth, -1, None) if branch is not None else None


class _Choose(Item):
    def __init__(self, idx: int, var: str, then: Item | None, other: Item | None, offer: Offer):
        self.idx, self.var, self.then, self.other, self.offer = idx, var, then, other, offer

    def run(self, m: Runner, v: dict, depth, start, x: Any) -> Frames:
        if depth > SPILL:
            return [{"n": self.idx, "i": 0, "v": v}]
        offer: Offer = self.offer
        options = offer.offer(m, v, m.pick is not None)
        if len(options) > 1:  # asked: the game stops here, unless `pick` answers at once
            if m.pick is not None:
                i = answer(m, len(options))
                if i >= 0:
                    return self.taken(m, v, depth, options[i])
            return [{"n": self.idx, "i": 0, "v": v}]
        branch: Item
        if not options or options[0] is None:  # nothing to choose from
            branch = self.other
            return branch.run(m, v, depth, -1, None) if branch is not None else None
        branch = self.then
        if branch is None:  # nothing to decide: take it without asking
            return None
        inner = dict(v)
        inner[self.var] = options[0]
        return branch.run(m, inner, depth, -1, None)

    def taken(self, m: Runner, v: dict, depth, option: Any) -> Frames:
        """What `Game.apply` does with the option `pick` answered, without the stop: the
        decision is no longer pending, it is counted, a new stretch of the budget starts, and
        its body runs (nothing runs for `none`). A silent game records no decision, so the
        game is the one `apply` gives, but for the frames that nobody made."""
        state = m.state
        state["pending"] = None
        state["seq"] += 1
        meter: Meter = m.meter
        meter.used = 0
        branch: Item = self.then
        if option is None or branch is None:
            return None
        if type(option) is list:  # a row of the options, which `Offer.offer` did not copy
            option = option[:]
        inner = dict(v)
        inner[self.var] = option
        return branch.run(m, inner, depth, -1, None)


def answer(m: Runner, n) -> int:
    """The index of the option `m.pick` takes at the pending decision, of `n`; or -1 where
    the game stops there: `pick` said None, or failed (what it raised is kept in
    `m.pick_error`, and `Game.play_out` raises it once the game has stopped whole)."""
    pending: dict = m.state["pending"]
    try:
        i = m.pick(pending)
        if i is not None:
            if type(i) is int and 0 <= i < n:  # (`check_index`'s test, without its call)
                return i
            check_index(i, n)
    except Exception as e:
        m.pick_error = e
    m.pick = None
    pending["options"] = [x[:] if type(x) is list else x for x in pending["options"]]  # kept whole, as it waits
    return -1


def check_index(i: Any, n) -> None:
    """Refuses an answer of `pick` that is not the index of one of `n` options."""
    if type(i) is not int or not 0 <= i < n:
        raise ValueError(f"`pick` answered {describe(i)}, not the index of one of the {n} options")


class _Compiler:
    """Makes the item of every flow item. Items of a step's body are a tree (each is built once,
    children first); a call of a step finds the step's item in the shared list when it runs,
    since steps may call each other, themselves included."""

    def __init__(self, model: Any, offers: list[Offer | None]):
        self.nodes = model.nodes
        self.offers = offers
        self.triggers = model.triggers
        self.steps = model.steps
        self.code: list[Any] = [None] * len(model.nodes)

    def all(self) -> list[Item]:
        for idx in range(len(self.nodes)):
            self.of(idx)
        return self.code

    def of(self, idx: int) -> Item:
        if self.code[idx] is None:
            node = self.nodes[idx]
            self.code[idx] = getattr(self, "_" + ("loop" if node.kind in ("repeat", "for") else node.kind))(idx, node)
        return self.code[idx]

    def _opt(self, idx: int) -> Item | None:
        return self.of(idx) if idx >= 0 else None

    def _seq(self, idx: int, node: Any) -> Item:
        return _Seq(idx, tuple(self.of(i) for i in node.children), len(set(node.children)) == len(node.children))

    def _effect(self, idx: int, node: Any) -> Item:
        return _Effect(idx, node.fn, self.code)

    def _call(self, idx: int, node: Any) -> Item:
        return _Call(idx, node, self.code, self.steps[node.step] if node.step else -1)

    def _step(self, idx: int, node: Any) -> Item:
        return _Step(idx, node, self.code, self._opt(node.body),
                     "before_" + node.label in self.triggers, "after_" + node.label in self.triggers)

    def _loop(self, idx: int, node: Any) -> Item:
        return _Loop(idx, node, self.of(node.body))

    def _while(self, idx: int, node: Any) -> Item:
        return _While(idx, node, self.of(node.body))

    def _if(self, idx: int, node: Any) -> Item:
        return _If(idx, node.fn, self._opt(node.body), self._opt(node.other))

    def _choose(self, idx: int, node: Any) -> Item:
        return _Choose(idx, node.var, self._opt(node.body), self._opt(node.other), self.offers[idx])
