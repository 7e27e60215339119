"""daimyo: a rules-as-data engine for the Shogun family of board games.

The Python API in brief (see docs/api.md):

    from engine import load, Game
    model = load("shogun+chambers", options={"side": "moon"}, players=4)
    game = Game.new(model, players=4, seed=1)
    while not game.over:
        d = game.decision                  # d.player, d.options, d.prompt
        game.apply(d.options[0])
    game.result                            # scores, ranking, winners
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The public names are loaded on first use: the rules language (dsl/) imports
# engine.base.diagnostics, and an eager import of engine.run.game here would be circular.
_PUBLIC = {
    "Diagnostic": "engine.base.diagnostics", "Diagnostics": "engine.base.diagnostics",
    "RulesetError": "engine.base.diagnostics",
    "Decision": "engine.run", "Game": "engine.run", "IllegalMove": "engine.run",
    "Model": "engine.model", "load": "engine.model",
}
__all__ = [*sorted(_PUBLIC), "__version__"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        import importlib
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
