"""How good a position is for a player: the ruleset's `hints.evaluate` (or its score),
compared with the opponents' as `hints.versus` says, and the 0..1 outcome value that
search backs up.
"""
from __future__ import annotations

import math

from dsl.runtime import Ctx, RuleError
from engine.run import Game


def evaluate(game: Game, player: str) -> float:
    """The ruleset's own measure of `player`'s position (hints.evaluate, else the score)."""
    m = game.model
    if game.over and game.result:
        return 1e6 if player in game.result["winners"] else -1e6
    fn = m.evaluate or m.score
    if fn is None:
        return 0.0
    try:
        return float(fn(Ctx(game.state, m, game, {"player": player})))
    except (RuleError, TypeError, ValueError):
        return 0.0


def relative_value(game: Game, player: str) -> float:
    """`player`'s evaluation less the opponents' (hints.versus: `best` opponent, the `mean` of
    them, or `none`): taking from a rival is worth as much as gaining."""
    if game.over and game.result:
        return 1e6 if player in game.result["winners"] else -1e6
    mine = evaluate(game, player)
    versus = game.model.hints.get("versus", "best")
    if versus == "none":
        return mine
    others = [evaluate(game, p) for p in game.state["players"] if p != player]
    if not others:
        return mine
    return mine - (max(others) if versus == "best" else sum(others) / len(others))


def outcome_value(game: Game, player: str) -> float:
    """1 for a win (shared by the tied), else a 0..1 rank-based value; unfinished games
    are scored by `relative_value` (as hints.versus says), scaled by hints.scale."""
    if game.over and game.result:
        winners = game.result["winners"]
        if player in winners:
            return 1.0 / len(winners)
        ranking = game.result["ranking"]
        return 0.5 * (1 - ranking.index(player) / max(1, len(ranking) - 1))
    scale = float(game.model.hints.get("scale", 10.0))
    return 0.5 + 0.5 * math.tanh(relative_value(game, player) / scale)
