"""Values read from YAML that remember where each part was written.

`LocDict` and `LocList` are plain dicts and lists that also carry the location of each key and
value; `loc_of` finds one. The reader is engine/loading/yamlio.py (with PyYAML, in yamlbuild.py);
values read back from the disk cache (yamlcache.py) are made here without importing PyYAML.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from engine.base.diagnostics import Loc


@cache
def line_breaks() -> re.Pattern:
    """YAML 1.1 line breaks: what the parser counts as a new line in its marks (compiled on first
    use: values read back from the cache need it only to locate an error)."""
    return re.compile("\r\n|[\r\n\x85\u2028\u2029]")


class LocDict(dict):
    """A mapping loaded from YAML: a plain dict, plus where it and each entry came from.

    `loc` is where the mapping starts, `key_locs[k]` where key `k` starts and
    `value_locs[k]` where its value's content starts (see `load_yaml`).
    """

    __slots__ = ("file", "key_locs", "loc", "value_locs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.file = ""
        self.loc = Loc()
        self.key_locs: dict[Any, Loc] = {}
        self.value_locs: dict[Any, Loc] = {}


class LocList(list):
    """A sequence loaded from YAML: a plain list, plus `loc` and the `item_locs` of its items."""

    __slots__ = ("file", "item_locs", "loc")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.file = ""
        self.loc = Loc()
        self.item_locs: list[Loc] = []


_NOWHERE = Loc()  # what loc_of gives for an unknown place (a Loc is immutable: one serves all)


def loc_of(container: Any, key_or_index: Any, *, key: bool = False) -> Loc:
    """Where `container[key_or_index]` is written (its key with `key=True`); `Loc()` if unknown.

    Works on any value: plain dicts and lists, missing keys and bad indexes give `Loc()`.
    """
    try:
        if isinstance(container, LocDict):
            return (container.key_locs if key else container.value_locs).get(key_or_index, _NOWHERE)
        if isinstance(container, LocList) and not key:
            return container.item_locs[key_or_index]
    except (TypeError, IndexError):
        pass
    return _NOWHERE
