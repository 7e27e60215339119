"""The flow machine: it advances a game's frame stack until a decision is pending.

Each frame is plain data (node index, a counter, local variables), so the position in the
flow saves and clones with the state. The machine is also the `hooks` object that rules
reach through their context: chance, `say`, events and triggers, scheduled steps, modifiers
and the end of the game.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from dsl.primitives import describe
from dsl.rule import raise_located
from dsl.runtime import Ctx, RuleError, copy_value
from engine.base.text import safe_text
from engine.model import Model
from engine.model.modifiers import apply_modifiers
from engine.run.chance import Chance
from engine.run.direct import COUNTED, LOOP_ITEMS, MAX_WHILE, Direct, Runner, kept
from engine.run.log import Recorder
from engine.run.state import state_hash

MAX_FLOW_DEPTH = 1_000  # frames on the flow stack (the bundled games use fewer than 20)
MAX_REPEAT = 1_000_000  # times of one `repeat`
REFERENCE = os.environ.get("DAIMYO_FLOW") == "frames"  # every machine runs the reference machine


def _number(value: Any, fn: Any, player: str) -> Any:
    """A score or tie-break must be a number: the ranking compares them."""
    if isinstance(value, (int, float)) and value - value == 0:  # a bool is a number (true > false); NaN, inf are not
        return value
    raise RuleError(f"the score of {player} must be a number, got {describe(value)}", getattr(fn, "loc", None))


class FlowMachine(Runner):
    """Runs a model's flow over a state. `Game` is the public face of it.

    `run` runs the flow directly (engine/run/direct.py); with `reference` set (on a machine, or
    DAIMYO_FLOW=frames in the environment for every machine) it runs the reference machine,
    frame by frame. Both give the same game, byte for byte."""

    def __init__(self, model: Model, state: dict, recorder: Recorder):
        super().__init__(model, state, recorder)  # what the flow's items use (Runner)
        self.dice = Chance(state)
        self._direct = Direct(self)
        self.reference = REFERENCE

    def run(self, enter: int = -1, v: dict | None = None) -> None:
        """Advance the flow until a decision is pending or the game is over; `enter` >= 0 is an
        item to enter first with the variables `v` (the body of the choice just made)."""
        if self.reference:
            if enter >= 0:
                self.state["flow"].append({"n": enter, "i": 0, "v": v})
            self.run_frames()
        else:
            self._direct.run(enter, v)

    def run_frames(self) -> None:
        """The reference machine: frame by frame (engine/run/direct.py runs the same flow
        without frames between decisions; the two are compared in the tests)."""
        state = self.state
        self.meter.used = 0  # a new stretch between two decisions
        while state["pending"] is None and not state["over"]:
            if not state["flow"]:
                self._finish()
                return
            try:
                self.step_frame()
            except Exception as e:  # the helpers below run rules bare: locate their failures
                raise_located(e)

    def step_frame(self) -> None:
        """One turn of the reference machine: the frame on top of the stack moves on."""
        state = self.state
        stack = state["flow"]
        frame = stack[-1]
        node = self.model.nodes[frame["n"]]
        kind = node.kind
        if kind in COUNTED:  # a step entered and left and a loop's rounds are work too
            meter = self.meter
            meter.used += 1
            if meter.used > meter.limit:
                meter.over(node.loc)
        if len(stack) > MAX_FLOW_DEPTH:
            raise RuleError(f"the flow is nested more than {MAX_FLOW_DEPTH:,} levels deep: a step that "
                            "runs itself (its own flow, or `run` of itself) never ends", node.loc, code="E002")
        if kind == "seq":
            i = frame["i"]
            if i < len(node.children):
                frame["i"] = i + 1
                self._push(node.children[i], frame["v"])
            else:
                stack.pop()
        elif kind == "effect":
            stack.pop()
            self._call_effect(node.fn, dict(frame["v"]))
        elif kind == "call":
            stack.pop()
            c = self._ctx(frame["v"])
            args = {k: kept(fn(c), c, "a step's arguments", node.loc) for k, fn in node.args.items()}
            self._push(self.model.steps[node.step or self._dispatched(node, frame["v"], args)], {}, args)
        elif kind == "step":
            if frame["i"] == 0:
                frame["i"] = 1
                self.counts[node.label] = self.counts.get(node.label, 0) + 1
                if node.title and self.recorder.logging:  # (a game without a log drops the entry: not built)
                    title = node.title_fn(self._ctx(frame["v"])) if node.title_fn else node.title
                    title = safe_text(title) if isinstance(title, str) else title
                    self.recorder.record({"t": "step", "step": node.label, "title": title})
                if node.body >= 0:
                    self._push(node.body, frame["v"])
                self._step_hook("before_", node, frame)  # steps it schedules run before the body
            else:
                stack.pop()
                self._step_hook("after_", node, frame)
        elif kind == "repeat" or kind == "for":
            if "x" not in frame:
                frame["x"] = self._loop_items(node, node.fn.fast(self._ctx(frame["v"])), self._c)
            i = frame["i"]
            if i < len(frame["x"]):
                frame["i"] = i + 1
                value = frame["x"][i]
                if node.var_global:
                    state["globals"][node.var] = value
                    self._push(node.body, frame["v"])
                else:
                    self._push(node.body, frame["v"], {node.var: value} if node.var else None)
            else:
                stack.pop()
        elif kind == "while":
            self._while_guard(node, frame["i"])
            if node.fn(self._ctx(frame["v"])):
                frame["i"] += 1
                self._push(node.body, frame["v"])
            else:
                stack.pop()
        elif kind == "if":
            stack.pop()
            branch = node.body if node.fn(self._ctx(frame["v"])) else node.other
            if branch >= 0:
                self._push(branch, frame["v"])
        elif kind == "choose":
            self._enter_choice(frame, node)
        else:  # pragma: no cover
            raise RuleError(f"unknown flow node {kind}", node.loc)

    # ---- flow helpers ----

    def _step_hook(self, when: str, node: Any, frame: dict) -> None:
        """Run the triggers listening to `before_STEP` / `after_STEP` (if any) with the step's arguments."""
        event = when + node.label
        if event in self.model.triggers:
            self._sched = self._step_event(event, node, frame["v"])
            self._flush_schedule()

    def _step_event(self, event: str, node: Any, v: dict) -> list:
        """Emit a step's before_/after_ event; the steps its triggers scheduled."""
        self._sched = []
        self.emit(self._ctx(v), event, {p: v.get(p) for p in node.params})
        sched, self._sched = self._sched, []
        return sched

    @staticmethod
    def _loop_items(node: Any, got: Any, c: Ctx) -> list:
        """The items a `repeat` or `for` item of the flow runs its body for, from what its
        rule gave (`got`). A rule's list is copied, and the copy charged (`kept`); a
        `repeat`'s numbers are the engine's own, charged only as each round runs (a repeat
        of a million may ask a decision in each)."""
        if node.kind == "repeat":
            if not isinstance(got, int) or got < 0 or got > MAX_REPEAT:
                raise RuleError(f"repeat needs a whole number from 0 to {MAX_REPEAT:,}, got "
                                f"{describe(got)}", node.loc)
            return list(range(1, got + 1))
        if isinstance(got, dict):
            got = list(got)
        elif not isinstance(got, list):
            raise RuleError(f"`for` needs a list, got {describe(got)}", node.loc)
        return kept(got, c, LOOP_ITEMS, node.loc)

    @staticmethod
    def _while_guard(node: Any, turns: int) -> None:
        if turns > MAX_WHILE:
            raise RuleError(f"a `while` loop ran {MAX_WHILE:,} times; it probably never ends", node.loc)

    def _dispatched(self, node: Any, v: dict, args: dict) -> str:
        """The step a `dispatch:` item names at this moment; it must exist and take these arguments."""
        name = node.fn.fast(self._ctx(v)) if node.fn else None
        model = self.model
        takes = model.derived.get("step_params")  # each step's parameters as a set, made once per model
        if takes is None:
            takes = model.derived["step_params"] = {s: frozenset(model.nodes[i].params) for s, i in model.steps.items()}
        want = takes.get(name) if isinstance(name, str) else None
        if want is None:
            raise RuleError(f"dispatch: `{name}` is not a step", node.loc)
        if args.keys() != want:
            params = model.nodes[model.steps[name]].params
            raise RuleError(f"dispatch: step `{name}` takes {', '.join(params) or 'no arguments'}, "
                            f"not {', '.join(args) or 'none'}", node.loc)
        return name

    def _push(self, idx: int, parent_vars: dict, extra: dict | None = None) -> None:
        v = dict(parent_vars)
        if extra:
            v.update(extra)
        self.state["flow"].append({"n": idx, "i": 0, "v": v})

    def _ctx(self, vars: dict) -> Ctx:
        """The context a rule of the flow runs in. One per game, reused: a rule's calls restore
        the variables they change, and nothing keeps a context after its rule returned."""
        c = self._c
        c.vars = vars
        return c

    def _call_effect(self, fn: Callable | None, vars: dict) -> None:
        if fn is None:
            return
        self._sched = []
        fn(self._ctx(vars))
        self._flush_schedule()

    def _flush_schedule(self) -> None:
        # Scheduled steps run next, in the order they were scheduled.
        sched, self._sched = self._sched, []
        for name, args in reversed(sched):
            self._push(self.model.steps[name], {}, args)

    def _enter_choice(self, frame: dict, node: Any) -> None:
        options = self._direct.offers[frame["n"]].offer(self, frame["v"])
        if len(options) > 1:
            return  # asked: the choice's frame stays on top while the decision is pending
        self.state["flow"].pop()
        if not options or options[0] is None:  # nothing to choose from
            if node.other >= 0:
                self._push(node.other, frame["v"])
        elif node.body >= 0:  # nothing to decide: take it without asking
            self._push(node.body, frame["v"], {node.var: options[0]})

    def _finish(self) -> None:
        self.state["over"] = True
        self.state["pending"] = None
        m = self.model
        scores = {}
        for p in self.state["players"]:
            c = self._ctx({"player": p})
            key = [_number(m.score(c), m.score, p) if m.score else 0] + [_number(t(c), t, p) for t in m.tiebreak]
            scores[p] = key
        best = max(scores.values()) if scores else None
        ranking = sorted(self.state["players"], key=lambda p: scores[p], reverse=True)
        self.state["result"] = {
            "scores": {p: k[0] for p, k in scores.items()},
            "tiebreaks": {p: k[1:] for p, k in scores.items()} if m.tiebreak else {},
            "ranking": ranking,
            "winners": [p for p in ranking if scores[p] == best],
        }
        end = {"t": "end", "result": self.state["result"]}
        if self.recorder.logging:
            end["state"] = state_hash(self.state)
        self.recorder.record(end)

    # ---- hooks called by primitives ----

    def chance(self, c: Ctx, kind: str, draw: Callable, forced_apply: Callable | None = None) -> Any:
        value = self.dice.outcome(kind, draw, forced_apply)
        if not self.silent and self.recorder.logging:  # (a silent game logs nothing: a C field, read first)
            self.recorder.record({"t": "chance", "kind": kind, "value": copy_value(value)})
        return value

    def say(self, c: Ctx, text: str) -> None:
        self.recorder.record({"t": "say", "text": safe_text(text)})

    def end_game(self, c: Ctx) -> None:
        self.state["flow"].clear()
        self._sched = []
        self._ended = True

    def emit(self, c: Ctx, event: str, args: dict) -> None:
        counts, key = self.counts, f"event:{event}"
        counts[key] = counts.get(key, 0) + 1
        for tid, when, do in self.model.triggers.get(event, ()):
            saved = c.vars
            c.vars = dict(args)
            try:
                if when is None or when.fast(c):
                    key = f"trigger:{tid}"
                    counts[key] = counts.get(key, 0) + 1
                    c.tick()
                    do.fast(c)
            finally:
                c.vars = saved

    def schedule(self, c: Ctx, step: str, args: dict) -> None:
        self._sched.append((step, args))

    def modify(self, c: Ctx, name: str, base: Any, args: dict) -> Any:
        return apply_modifiers(c, name, base, args)
