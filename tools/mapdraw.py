"""`daimyo map`: draw a ruleset's board as SVG, from the data alone.

    daimyo map shogun --option side=moon --players 3 --out moon.svg
    daimyo map --board rulesets/shogun/provinces.yaml --board rulesets/shogun/board-sun.yaml --out sun.svg
    daimyo map --state game.json --out game.svg      # a saved game's pieces on its board

Spaces are labelled boxes filled with their region's colour (`regions.<id>.color`, else a
palette colour); land links are solid lines, every other link kind is dashed (one colour
per kind); a link with `unverified:` carries a red `?` whose tooltip says why; the spaces of
a named set (by default `removed_with_<N>_players` for --players N) are greyed out.
Positions come from the board's `layout` hints when every space has one; otherwise from a
seeded networkx layout (spring, or Kamada-Kawai when scipy is installed and asked for),
with the hinted spaces pinned. Boxes are then pushed apart until no two overlap, so names
stay readable. The SVG is written by this module (no graphviz); `--png` also renders it
with cairosvg when that is installed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from engine.base.console import EPILOG, parse_options, report
from engine.base.diagnostics import Diagnostics, Loc, did_you_mean
from engine.base.files import write_atomic
from engine.model.board import Board, build_board
from engine.model.layout import compute_layout, region_colors, separate

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
NAME_SIZE = 13
SMALL_SIZE = 10
CHAR_W = 0.62            # average glyph width / font size for DejaVu Sans (a safe over-estimate for Arial)
BOX_H = 22
LINE_H = 13
MAP_PX_PER_SQRT = 180    # the map area's longer side is 180 * sqrt(spaces) px (before de-overlap)...
MAP_MIN, MAP_MAX = 480, 1400  # ...within these bounds
LEGEND_W = 270
MARGIN = 30
SEA = "#eaf2f8"
LAND_LINK = "#4a4a4a"
KIND_COLORS = ["#1f5fbf", "#8e44ad", "#16a085", "#d35400", "#7f8c8d"]
PLAYER_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2",
                 "#111111", "#bcbd22"]
GREY_FILL = "#d6d6d6"
GREY_TEXT = "#8a8a8a"


# --------------------------------------------------------------------------- input

def board_from_files(paths: list[str], diags: Diagnostics) -> Board | None:
    """Merge the `board` sections of some data files (as a package would) and compile them."""
    from engine.loading.yamlio import load_yaml
    merged: dict[str, Any] = {}
    for path in paths:
        data = load_yaml(Path(path), diags, display_name=path)
        if data is None:
            continue
        section = data.get("board") if isinstance(data, Mapping) else None
        if not isinstance(section, Mapping):
            diags.add("E100", f"`{path}` has no `board:` section", Loc(path, 1, 1))
            continue
        for key, value in section.items():
            if key not in merged:
                merged[key] = value
            elif isinstance(merged[key], Mapping) and isinstance(value, Mapping):
                if key == "links":
                    links = dict(merged[key])
                    for kind, items in value.items():
                        links[kind] = list(links.get(kind) or []) + list(items or [])
                    merged[key] = links
                else:
                    clash = sorted(set(merged[key]) & set(value))
                    if clash:
                        diags.add("E100", f"`{path}` redefines board.{key} entries {', '.join(map(str, clash[:5]))}",
                                  Loc(path, 1, 1))
                    merged[key] = {**merged[key], **value}
            else:
                diags.add("E100", f"`{path}` redefines board.{key}", Loc(path, 1, 1))
    if diags.errors or not merged:
        if not merged and not diags.errors:
            diags.add("E100", "no board sections found", Loc(paths[0] if paths else ""))
        return None
    return build_board(merged, diags, paths[0])


@dataclass
class MapState:
    """What a saved game puts on the board: per space its owner (a player id) and the fields to show."""

    players: list[str]
    owner: dict[str, str] = field(default_factory=dict)
    fields: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


def state_from_save(save: dict, board: Board, owner_field: str = "owner", only: list[str] | None = None) -> MapState:
    """Per space of `board`: the owner (field `owner_field`) and every other field whose value is
    not empty: numbers other than 0, true flags, non-empty lists and maps, text other than none."""
    state = save["state"]
    players = list(state["players"])
    ms = MapState(players)
    for sid in board.spaces:
        ent = state["ent"].get(sid)
        if not isinstance(ent, Mapping):
            continue
        owner = ent.get(owner_field)
        if isinstance(owner, str) and owner in players:
            ms.owner[sid] = owner
        shown = []
        for k, v in ent.items():
            if k == owner_field or (only is not None and k not in only):
                continue
            if _shows(v):
                shown.append((k, v))
        if shown:
            ms.fields[sid] = shown
    return ms


def _shows(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, str):
        return v not in ("", "none")
    if isinstance(v, (list, dict)):
        return len(v) > 0
    return False


def _field_text(k: str, v: Any) -> str:
    if isinstance(v, bool):
        return k
    if isinstance(v, (int, float)):
        return f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
    if isinstance(v, list):
        if all(isinstance(x, (str, int)) for x in v) and len(v) <= 3:
            return f"{k}: {', '.join(map(str, v))}"
        return f"{k} x{len(v)}"
    if isinstance(v, dict):
        if all(isinstance(x, int) for x in v.values()):
            return f"{k}: " + ", ".join(f"{a} {b}" for a, b in list(v.items())[:3] if b)
        return f"{k} x{len(v)}"
    return f"{k}: {v}"


def _text_w(text: str, size: float) -> float:
    return len(text) * size * CHAR_W


# --------------------------------------------------------------------------- drawing

@dataclass
class MapStyle:
    title: str = ""
    grey: frozenset[str] = frozenset()
    grey_label: str = ""
    attrs: tuple[str, ...] = ()          # static attributes printed under the name (e.g. tax, rice)
    state: MapState | None = None
    player_names: dict[str, str] = field(default_factory=dict)


def _luminance(hex_color: str) -> float:
    r, g, b = (int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _darker(hex_color: str, f: float = 0.6) -> str:
    r, g, b = (int(int(hex_color[i:i + 2], 16) * f) for i in (1, 3, 5))
    return f"#{r:02x}{g:02x}{b:02x}"


def render_svg(board: Board, positions: dict[str, tuple[float, float]], style: MapStyle | None = None) -> str:
    """The board as an SVG document (text)."""
    style = style or MapStyle()
    colors = region_colors(board)
    # ---- box sizes and their lines of text
    lines: dict[str, list[str]] = {}
    sizes: dict[str, tuple[float, float]] = {}
    for s in board.spaces:
        extra = []
        if style.attrs:
            vals = [f"{a} {board.attrs[s][a]}" for a in style.attrs if a in board.attrs[s]]
            if vals:
                extra.append(" · ".join(vals))
        if style.state and s in style.state.fields:
            extra += [_field_text(k, v) for k, v in style.state.fields[s]]
        lines[s] = extra
        w = max([_text_w(s, NAME_SIZE)] + [_text_w(t, SMALL_SIZE) for t in extra]) + 14
        sizes[s] = (w, BOX_H + LINE_H * len(extra))
    # ---- scale the layout to the map area, then push boxes apart
    xs = [p[0] for p in positions.values()]
    ys = [p[1] for p in positions.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    scale = min(MAP_MAX, max(MAP_MIN, MAP_PX_PER_SQRT * math.sqrt(len(board.spaces)))) / span
    centers = {s: [(positions[s][0] - min(xs)) * scale, (positions[s][1] - min(ys)) * scale] for s in board.spaces}
    separate(centers, sizes)
    left = min(c[0] - sizes[s][0] / 2 for s, c in centers.items())
    top = min(c[1] - sizes[s][1] / 2 for s, c in centers.items())
    head = 56 if style.title else MARGIN
    for c in centers.values():
        c[0] += MARGIN - left
        c[1] += head - top
    map_w = max(c[0] + sizes[s][0] / 2 for s, c in centers.items()) + MARGIN
    map_h = max(c[1] + sizes[s][1] / 2 for s, c in centers.items()) + MARGIN
    legend, legend_h = _legend(board, colors, style, map_w + 10)
    width = map_w + LEGEND_W
    height = max(map_h, legend_h + 40)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}">',
           f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="{SEA}"/>']
    if style.title:
        out.append(f'<text x="{MARGIN}" y="34" font-size="22" font-weight="bold" fill="#222">'
                   f'{escape(style.title)}</text>')
    # ---- links (under the boxes)
    kinds = list(board.neighbors_by_kind)
    kind_color = _kind_colors(kinds)
    out.append('<g id="links" fill="none">')
    for kind in kinds:
        for a, b in board.links(kind):
            (x1, y1), (x2, y2) = centers[a], centers[b]
            faded = a in style.grey or b in style.grey
            dash = "" if kind == "land" else ' stroke-dasharray="7 5"'
            width_px = 2.0 if kind == "land" else 1.8
            opacity = ' stroke-opacity="0.35"' if faded else ""
            why = board.unverified.get((a, b) if a < b else (b, a))
            tip = f"{kind} link {a} - {b}" + (f" (unverified: {why})" if why else "")
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{kind_color[kind]}" '
                       f'stroke-width="{width_px}"{dash}{opacity} class="link {escape(kind)}">'
                       f'<title>{escape(tip)}</title></line>')
    out.append("</g>")
    # ---- spaces
    out.append('<g id="spaces">')
    state = style.state
    pcolors = {p: PLAYER_COLORS[i % len(PLAYER_COLORS)] for i, p in enumerate(state.players)} if state else {}
    for s in board.spaces:
        cx, cy = centers[s]
        w, h = sizes[s]
        region = board.region_of.get(s, "")
        fill = colors.get(region, "#f4f1de")
        grey = s in style.grey
        if grey:
            fill = GREY_FILL
        stroke, stroke_w, dash = _darker(fill), 1.2, ""
        if grey:
            stroke, dash = "#9a9a9a", ' stroke-dasharray="4 3"'
        owner = state.owner.get(s) if state else None
        if owner:
            stroke, stroke_w = pcolors[owner], 4.0
        text_fill = GREY_TEXT if grey else ("#111" if _luminance(fill) > 0.45 else "#fff")
        tip = [s]
        if region:
            tip.append(f"region {board.region_info.get(region, {}).get('name', region)}")
        tip += [f"{k} {v}" for k, v in board.attrs[s].items()]
        if grey:
            tip.append(style.grey_label or "greyed")
        if owner:
            tip.append(f"owner {style.player_names.get(owner, owner)}")
        out.append(f'<g class="space" id="space-{_xml_id(s)}"><title>{escape(", ".join(map(str, tip)))}</title>')
        out.append(f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" '
                   f'fill="{fill}" stroke="{stroke}" stroke-width="{stroke_w}"{dash}/>')
        ty = cy - h / 2 + 15.5
        out.append(f'<text x="{cx:.1f}" y="{ty:.1f}" font-size="{NAME_SIZE}" text-anchor="middle" '
                   f'font-weight="bold" fill="{text_fill}">{escape(s)}</text>')
        for i, t in enumerate(lines[s]):
            out.append(f'<text x="{cx:.1f}" y="{ty + LINE_H * (i + 1):.1f}" font-size="{SMALL_SIZE}" '
                       f'text-anchor="middle" fill="{text_fill}">{escape(t)}</text>')
        if owner:
            bx, by = cx + w / 2 - 2, cy - h / 2 + 2
            out.append(f'<circle cx="{bx:.1f}" cy="{by:.1f}" r="8" fill="{pcolors[owner]}" stroke="#fff"/>')
            out.append(f'<text x="{bx:.1f}" y="{by + 3.5:.1f}" font-size="9" text-anchor="middle" fill="#fff" '
                       f'font-weight="bold">{escape(owner[-2:] if len(owner) > 2 else owner)}</text>')
        out.append("</g>")
    out.append("</g>")
    # ---- unverified markers (over everything)
    if board.unverified:
        out.append('<g id="unverified">')
        for (a, b), why in sorted(board.unverified.items()):
            (x1, y1), (x2, y2) = centers[a], centers[b]
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2
            out.append(f'<g class="unverified"><title>{escape(f"unverified link {a} - {b}: {why}")}</title>'
                       f'<circle cx="{mx:.1f}" cy="{my:.1f}" r="8" fill="#fff" stroke="#c0392b" stroke-width="1.5"/>'
                       f'<text x="{mx:.1f}" y="{my + 4:.1f}" font-size="11" font-weight="bold" text-anchor="middle" '
                       f'fill="#c0392b">?</text></g>')
        out.append("</g>")
    out += legend
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _kind_colors(kinds: list[str]) -> dict[str, str]:
    out, i = {}, 0
    for k in kinds:
        if k == "land":
            out[k] = LAND_LINK
        else:
            out[k] = KIND_COLORS[i % len(KIND_COLORS)]
            i += 1
    return out


def _xml_id(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


def _legend(board: Board, colors: dict[str, str], style: MapStyle, x: float) -> tuple[list[str], float]:
    out = ['<g id="legend">']
    y = 40.0

    def head(text: str) -> None:
        nonlocal y
        y += 14
        out.append(f'<text x="{x:.0f}" y="{y:.0f}" font-size="14" font-weight="bold" fill="#222">{escape(text)}</text>')
        y += 6

    def item(swatch: str, text: str) -> None:
        # `swatch` is drawn in a 26 x 12 box whose left edge is at 0 and whose middle is at 0.
        nonlocal y
        y += 18
        out.append(f'<g transform="translate({x:.0f},{y:.0f})">{swatch}</g>')
        out.append(f'<text x="{x + 34:.0f}" y="{y + 4:.0f}" font-size="12" fill="#222">{escape(text)}</text>')

    def box(fill: str, stroke: str, extra: str = "") -> str:
        return f'<rect x="0" y="-6" width="26" height="12" rx="3" fill="{fill}" stroke="{stroke}"{extra}/>'

    if board.regions:
        head("Regions")
        for rid in sorted(board.regions):
            name = board.region_info.get(rid, {}).get("name", rid)
            item(box(colors[rid], _darker(colors[rid])), f"{name} ({len(board.regions[rid])})")
        y += 10
    kinds = list(board.neighbors_by_kind)
    kc = _kind_colors(kinds)
    head("Links")
    for k in kinds:
        dash = "" if k == "land" else ' stroke-dasharray="7 5"'
        item(f'<line x1="0" y1="0" x2="26" y2="0" stroke="{kc[k]}" stroke-width="2"{dash}/>',
             f"{k} ({len(board.links(k))})")
    if board.unverified:
        item('<circle cx="13" cy="0" r="7" fill="#fff" stroke="#c0392b"/><text x="13" y="4" font-size="10" '
             'font-weight="bold" text-anchor="middle" fill="#c0392b">?</text>',
             f"unverified link ({len(board.unverified)})")
    if style.grey:
        y += 10
        head("Greyed")
        item(box(GREY_FILL, "#9a9a9a", ' stroke-dasharray="4 3"'), f"{style.grey_label} ({len(style.grey)})")
    if style.state:
        y += 10
        head("Players")
        for i, p in enumerate(style.state.players):
            c = PLAYER_COLORS[i % len(PLAYER_COLORS)]
            n = sum(1 for o in style.state.owner.values() if o == p)
            item(box("none", c, ' stroke-width="3"'), f"{style.player_names.get(p, p)}: {n} spaces")
    out.append("</g>")
    return out, y


# --------------------------------------------------------------------------- command line

def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "map", help="draw a ruleset's board as SVG (optionally with a saved game on it)", epilog=EPILOG,
        description="Draw the board of COMBO (or of --board files, or of a --state save) as an SVG file: regions "
        "coloured, land links solid, other link kinds dashed, unverified links marked, spaces removed for the "
        "player count greyed. See docs/maps.md.")
    p.add_argument("combo", metavar="COMBO", nargs="?", default=None)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="e.g. side=moon")
    p.add_argument("--players", type=int, default=None,
                   help="player count: loads the files for it and greys the set removed_with_<N>_players if any")
    p.add_argument("--board", action="append", default=[], metavar="FILE",
                   help="draw the board sections of these data files instead of a COMBO (repeat the flag)")
    p.add_argument("--out", "-o", default=None, metavar="FILE.svg", help="output file (default: stdout)")
    p.add_argument("--png", default=None, metavar="FILE.png", help="also render a PNG (needs cairosvg)")
    p.add_argument("--grey-set", default=None, metavar="NAME",
                   help="grey the spaces of this board set (default: removed_with_<N>_players for --players N)")
    p.add_argument("--no-grey", action="store_true", help="grey nothing")
    p.add_argument("--layout", choices=["auto", "hints", "spring", "kamada-kawai"], default="auto",
                   help="auto: the board's layout hints if complete, else a seeded spring layout (default)")
    p.add_argument("--seed", type=int, default=1, help="seed of the automatic layout")
    p.add_argument("--attrs", default="", metavar="A,B", help="static space attributes to print, e.g. tax,rice")
    p.add_argument("--state", default=None, metavar="SAVE", help="draw the pieces of a saved game (daimyo play --save)")
    p.add_argument("--fields", default=None, metavar="F,G", help="with --state: only these space fields")
    p.add_argument("--title", default=None, help="title (default: the ruleset and its options)")
    p.set_defaults(func=cmd_map)


def cmd_map(args: argparse.Namespace) -> int:
    diags = Diagnostics()
    save = None
    players = args.players
    player_names: dict[str, str] = {}
    owner_field = "owner"
    title = args.title
    if args.state:
        try:
            with open(args.state, encoding="utf-8") as fh:
                save = json.load(fh)
            save["state"]["ent"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"daimyo: cannot read the save `{args.state}`: {e}", file=sys.stderr)
            return 1
        players = int(save.get("players") or len(save["state"]["players"]))
    if args.board:
        if args.combo:
            print("daimyo: error: give either COMBO or --board files, not both", file=sys.stderr)
            return 2
        board = board_from_files(args.board, diags)
        if title is None:
            title = " + ".join(Path(b).stem for b in args.board)
    else:
        from engine.model import build
        combo = args.combo or (save or {}).get("ruleset")
        if not combo:
            print("daimyo: error: name a COMBO, --board files or a --state save", file=sys.stderr)
            return 2
        options = dict((save or {}).get("options") or {}) if args.combo is None else {}
        options.update(parse_options(args.option))
        model = build(combo, options, players, diags)
        board = model.board if model is not None else None
        if model is not None:
            if board is None:
                print(f"daimyo: `{combo}` has no board to draw", file=sys.stderr)
                return 1
            kind = model.kinds.get(board.space_kind)
            owner_field = (kind.owner if kind and kind.owner else "owner")
            names = model.player_names
            player_names = {f"P{i + 1}": (f"P{i + 1} {names[i]}" if i < len(names) else f"P{i + 1}")
                            for i in range(players or 0)}
            if title is None:
                opts = ", ".join(f"{k}={v}" for k, v in model.combo.options.items())
                title = f"{model.name}{f' ({opts})' if opts else ''}"
    if board is None or diags.errors:
        report(diags)
        return 1
    grey: frozenset[str] = frozenset()
    grey_label = ""
    if not args.no_grey:
        name = args.grey_set or (f"removed_with_{players}_players" if players else None)
        if args.grey_set and name not in board.sets:
            hint = did_you_mean(name, board.sets) or f"sets: {', '.join(sorted(board.sets)) or 'none'}"
            print(f"daimyo: error: the board has no set `{name}` ({hint})", file=sys.stderr)
            return 1
        if name and name in board.sets:
            grey = board.sets[name]
            grey_label = name.replace("_", " ")
    if title and players:
        title += f", {players} players"
    try:
        positions = compute_layout(board, args.layout, args.seed)
    except ValueError as e:
        print(f"daimyo: {e}", file=sys.stderr)
        return 1
    state = None
    if save is not None:
        only = [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None
        state = state_from_save(save, board, owner_field, only)
    style = MapStyle(title or "", grey, grey_label, tuple(a.strip() for a in args.attrs.split(",") if a.strip()),
                     state, player_names)
    svg = render_svg(board, positions, style)
    if args.out:
        write_atomic(args.out, svg)
    else:
        sys.stdout.write(svg)
    if args.png:
        try:
            svg_to_png(svg, args.png)
        except RuntimeError as e:
            print(f"daimyo: {e}", file=sys.stderr)
            return 1
    if args.out:
        also = f" and {args.png}" if args.png else ""
        greyed = f", {len(grey)} greyed" if grey else ""
        print(f"wrote {args.out}{also}: {len(board.spaces)} spaces ({board.space_kind}), {len(board.links())} links"
              f"{greyed}", file=sys.stderr)
    return 0


def svg_to_png(svg: str, path: str, scale: float = 1.0) -> None:
    """Render SVG text to a PNG file with cairosvg (an optional dependency)."""
    try:
        import cairosvg
    except (ImportError, OSError) as e:  # OSError: the cairo library itself is missing
        raise RuntimeError(f"--png needs cairosvg and the cairo library: pip install cairosvg ({e})") from e
    cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=path, scale=scale)
