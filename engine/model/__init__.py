"""The model: one combo's rules, compiled and frozen.

It owns the board graph and its checks (`board`), the flow compiled to a node table (`flow`),
the modifier pipeline (`modifiers`), the `Model` itself and how it is built from a resolved
combo (`build`), and validation of whole packages over all their option values and player
counts (`validate`). A `Model` never changes during play. This layer may import `engine.base`,
`dsl` and `engine.loading`, nothing above.
"""
from engine.model.build import build, build_combo, load
from engine.model.ruleset import MAX_PLAYERS, PLAYER_KIND, Kind, Model

__all__ = ["MAX_PLAYERS", "PLAYER_KIND", "Kind", "Model", "build", "build_combo", "load"]
