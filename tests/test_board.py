"""Board compilation and map checks: the real boards, and one broken fragment per G code."""
from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from engine.base.diagnostics import Diagnostics
from engine.model.board import Board, build_board

RULESETS = Path(__file__).resolve().parent.parent / "rulesets"


def merged_board(*files: str) -> dict:
    """The `board` sections of some data files, merged as plain dicts (keys must not clash)."""
    board: dict = {}
    for name in files:
        section = yaml.safe_load((RULESETS / name).read_text(encoding="utf-8"))["board"]
        clash = set(board) & set(section)
        assert not clash, f"{name} repeats board keys {clash}"
        board.update(section)
    return board


def build(section: dict, file_hint: str = "test.yaml") -> tuple[Board | None, Diagnostics]:
    diags = Diagnostics()
    return build_board(section, diags, file_hint), diags


def codes(diags: Diagnostics, severity: str | None = None) -> list[str]:
    return [d.code for d in diags if severity is None or d.severity == severity]


# --------------------------------------------------------------------------- the real boards

@pytest.fixture(scope="module", params=["sun", "moon"])
def shogun(request) -> tuple[str, Board, Diagnostics]:
    board, diags = build(merged_board("shogun/provinces.yaml", f"shogun/board-{request.param}.yaml"))
    return request.param, board, diags


def test_shogun_side_has_45_provinces_in_5_regions_of_9(shogun):
    _, board, diags = shogun
    assert not diags.items, diags.render()
    assert board is not None and board.space_kind == "province"
    assert len(board.spaces) == 45
    assert sorted(board.regions) == ["brown", "green", "purple", "red", "yellow"]
    assert all(len(members) == 9 for members in board.regions.values())
    assert all(board.region_of[s] for s in board.spaces)
    assert len(board.links("land")) == 91 and len(board.links("sea")) == 6
    assert len(board.sets["removed_with_3_players"]) == 8
    assert len(board.layout) == 45
    assert all(0 <= c <= 1000 for xy in board.layout.values() for c in xy)


def test_shogun_province_values_are_the_same_on_both_sides(shogun):
    _, board, _ = shogun
    assert board.attrs["Aki"] == {"tax": 4, "rice": 3, "building_spaces": 2}
    totals = [sum(board.attrs[s][k] for s in board.spaces) for k in ("tax", "rice", "building_spaces")]
    assert totals == [220, 140, 87]


def test_shogun_map_is_connected(shogun):
    import networkx as nx

    _, board, _ = shogun
    assert nx.is_connected(board.graph())


def test_sun_side_sea_route_between_shima_and_izu():
    # Rulebook: "Armies may move via sea route between Shima and Izu."
    board, _ = build(merged_board("shogun/provinces.yaml", "shogun/board-sun.yaml"))
    assert board.adjacent("Shima", "Izu", "sea") and board.adjacent("Izu", "Shima", "sea")
    assert board.adjacent("Shima", "Izu") and not board.adjacent("Shima", "Izu", "land")
    assert not board.unverified
    assert board.sets["removed_with_3_players"] == {
        "Izumo", "Iwami", "Sanuki", "Tosa", "Echigo", "Mutsu", "Kazusa", "Awa-Boso"}


def test_moon_side_regions_and_unverified_sea_routes():
    board, _ = build(merged_board("shogun/provinces.yaml", "shogun/board-moon.yaml"))
    moved = {"Hitachi": "yellow", "Shinano": "red", "Kai": "red", "Echizen": "brown", "Wakasa": "brown",
             "Owari": "purple", "Mimasaka": "red", "Sanuki": "green"}
    assert {s: board.region_of[s] for s in moved} == moved
    sea = board.links("sea")
    assert sea and all(pair in board.unverified for pair in sea)
    assert not any(pair in board.unverified for pair in board.links("land"))
    assert board.sets["removed_with_3_players"] == {
        "Iwami", "Aki", "Mutsu", "Shimotsuke", "Iyo", "Tosa", "Hitachi", "Shimosa"}


def test_both_shogun_sides_share_land_links_and_layout():
    sun = merged_board("shogun/provinces.yaml", "shogun/board-sun.yaml")
    moon = merged_board("shogun/provinces.yaml", "shogun/board-moon.yaml")
    assert sun["layout"] == moon["layout"]
    assert build(sun)[0].links("land") == build(moon)[0].links("land")


def test_samurai_swords_has_68_provinces_and_is_connected():
    import networkx as nx

    section = merged_board("samurai-swords/board.yaml")
    board, diags = build(section)
    assert not diags.items, diags.render()
    assert len(board.spaces) == 68
    assert {r: len(m) for r, m in board.regions.items()} == {"honshu": 50, "kyushu": 9, "shikoku": 4, "islands": 5}
    assert len(board.links("land")) == 125 and len(board.links("sea")) == 20
    assert nx.is_connected(board.graph()) or section.get("islands")
    assert board.attrs["Sado"]["island"] == "islands"
    assert board.adjacent("Echigo", "Sado", "sea")
    assert ("Kawachi", "Tamba") in board.unverified and ("Dewa", "Tsushima") in board.unverified
    assert len(board.layout) == 68


# --------------------------------------------------------------------------- compiled form

def small() -> dict:
    """A valid three-space board to break in the tests below."""
    return {
        "space_kind": "province",
        "spaces": {"Aki": {"tax": 4, "pos": [10, 20], "notes": "west"}, "Bingo": {"tax": 3}, "Bitchu": None},
        "regions": {"green": {"name": "Green", "color": "#4c9a2a", "spaces": ["Aki", "Bingo", "Bitchu"]}},
        "links": {"land": [["Aki", "Bingo"]],
                  "sea": [{"between": ["Bitchu", "Aki"], "unverified": "not seen on a board"}]},
        "sets": {"coast": ["Aki"]},
        "layout": {"Bingo": [30, 40]},
    }


def test_small_board_compiles_to_sorted_symmetric_tables():
    board, diags = build(small())
    assert not diags.items, diags.render()
    assert board.spaces == ("Aki", "Bingo", "Bitchu")
    assert board.index == {"Aki": 0, "Bingo": 1, "Bitchu": 2}
    assert board.attrs == {"Aki": {"tax": 4}, "Bingo": {"tax": 3}, "Bitchu": {}}
    assert board.neighbors == {"Aki": ("Bingo", "Bitchu"), "Bingo": ("Aki",), "Bitchu": ("Aki",)}
    assert board.neighbors_by_kind["sea"] == {"Aki": ("Bitchu",), "Bingo": (), "Bitchu": ("Aki",)}
    for a in board.spaces:
        for b in board.neighbors[a]:
            assert board.adjacent(b, a)
    assert not board.adjacent("Bingo", "Bitchu")
    assert not board.adjacent("Aki", "Bingo", "air")
    assert board.layout == {"Aki": (10.0, 20.0), "Bingo": (30.0, 40.0)}
    assert board.sets == {"coast": frozenset({"Aki"})}
    assert board.region_info["green"] == {"name": "Green", "color": "#4c9a2a"}
    assert board.unverified == {("Aki", "Bitchu"): "not seen on a board"}
    g = board.graph()
    assert g.edges["Aki", "Bingo"]["kind"] == "land"
    assert g.edges["Aki", "Bitchu"]["unverified"] == "not seen on a board"
    assert g.nodes["Aki"]["region"] == "green"
    assert "3 provinces" in repr(board)


def test_board_without_regions_has_empty_region_ids():
    section = small()
    del section["regions"]
    board, diags = build(section)
    assert not diags.items and board.region_of == {"Aki": "", "Bingo": "", "Bitchu": ""}


# --------------------------------------------------------------------------- one fragment per code

@pytest.mark.parametrize("breakage", [
    lambda s: s["links"]["land"].append(["Aki", "Bingoo"]),
    lambda s: s["regions"]["green"]["spaces"].append("Bitcho"),
    lambda s: s["sets"]["coast"].append("Bingoo"),
    lambda s: s["layout"].update({"Bingoo": [1, 2]}),
    lambda s: s.update({"islands": [["Bingoo"]]}),
])
def test_G001_unknown_space(breakage):
    section = small()
    breakage(section)
    board, diags = build(section)
    assert board is None and codes(diags) == ["G001"]
    assert diags.items[0].hint.startswith("did you mean `Bi")
    assert diags.items[0].loc.file == "test.yaml"


def test_G001_names_a_yaml_boolean():
    section = small()
    section["spaces"]["No"] = {}
    section["regions"]["green"]["spaces"].append(False)
    section["links"]["land"].append(["Aki", "No"])
    _, diags = build(section)
    assert "G001" in codes(diags) and "quote the name" in diags.items[0].hint


def test_G002_link_to_itself():
    section = small()
    section["links"]["land"].append(["Bingo", "Bingo"])
    board, diags = build(section)
    assert board is None and codes(diags) == ["G002"]


def test_G003_same_link_twice_in_one_kind_is_an_error():
    section = small()
    section["links"]["land"].append(["Bingo", "Aki"])
    board, diags = build(section)
    assert board is None and codes(diags, "error") == ["G003"]


def test_G003_same_pair_in_two_kinds_is_a_warning():
    section = small()
    section["links"]["sea"].append(["Aki", "Bingo"])
    board, diags = build(section)
    assert board is not None and codes(diags, "warning") == ["G003"] and not diags.errors
    assert board.adjacent("Aki", "Bingo", "land") and board.adjacent("Aki", "Bingo", "sea")
    assert board.neighbors["Aki"] == ("Bingo", "Bitchu")
    section["links"]["sea"].append(["Bingo", "Aki"])
    board, diags = build(section)
    assert board is None and codes(diags, "error") == ["G003"]


def test_G004_space_in_no_region():
    section = small()
    section["regions"]["green"]["spaces"].remove("Bitchu")
    board, diags = build(section)
    assert board is None and codes(diags) == ["G004"] and "Bitchu" in diags.items[0].message


def test_G005_space_in_two_regions():
    section = small()
    section["regions"]["red"] = {"name": "Red", "color": "#e2572b", "spaces": ["Bingo"]}
    board, diags = build(section)
    assert board is None and codes(diags) == ["G005"] and "green" in diags.items[0].message


def test_G005_repeated_within_one_region_is_a_warning():
    section = small()
    section["regions"]["green"]["spaces"].append("Aki")
    board, diags = build(section)
    assert board is not None and codes(diags, "warning") == ["G005"]


def test_G006_map_not_connected_lists_parts_smallest_first():
    section = small()
    section["spaces"].update({f"P{i}": {} for i in range(7)})
    section["spaces"]["Oki"] = {}
    section["links"]["land"] += [[f"P{i}", f"P{i + 1}"] for i in range(6)]
    del section["regions"]
    board, diags = build(section)
    assert board is None and codes(diags) == ["G006"]
    message = diags.items[0].message
    assert "3 separate parts" in message
    assert message.index("[Oki]") < message.index("Aki") < message.index("P0")
    assert "+2 more" in message  # at most 5 names per part


def test_G006_suppressed_for_declared_islands():
    section = small()
    section["spaces"].update({"Oki": {}, "Sado": {}})
    section["links"]["sea"].append(["Oki", "Sado"])
    section["regions"]["green"]["spaces"] += ["Oki", "Sado"]
    assert codes(build(section)[1]) == ["G006"]
    section["islands"] = [["Oki", "Sado"]]
    board, diags = build(section)
    assert board is not None and not diags.items


def test_G006_a_single_isolated_space():
    section = small()
    section["links"]["sea"] = []
    board, diags = build(section)
    assert board is None and codes(diags) == ["G006"] and "[Bitchu]" in diags.items[0].message


@pytest.mark.parametrize("link", [
    ["Aki"],
    ["Aki", "Bingo", "Bitchu"],
    "Aki-Bingo",
    ["Aki", 3],
    {"between": ["Aki"]},
    {"betwen": ["Aki", "Bingo"]},
    {"unverified": "why"},
    {"between": ["Aki", "Bingo"], "unverified": True},
])
def test_G007_malformed_link(link):
    section = small()
    section["links"]["land"] = [link, ["Bingo", "Bitchu"]]
    board, diags = build(section)
    assert board is None and codes(diags) == ["G007"]


@pytest.mark.parametrize("color", ["green", "#4c9a2", None, 0x4C9A2A])
def test_G008_region_colour_is_a_warning(color):
    section = small()
    section["regions"]["green"]["color"] = color
    board, diags = build(section)
    assert board is not None and codes(diags) == ["G008"] and diags.items[0].severity == "warning"
    assert board.region_info["green"]["color"] == ""
    if color is None:
        assert "comment" in diags.items[0].hint


@pytest.mark.parametrize("breakage, severity", [
    (lambda s: s.pop("spaces"), "error"),
    (lambda s: s.update({"spaces": ["Aki", "Bingo"]}), "error"),
    (lambda s: s["spaces"].update({"Aki": 4}), "error"),
    (lambda s: s.update({"region": {}}), "warning"),
    (lambda s: s["regions"]["green"].pop("spaces"), "error"),
    (lambda s: s["layout"].update({"Bingo": [1]}), "error"),
    (lambda s: s["layout"].update({"Bingo": [1, 2000]}), "warning"),
    (lambda s: s.update({"sets": {"coast": "Aki"}}), "error"),
    (lambda s: s.update({"islands": "Aki"}), "error"),
    (lambda s: s.update({"links": {"land": {"Aki": "Bingo"}}}), "error"),
])
def test_G009_malformed_board_section(breakage, severity):
    section = small()
    breakage(section)
    board, diags = build(section)
    assert "G009" in codes(diags, severity)
    assert (board is None) == (severity == "error")


def test_not_a_mapping_at_all():
    board, diags = build(["Aki"])
    assert board is None and codes(diags) == ["G009"]


def test_every_problem_is_reported_at_once():
    section = small()
    section["links"]["land"] += [["Aki", "Aki"], ["Bingo", "Aki"], ["Aki", "Bingoo"], ["Aki"]]
    section["regions"]["green"]["color"] = "green"
    _, diags = build(section)
    assert sorted(codes(diags)) == ["G001", "G002", "G003", "G007", "G008"]


def test_input_is_not_modified():
    section = small()
    before = copy.deepcopy(section)
    build(section)
    assert section == before


# --------------------------------------------------------------------------- locations (needs engine.loading.yamlio)

LOCATED = """\
board:
  space_kind: province
  spaces:
    Aki: {tax: 4}
    Bingo: {tax: 3}
    Bitchu: {tax: 5}
    Oki: {tax: 1}
  regions:
    green: {name: Green, color: "green", spaces: [Aki, Bingo, Bitchu, Bingo]}
  links:
    land:
      - [Aki, Bingoo]
      - [Aki, Bingo]
      - [Bingo, Aki]
      - [Bingo, Bitchu]
"""


def load_located(text: str, tmp_path: Path) -> tuple[Mapping, str]:
    """The `board` mapping as engine.loading.yamlio loads it (with positions), or skip the test."""
    yamlio = pytest.importorskip("engine.loading.yamlio")
    if not hasattr(yamlio, "load_yaml"):
        pytest.skip("engine.loading.yamlio has no load_yaml yet")
    path = tmp_path / "board.yaml"
    path.write_text(text, encoding="utf-8")
    diags = Diagnostics()
    data = yamlio.load_yaml(str(path), diags)
    assert not diags.items, diags.render()
    return data["board"], str(path)


def where(text: str, line_text: str, token: str) -> tuple[int, int]:
    """1-based line and column of `token` on the line that contains `line_text`."""
    for n, line in enumerate(text.splitlines(), 1):
        if line_text in line:
            return n, line.index(token, line.index(line_text)) + 1
    raise AssertionError(line_text)


def test_diagnostics_point_at_the_offending_item(tmp_path):
    section, path = load_located(LOCATED, tmp_path)
    _, diags = build(section, path)
    by_code = {d.code: d for d in diags}
    assert set(by_code) == {"G001", "G003", "G004", "G005", "G006", "G008"}
    expected = {
        "G001": where(LOCATED, "[Aki, Bingoo]", "Bingoo"),
        "G003": where(LOCATED, "[Bingo, Aki]", "["),
        "G004": where(LOCATED, "Oki: {tax", "Oki"),
        "G005": where(LOCATED, "Bitchu, Bingo]", "Bingo]"),
        "G006": where(LOCATED, "Oki: {tax", "Oki"),
        "G008": where(LOCATED, "color:", 'green"'),  # a quoted value starts after its quote
    }
    for code, (line, col) in expected.items():
        loc = by_code[code].loc
        assert (loc.file, loc.line, loc.col) == (path, line, col), (code, loc)
    assert by_code["G001"].hint == "did you mean `Bingo`?"


@pytest.mark.parametrize("files", [
    ("shogun/provinces.yaml", "shogun/board-sun.yaml"),
    ("shogun/provinces.yaml", "shogun/board-moon.yaml"),
    ("samurai-swords/board.yaml",),
])
def test_real_boards_load_cleanly_through_yamlio(files):
    yamlio = pytest.importorskip("engine.loading.yamlio")
    if not hasattr(yamlio, "load_yaml"):
        pytest.skip("engine.loading.yamlio has no load_yaml yet")
    diags = Diagnostics()
    section: dict = {}
    for name in files:
        section.update(yamlio.load_yaml(str(RULESETS / name), diags)["board"])
    board = build_board(section, diags)
    assert board is not None and not diags.items, diags.render()
