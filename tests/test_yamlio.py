"""Tests for engine.loading.yamlio: located values, and a diagnostic (never an exception) for bad input."""
from __future__ import annotations

import datetime
import os
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.base.diagnostics import Diagnostics, Loc
from engine.loading import yamlbuild
from engine.loading.yamlio import LocDict, LocList, load_yaml, load_yaml_text, loc_of

BACKENDS = [pytest.param(yaml.SafeLoader, id="pure")]
if getattr(yaml, "CSafeLoader", None):
    BACKENDS.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """Run a test with each available parser (locations must not depend on it)."""
    monkeypatch.setattr(yamlbuild, "_LOADER", request.param)
    return request.param


def load(text, **limits):
    diags = Diagnostics()
    return load_yaml_text(text, "t.yaml", diags, **limits), diags


def found(diags):
    return [(d.code, d.loc.line, d.loc.col) for d in diags]


# -- broken inputs: (text, code, line, col) -------------------------------------------------

BOMB = "".join(
    f"{name}: &{name} [{','.join([f'*{prev}'] * 9) if prev else ','.join(['lol'] * 9)}]\n"
    for prev, name in zip([None, *"abcdefgh"], "abcdefghi", strict=True))

BROKEN = {
    # Y001 syntax
    "colon_in_value": ("name: Note: this\n", "Y001", 1, 11),
    "tab_indent": ("unit:\n\tcost: 3\n", "Y001", 2, 1),
    "tab_indent_nested": ("unit:\n  name: a\n\tcost: 3\n", "Y001", 3, 1),
    "missing_colon": ("a: 1\nb\nc: 2\n", "Y001", 2, 1),
    "unclosed_quote": ('a: 1\nb: "abc\nc: 2\n', "Y001", 2, 4),
    "unclosed_flow_list": ("a: [1, 2\nb: 3\n", "Y001", 2, 2),
    "unclosed_flow_map": ("a: {x: 1\n", "Y001", 2, 1),
    "bad_indent": ("a:\n  b: 1\n c: 2\n", "Y001", 3, 2),
    "list_item_in_mapping": ("a: 1\n- b\n", "Y001", 2, 1),
    "reserved_char": ("a: @foo\n", "Y001", 1, 4),
    "bad_escape": ('a: "C:\\qx"\n', "Y001", 1, 7),
    "stray_bracket": ("[1, 2]]\n", "Y001", 1, 7),
    "undefined_alias": ("a: *nope\n", "Y001", 1, 4),
    "two_documents": ("a: 1\n---\nb: 2\n", "Y001", 2, 1),
    "block_header": ("a: |x\n  b\n", "Y001", 1, 5),
    # Y002 duplicate keys, at the second occurrence
    "dup_top": ("a: 1\nb: 2\na: 3\n", "Y002", 3, 1),
    "dup_nested": ("x:\n  y: 1\n  z: 2\n  y: 3\n", "Y002", 4, 3),
    "dup_flow": ("p: {a: 1, b: 2, a: 3}\n", "Y002", 1, 17),
    "dup_in_list_item": ("- {k: 1}\n- k: 1\n  k: 2\n", "Y002", 3, 3),
    "dup_quoted_vs_plain": ("a: 1\n'a': 2\n", "Y002", 2, 1),
    # Y003 not text
    "control_char": ("a: 1\nb: x\x07y\n", "Y003", 2, 5),
    "nul_in_text": ("a: 1\nb: \x00\n", "Y003", 2, 4),
    # Y004 too big
    "alias_bomb": (BOMB, "Y004", 6, 11),
    "self_alias": ("a: &a [1, *a]\n", "Y004", 1, 11),
    # Y005 too deep (10k levels, also never closed; libyaml 0.2.6, in PyYAML 6.0.4's wheels, stops
    # at 1,000 flow levels on its own, and the builder reads such a file again in Python)
    "deep_flow_lists": ("[" * 10_000 + "]" * 10_000, "Y005", 1, 65),
    "deep_flow_maps": ("{a: " * 10_000, "Y005", 1, 257),
    "deep_compact_lists": ("- " * 10_000 + "x\n", "Y005", 1, 129),
    "deep_block_lists": ("".join(" " * i + "-\n" for i in range(100)), "Y005", 65, 65),
    # Y007 keys
    "list_key": ("? [a, b]\n: 1\n", "Y007", 1, 3),
    "list_key_flow": ("{[a]: 1}\n", "Y007", 1, 2),
    "map_key": ("? {a: 1}\n: 1\n", "Y007", 1, 3),
    "null_key": ("~: 1\n", "Y007", 1, 1),
    "float_key": ("1.5: x\n", "Y007", 1, 1),
    "merge_key": ("base: &b {x: 1}\nunit:\n  <<: *b\n  y: 2\n", "Y007", 3, 3),
    # Y008 tags
    "python_object": ("a: !!python/object/apply:os.system [ls]\n", "Y008", 1, 4),
    "python_name": ("a: !!python/name:os.system ''\n", "Y008", 1, 4),
    "custom_tag": ("a:\n  b: !roll 1d6\n", "Y008", 2, 6),
    "set_tag": ("a: !!set {x, y}\n", "Y008", 1, 4),
    "bad_tagged_int": ("a: !!int abc\n", "Y008", 1, 4),
    "unknown_tag_handle": ("a: !foo!bar x\n", "Y008", 1, 4),
}


@pytest.mark.parametrize("text,code,line,col", BROKEN.values(), ids=BROKEN.keys())
def test_broken_input(text, code, line, col):
    t0 = time.perf_counter()
    _, diags = load(text)
    assert time.perf_counter() - t0 < 2
    assert found(diags) == [(code, line, col)]
    d = diags.items[0]
    assert d.loc.file == "t.yaml"
    assert not d.message.startswith(("YAML syntax error", "could not read YAML"))  # all rewritten


@pytest.mark.parametrize("text", [BROKEN[k][0] for k in (
    "colon_in_value", "tab_indent", "unclosed_flow_list", "undefined_alias", "control_char",
    "alias_bomb", "self_alias", "deep_flow_lists", "deep_flow_maps")])
def test_fatal_errors_return_none(text):
    assert load(text)[0] is None


def test_messages_speak_plainly():
    assert load("name: Note: this\n")[1].items[0].message == \
        "unexpected ':' (a value containing ': ' needs quotes)"
    assert "tab" in load("unit:\n\tcost: 3\n")[1].items[0].message
    d = load("a: 1\nb: 2\na: 3\n")[1].items[0]
    assert "`a`" in d.message and "line 1" in d.message
    d = load("unit:\n  <<: {x: 1}\n")[1].items[0]
    assert "merge keys" in d.message and "repeat" in d.hint
    assert load('a: "abc\n')[1].items[0].hint


def test_semantic_errors_keep_a_best_effort_value():
    value, diags = load("a: 1\nb: 2\na: 3\nc: !custom 4\n")
    assert found(diags) == [("Y002", 3, 1), ("Y008", 4, 4)]
    assert value == {"a": 1, "b": 2, "c": "4"}


def test_alias_bomb_is_caught_fast():
    t0 = time.perf_counter()
    value, diags = load(BOMB)
    assert time.perf_counter() - t0 < 0.5
    assert value is None and found(diags) == [("Y004", 6, 11)]


def test_big_file_without_aliases_counts_nodes():
    value, diags = load("- 1\n" * 1001, max_nodes=1000)  # the list itself is node 1
    assert value is None and found(diags) == [("Y004", 1000, 3)]


def test_aliases_within_limits_are_shared_values():
    value, diags = load("base: &b {x: 1}\nunit: *b\n")
    assert not diags and value["unit"] == {"x": 1}
    assert loc_of(value, "unit") == Loc("t.yaml", 2, 7)  # the alias, not the anchor


def test_alias_deeper_than_limit():
    value, diags = load("a: &a [[[1]]]\nb: [[*a]]\n", max_depth=5)
    assert value is None and found(diags) == [("Y005", 2, 6)]


# -- files ------------------------------------------------------------------------------------

def load_file(path, **kwargs):
    diags = Diagnostics()
    return load_yaml(path, diags, **kwargs), diags


@pytest.mark.parametrize("data,line,col", [
    pytest.param(b"a: 1\nb: \x00\x01\x02\n", 2, 4, id="binary"),
    pytest.param(b"a: 1\nb: 2\nc: h\xc3\xa9llo \xff wo\n", 3, 10, id="invalid-utf8-line-3"),
    pytest.param(b"a: 'caf\xe9'\n", 1, 8, id="latin-1"),
    pytest.param("a: 1\n".encode("utf-16"), 1, 1, id="utf-16"),
])
def test_not_utf8_text(tmp_path, data, line, col):
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    value, diags = load_file(path)
    assert value is None and found(diags) == [("Y003", line, col)]
    assert diags.items[0].loc.file == str(path)


def test_bom_is_fine_and_invisible(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: x\n")
    value, diags = load_file(path)
    assert not diags and value == {"name": "x"}
    assert loc_of(value, "name", key=True) == Loc(str(path), 1, 1)


def test_oversize_file(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("a: 1\n" * 30)
    value, diags = load_file(path, max_bytes=100, display_name="big.yaml")
    assert value is None and found(diags) == [("Y006", 0, 0)]
    assert diags.items[0].loc == Loc("big.yaml")


def test_oversize_file_is_not_read_whole(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:
        fh.truncate(4 * 1024**3)  # sparse: reading it all would take long and 4 GB of memory
    t0 = time.perf_counter()
    value, diags = load_file(path)
    assert time.perf_counter() - t0 < 1
    assert value is None and found(diags) == [("Y006", 0, 0)]


def test_oversize_text():
    assert found(load("a: 1\n" * 30, max_bytes=100)[1]) == [("Y006", 0, 0)]


def test_missing_file(tmp_path):
    value, diags = load_file(tmp_path / "nope.yaml", display_name="rules/nope.yaml")
    assert value is None and found(diags) == [("Y009", 0, 0)]
    assert diags.items[0].loc == Loc("rules/nope.yaml")


def test_directory(tmp_path):
    value, diags = load_file(tmp_path)
    assert value is None and found(diags) == [("Y009", 0, 0)]
    assert "directory" in diags.items[0].message


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.yaml"
    path.write_text("a: 1\n")
    path.chmod(0)
    assert found(load_file(path)[1]) == [("Y009", 0, 0)]


@pytest.mark.parametrize("text", ["", "# only a comment\n\n   # another\n", "\ufeff"])
def test_empty_file_is_none_without_error(text):
    value, diags = load(text)
    assert value is None and not diags.items


def test_display_name_defaults_to_path(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: [1]\n")
    value, _ = load_file(str(path))
    assert value.file == str(path) and value["a"].loc == Loc(str(path), 1, 4)


# -- locations --------------------------------------------------------------------------------

DOC = """\
unit:
  name: Ashigaru
  quoted: "Kyō: 'x'"
  single: 'it''s'
  rule: |
    when attacking:
      roll 1d6
  keep: |+2
      indented first
    second

  folded: >-
    folded
    text
  anchored: &r !!str |-
     three
       lines
  tagged: !!str plain
list:
  - 1
  - [a, "b", [c]]
  - k: v
"""


def test_key_and_value_locs(backend):
    value, diags = load(DOC)
    assert not diags.items
    unit = value["unit"]
    assert isinstance(unit, LocDict) and unit.file == "t.yaml" and unit.loc == Loc("t.yaml", 2, 3)
    expected_values = {
        "name": (2, 9),       # plain: first character
        "quoted": (3, 12),    # quoted: after the opening quote
        "single": (4, 12),
        "rule": (6, 5),       # literal block: first content line, indentation + 1
        "keep": (9, 5),       # explicit indentation indicator
        "folded": (13, 5),
        "anchored": (16, 6),  # after &anchor and !!tag
        "tagged": (18, 17),
    }
    for key, (line, col) in expected_values.items():
        assert loc_of(unit, key) == Loc("t.yaml", line, col), key
    for key, line in (("name", 2), ("quoted", 3), ("rule", 5), ("keep", 8), ("tagged", 18)):
        assert loc_of(unit, key, key=True) == Loc("t.yaml", line, 3), key
    assert unit["quoted"] == "Kyō: 'x'" and unit["single"] == "it's"
    assert unit["keep"] == "  indented first\nsecond\n\n"
    assert unit["folded"] == "folded text"


def test_literal_block_positions_map_back_to_the_file(backend):
    value, _ = load(DOC)
    file_lines = DOC.split("\n")
    for key in ("rule", "keep", "anchored"):
        loc = loc_of(value["unit"], key)
        for k, content in enumerate(value["unit"][key].split("\n"), start=1):
            if not content:
                continue
            in_file = file_lines[loc.line + k - 2]
            for c, ch in enumerate(content, start=1):
                assert in_file[loc.col + c - 2] == ch, (key, k, c)


def test_nested_lists(backend):
    value, _ = load(DOC)
    lst = value["list"]
    assert isinstance(lst, LocList) and lst.loc == Loc("t.yaml", 20, 3)
    assert lst.item_locs == [Loc("t.yaml", 20, 5), Loc("t.yaml", 21, 5), Loc("t.yaml", 22, 5)]
    inner = lst[1]
    assert inner == ["a", "b", ["c"]]
    assert inner.item_locs == [Loc("t.yaml", 21, 6), Loc("t.yaml", 21, 10), Loc("t.yaml", 21, 14)]
    assert inner[2].item_locs == [Loc("t.yaml", 21, 15)]
    assert loc_of(lst, 2) == Loc("t.yaml", 22, 5)
    assert loc_of(lst[2], "k") == Loc("t.yaml", 22, 8)


def test_columns_count_characters_and_all_line_breaks(backend):
    value, _ = load("é😀: [x, 'y']\r\nb: 1\rc: 2\n")
    assert value == {"é😀": ["x", "y"], "b": 1, "c": 2}
    assert value["é😀"].item_locs == [Loc("t.yaml", 1, 6), Loc("t.yaml", 1, 10)]
    assert loc_of(value, "b", key=True) == Loc("t.yaml", 2, 1)
    assert loc_of(value, "c") == Loc("t.yaml", 3, 4)


def test_loc_of_unknown_things():
    assert loc_of({"a": 1}, "a") == Loc()
    assert loc_of([1], 0) == Loc()
    value, _ = load("a: [1]\n")
    assert loc_of(value, "missing") == Loc()
    assert loc_of(value, ["unhashable"]) == Loc()
    assert loc_of(value["a"], 5) == Loc()
    assert loc_of(value["a"], 0, key=True) == Loc()
    assert loc_of(None, 0) == Loc()


def test_scalars_resolve_like_safe_load():
    text = """\
ints: [1, -3, 0x1f, 017, 1_000, +5, 1:30]
floats: [1.5, -0.5, 1e3, 1.0e3, .inf, -.Inf, 6.8523015e+5]
bools: [yes, No, on, OFF, true, False, y, n]
nulls: [~, null, ]
strs: [0o17, '1', "yes", plain text, 1.2.3, 0x, "", '']
"""
    value, diags = load(text)
    assert not diags.items
    assert value == yaml.safe_load(text)
    assert [type(v) for v in value["ints"]] == [int] * 7


def test_timestamps_stay_text():
    value, _ = load("released: 2024-01-31\n")
    assert value == {"released": "2024-01-31"}
    assert isinstance(yaml.safe_load("released: 2024-01-31\n")["released"], datetime.date)


def test_matches_safe_load_on_a_realistic_file():
    value, diags = load(DOC)
    assert not diags.items and value == yaml.safe_load(DOC)


# -- never raises -----------------------------------------------------------------------------

def check_never_raises(data):
    diags = Diagnostics()
    value = load_yaml_text(data, "f.yaml", diags)  # must not raise
    for d in diags:
        assert d.code in {f"Y00{i}" for i in range(1, 10)} and d.message
        assert not d.message.startswith("could not read YAML"), d.message  # no internal error
    return value, diags


VALID = """\
# a unit
unit: &u
  name: "Ashigaru"
  cost: 1
  tags: [infantry, 'cheap', {a: 1}]
  rule: |
    when attacking:
      roll 1d6
  text: >-
    folded
    text
  ok: yes
other: *u
list:
  - 1.5
  - ~
  - -3
"""
NASTY = list(":-[]{},#&*!|>?%@`'\"\\ \t\n\r~0a.\x85\u2028\ufeff\x00é😀")
_edit = st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, len(VALID)),
                  st.sampled_from(NASTY) | st.characters())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_edit, min_size=1, max_size=6))
def test_mutated_documents_never_raise(edits):
    text = list(VALID)
    for op, i, ch in edits:
        i = min(i, len(text))
        if op == "insert":
            text.insert(i, ch)
        elif text and i < len(text):
            text[i:i + 1] = [] if op == "delete" else [ch]
    text = "".join(text)
    value, diags = check_never_raises(text)
    if not diags.items:
        # Whatever we accept cleanly, PyYAML reads the same way (when it accepts it at all).
        try:
            expected = yaml.load(text, Loader=yamlbuild._LOADER)
        except yaml.YAMLError:
            return  # e.g. a re-defined anchor: legal YAML that PyYAML refuses
        if "datetime" not in repr(expected):
            assert value == expected


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    check_never_raises(data)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(NASTY) | st.characters(), max_size=200))
def test_random_text_never_raises(text):
    check_never_raises(text)


@pytest.mark.parametrize("bad", [None, 42, ["a: 1"], b"\xff" * 10])
def test_wrong_argument_types_do_not_raise(bad):
    diags = Diagnostics()
    assert load_yaml_text(bad, "f", diags) is None
    assert diags.items


def test_bad_path_does_not_raise():
    diags = Diagnostics()
    assert load_yaml("nul\0byte.yaml", diags) is None
    assert found(diags) == [("Y009", 0, 0)]


def test_plain_none_is_nothing_and_keys_like_on_are_names() -> None:
    """Our data speaks the rules language: `none` is nothing (quote it for the text), and
    YAML 1.1's boolean words (`on`, `yes`) as keys are names, as in `triggers: {t: {on: built}}`."""
    d = Diagnostics()
    got = load_yaml_text('a: none\nb: "none"\non: built\nyes: 1\nflag: on\n', "f.yaml", d)
    assert not d.items
    assert got == {"a": None, "b": "none", "on": "built", "yes": 1, "flag": True}


def test_forbidden_characters_are_pyyamls_exactly():
    """Y003's set of characters (written as the forbidden ranges, quicker to compile) is the
    complement of what PyYAML's reader allows, for every code point, lone surrogates included."""
    from engine.loading.yamlio import _bad_char
    pyyaml = yaml.reader.Reader.NON_PRINTABLE
    assert all(bool(_bad_char().match(ch)) == bool(pyyaml.match(ch)) for ch in map(chr, range(0x110000)))
