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


# A hidden slot: (container, key, owner of the secret, group of counts: (field, owner), or
# (None, name) for a global).
Slot = tuple[Any, Any, Any, tuple]


def _hidden_slots(sim: Game, player: str) -> list[Slot]:
    state = sim.state
    slots: list[Slot] = []
    hidden_globals, entities = _plan(sim.model, state)
    globals_ = state["globals"]
    for name in hidden_globals:
        if name in globals_:
            slots.append((globals_, name, None, (None, name)))
    ent = state["ent"]
    for eid, owner_field, secret in entities:
        fields = ent[eid]
        owner = eid if owner_field is None else (fields.get(owner_field) if owner_field else None)
        for f, vis in secret:
            if f in fields and (vis == "none" or owner != player):
                slots.append((fields, f, owner, (f, owner)))
    return slots


def _plan(m: Any, state: dict) -> tuple[list[str], list[tuple[str, str | None, list[tuple[str, str]]]]]:
    """The globals not visible to all, and the entities whose kind has fields not visible to
    all, in the order the state holds them: (id, owner field (None: a player, its own owner;
    "": no owner), those fields). Made once per model and order of entities: `determinize`
    runs for every option a bot tries."""
    ent = state["ent"]
    got = m.derived.get("hidden_plan")
    if got is not None and got[0] == list(ent):
        return got[1]
    hidden = _hidden_fields(m)
    players = state["players"]
    kind_of = m.kind_of
    entities = []
    for eid in ent:
        is_player = eid in players
        found = hidden.get("player" if is_player else kind_of.get(eid, ""))
        if found is not None:
            entities.append((eid, None if is_player else found[0], found[1]))
    plan = ([name for name, vis in m.globals_visible.items() if vis != "all"], entities)
    m.derived["hidden_plan"] = (list(ent), plan)
    return plan


def _hidden_fields(m: Any) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Per kind with secrets: its owner field and its fields not visible to all, in the order
    an entity of the kind holds them."""
    got = m.derived.get("hidden_fields")
    if got is None:
        got = {}
        for name, k in m.kinds.items():
            secret = [(f, vis) for f, vis in k.visible.items() if vis != "all"]
            if secret:
                got[name] = (k.owner, secret)
        m.derived["hidden_fields"] = got
    return got


def _entity_places(value: Any, container: Any, key: Any, out: list[tuple[Any, Any]]) -> None:
    """Add to `out` where entity ids sit inside one hidden value: (container, key) pairs, in
    order (a list's items in turn, a map's values by key)."""
    if isinstance(value, str):
        out.append((container, key))
    elif isinstance(value, list):
        for i, x in enumerate(value):
            if type(x) is str:  # the usual case, a list of ids: no call per item
                out.append((value, i))
            elif isinstance(x, (list, dict, str)):
                _entity_places(x, value, i, out)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            _entity_places(value[k], value, k, out)


def _redeal_entities(sim: Game, slots: list[Slot], rng: random.Random) -> None:
    m = sim.model
    ent = sim.state["ent"]
    kind_of = m.kind_of
    found: list[tuple[Any, Any, Any, str]] = []  # (container, key, owner of the secret, entity kind)
    for container, key, owner, _group in slots:
        where: list[tuple[Any, Any]] = []
        _entity_places(container[key], container, key, where)
        for c, k in where:
            kind = kind_of.get(c[k])
            if kind is not None:
                found.append((c, k, owner, kind))
    if not found:
        return
    # An id hidden in several places at once is a token every player has a copy of (the same
    # war chest cards in each player's hand): it stays among its owner's secrets.
    seen: dict[str, int] = {}
    for c, k, _owner, _kind in found:
        seen[c[k]] = seen.get(c[k], 0) + 1
    owner_key = _owner_fields(m)
    places: list[tuple[Any, Any, Any]] = []  # (container, key, pool key)
    for c, k, owner, kind in found:
        x = c[k]
        if owner is not None and (ent.get(x, {}).get(owner_key[kind]) == owner or seen[x] > 1):
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


def _owner_fields(m: Any) -> dict[str, str]:
    """The field naming the owner of an entity, per kind (`owner` when the kind names none)."""
    got = m.derived.get("owner_fields")
    if got is None:
        got = m.derived["owner_fields"] = {name: k.owner or "owner" for name, k in m.kinds.items()}
    return got


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _redeal_counts(slots: list[Slot], rng: random.Random) -> None:
    groups: dict[tuple, list[tuple[Any, Any]]] = {}
    for container, key, _owner, group in slots:
        v = container[key]
        if type(v) is int and v >= 0:  # _is_count, written out: the state holds plain values
            groups.setdefault(group, []).append((container, key))
        elif isinstance(v, dict) and v and all(_is_count(x) for x in v.values()):
            _spread(sum(v.values()), [(v, k) for k in sorted(v, key=str)], rng)
    for members in groups.values():
        if len(members) > 1:
            _spread(sum(c[k] for c, k in members), members, rng)


def _spread(total: int, members: list[tuple[Any, Any]], rng: random.Random) -> None:
    """Deal `total` units over the members at random (each unit to a uniformly chosen member)."""
    counts = [0] * len(members)
    below, n = rng._randbelow, len(members)  # what randrange(n) returns, without its checks per unit
    for _ in range(min(total, 10_000)):
        counts[below(n)] += 1
    counts[0] += max(0, total - 10_000)
    for (c, k), n in zip(members, counts, strict=True):
        c[k] = n
