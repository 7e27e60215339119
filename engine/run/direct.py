"""Direct execution of the flow: frames only where a game stops.

The reference machine (`FlowMachine.run_frames`) keeps the whole flow position as a stack of
frames, pushing a frame (a dict, with a copy of its parent's variables) for every item it
enters. Most items finish without a decision, so those frames are made only to be thrown
away. Here each item runs as a plain Python call instead, and frames are made only when the
game stops at a decision: the calls on the way up each add the frame the reference machine
would hold at that moment. The stack is then exactly the reference machine's, so saves,
clones, views and the log's state hashes are the same byte for byte, and a saved game can be
continued by either machine.

Rules run bare (`fn.fast`, without the wrapper that locates their failures): `run` locates
whatever fails inside them, as the wrapper would (dsl/codegen.py `rule_error`).

Every count is kept as the reference machine keeps it: one unit of the work budget per item
entered and per item left (its loop turns), the same rule calls in the same order, the same
checks. tests/test_direct.py plays seeded games of every bundled combo with both machines and
compares their logs byte for byte; `daimyo difftest` does it at scale.

Deep nesting (a step that runs itself) is left to the reference machine: past `SPILL` levels
the items are handed over as frames, so Python's own stack stays small and the flow's depth
limit (E002) is reported exactly where the reference machine reports it.
"""
from __future__ import annotations

from typing import Any

from dsl.codegen import rule_error
from dsl.runtime import RuleError, store_value
from engine.base.text import safe_text

SPILL = 48  # flow levels run as Python calls; deeper ones become frames (the bundled games use < 20)


# Every item returns None when it has run to its end, or, when the game stopped inside it (a
# decision, or a hand-over to frames), the list of frames held at that moment, innermost
# first: each item on the way up adds its own frame and returns the list. (A return value, not
# an exception: raising one through every level on the way up cost more than the frames.)
Frames = list[dict] | None


class Ended(Exception):
    """`end_game` ran: nothing on the way up runs on. `sched` are the steps the same rule
    scheduled after it, which the reference machine still runs (on an empty stack)."""

    def __init__(self, sched: list):
        super().__init__()
        self.sched = sched


class Direct:
    """Runs flow items of one machine as Python calls. `run()` of the machine uses it."""

    def __init__(self, machine: Any):  # a FlowMachine (engine/run/machine.py), which imports this module
        self.m = machine
        self.nodes = machine.model.nodes
        self.meter = machine.meter

    # ---- the loop over what is left on the stack ----

    def run(self) -> None:
        """Advance until a decision is pending or the game is over (FlowMachine.run)."""
        m = self.m
        state = m.state
        stack = state["flow"]
        meter = m.meter
        meter.used = 0
        while state["pending"] is None and not state["over"]:
            if not stack:
                m._finish()
                return
            if len(stack) > SPILL:  # deep: frame by frame, as the reference machine does
                m.step_frame()
                continue
            frame = stack.pop()
            m._ended = False
            try:
                held = self.resume(frame, len(stack) + 1)
                if held is not None:
                    stack.extend(reversed(held))
            except Ended as e:
                stack.clear()
                m._sched = e.sched
                m._flush_schedule()
            except Exception as e:  # rules run bare here: locate their failures (codegen)
                err = rule_error(e)
                if err is e:
                    raise
                raise err from None

    def resume(self, frame: dict, depth: int) -> Frames:
        """Run on the item of `frame` (at stack position `depth`) from where the frame says."""
        idx = frame["n"]
        node = self.nodes[idx]
        kind = node.kind
        if frame["i"] == 0 and "x" not in frame:
            return self.enter(idx, frame["v"], depth)
        self._tick(node)
        if kind == "seq":
            return self._seq(idx, node, frame["v"], depth, frame["i"])
        elif kind == "step":  # its body is done: only leaving it is left
            return self._leave_step(node, frame["v"], depth)
        elif kind == "repeat" or kind == "for":
            return self._loop(idx, node, frame["v"], depth, frame["i"], frame["x"])
        elif kind == "while":
            return self._while(idx, node, frame["v"], depth, frame["i"])
        else:  # pragma: no cover - only these kinds keep a frame with a counter
            raise RuleError(f"cannot continue a flow item of kind {kind}", node.loc)

    def enter(self, idx: int, v: dict, depth: int) -> Frames:
        """Run the item `idx` from its start with variables `v`, at stack position `depth`."""
        if depth > SPILL:
            return [{"n": idx, "i": 0, "v": v}]
        node = self.nodes[idx]
        meter = self.meter  # one unit of work per turn of the reference machine's loop (run_frames)
        meter.used += 1
        if meter.used > meter.limit:
            meter.over(node.loc)
        return _KINDS[node.kind](self, idx, node, v, depth)

    def _tick(self, node: Any) -> None:
        # One unit of work per turn of the reference machine's loop: an item's later turns.
        meter = self.meter
        meter.used += 1
        if meter.used > meter.limit:
            meter.over(node.loc)

    def _then(self, sched: list) -> None:
        if self.m._ended:
            raise Ended(sched)

    def _scheduled(self, sched: list, depth: int, below: list[dict] | None = None) -> Frames:
        """Run the steps a rule scheduled, in order; on a stop, the ones not yet started (and
        `below`, the frames under them) wait as frames, as the reference machine pushed them.
        `depth` counts one more than the stack holds: a step that schedules itself nests Python
        calls without growing the stack, and must reach the spill (and the budget), not
        Python's recursion limit. Where frames are made does not change what they are."""
        steps = self.m.model.steps
        for j, (name, args) in enumerate(sched):
            held = self.enter(steps[name], dict(args), depth)
            if held is not None:
                held.extend({"n": steps[n], "i": 0, "v": dict(a)} for n, a in sched[j + 1:])
                if below:
                    held.extend(below)
                return held
        return None

    # ---- the kinds of item ----
    # Each runs from the turn after its first: `enter` (or `resume`) counted that one. Every
    # later turn of the reference machine comes after a body or child has run: `_tick` there.

    def _seq(self, idx: int, node: Any, v: dict, depth: int, start: int = 0) -> Frames:
        children = node.children
        for i in range(start, len(children)):
            held = self.enter(children[i], v, depth + 1)
            if held is not None:
                held.append({"n": idx, "i": i + 1, "v": v})
                return held
            self._tick(node)
        return None

    def _effect(self, idx: int, node: Any, v: dict, depth: int) -> Frames:
        if node.fn is None:
            return None
        m = self.m
        m._sched = []
        node.fn.fast(m._ctx(dict(v)))
        sched, m._sched = m._sched, []
        self._then(sched)
        return self._scheduled(sched, depth + 1) if sched else None

    def _call(self, idx: int, node: Any, v: dict, depth: int) -> Frames:
        m = self.m
        args = {k: store_value(fn.fast(m._ctx(v)), "a step's arguments") for k, fn in node.args.items()}
        return self.enter(m.model.steps[node.step or m._dispatched(node, v, args)], args, depth)

    def _step(self, idx: int, node: Any, v: dict, depth: int) -> Frames:
        m = self.m
        m.counts[node.label] = m.counts.get(node.label, 0) + 1
        if node.title:
            title = node.title_fn(m._ctx(v)) if node.title_fn else node.title
            title = safe_text(title) if isinstance(title, str) else title
            m.recorder.record({"t": "step", "step": node.label, "title": title})
        event = "before_" + node.label
        if event in m.model.triggers:  # the steps it schedules run before the body
            sched = m._step_event(event, node, v)
            self._then(sched)
            if sched:
                below = [{"n": node.body, "i": 0, "v": v}] if node.body >= 0 else []
                held = self._scheduled(sched, depth + 1, [*below, {"n": idx, "i": 1, "v": v}])
                if held is not None:
                    return held
        if node.body >= 0:
            held = self.enter(node.body, v, depth + 1)
            if held is not None:
                held.append({"n": idx, "i": 1, "v": v})
                return held
        self._tick(node)
        return self._leave_step(node, v, depth)

    def _leave_step(self, node: Any, v: dict, depth: int) -> Frames:
        event = "after_" + node.label
        if event in self.m.model.triggers:
            sched = self.m._step_event(event, node, v)
            self._then(sched)
            if sched:
                return self._scheduled(sched, depth + 1)
        return None

    def _loop(self, idx: int, node: Any, v: dict, depth: int, start: int = 0, items: list | None = None) -> Frames:
        m = self.m
        if items is None:
            items = m._loop_items(node, v)
        for i in range(start, len(items)):
            value = items[i]
            if node.var_global:
                m.state["globals"][node.var] = value
                inner = v
            elif node.var:
                inner = dict(v)
                inner[node.var] = value
            else:
                inner = v
            held = self.enter(node.body, inner, depth + 1)
            if held is not None:
                held.append({"n": idx, "i": i + 1, "v": v, "x": items})
                return held
            self._tick(node)
        return None

    def _while(self, idx: int, node: Any, v: dict, depth: int, count: int = 0) -> Frames:
        m = self.m
        while True:
            m._while_guard(node, count)
            if not node.fn.fast(m._ctx(v)):
                return None
            count += 1
            held = self.enter(node.body, v, depth + 1)
            if held is not None:
                held.append({"n": idx, "i": count, "v": v})
                return held
            self._tick(node)

    def _if(self, idx: int, node: Any, v: dict, depth: int) -> Frames:
        branch = node.body if node.fn.fast(self.m._ctx(v)) else node.other
        return self.enter(branch, v, depth) if branch >= 0 else None

    def _choose(self, idx: int, node: Any, v: dict, depth: int) -> Frames:
        m = self.m
        options, c = m._options(node, v)
        if not options or (len(options) == 1 and options[0] is None):
            return self.enter(node.other, v, depth) if node.other >= 0 else None
        player = m._chooser(node, c)
        if len(options) == 1:  # nothing to decide: take it without asking
            if node.body < 0:
                return None
            inner = dict(v)
            inner[node.var] = options[0]
            return self.enter(node.body, inner, depth)
        m._ask(node, c, player, options)
        return [{"n": idx, "i": 0, "v": v}]


_KINDS = {"seq": Direct._seq, "effect": Direct._effect, "call": Direct._call, "step": Direct._step,
          "repeat": Direct._loop, "for": Direct._loop, "while": Direct._while, "if": Direct._if,
          "choose": Direct._choose}
