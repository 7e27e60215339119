"""Board layout: where each space of a board goes on a page, from the board's data alone.

Positions come from the board's `layout` hints when every space has one; otherwise from a
seeded networkx layout with the hinted spaces pinned. `separate` pushes labelled boxes apart
so names stay readable. Used by the map drawer (tools/mapdraw.py) and the web board
(engine/cli/web): both draw any ruleset's board the same way.
"""
from __future__ import annotations

import math
from typing import Any

from engine.model.board import Board

REGION_PALETTE = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                  "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"]


def compute_layout(board: Board, method: str = "auto", seed: int = 1) -> dict[str, tuple[float, float]]:
    """Positions in 0..1000 (x east, y south). `auto`: the board's hints when every space has
    one, else a seeded spring layout with the hinted spaces pinned. `hints` requires complete
    hints; `spring` and `kamada-kawai` ignore them."""
    hints = board.layout
    complete = all(s in hints for s in board.spaces)
    if method == "hints" or (method == "auto" and complete):
        if not complete:
            missing = [s for s in board.spaces if s not in hints]
            raise ValueError(f"--layout hints: {len(missing)} space(s) have no layout hint, e.g. {missing[0]}")
        return {s: hints[s] for s in board.spaces}
    import networkx as nx
    g = board.graph()
    pinned = {s: hints[s] for s in board.spaces if s in hints} if method == "auto" else {}
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    if pinned or len(comps) == 1:
        comps = [list(board.spaces)]
    pos: dict[str, tuple[float, float]] = {}
    # Components side by side, each in a square proportional to sqrt(size).
    sizes = [math.sqrt(len(c)) for c in comps]
    total = sum(sizes)
    x0 = 0.0
    for comp, size in zip(comps, sizes, strict=True):
        sub = g.subgraph(comp)
        part = _layout_component(sub, method, seed, pinned)
        w = 1000.0 * size / total
        for s, (x, y) in part.items():
            pos[s] = (x0 + x * w / 1000.0, 500 - w / 2 + y * w / 1000.0) if len(comps) > 1 else (x, y)
        x0 += w
    return pos


def _layout_component(g: Any, method: str, seed: int, pinned: dict[str, tuple[float, float]]) -> dict:
    import networkx as nx
    try:
        import numpy  # noqa: F401 - networkx's layouts need it; say so in one line, not a traceback
    except ImportError:
        raise ValueError("the automatic layout needs numpy (pip install numpy); "
                         "or give every space a layout hint") from None
    n = g.number_of_nodes()
    if n == 1:
        return {next(iter(g.nodes)): (500.0, 500.0)}
    if method == "kamada-kawai":
        try:
            raw = nx.kamada_kawai_layout(g)
        except ImportError as e:  # networkx needs scipy for it
            raise ValueError("--layout kamada-kawai needs scipy (pip install scipy); use --layout spring") from e
    elif pinned:
        init = {s: ((x - 500) / 500, (y - 500) / 500) for s, (x, y) in pinned.items()}
        import random
        rng = random.Random(seed)
        for s in g.nodes:
            init.setdefault(s, (rng.uniform(-1, 1), rng.uniform(-1, 1)))
        raw = nx.spring_layout(g, pos=init, fixed=[s for s in pinned if s in g], seed=seed, iterations=200)
        return {s: (float(raw[s][0]) * 500 + 500, float(raw[s][1]) * 500 + 500) if s not in pinned else pinned[s]
                for s in g.nodes}
    else:
        raw = nx.spring_layout(g, seed=seed, iterations=300, k=1.6 / math.sqrt(n))
    xs = [float(p[0]) for p in raw.values()]
    ys = [float(p[1]) for p in raw.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    return {s: (50 + 900 * (float(p[0]) - min(xs)) / span, 50 + 900 * (float(p[1]) - min(ys)) / span)
            for s, p in raw.items()}


def separate(centers: dict[str, list[float]], sizes: dict[str, tuple[float, float]], gap: float = 6.0,
             rounds: int = 400) -> None:
    """Push boxes apart (in place) until no two overlap: each overlapping pair moves apart along
    the axis where they overlap least, half each, so the map keeps its shape."""
    ids = sorted(centers)
    for _ in range(rounds):
        moved = False
        for i, a in enumerate(ids):
            ax, ay = centers[a]
            aw, ah = sizes[a]
            for b in ids[i + 1:]:
                bx, by = centers[b]
                bw, bh = sizes[b]
                ox = (aw + bw) / 2 + gap - abs(ax - bx)
                oy = (ah + bh) / 2 + gap - abs(ay - by)
                if ox <= 0 or oy <= 0:
                    continue
                moved = True
                if ox < oy:
                    d = (ox / 2 + 0.5) * (1 if ax >= bx else -1)
                    if ax == bx:
                        d = ox / 2 + 0.5 if a < b else -(ox / 2 + 0.5)
                    centers[a][0] += d
                    centers[b][0] -= d
                else:
                    d = (oy / 2 + 0.5) * (1 if ay >= by else -1)
                    if ay == by:
                        d = oy / 2 + 0.5 if a < b else -(oy / 2 + 0.5)
                    centers[a][1] += d
                    centers[b][1] -= d
                ax, ay = centers[a]
        if not moved:
            return


def region_colors(board: Board) -> dict[str, str]:
    out = {}
    for i, rid in enumerate(sorted(board.regions)):
        color = board.region_info.get(rid, {}).get("color", "")
        out[rid] = color or REGION_PALETTE[i % len(REGION_PALETTE)]
    return out
