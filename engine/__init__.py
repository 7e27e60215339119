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
__version__ = "0.1.0"

from engine.diagnostics import Diagnostic, Diagnostics, RulesetError
from engine.game import Decision, Game, IllegalMove
from engine.model import Model, load

__all__ = [
           "Decision",
           "Diagnostic",
           "Diagnostics",
           "Game",
           "IllegalMove",
           "Model",
           "RulesetError",
           "__version__",
           "load",
]
