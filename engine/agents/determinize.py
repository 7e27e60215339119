"""Determinization: a copy of the game consistent with what one player may know.

Chance is re-seeded and every value that player cannot see is re-sampled, so an agent that
searches the copy never learns another player's secrets.
"""
from __future__ import annotations

import random
from typing import Any

from engine.run import Game


def determinize(game: Game, player: str, rng: random.Random) -> Game:
    """A full game for `player` to search in, consistent with what `player` can see.

    Chance is re-seeded, so future dice and shuffles are unknown to the searcher. Then every
    value hidden from the player (a field or global whose visibility is `none`, or `owner`
    when another player owns it) is re-sampled:
    - entity ids anywhere in hidden values (cards in hands, face-down cards, a sealed bid that
      is a card, a plan of cards) are pooled by kind and re-dealt: an entity whose public
      `owner` is the hidden value's owner stays among that owner's secrets (a player plans with
      their own province cards), every other one may land in any hidden place of its kind.
      Each list keeps its length, each map its keys.
    - hidden counts (numbers) are grouped by (field name, owner), across kinds (ronin in a
      province or with an army), and the group's total is dealt again at random over its
      members, one unit at a time; a map of counts (coins in secret bins) is re-dealt over its
      keys. A lone count with nothing to trade with (a scratch register hidden from everybody)
      is left as it is. The view shows a hidden map's total (views.hide),
      and the bundled games reveal the totals of hidden counts (ronin hired are announced), so
      the total is what the seat knows and the split is what it does not.
    The re-sampling never reads a hidden value except to count it, so two games that differ
    only in an opponent's secrets give the searcher identically distributed copies."""
    sim = game.clone()
    sim.reseed(rng.getrandbits(64))
    slots = _hidden_slots(sim, player)
    _redeal_entities(sim, slots, rng)
    _redeal_counts(slots, rng)
    return sim


# A hidden slot: (container, key, owner of the secret, group name for counts).
Slot = tuple[Any, Any, Any, str]


def _hidden_slots(sim: Game, player: str) -> list[Slot]:
    m = sim.model
    state = sim.state
    slots: list[Slot] = []
    for name, vis in m.globals_visible.items():
        if vis != "all" and name in state["globals"]:
            slots.append((state["globals"], name, None, f"global:{name}"))
    hidden = _hidden_fields(m)
    players = state["players"]
    kind_of = m.kind_of
    for eid, fields in state["ent"].items():
        kind = "player" if eid in players else kind_of.get(eid, "")
        found = hidden.get(kind)
        if found is None:
            continue
        owner_field, secret = found
        owner = eid if kind == "player" else (fields.get(owner_field) if owner_field else None)
        for f, vis in secret:
            if f in fields and (vis == "none" or owner != player):
                slots.append((fields, f, owner, f"{f}/{owner}"))
    return slots


def _hidden_fields(m: Any) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Per kind with secrets: its owner field and its fields not visible to all, in the order
    an entity of the kind holds them (made once per model: `determinize` runs every search
    iteration)."""
    got = m.derived.get("hidden_fields")
    if got is None:
        got = {}
        for name, k in m.kinds.items():
            secret = [(f, vis) for f, vis in k.visible.items() if vis != "all"]
            if secret:
                got[name] = (k.owner, secret)
        m.derived["hidden_fields"] = got
    return got


def _entity_places(value: Any, container: Any, key: Any) -> list[tuple[Any, Any]]:
    """Where entity ids sit inside one hidden value: (container, key) pairs, in order."""
    out: list[tuple[Any, Any]] = []
    if isinstance(value, list):
        for i, x in enumerate(value):
            out.extend(_entity_places(x, value, i))
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            out.extend(_entity_places(value[k], value, k))
    elif isinstance(value, str):
        out.append((container, key))
    return out


def _redeal_entities(sim: Game, slots: list[Slot], rng: random.Random) -> None:
    m = sim.model
    ent = sim.state["ent"]
    found: list[tuple[Any, Any, Any, str]] = []  # (container, key, owner of the secret, entity kind)
    for container, key, owner, _group in slots:
        for c, k in _entity_places(container[key], container, key):
            kind = m.kind_of.get(c[k])
            if kind is not None:
                found.append((c, k, owner, kind))
    # An id hidden in several places at once is a token every player has a copy of (the same
    # war chest cards in each player's hand): it stays among its owner's secrets.
    seen: dict[str, int] = {}
    for c, k, _owner, _kind in found:
        seen[c[k]] = seen.get(c[k], 0) + 1
    places: list[tuple[Any, Any, Any]] = []  # (container, key, pool key)
    for c, k, owner, kind in found:
        x = c[k]
        ek = m.kinds.get(kind)
        item_owner = ent.get(x, {}).get(ek.owner if ek and ek.owner else "owner")
        if owner is not None and (item_owner == owner or seen[x] > 1):
            places.append((c, k, ("owner", owner)))  # face down, one's own cards look alike
        else:
            places.append((c, k, ("kind", kind)))
    pools: dict[Any, list] = {}
    for c, k, pool in places:
        pools.setdefault(pool, []).append(c[k])
    for pool in pools.values():
        pool.sort()  # the order the secrets happen to be in must not matter
        rng.shuffle(pool)
    for c, k, pool in places:
        c[k] = pools[pool].pop()


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _redeal_counts(slots: list[Slot], rng: random.Random) -> None:
    groups: dict[str, list[tuple[Any, Any]]] = {}
    for container, key, _owner, group in slots:
        v = container[key]
        if _is_count(v):
            groups.setdefault(group, []).append((container, key))
        elif isinstance(v, dict) and v and all(_is_count(x) for x in v.values()):
            _spread(sum(v.values()), [(v, k) for k in sorted(v, key=str)], rng)
    for members in groups.values():
        if len(members) > 1:
            _spread(sum(c[k] for c, k in members), members, rng)


def _spread(total: int, members: list[tuple[Any, Any]], rng: random.Random) -> None:
    """Deal `total` units over the members at random (each unit to a uniformly chosen member)."""
    counts = [0] * len(members)
    for _ in range(min(total, 10_000)):
        counts[rng.randrange(len(members))] += 1
    counts[0] += max(0, total - 10_000)
    for (c, k), n in zip(members, counts, strict=True):
        c[k] = n
