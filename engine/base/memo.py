"""Memos that live only inside a `with` block: what validation shares between its builds.

`daimyo validate` builds a ruleset once per option value, player count and combo; inside the
block each of these memos (files read, manifests, compiled texts, boards) keeps what one build
made for the next. Outside it `get()` is None and every caller works as if there were no memo,
so play never shares anything between games.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class ScopedMemo:
    """A dict that exists only within `with memo.scope():` (per context: threads and async
    tasks each see their own)."""

    def __init__(self, name: str):
        self._var: ContextVar[dict | None] = ContextVar(name, default=None)
        self._last: dict | None = None

    @contextmanager
    def scope(self) -> Iterator[None]:
        token = self._var.set({})
        try:
            yield
        finally:
            # The memo of the block that ends is freed when the next one ends, not now: `daimyo
            # validate` ends right after its one block without freeing anything (freeing what
            # its builds shared is about 2% of a cold validation), and a process that validates
            # again keeps at most one old memo per kind.
            self._last = self._var.get()
            self._var.reset(token)

    def get(self) -> dict | None:
        """The memo of the innermost open scope, or None outside every scope."""
        return self._var.get()
