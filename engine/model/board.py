"""Board compilation: a ruleset's `board` section becomes a compact, frozen `Board`.

The `board` section (merged from a package's data files) names the spaces and their static
attributes, the regions, typed links (land, sea, ...), named sets of spaces, layout hints and the
groups that may stand apart from the rest of the map (`islands`). `build_board` checks it, reports
every problem with a code and a precise location, and compiles it into sorted tuples and dicts that
the rules read on the hot path. networkx is used only by tools (`Board.graph()`), never while a
game runs or a ruleset is validated: connectivity is a small union-find (`_components`), which
spares validation the ~0.15 s networkx import.

Codes (documented in docs/diagnostics.md):
  G001 a link, region member, set member, layout entry or island group names an unknown space
  G002 a link from a space to itself
  G003 a link listed twice (error within one kind, warning across kinds)
  G004 a space in no region (only when regions are declared)
  G005 a space in two regions (warning when repeated within one region)
  G006 the map is not connected (components declared under `islands` may stand apart)
  G007 a malformed link
  G008 a region colour that is not `#rrggbb` (warning)
  G009 a malformed or unknown entry of the board section (wrong type, unknown key, bad layout)
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from engine.base.diagnostics import Diagnostics, Loc, did_you_mean

if TYPE_CHECKING:
    import networkx

SECTION_KEYS = ("space_kind", "spaces", "regions", "links", "sets", "layout", "islands", "notes")
SPACE_META_KEYS = ("pos", "notes")  # kept out of Board.attrs: layout hint and documentation
REGION_KEYS = ("name", "color", "spaces", "notes")
LINK_KEYS = ("between", "unverified", "notes")
LAYOUT_RANGE = (0.0, 1000.0)

_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
_SCALARS = (str, int, float, bool, type(None))

Pair = tuple[str, str]


class Board:
    """The compiled map. Every field is read-only (assigning one raises AttributeError).

    Equality and hashing are by identity, so a board can key a cache; a field-wise comparison of
    two boards is rarely wanted and would be slow.
    """

    spaces: tuple[str, ...]                                  # sorted ids
    index: dict[str, int]                                    # id -> position in `spaces`
    attrs: dict[str, dict]                                   # id -> static attributes (no pos/notes)
    region_of: dict[str, str]                                # id -> region id ('' if none)
    regions: dict[str, tuple[str, ...]]                      # region id -> sorted member ids
    neighbors: dict[str, tuple[str, ...]]                    # union of all link kinds, sorted
    neighbors_by_kind: dict[str, dict[str, tuple[str, ...]]]  # kind -> id -> sorted ids
    sets: dict[str, frozenset[str]]
    layout: dict[str, tuple[float, float]]
    space_kind: str                                          # entity kind of the spaces
    region_info: dict[str, dict[str, str]]                   # region id -> name, color
    unverified: dict[Pair, str]                              # sorted pair -> why it is doubtful

    def __init__(self, spaces: tuple[str, ...], index: dict[str, int], attrs: dict[str, dict],
                 region_of: dict[str, str], regions: dict[str, tuple[str, ...]], neighbors: dict[str, tuple[str, ...]],
                 neighbors_by_kind: dict[str, dict[str, tuple[str, ...]]], sets: dict[str, frozenset[str]],
                 layout: dict[str, tuple[float, float]], space_kind: str = "space",
                 region_info: dict[str, dict[str, str]] | None = None,
                 unverified: dict[Pair, str] | None = None) -> None:
        self.__dict__.update(spaces=spaces, index=index, attrs=attrs, region_of=region_of, regions=regions,
                             neighbors=neighbors, neighbors_by_kind=neighbors_by_kind, sets=sets, layout=layout,
                             space_kind=space_kind, region_info={} if region_info is None else region_info,
                             unverified={} if unverified is None else unverified)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def adjacent(self, a: str, b: str, kind: str | None = None) -> bool:
        """Whether `a` and `b` are linked (by a link of `kind`, or of any kind)."""
        table = self.neighbors if kind is None else self.neighbors_by_kind.get(kind)
        if table is None:
            return False
        return b in table.get(a, ())

    def links(self, kind: str | None = None) -> list[Pair]:
        """Every link once, as a sorted pair, in sorted order (of one kind, or of any kind)."""
        tables = [self.neighbors] if kind is None else [self.neighbors_by_kind.get(kind, {})]
        return sorted({(a, b) for t in tables for a, ns in t.items() for b in ns if a < b})

    def graph(self) -> networkx.Graph:
        """A fresh networkx graph of the board, for tools and checks (not for the hot path).

        Nodes carry the static attributes plus `region`; edges carry `kind` (the first kind
        that links the pair), `kinds` (all of them) and `unverified` when the link is doubtful.
        """
        import networkx as nx

        g = nx.Graph()
        for s in self.spaces:
            g.add_node(s, **{**self.attrs[s], "region": self.region_of[s]})
        for kind, table in self.neighbors_by_kind.items():
            for a, ns in table.items():
                for b in ns:
                    if a > b:
                        continue
                    if g.has_edge(a, b):
                        g.edges[a, b]["kinds"] += (kind,)
                    else:
                        g.add_edge(a, b, kind=kind, kinds=(kind,))
                        if (a, b) in self.unverified:
                            g.edges[a, b]["unverified"] = self.unverified[(a, b)]
        return g

    def __repr__(self) -> str:
        kinds = ", ".join(f"{k} {len(self.links(k))}" for k in self.neighbors_by_kind)
        return (f"<Board {len(self.spaces)} {self.space_kind}s, {len(self.regions)} regions, "
                f"{len(self.links())} links ({kinds}), {len(self.sets)} sets>")


def _kind_name(x: Any) -> str:
    """A YAML value's kind in a modder's words (never a Python class name)."""
    if isinstance(x, Mapping):
        return "a mapping"
    if isinstance(x, (list, tuple)):
        return "a list"
    if isinstance(x, bool):
        return "true/false"
    if isinstance(x, (int, float)):
        return f"the number {x}"
    return f"the text `{x}`"


def build_board(section: dict, diags: Diagnostics, file_hint: str = "") -> Board | None:
    """Check a merged `board` section and compile it; None when it has errors.

    Every problem goes to `diags` (warnings do not stop the build). `section` may be made of
    plain dicts or of the located mappings that engine.loading.yamlio loads; with the latter each
    diagnostic points at the offending item, otherwise at `file_hint`.
    """
    return _Builder(section, diags, file_hint).build()


# --------------------------------------------------------------------------- internals

def _locator(file_hint: str) -> Callable[..., Loc]:
    """`loc(container, key_or_index, key=False)`: where an item sits, or Loc(file_hint)."""
    try:  # yamlio is optional here: plain dicts (tests, generated data) carry no positions
        from engine.loading.yamlio import loc_of
    except ImportError:
        loc_of = None
    fallback = Loc(file_hint)

    def loc(container: Any, k: Any, key: bool = False) -> Loc:
        if loc_of is None:
            return fallback
        try:
            found = loc_of(container, k, key=key)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            return fallback
        if not isinstance(found, Loc) or not (found.file or found.line):
            return fallback
        if not found.file and file_hint:
            return Loc(file_hint, found.line, found.col)
        return found

    return loc


def _components(spaces: tuple[str, ...], neighbors: Mapping[str, tuple[str, ...]]) -> list[frozenset[str]]:
    """The connected parts of the map (union-find with path halving), largest first."""
    parent = {s: s for s in spaces}

    def root(s: str) -> str:
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for a, ns in neighbors.items():
        for b in ns:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    parts: dict[str, set[str]] = {}
    for s in spaces:
        parts.setdefault(root(s), set()).add(s)
    return sorted((frozenset(p) for p in parts.values()), key=lambda c: (-len(c), min(c)))


def _quote_hint(value: Any) -> str:
    """Why YAML turned a name into a non-text value, and the fix."""
    if isinstance(value, bool):
        return "YAML reads unquoted yes/no/on/off/true/false as true or false: quote the name"
    if value is None:
        return "the name is missing"
    return f"YAML read this as a {type(value).__name__}: quote the name"


def _shown(names: list[str], limit: int = 5) -> str:
    more = len(names) - limit
    head = ", ".join(names[:limit])
    return f"[{head}, ... +{more} more]" if more > 0 else f"[{head}]"


class _Builder:
    def __init__(self, section: Any, diags: Diagnostics, file_hint: str) -> None:
        self.section = section
        self.diags = diags
        self.file_hint = file_hint
        self.loc = _locator(file_hint)
        self.kind = "space"
        self.known: dict[str, None] = {}  # insertion-ordered set of space ids
        self.attrs: dict[str, dict] = {}
        self.layout: dict[str, tuple[float, float]] = {}

    # -- reporting helpers
    def error(self, code: str, msg: str, loc: Loc, hint: str = "") -> None:
        self.diags.add(code, msg, loc, hint=hint)

    def warn(self, code: str, msg: str, loc: Loc, hint: str = "") -> None:
        self.diags.add(code, msg, loc, hint=hint, severity="warning")

    def check_keys(self, mapping: Mapping, allowed: tuple[str, ...], where: str) -> None:
        for k in mapping:
            if k not in allowed:
                hint = did_you_mean(k, allowed) or "known keys: " + ", ".join(allowed)
                self.warn("G009", f"unknown key `{k}` in {where}; it is ignored",
                          self.loc(mapping, k, key=True), hint)

    def is_space(self, container: Any, i: Any, name: Any, what: str) -> bool:
        """True if `name` is a known space; else report G001 at container[i]."""
        if isinstance(name, str) and name in self.known:
            return True
        hint = did_you_mean(name, self.known) if isinstance(name, str) else _quote_hint(name)
        self.error("G001", f"{what} names an unknown {self.kind} `{name}`", self.loc(container, i), hint)
        return False

    def optional_mapping(self, key: str) -> Mapping:
        value = self.section.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error("G009", f"board.{key} must be a mapping, not {type(value).__name__}",
                       self.loc(self.section, key))
            return {}
        return value

    # -- the build
    def build(self) -> Board | None:
        errors_before = len(self.diags.errors)
        if not isinstance(self.section, Mapping):
            self.error("G009", f"the board section must be a mapping, not {type(self.section).__name__}",
                       Loc(self.file_hint))
            return None
        self.check_keys(self.section, SECTION_KEYS, "the board section")
        self.read_space_kind()
        if not self.read_spaces():
            return None
        region_of, regions, region_info = self.read_regions()
        by_kind, unverified = self.read_links()
        sets = self.read_sets()
        self.read_layout()
        islands = self.read_islands()

        # Ids interned, as the state's are (engine/model/checks.py `interned`): a rule looks a
        # neighbour up in the state's entities, which finds an interned key at once.
        intern = sys.intern
        spaces = tuple(sorted(intern(s) for s in self.known))
        # Links are undirected: every pair is entered in both directions below, so adjacency is
        # symmetric by construction and needs no separate check.
        neighbors_by_kind: dict[str, dict[str, tuple[str, ...]]] = {}
        union: dict[str, set[str]] = {s: set() for s in spaces}
        for kind, pairs in by_kind.items():
            table: dict[str, set[str]] = {s: set() for s in spaces}
            for a, b in pairs:
                a, b = intern(a), intern(b)
                table[a].add(b)
                table[b].add(a)
                union[a].add(b)
                union[b].add(a)
            neighbors_by_kind[kind] = {s: tuple(sorted(ns)) for s, ns in table.items()}
        neighbors = {s: tuple(sorted(ns)) for s, ns in union.items()}
        self.check_connected(spaces, neighbors, islands)

        if len(self.diags.errors) > errors_before:
            return None
        return Board(
            spaces=spaces,
            index={s: i for i, s in enumerate(spaces)},
            attrs={s: self.attrs[s] for s in spaces},
            region_of={s: intern(region_of.get(s, "")) for s in spaces},
            regions={intern(r): tuple(intern(m) for m in ms) for r, ms in regions.items()},
            neighbors=neighbors,
            neighbors_by_kind=neighbors_by_kind,
            sets={k: frozenset(intern(m) for m in ms) for k, ms in sets.items()},
            layout={s: self.layout[s] for s in spaces if s in self.layout},
            space_kind=self.kind,
            region_info=region_info,
            unverified=unverified,
        )

    def read_space_kind(self) -> None:
        if "space_kind" not in self.section:
            return
        value = self.section["space_kind"]
        if isinstance(value, str) and value.strip():
            self.kind = value
        else:
            self.error("G009", "board.space_kind must be a name (the entity kind of the spaces)",
                       self.loc(self.section, "space_kind"))

    def read_spaces(self) -> bool:
        spaces = self.section.get("spaces")
        if not isinstance(spaces, Mapping) or not spaces:
            if isinstance(spaces, Mapping):
                got = "an empty mapping: a board needs at least one space"
            elif spaces is None:
                got = "no `spaces`" if "spaces" not in self.section else "nothing"
            else:
                got = _kind_name(spaces)
            start = getattr(self.section, "loc", None)  # where `board:` is, when `spaces:` is not written
            where = self.loc(self.section, "spaces") if "spaces" in self.section else \
                (start if isinstance(start, Loc) and start.line else Loc(self.file_hint))
            self.error("G009", f"board.spaces must map each {self.kind} id to its attributes; got {got}",
                       where, "e.g. `spaces: {a: {size: 2}, b: {}}`")
            return False
        for sid, value in spaces.items():
            if not isinstance(sid, str) or not sid:
                self.error("G009", f"a {self.kind} id must be text, not {type(sid).__name__} `{sid}`",
                           self.loc(spaces, sid, key=True), _quote_hint(sid))
                continue
            self.known[sid] = None
            if value is None:
                value = {}
            if not isinstance(value, Mapping):
                self.error("G009", f"the attributes of {self.kind} `{sid}` must be a mapping, "
                           f"not {type(value).__name__}", self.loc(spaces, sid))
                value = {}
            attrs = {}
            for k, v in value.items():
                if k == "pos":
                    self.read_pos(value, k, sid)
                elif k in SPACE_META_KEYS:
                    continue
                else:
                    if not isinstance(v, _SCALARS):
                        self.warn("G009", f"attribute `{k}` of {self.kind} `{sid}` should be a single value, "
                                  f"not a {type(v).__name__}", self.loc(value, k))
                    attrs[str(k)] = v
            self.attrs[sid] = attrs
        return bool(self.known)

    def read_pos(self, container: Mapping, k: Any, sid: str) -> None:
        v = container[k]
        ok = (isinstance(v, (list, tuple)) and len(v) == 2
              and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in v))
        if not ok:
            self.error("G009", f"the layout position of `{sid}` must be [x, y] numbers, got `{v}`",
                       self.loc(container, k), "e.g. [420, 615]")
            return
        x, y = float(v[0]), float(v[1])
        lo, hi = LAYOUT_RANGE
        if not (lo <= x <= hi and lo <= y <= hi):
            self.warn("G009", f"the layout position of `{sid}` is outside {lo:g}..{hi:g}",
                      self.loc(container, k))
        self.layout[sid] = (x, y)

    def read_regions(self) -> tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, dict[str, str]]]:
        regions_in = self.optional_mapping("regions")
        region_of: dict[str, str] = {}
        first_seen: dict[str, Loc] = {}
        regions: dict[str, tuple[str, ...]] = {}
        info: dict[str, dict[str, str]] = {}
        for rid, region in regions_in.items():
            if not isinstance(rid, str) or not rid:
                self.error("G009", f"a region id must be text, not {type(rid).__name__} `{rid}`",
                           self.loc(regions_in, rid, key=True))
                continue
            if not isinstance(region, Mapping):
                self.error("G009", f"region `{rid}` must be a mapping with name, color and spaces",
                           self.loc(regions_in, rid), "e.g. `{name: North, color: \"#4c9a2a\", spaces: [a, b]}`")
                continue
            self.check_keys(region, REGION_KEYS, f"region `{rid}`")
            name = region.get("name", rid)
            if not isinstance(name, str):
                self.warn("G009", f"the name of region `{rid}` should be text", self.loc(region, "name"))
                name = str(name)
            color = region.get("color", "")
            if "color" in region and not (isinstance(color, str) and _COLOR.fullmatch(color)):
                hint = ("an unquoted # starts a YAML comment: write color: \"#4c9a2a\"" if color is None
                        else "write it as \"#rrggbb\", e.g. \"#4c9a2a\"")
                self.warn("G008", f"the colour of region `{rid}` is not #rrggbb: `{color}`",
                          self.loc(region, "color"), hint)
                color = ""
            info[rid] = {"name": name, "color": color}
            members_in = region.get("spaces")
            if not isinstance(members_in, list):
                self.error("G009", f"region `{rid}` needs `spaces:`, a list of {self.kind} ids",
                           self.loc(region, "spaces") if "spaces" in region else self.loc(regions_in, rid))
                members_in = []
            members: list[str] = []
            for i, sid in enumerate(members_in):
                if not self.is_space(members_in, i, sid, f"region `{rid}`"):
                    continue
                here = self.loc(members_in, i)
                if sid in region_of:
                    other = region_of[sid]
                    if other == rid:
                        self.warn("G005", f"{self.kind} `{sid}` is listed twice in region `{rid}`", here,
                                  f"first listed at {first_seen[sid]}")
                    else:
                        self.error("G005", f"{self.kind} `{sid}` is in two regions: `{other}` and `{rid}`",
                                   here, f"first listed in `{other}` at {first_seen[sid]}")
                    continue
                region_of[sid] = rid
                first_seen[sid] = here
                members.append(sid)
            regions[rid] = tuple(sorted(members))
        if regions_in:
            spaces = self.section["spaces"]
            for sid in self.known:
                if sid not in region_of:
                    self.error("G004", f"{self.kind} `{sid}` is in no region", self.loc(spaces, sid, key=True),
                               "add it to the `spaces:` list of one region")
        return region_of, regions, info

    def read_links(self) -> tuple[dict[str, list[Pair]], dict[Pair, str]]:
        links_in = self.optional_mapping("links")
        by_kind: dict[str, list[Pair]] = {}
        seen: dict[Pair, dict[str, Loc]] = {}
        unverified: dict[Pair, str] = {}
        for kind, items in links_in.items():
            if not isinstance(kind, str) or not kind:
                self.error("G009", f"a link kind must be a name, not {type(kind).__name__} `{kind}`",
                           self.loc(links_in, kind, key=True))
                continue
            by_kind[kind] = []
            if items is None:
                continue
            if not isinstance(items, list):
                self.error("G009", f"links.{kind} must be a list of links", self.loc(links_in, kind),
                           "e.g. `- [a, b]` or `- {between: [a, b], unverified: \"why\"}`")
                continue
            for j, item in enumerate(items):
                here = self.loc(items, j)
                parsed = self.parse_link(kind, items, j, item)
                if parsed is None:
                    continue
                pair_container, a, b, reason = parsed
                known_a = self.is_space(pair_container, 0, a, f"a {kind} link")
                known_b = self.is_space(pair_container, 1, b, f"a {kind} link")  # report both names
                if not (known_a and known_b):
                    continue
                if a == b:
                    self.error("G002", f"a {kind} link joins `{a}` to itself", here)
                    continue
                key = (a, b) if a < b else (b, a)
                earlier = seen.setdefault(key, {})  # kind -> where the pair was first listed
                if kind in earlier:
                    self.error("G003", f"the {kind} link {a}-{b} is listed twice", here,
                               f"first listed at {earlier[kind]}; links are undirected, list each pair once")
                    continue
                if earlier:
                    other, first_loc = next(iter(earlier.items()))
                    self.warn("G003", f"{a}-{b} is linked both as {other} and as {kind}", here,
                              f"first listed at {first_loc}")
                earlier[kind] = here
                if reason:
                    unverified[key] = f"{unverified[key]}; {reason}" if key in unverified else reason
                by_kind[kind].append((a, b))
        return by_kind, unverified

    def parse_link(self, kind: str, items: list, j: int, item: Any) -> tuple[Any, Any, Any, str] | None:
        """(container of the pair, a, b, unverified reason), or None after reporting G007."""
        here = self.loc(items, j)
        shape = "a link is [a, b] or {between: [a, b], unverified: \"why\", notes: \"...\"}"
        reason = ""
        pair = item
        if isinstance(item, Mapping):
            unknown = [k for k in item if k not in LINK_KEYS]
            if unknown:
                k = unknown[0]
                self.error("G007", f"unknown key `{k}` in a {kind} link", self.loc(item, k, key=True),
                           did_you_mean(k, LINK_KEYS) or shape)
                return None
            if "between" not in item:
                self.error("G007", f"a {kind} link given as a mapping needs `between: [a, b]`", here, shape)
                return None
            pair = item["between"]
            here = self.loc(item, "between")
            r = item.get("unverified")
            if "unverified" in item and not (isinstance(r, str) and r.strip()):
                self.error("G007", f"`unverified` of a {kind} link must say why, as text",
                           self.loc(item, "unverified"), "e.g. unverified: \"not seen on a board image\"")
                return None
            reason = r or ""
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            got = f"{len(pair)} items" if isinstance(pair, list) else f"`{pair}`"
            self.error("G007", f"a {kind} link must be a pair of two {self.kind} ids, got {got}", here, shape)
            return None
        return pair, pair[0], pair[1], reason

    def read_sets(self) -> dict[str, frozenset[str]]:
        sets_in = self.optional_mapping("sets")
        sets: dict[str, frozenset[str]] = {}
        for name, members in sets_in.items():
            if not isinstance(name, str) or not name:
                self.error("G009", f"a set name must be text, not {type(name).__name__} `{name}`",
                           self.loc(sets_in, name, key=True))
                continue
            if members is None:
                members = []
            if not isinstance(members, list):
                self.error("G009", f"set `{name}` must be a list of {self.kind} ids", self.loc(sets_in, name))
                continue
            sets[name] = frozenset(sid for i, sid in enumerate(members)
                                   if self.is_space(members, i, sid, f"set `{name}`"))
        return sets

    def read_layout(self) -> None:
        layout_in = self.optional_mapping("layout")
        for sid in layout_in:
            if not isinstance(sid, str) or sid not in self.known:
                hint = did_you_mean(sid, self.known) if isinstance(sid, str) else _quote_hint(sid)
                self.error("G001", f"the layout names an unknown {self.kind} `{sid}`",
                           self.loc(layout_in, sid, key=True), hint)
                continue
            self.read_pos(layout_in, sid, sid)  # the board's layout wins over a space's own `pos`

    def read_islands(self) -> list[frozenset[str]]:
        value = self.section.get("islands")
        if value is None:
            return []
        if not isinstance(value, list):
            self.error("G009", "board.islands must be a list of groups, each a list of ids",
                       self.loc(self.section, "islands"), "e.g. `islands: [[a], [b, c]]`")
            return []
        groups = []
        for i, group in enumerate(value):
            if not isinstance(group, list):
                self.error("G009", "each group under board.islands must be a list of ids", self.loc(value, i))
                continue
            groups.append(frozenset(sid for j, sid in enumerate(group)
                                    if self.is_space(group, j, sid, "an island group")))
        return groups

    def check_connected(self, spaces: tuple[str, ...], neighbors: dict[str, tuple[str, ...]],
                        islands: list[frozenset[str]]) -> None:
        components = _components(spaces, neighbors)
        if len(components) < 2:
            return
        # A component that lies inside a declared island group may stand apart from the rest.
        loose = [c for c in components if not any(c <= group for group in islands)]
        if len(loose) < 2:
            return
        loose.sort(key=lambda c: (len(c), min(c)))
        parts = "; ".join(_shown(sorted(c)) for c in loose)
        smallest = min(loose[0])
        self.error("G006", f"the map is not connected: {len(loose)} separate parts: {parts}",
                   self.loc(self.section.get("spaces", {}), smallest, key=True),
                   "link the parts, or declare a part that may stand apart under `board.islands: [[...]]`")
