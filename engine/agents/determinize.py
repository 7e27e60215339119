"""Determinization: a copy of the game consistent with what one player may know.

Chance is re-seeded and every list that player cannot see is re-dealt from the pool of
unseen items, so an agent that searches the copy never learns another player's secrets.
"""
from __future__ import annotations

import random

from engine.run import Game


def determinize(game: Game, player: str, rng: random.Random) -> Game:
    """A full game for `player` to search in, consistent with what `player` can see.

    Chance is re-seeded, so future dice and shuffles are unknown to the searcher. Every
    list the player cannot see (other hands, face-down cards, the deck's order) is pooled
    by the kind of entity it holds and re-dealt at random, keeping each list's length and
    every visible item in place: the searcher sees "some unseen cards", never which.
    Hidden single values (a sealed bid) stay as they are; rulesets that keep secrets in
    single values should keep them in lists of ids if their bots must not peek."""
    sim = game.clone()
    sim.reseed(rng.getrandbits(64))
    _redeal_hidden_lists(sim, player, rng)
    return sim


def _redeal_hidden_lists(sim: Game, player: str, rng: random.Random) -> None:
    m = sim.model
    state = sim.state
    places: list[list] = []
    for name, vis in m.globals_visible.items():
        if vis != "all" and isinstance(state["globals"].get(name), list):
            places.append(state["globals"][name])
    for eid, fields in state["ent"].items():
        k = m.kinds["player"] if eid in state["players"] else m.kinds.get(m.kind_of.get(eid, ""))
        if k is None:
            continue
        owner = eid if k.name == "player" else (fields.get(k.owner) if k.owner else None)
        for f, v in fields.items():
            vis = k.visible.get(f, "all")
            if isinstance(v, list) and v and (vis == "none" or (vis == "owner" and owner != player)):
                places.append(v)
    pools: dict[str, list] = {}
    for lst in places:
        for x in lst:
            if isinstance(x, str) and x in m.kind_of:
                pools.setdefault(m.kind_of[x], []).append(x)
    for pool in pools.values():
        rng.shuffle(pool)
    for lst in places:
        for i, x in enumerate(lst):
            if isinstance(x, str) and x in m.kind_of:
                lst[i] = pools[m.kind_of[x]].pop()
