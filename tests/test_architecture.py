"""The layers of docs/architecture.md, guarded: imports only point down, and no module is part
of an import circle. Every import counts, including those inside functions.

The layers, lowest first (a module may import its own layer and those below):
  engine.base < dsl < engine.loading < engine.model < engine.run < engine.agents < front door, tools
The front door (engine.cli) and tools/ stand side by side: neither imports the other.
The package `engine` itself (engine/__init__.py) is the public API facade and imports lazily.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ("engine", "dsl", "tools")
LAYERS = ["engine.base", "dsl", "engine.loading", "engine.model", "engine.run", "engine.agents",
          "engine.cli|tools"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    for rank, names in enumerate(LAYERS):
        for name in names.split("|"):
            if module == name or module.startswith(name + "."):
                return rank
    return None


def points_wrong(source: str, target: str) -> bool:
    """An import from `source` to `target` goes up a layer, or across between front door and tools."""
    ls, lt = layer_of(source), layer_of(target)
    if ls is None or lt is None:
        return False
    across = ls == lt == len(LAYERS) - 1 and source.startswith("tools") != target.startswith("tools")
    return lt > ls or across


def imports_of(path: Path, module: str) -> set[str]:
    """Every module named by an import statement anywhere in the file (ours only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import submodule`
    return {m for m in found if m.split(".")[0] in TREES}


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for tree in TREES for p in (ROOT / tree).rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for mod, path in files.items():
        targets = set()
        for imp in imports_of(path, mod):
            while imp and imp not in files:  # `from engine.run import Game` names a module's attribute
                imp = imp.rpartition(".")[0]
            if imp and imp != mod:
                targets.add(imp)
        edges[mod] = targets
    return edges


def test_every_module_has_a_layer() -> None:
    loose = [m for m in graph() if m != "engine" and layer_of(m) is None]
    assert not loose, f"modules outside every layer (add them to docs/architecture.md and LAYERS): {loose}"


def test_imports_only_point_down() -> None:
    upward = []
    for mod, targets in graph().items():
        if mod == "engine":
            continue
        for t in targets:
            if t == "engine":
                continue  # the facade's lazy names (and __version__) are fine from anywhere
            if points_wrong(mod, t):
                upward.append(f"{mod} -> {t}")
    assert not upward, "imports that point up (or across, between the front door and tools):\n" + "\n".join(
        sorted(upward))


def test_no_import_circles() -> None:
    edges = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if t == "engine" or t not in edges:
                continue
            # A package's __init__ importing its own submodules is how packages re-export; a
            # submodule reaching back to its package's __init__ would be the circle.
            if m != "engine" and t.startswith(m + "."):
                continue
            if state.get(t) == 1:
                cycles.append([*stack[stack.index(t):], t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("source, target, bad", [
    ("engine.run.game", "engine.cli.play", True),
    ("dsl.runtime", "engine.loading.yamlio", True),
    ("engine.cli.play", "tools.simulate", True),
    ("tools.simulate", "engine.cli", True),
    ("engine.cli.play", "engine.run.game", False),
    ("dsl.compiler", "engine.base.diagnostics", False),
])
def test_the_guard_itself_tells_up_from_down(source: str, target: str, bad: bool) -> None:
    assert points_wrong(source, target) is bad
