"""`daimyo map`: the bundled boards drawn with every name readable, greyed 3-player removals,
link styles, unverified links, automatic layout for a modder's map, and a saved game's pieces."""
from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.base.diagnostics import Diagnostics
from engine.cli import main
from engine.model import load
from engine.run.game import Game
from tools.mapdraw import board_from_files, compute_layout, separate

ROOT = Path(__file__).resolve().parent.parent
RULESETS = ROOT / "rulesets"
SVG = "{http://www.w3.org/2000/svg}"

BOARDS = {  # name -> (board files, players whose removal set is greyed, expected greyed count)
    "shogun-sun": (["shogun/provinces.yaml", "shogun/board-sun.yaml"], 3, 8),
    "shogun-moon": (["shogun/provinces.yaml", "shogun/board-moon.yaml"], 3, 8),
    "samurai-swords": (["samurai-swords/board.yaml"], None, 0),
}


def draw(tmp_path: Path, name: str) -> tuple[Path, ET.Element]:
    files, players, _ = BOARDS[name]
    out = tmp_path / f"{name}.svg"
    args = ["map", *[a for f in files for a in ("--board", str(RULESETS / f))], "--out", str(out)]
    if players:
        args += ["--players", str(players)]
    assert main(args) == 0
    return out, ET.parse(out).getroot()


def texts(root: ET.Element) -> set[str]:
    return {"".join(t.itertext()) for t in root.iter(f"{SVG}text")}


@pytest.mark.parametrize("name", list(BOARDS))
def test_every_province_name_is_written_on_the_board(name, tmp_path):
    files, _, greyed = BOARDS[name]
    board = board_from_files([str(RULESETS / f) for f in files], Diagnostics())
    _, root = draw(tmp_path, name)
    assert set(board.spaces) <= texts(root)
    lines = list(root.iter(f"{SVG}line"))
    land = [ln for ln in lines if "land" in ln.get("class", "").split()]
    other = [ln for ln in lines if "link" in ln.get("class", "").split() and ln not in land]
    assert len(land) == len(board.links("land")) and all(ln.get("stroke-dasharray") is None for ln in land)
    assert other and all(ln.get("stroke-dasharray") for ln in other)  # sea routes dashed
    assert len([g for g in root.iter(f"{SVG}g") if g.get("class") == "unverified"]) == len(board.unverified)
    grey = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#d6d6d6" and r.get("height") != "12"]
    assert len(grey) == greyed


@pytest.mark.parametrize("name", list(BOARDS))
def test_the_board_renders_to_png(name, tmp_path):
    try:
        import cairosvg
    except (ImportError, OSError) as e:  # OSError: the cairo library is missing
        pytest.skip(f"the PNG check needs cairosvg and libcairo2 ({e})")
    path, root = draw(tmp_path, name)
    png = cairosvg.svg2png(url=str(path))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width == round(float(root.get("width")))


def test_boxes_never_overlap_after_separation():
    board = board_from_files([str(RULESETS / "samurai-swords/board.yaml")], Diagnostics())
    pos = compute_layout(board)
    centers = {s: [x * 1.3, y * 1.3] for s, (x, y) in pos.items()}
    sizes = {s: (len(s) * 8.0 + 14, 22.0) for s in board.spaces}
    separate(centers, sizes, gap=4)
    ids = sorted(centers)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            overlap_x = (sizes[a][0] + sizes[b][0]) / 2 - abs(centers[a][0] - centers[b][0])
            overlap_y = (sizes[a][1] + sizes[b][1]) / 2 - abs(centers[a][1] - centers[b][1])
            assert overlap_x <= 0 or overlap_y <= 0, (a, b)


TERRITORY = {
    "ruleset.yaml": "id: territory\nname: Territory\nversion: 1\nplayers: {min: 2, max: 3}\n",
    "rules.yaml": """
kinds:
  space:
    owner: owner
    state: {owner: null, armies: 0, castle: false}
board:
  space_kind: space
  spaces: {North Cape: {tax: 2}, Hill: {tax: 1}, Vale: {tax: 3}, Marsh: {tax: 1}, Isle: {tax: 2}, Harbour: {tax: 2}}
  regions:
    west: {name: West, color: "#88aa55", spaces: [North Cape, Hill, Vale]}
    east: {name: East, spaces: [Marsh, Isle, Harbour]}
  links:
    land: [[North Cape, Hill], [Hill, Vale], [Vale, Marsh], [Marsh, Harbour]]
    sea: [[Harbour, Isle], {between: [Isle, North Cape], unverified: "guessed"}]
  sets:
    removed_with_3_players: [Isle]
    coast: [Harbour, North Cape]
flow:
  - repeat: 2
    do:
      - for: p
        in: players
        do:
          - choose: s
            player: p
            from: "[x for x in spaces if x.owner == none]"
            then:
              - do: |
                  s.owner = p
                  s.armies += 2
                  if s.tax >= 2:
                      s.castle = true
result:
  score: "count(spaces, where=x => x.owner == player)"
""",
}


@pytest.fixture()
def territory(tmp_path) -> Path:
    """A modder's tiny game: a map with no layout hints."""
    folder = tmp_path / "territory"
    folder.mkdir()
    for name, text in TERRITORY.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_map_without_layout_hints_is_laid_out_automatically(territory, tmp_path):
    out = tmp_path / "t.svg"
    assert main(["map", str(territory), "--players", "3", "--out", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert {"North Cape", "Hill", "Vale", "Marsh", "Isle", "Harbour"} <= texts(root)
    assert "removed with 3 players (1)" in texts(root)
    again = tmp_path / "again.svg"
    assert main(["map", str(territory), "--players", "3", "--out", str(again)]) == 0
    assert again.read_text() == out.read_text()  # the automatic layout is seeded
    assert main(["map", str(territory), "--players", "2", "--grey-set", "coast", "--out", str(out)]) == 0
    assert "coast (2)" in texts(ET.parse(out).getroot())


def test_a_saved_game_shows_owners_and_pieces(territory, tmp_path):
    import json
    model = load(str(territory), players=2)
    game = Game.new(model, 2, seed=3)
    rng = random.Random(3)
    while not game.over:
        d = game.decision
        game.apply(d.options[rng.randrange(len(d.options))])
    save = tmp_path / "save.json"
    save.write_text(json.dumps(game.save()))
    out = tmp_path / "state.svg"
    assert main(["map", "--state", str(save), "--out", str(out)]) == 0
    root = ET.parse(out).getroot()
    words = texts(root)
    assert "armies 2" in words and "castle" in words
    owned = [s for s, e in game.state["ent"].items() if isinstance(e, dict) and e.get("owner")]
    assert len(owned) == 4
    assert "P1: 2 spaces" in words and "P2: 2 spaces" in words
    rings = [r for r in root.iter(f"{SVG}rect") if r.get("stroke-width") == "4.0"]
    assert len(rings) == 4


def test_map_errors(territory, tmp_path, capsys):
    assert main(["map", str(territory), "--grey-set", "coats", "--out", str(tmp_path / "x.svg")]) == 1
    assert "did you mean" in capsys.readouterr().err
    assert main(["map", str(Path(__file__).parent / "rulesets" / "race")]) == 1  # no board
    assert main(["map"]) == 2
