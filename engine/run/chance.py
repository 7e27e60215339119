"""Chance: the seeded generator kept in the game state, and outcomes a test may force.

The generator's whole state is one integer in `state["rng"]`, so saves, clones and replays
carry it. Scenarios and tests script outcomes with `forced`: each forced entry is used by the
next chance event of the same kind instead of a draw.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

MASK64 = (1 << 64) - 1


# splitmix64's increment and multipliers, and the mask that keeps a number to 64 bits. The
# compiled engine holds these and the generator's state as C 64-bit integers (chance.pxd), whose
# arithmetic wraps at 2**64 just as the masks below make Python's do: the same numbers, without
# a Python integer made for each operation (a draw cost 370 ns; compiled, 55 ns). The mask has a
# name of its own, `_M64`: a C constant is not visible to Python, and game.py imports MASK64.
_GAMMA, _MIX1, _MIX2, _M64 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, MASK64
# A uniform number is the top 53 bits of a draw times 2**-53. Named, so that the compiled engine
# holds it as a C double: written out, Cython divided two Python numbers at every draw. (The 53
# bits are a whole number a double holds exactly, so C's product is Python's.)
_UNIT = 1.0 / (1 << 53)


class Rng:
    """splitmix64: one 64-bit integer of state, kept in the game state so saves carry it.
    `below(n)` takes the draw modulo n; the bias (under 1e-17 for board-game sizes) is
    far below anything a sweep could detect. (Compiled, a C type of two fields: chance.pxd.)"""

    __slots__ = ("s", "state")

    def __init__(self, state: dict):
        self.state = state
        self.s = state["rng"]

    def _next(self) -> int:
        s = (self.s + _GAMMA) & _M64
        self.s = s
        self.state["rng"] = s
        z = ((s ^ (s >> 30)) * _MIX1) & _M64
        z = ((z ^ (z >> 27)) * _MIX2) & _M64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self._next() % n

    def random(self) -> float:
        return (self._next() >> 11) * _UNIT


class Chance:
    """Where every chance outcome comes from: a forced one if the next forced entry is of this
    kind, otherwise a draw from the state's generator."""

    __slots__ = ("forced", "rng")

    def __init__(self, state: dict):
        self.rng = Rng(state)
        self.forced: list[dict] = []

    def outcome(self, kind: str, draw: Callable[[Rng], Any], forced_apply: Callable | None = None) -> Any:
        if self.forced and self.forced[0].get("kind") == kind:
            value = self.forced.pop(0)["value"]
            return forced_apply(value) if forced_apply is not None else value
        return draw(self.rng)


# How a seed becomes the generator's starting state; the log's `start` line names it, so a log
# made under another derivation is refused by replay instead of failing at its first chance line.
SEEDING = "sha256/1"


def initial_rng(seed: int) -> int:
    """The generator's starting state for a game seed: the first 8 bytes of SHA-256 over the
    seed's decimal text. Nearby seeds get unrelated states, so their streams neither overlap
    nor correlate (the generator steps by a fixed increment, so a state spread with that same
    increment would make seed k+1 replay seed k's stream one draw later)."""
    digest = hashlib.sha256(f"daimyo seed {int(seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
