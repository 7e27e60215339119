"""The compiled engine (setup.py) plays exactly as its Python source, and fails as safely.

A regular install compiles the engine's hot modules with Cython; the tests otherwise run the
checkout's source (`python -m pytest` imports it from the current folder). Here the installed
package, when it is compiled from this checkout, runs in subprocesses outside the checkout:
- seeded games of every bundled game, on both flow machines, must log byte for byte what the
  source logs;
- every hostile package of tests/test_hostile_inputs.py must end with the same located error
  and exit status 1: compiled code has no Python stack check, so a recursion the source would
  stop with a RecursionError could crash the process instead.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_hostile_inputs import PLAY

from engine.model import load
from tools.difftest import game_log

REPO = Path(__file__).resolve().parent.parent
GAMES = [  # combo, players, seeds: each bundled game, its largest combo where games are quick
    ("shogun+tennos-court+military-leaders+chambers+samurai-cards", 4, (1, 2)),
    ("shogun", 5, (3,)),
    ("samurai-swords", 2, (1,)),
    ("samurai-swords+samurai-swords-vp", 3, (2,)),
    ("samurai-swords+samurai-swords-objectives", 4, (3,)),
    ("shogun-cards+shogun-cards-advanced+shogun-cards-wagers", 3, (1, 2)),
]

# What the subprocess prints: where the flow runner comes from, and the folder the installed
# packages are in, whose sources are compared with the checkout's (`_sources_hash`).
_ABOUT = """
import pathlib, engine, engine.run.direct as d
print(d.__file__)
print(pathlib.Path(engine.__file__).parent.parent)
"""


def _sources_hash(top: Path) -> str:
    """A hash of the engine's sources, rules, grammar and tools under `top` (a checkout, or the
    folder of an install), to be sure the installed build was made from this checkout."""
    h = hashlib.sha256()
    for pkg, pattern in (("engine", "**/*.py"), ("engine", "**/*.pxd"), ("dsl", "**/*.py"), ("dsl", "*.pxd"),
                         ("dsl", "*.lark"),
                         ("rulesets", "**/*.yaml"),
                         ("tools", "**/*.py")):
        for f in sorted((top / pkg).glob(pattern)):
            h.update(str(f.relative_to(top)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _installed(away: Path, *args: str, code: str | None = None, timeout: float = 300) \
        -> subprocess.CompletedProcess:
    """Run the installed daimyo from `away`, an empty folder: nothing of the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [sys.executable, "-c", code] if code is not None else [sys.executable, "-m", "engine.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=away, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder to run the installed daimyo from, if it is compiled from this checkout."""
    away = tmp_path_factory.mktemp("away")
    r = _installed(away, code=_ABOUT)
    if r.returncode != 0:
        pytest.skip("daimyo is not installed (only this checkout's source is importable)")
    where, top = r.stdout.splitlines()
    if where.endswith(".py"):
        pytest.skip("the installed daimyo runs its Python source (an editable install, DAIMYO_PURE_PYTHON, "
                    "or no C compiler at install): nothing compiled to compare")
    if _sources_hash(Path(top)) != _sources_hash(REPO):
        pytest.skip(f"the installed daimyo ({where}) was built from other sources than this checkout")
    return away


def _digests(logs: list[tuple[str, list[str]]]) -> list[str]:
    return [f"{key} {hashlib.sha256(chr(10).join(lines).encode()).hexdigest()}" for key, lines in logs]


_PLAY = """
import hashlib, sys
from engine.model import load
from tools.difftest import game_log
for combo, players, seed, reference in {games!r}:
    lines = game_log(load(combo, {{}}, players), players, seed, reference)
    print(f"{{combo}}/{{players}}/{{seed}}/{{reference}}", hashlib.sha256(chr(10).join(lines).encode()).hexdigest())
"""


def test_the_compiled_engine_logs_every_bundled_game_as_the_source_does(compiled: Path) -> None:
    games = [(combo, players, seed, reference) for combo, players, seeds in GAMES for seed in seeds
             for reference in (False, True)]
    r = _installed(compiled, code=_PLAY.format(games=games))
    assert r.returncode == 0, r.stderr[-2000:]
    ours = _digests([(f"{combo}/{players}/{seed}/{reference}",
                      game_log(load(combo, {}, players), players, seed, reference))
                     for combo, players, seed, reference in games])
    assert r.stdout.splitlines() == ours


@pytest.mark.parametrize("case", sorted(PLAY))
def test_the_compiled_engine_ends_a_hostile_game_with_the_same_located_error(compiled: Path, case: str) -> None:
    code, line, col, words = PLAY[case]
    folder = REPO / "tests" / "broken" / case
    r = _installed(compiled, "play", str(folder), "--players", "2", "--quiet", timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])  # a crash would be negative (a signal)
    assert "Traceback" not in r.stderr
    assert f"{folder}/rules.yaml:{line}:{col}: error[{code}]: " in r.stderr, r.stderr
    assert words in r.stderr


def _both_builds(compiled: Path, code: str) -> tuple[list[str], list[str]]:
    """The lines `code` prints run by the installed build and by this checkout's source."""
    r = _installed(compiled, code=code)
    assert r.returncode == 0, r.stderr[-2000:]
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert here.returncode == 0, here.stderr[-2000:]
    return r.stdout.splitlines(), here.stdout.splitlines()


# The generator compiled with C numbers (engine/run/chance.pxd), from states at its edges: about
# to wrap at 2**64, and the largest. Each line: three draws, a fraction, two draws below a bound.
_DRAWS = """
from engine.run.chance import Rng
print(Rng.__flags__ & (1 << 9) == 0)  # a C type, not a class of Python's (Py_TPFLAGS_HEAPTYPE)
for start in (0, 1, 2**63 - 1, 2**63, 2**64 - 0x9E3779B97F4A7C15, 2**64 - 1, 0x0123456789ABCDEF):
    state = {"rng": start}
    r = Rng(state)
    print([r._next() for _ in range(3)], repr(r.random()), r.below(6), r.below(10**30), state["rng"])
"""


def test_the_compiled_generator_draws_what_the_source_draws(compiled: Path) -> None:
    """splitmix64 compiled with C 64-bit integers, against the source's Python integers and
    masks: the same draws, the wrap at 2**64 included, and the same state left in the game."""
    compiled_lines, source_lines = _both_builds(compiled, _DRAWS)
    assert compiled_lines[0] == "True", "the build did not read engine/run/chance.pxd: Rng is a Python class"
    assert source_lines[0] == "False"  # (the source's Rng is a class of Python's)
    assert compiled_lines[1:] == source_lines[1:]


# The tower's samplers compiled with C doubles (dsl/primitives.pxd), fed a sweep of uniform
# numbers: each result is where the walk up the distribution passes the number, so a sum or
# quotient rounded otherwise than the source's would move a result near a boundary. Counts of
# both kinds (whole and fractional), the walk that underflows, a hypergeometric draw of many.
_SAMPLES = """
from dsl.primitives import _binomial, _hypergeometric
from dsl.runtime import Ctx
print(type(_binomial).__name__)
class Sweep:
    def __init__(self, u):
        self.u = u
    def random(self):
        return self.u
def c():  # a fresh budget for each draw
    return Ctx({"globals": {}, "ent": {}}, None, None)
us = [i / 997 for i in range(997)] + [1 - 2.0 ** -k for k in range(1, 53, 4)]
for n in (1, 2, 3, 7, 12, 32, 33, 200, 2.0, 7.5, True):
    for p in (1e-9, 0.01, 0.3333, 0.5, 0.6667, 0.99, 1 - 1e-12):
        print(n, p, [_binomial(c(), Sweep(u), n, p) for u in us])
print([_binomial(c(), Sweep(0.5), 3000, 0.6) for _ in range(2)])
for total, good, draws in ((10, 3, 4), (40, 12, 20), (200, 50, 120), (9000, 4000, 30), (50, 50, 7)):
    print(total, good, draws, [_hypergeometric(c(), Sweep(u), total, good, draws) for u in us])
"""


def test_the_compiled_tower_samplers_draw_what_the_source_draws(compiled: Path) -> None:
    """The binomial and hypergeometric walks compiled on C numbers give, for every uniform
    number of a fine sweep, the count the source's Python numbers give, of the same type."""
    compiled_lines, source_lines = _both_builds(compiled, _SAMPLES)
    assert compiled_lines[0] == "cython_function_or_method", "the build did not compile dsl/primitives.py"
    assert source_lines[0] == "function"
    assert compiled_lines[1:] == source_lines[1:]
    assert len(set(source_lines[1:])) > 60  # the sweep finds different counts, not one answer


def test_a_build_that_compiles_nothing_leaves_out_what_an_earlier_build_compiled(tmp_path: Path) -> None:
    """pip builds in the source tree and installs the build folder's whole tree: a pure-Python
    build (DAIMYO_PURE_PYTHON=1) must not install the compiled modules an earlier build left
    there, which Python would load in place of the (newer) source."""
    from importlib.machinery import EXTENSION_SUFFIXES
    lib = tmp_path / "lib"
    stale = lib / "engine" / "run" / f"direct{EXTENSION_SUFFIXES[0]}"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an old build")
    kept = lib / "engine" / "run" / "direct.py"
    kept.write_text("# the source\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib),
                        "--build-temp", str(tmp_path / "temp")], capture_output=True, text=True, cwd=REPO,
                       timeout=120, env={**os.environ, "DAIMYO_PURE_PYTHON": "1"})
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and kept.is_file()


_MACHINE_TYPES = """
import weakref
from engine.model import load
from engine.run import direct
from engine.run.direct import Runner
from engine.run.machine import FlowMachine
from engine.run.game import Decision, Game
from dsl.rule import Rule
from dsl.runtime import Ctx, Meter
from engine.run.chance import Chance
items = [getattr(direct, n) for n in ("Item", "Offer", "_Seq", "_Effect", "_Call", "_Step", "_Loop", "_While", "_If",
                                      "_Choose")]
print(*(cls.__name__ for cls in (Runner, FlowMachine, Game, Decision, Rule, Ctx, Meter, Chance, *items)
        if cls.__flags__ & (1 << 9)))
game = Game.new(load("shogun", {}, 3), 3, 1)
print(weakref.ref(game)() is game)
fields = {Ctx: ("depth", "ent", "g", "hooks", "meter", "model", "state", "vars"),
          Meter: ("deadline", "limit", "seconds", "total", "used", "where"),
          Rule: ("counted", "fast", "loc", "pos", "source", "var", "what"),
          Decision: ("number", "options", "player", "secret", "step"),
          Runner: ("model", "recorder", "silent")}
print(*(f"{cls.__name__}.{f}" for cls, names in fields.items() for f in names
        if type(cls.__dict__[f]).__name__ != "member_descriptor"))
quiet = Game.new(load("shogun", {}, 3), 3, 1, log=False)
was = quiet.silent
quiet.on_log = lambda entry: None
heard = quiet.silent
quiet.on_log = None
print(was, heard, quiet.silent)
d, pending = game.decision, game.state["pending"]
print(type(Decision.__dict__["prompt"]).__name__ != "member_descriptor", d.prompt == pending["prompt"],
      d.options is pending["options"])
from engine.model.modifiers import apply_modifiers
try:
    apply_modifiers(None, "x", 1, {})
except Exception as e:
    print(type(e).__name__)
"""


def test_the_compiled_machine_game_and_decision_are_c_types(compiled: Path) -> None:
    """engine/run/direct.pxd, machine.pxd, game.pxd, chance.pxd, dsl/rule.pxd and
    dsl/runtime.pxd were read: the flow's items are C types that read the machine's fields,
    its meter's and context's, and a rule's `fast` as C fields, a decision's are set as C
    fields, and a game's chance reads its own; a game can still be referred to weakly, as a
    class of Python's can. The fields rule code and bots read are members to the interpreter,
    as the slots of a class of Python's are (dsl/cfields.pxd), the machine's `silent` among
    them, and a property (a decision's prompt) stays one. (That
    they play as the source plays, and that a game still takes difftest's `reference`, is the
    log test above.)"""
    r = _installed(compiled, code=_MACHINE_TYPES)
    assert r.returncode == 0, r.stderr[-2000:]
    names, weak, getsets, silent, prompt, no_context = r.stdout.splitlines()
    assert names == "", f"classes of Python's in the build (a .pxd not read): {names}"
    assert weak == "True"
    assert getsets == "", f"fields read through a getset, not as members: {getsets}"
    assert silent == "True False True"  # a member that `Game.on_log` keeps up to date
    assert prompt == "True True True"
    assert no_context == "AttributeError"  # a context typed Ctx, and None refused as from the source (nonecheck)
