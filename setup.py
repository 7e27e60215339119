"""The build's one addition to pyproject.toml: the engine's hottest modules compiled to C.

daimyo is pure Python. A regular install (`pip install .`) also compiles the modules below with
Cython, from the same source and with its annotations ignored (but in one module, below), so
they behave as the Python does, and games take less time (docs/performance.md, "The compiled
engine", "The machine as a C type"); Python loads the compiled module in place of the source
beside it. A `.pxd` file beside a module's source gives
some of its names C types, which Cython reads and Python never sees:
- numbers, only where C computes the same numbers as the Python (engine/run/chance.pxd: the
  generator's 64-bit arithmetic, which Python's masks make wrap as C's does;
  tests/test_compiled.py compares the draws);
- the engine's own classes whose fields compiled code reads at every turn of the flow
  (engine/run/direct.pxd, machine.pxd, game.pxd, dsl/rule.pxd, dsl/runtime.pxd: the machine,
  the game, a decision, a compiled rule, the context rules run in and the work budget's meter
  become C types, and their fields C fields). Those whose fields rule code or bots read too
  show them to the interpreter as members, which it reads as it reads the slots of a Python
  class (dsl/cfields.pxd). engine/run/direct.py also reads its annotations as types, so that
  its items take the machine, its meter and context and their rules as those C types (the
  directive on its first line); engine/model/modifiers.pxd types the context the same way.

Nothing is compiled, and the source runs,
- in an editable install (`pip install -e .`), so that an edited module is what runs;
- with `DAIMYO_PURE_PYTHON=1` set at install;
- where Cython or a C compiler fails: the build says so and goes on without them.
"""
from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The flow runner, the rule runtime, the primitives and a compiled rule: what every decision runs
# through.
# Compiled code has no Python stack check (a recursion too deep crashes the process where Python
# raises RecursionError), so each of these recurses to a bounded depth only: the flow at most
# SPILL levels as calls, a rule's calls counting their own depth, copies of values counting
# theirs (dsl/runtime.py MAX_VALUE_DEPTH, MAX_COPY_DEPTH). Keep it so when changing them.
COMPILED = [
    "engine/run/direct.py",
    "engine/run/machine.py",
    "engine/run/game.py",
    "engine/run/chance.py",
    "engine/model/modifiers.py",
    "dsl/runtime.py",
    "dsl/primitives.py",
    "dsl/rule.py",
]


class BuildCompiled(build_ext):
    """Cythonizes COMPILED when the build is a regular one, and leaves them out otherwise."""

    def run(self) -> None:
        if getattr(self, "editable_mode", False) or self.inplace or os.environ.get("DAIMYO_PURE_PYTHON"):
            self.extensions = []
            self._drop_compiled()
            return
        try:
            from Cython.Build import cythonize

            made = cythonize(  # C files in the build folder, never beside the source
                self.extensions, build_dir=os.path.join(self.build_temp, "cython"), quiet=True,
                compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True})
            sources = {ext.name: ext.sources for ext in made}
            for ext in self.extensions:  # setuptools' own Extension objects, with their C files
                ext.sources = sources[ext.name]
        except Exception as e:  # no Cython: the source runs
            print(f"daimyo: not compiling the engine ({type(e).__name__}: {e}); the Python source runs")
            self.extensions = []
            self._drop_compiled()
            return
        self.parallel = os.cpu_count() or 1  # one C compiler per core
        super().run()

    def _drop_compiled(self) -> None:
        """Remove modules an earlier build compiled into this build folder: pip builds in the
        source tree, and the folder's whole tree is installed, so a build that compiles nothing
        would otherwise install old compiled modules, which Python loads before the source."""
        for path in COMPILED:
            for suffix in EXTENSION_SUFFIXES:
                stale = os.path.join(self.build_lib, path[:-3] + suffix)
                if os.path.isfile(stale):
                    os.remove(stale)


setup(
    ext_modules=[Extension(path[:-3].replace("/", "."), [path], optional=True) for path in COMPILED],
    cmdclass={"build_ext": BuildCompiled},
)
