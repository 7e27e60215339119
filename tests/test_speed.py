"""The means to a fast cold `daimyo validate` (docs/performance.md) keep their promises:

- parsed rule texts cached on disk by content hash, and a damaged or hostile cache entry is
  ignored and rewritten, never trusted into a crash or a wrong rule;
- the located YAML of each file cached on disk by content hash: read back exactly (values, types,
  file:line:col), and a damaged or hostile entry ignored and rewritten;
- the map's connectivity found without networkx, exactly as networkx finds it;
- `daimyo validate` imports only its own command (not the others, the agents or the tools) and,
  run as a command, ends without teardown yet prints everything.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import dsl.compiler as compiler
from dsl.compiler import Compiler, Symbols
from dsl.parsecache import cache_folder
from dsl.runtime import Ctx
from engine.base.diagnostics import Diagnostics, Loc
from engine.model.board import _components

ROOT = Path(__file__).resolve().parent.parent
TEXT = "x * 2 + offset(x)\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh disk cache in a temporary folder, and fresh in-process memories."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("DAIMYO_NO_CACHE", raising=False)
    fresh_process(monkeypatch)
    return tmp_path / "daimyo"


def fresh_process(monkeypatch) -> None:
    monkeypatch.setattr(compiler, "_DISK", [])
    monkeypatch.setattr(compiler, "_PARSED", {})
    monkeypatch.setattr(compiler, "_FROM_DISK", set())


def run(text: str, x: int) -> tuple[object, Diagnostics]:
    """Compile `text` as an expression over `x` (with a function `offset(n) = n + 100`), run it."""
    diags = Diagnostics()
    sym = Symbols()
    comp = Compiler(sym, diags)
    fn = comp.expression(text, Loc("rules.yaml", 4, 7), {"x"})
    if fn is None:
        return None, diags
    ctx = Ctx({"globals": {}, "ent": {}}, None, None, {"x": x})
    return fn(ctx), diags


def entry_of(cache: Path) -> Path:
    (path,) = [p for p in cache.rglob("*.json")]
    return path


def test_cache_folder_follows_xdg_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("DAIMYO_NO_CACHE", raising=False)
    assert cache_folder().parent == tmp_path / "daimyo"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec says: ignore it
    assert cache_folder().parent == Path.home() / ".cache" / "daimyo"
    monkeypatch.setenv("DAIMYO_NO_CACHE", "1")
    assert cache_folder() is None


def test_a_parsed_text_is_kept_and_read_back_in_a_new_process(cache, monkeypatch):
    parsed = compiler.parser().parse(TEXT, start="expression")
    assert compiler.parse(TEXT, "expression") == parsed
    entry = entry_of(cache)
    fresh_process(monkeypatch)
    compiler._disk()  # made with the real parser (it reads the grammar's names)

    def no_parser():
        raise AssertionError("the text should have come from the disk cache")

    monkeypatch.setattr(compiler, "parser", no_parser)
    assert compiler.parse(TEXT, "expression") == parsed  # no parse: read from disk
    assert (TEXT, "expression") in compiler._FROM_DISK and entry.exists()


def _hostile_entries(good: list) -> dict[str, bytes]:
    """Entries an attacker or a crash could leave, each with the right key."""
    start, tree = good
    swapped = json.loads(json.dumps(tree))
    swapped[1][0][1].reverse()  # the operands of `*` in the wrong order: tokens out of text order
    injected = json.loads(json.dumps(tree))
    name = injected[1][0][1][0][1][0][1][0]  # the token of `x`
    name[1] = "__import__('os').system('false')"
    arity = json.loads(json.dumps(tree))
    arity[1][0][1] = arity[1][0][1][:1]  # a binop with one child: the compiler would index past it
    return {
        "garbage": b"\x00\xff not json at all",
        "truncated": json.dumps(good).encode()[:-7],
        "not a list": b'{"effect": 1}',
        "wrong start": json.dumps(["effect", tree]).encode(),
        "unknown rule": json.dumps([start, ["os_system", []]]).encode(),
        "unknown token": json.dumps([start, ["expression", [["EVIL", "x", 1, 1]]]]).encode(),
        "token not in the text": json.dumps(
            [start, ["expression", [["name", [["NAME", "y", 1, 1]]]]]]).encode(),
        "injected name": json.dumps([start, injected]).encode(),
        "out of order": json.dumps([start, swapped]).encode(),
        "wrong arity": json.dumps([start, arity]).encode(),
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "huge": b" " * 10_000_000,
    }


@pytest.mark.parametrize("kind", ["garbage", "truncated", "not a list", "wrong start", "unknown rule",
                                  "unknown token", "token not in the text", "injected name",
                                  "out of order", "wrong arity", "deep", "huge"])
def test_a_damaged_or_hostile_entry_is_ignored_and_rewritten(cache, monkeypatch, kind):
    assert run(TEXT.replace("offset(x)", "x"), 5)[0] == 15
    entry = entry_of(cache)
    good = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_bytes(_hostile_entries(good)[kind])
    fresh_process(monkeypatch)
    value, diags = run(TEXT.replace("offset(x)", "x"), 5)
    assert value == 15 and not len(diags)  # the text's meaning, from a fresh parse
    assert json.loads(entry.read_text(encoding="utf-8")) == good  # and the entry is whole again


def _validate_in_a_new_process(monkeypatch, target: str) -> tuple[list, list[int]]:
    """What `validate_targets` finds, as a new process with this cache folder finds it, and the
    size limit of each parse-cache file it read (a pack's or one text's entry)."""
    from dsl import parsecache
    from engine.base import diskcache
    from engine.loading import yamlcache
    from engine.model import verdicts
    from engine.model.validate import validate_targets

    fresh_process(monkeypatch)
    monkeypatch.setattr(verdicts, "_CACHE", [None])  # the builds run: their trees are what is looked at
    monkeypatch.setattr(yamlcache, "_CACHE", [])
    monkeypatch.setattr(diskcache, "SOURCES", {})
    reads: list[int] = []
    real = parsecache.ParseCache.read
    monkeypatch.setattr(parsecache.ParseCache, "read",
                        staticmethod(lambda p, limit: reads.append(limit) or real(p, limit)))
    diags, _ = validate_targets([target])
    return [(d.code, str(d.loc), d.message, d.hint) for d in diags.sorted()], reads


def test_a_files_trees_are_read_together_and_an_edit_or_a_bad_pack_changes_nothing_found(cache, monkeypatch,
                                                                                          tmp_path):
    """Validation keeps the trees of each file's texts in one pack (named by the file's bytes):
    the next run reads a file's trees at once. An edited text, or a pack whose trees were
    swapped or damaged, gives what a run without any cache gives, and the pack is written whole."""
    import shutil

    from dsl.parsecache import MAX_PACK
    pkg = tmp_path / "race"
    shutil.copytree(ROOT / "tests" / "rulesets" / "race", pkg)
    first, _ = _validate_in_a_new_process(monkeypatch, str(pkg))
    again, reads = _validate_in_a_new_process(monkeypatch, str(pkg))
    assert first == again == []
    assert reads and set(reads) == {MAX_PACK}  # no text's own entry was read: every tree came from a pack

    rules = pkg / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace("when: n == 3", "when: n == three"), encoding="utf-8")
    edited, _ = _validate_in_a_new_process(monkeypatch, str(pkg))
    monkeypatch.setenv("DAIMYO_NO_CACHE", "1")
    uncached, _ = _validate_in_a_new_process(monkeypatch, str(pkg))
    monkeypatch.delenv("DAIMYO_NO_CACHE")
    assert edited == uncached and [d[0] for d in edited] == ["D101"] and edited[0][1].endswith("rules.yaml:15:16")
    assert _validate_in_a_new_process(monkeypatch, str(pkg))[0] == uncached  # from the new pack

    packs = [p for p in cache.rglob("*.json") if json.loads(p.read_bytes())[0] == "pack-1"]
    for pack in packs:  # each tree given to another text, one damaged, one pack not JSON at all
        kind, entries = json.loads(pack.read_bytes())
        keys = list(entries)
        swapped = {k: entries[keys[(i + 1) % len(keys)]] for i, k in enumerate(keys)}
        swapped[keys[0]] = ["expression", [["NAME", "__import__('os')", 1, 1]]]
        pack.write_text(json.dumps([kind, swapped]), encoding="utf-8")
    packs[-1].write_bytes(b"\x00 not json")
    assert _validate_in_a_new_process(monkeypatch, str(pkg))[0] == uncached
    again, reads = _validate_in_a_new_process(monkeypatch, str(pkg))
    assert again == uncached and set(reads) == {MAX_PACK}  # the packs were written whole again


def test_a_fifo_or_folder_in_place_of_an_entry_does_not_hang_or_crash(cache, monkeypatch):
    assert run("x + 1", 1)[0] == 2
    entry = entry_of(cache)
    entry.unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(entry)
        fresh_process(monkeypatch)
        assert run("x + 1", 2)[0] == 3  # a writer-less FIFO would block a plain open()
        entry.unlink()
    entry.mkdir()
    fresh_process(monkeypatch)
    assert run("x + 1", 3)[0] == 4


def test_an_unwritable_cache_folder_only_costs_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    fresh_process(monkeypatch)
    assert run("x - 1", 10)[0] == 9
    assert compiler._DISK[0].writable is False


def test_syntax_errors_are_located_whether_or_not_the_text_was_cached(cache, monkeypatch):
    _, first = run("x +* 2", 1)
    fresh_process(monkeypatch)
    _, again = run("x +* 2", 1)
    assert [d.render() for d in first] == [d.render() for d in again]
    assert first.items[0].code == "D001" and first.items[0].loc.line == 4


@pytest.mark.parametrize("seed", range(40))
def test_union_find_finds_the_parts_networkx_finds(seed):
    rng = random.Random(seed)
    spaces = tuple(f"s{i}" for i in range(rng.randrange(1, 30)))
    g = nx.Graph()
    g.add_nodes_from(spaces)
    for _ in range(rng.randrange(0, 40)):
        g.add_edge(rng.choice(spaces), rng.choice(spaces))
    neighbors = {s: tuple(sorted(g.neighbors(s))) for s in spaces}
    expected = {frozenset(c) for c in nx.connected_components(g)}
    assert set(_components(spaces, neighbors)) == expected


def _python(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *(["-c", code] if code else []), *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_validation_does_not_import_networkx():
    out = _python("import sys; from engine.model.validate import validate_targets; "
                  "d, _ = validate_targets(['shogun', 'samurai-swords']); "
                  "print(len(d.errors), 'networkx' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "False"]


def test_validate_as_a_command_exits_fast_and_prints_everything(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "ruleset.yaml").write_text("id: broken\nname: [\n", encoding="utf-8")
    out = _python("", "-m", "engine.cli", "validate", "--format", "json", "shogun", str(broken),
                  env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert out.returncode == 1
    found = json.loads(out.stdout)  # the whole JSON document made it out before the fast exit
    assert found and all(d["code"] for d in found)


def test_validate_imports_only_its_own_command():
    """The front door imports the command that runs, not the others, the agents or the tools."""
    code = ("import sys; from engine.cli import main; code = main(['validate', 'tests/rulesets/race']); "
            "others = [m for m in sys.modules if m.startswith(('engine.cli.', 'engine.agents', 'engine.run', "
            "'tools', 'importlib.metadata', 'asyncio'))]; print(code, sorted(others))")
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "0 ['engine.cli.validate']"


def test_every_command_is_listed_with_its_help_whichever_runs():
    """`daimyo --help` lists each command with the help line its own parser declares, and the
    light parser built for one command lists the same."""
    import argparse

    from engine.cli import COMMANDS, build_parser

    def listed(parser: argparse.ArgumentParser) -> dict[str, str | None]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {a.dest: a.help for a in action._choices_actions}

    full = listed(build_parser())
    assert {name: full[name] for name in COMMANDS} == COMMANDS
    assert {"bench", "simulate", "report", "map", "docs", "tournament"} <= set(full)  # the tools, by entry point
    light = build_parser(["validate", "rulesets/shogun"])
    assert listed(light) == {name: full[name] for name in COMMANDS}
    assert light.format_usage() == build_parser().format_usage()
    def command(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]

    assert command(light, "validate").format_help() == command(build_parser(), "validate").format_help()


# ---- the located-YAML cache (engine/loading/yamlcache.py) ----

YAML_TEXT = """\
steps:
  take_turn:
    notes: 'a quoted text'
    count: 3
    do: |
      say("hello")
flow:
  - step: take_turn
  - {step: take_turn, times: 2}
"""


def _same_reading(a, b) -> None:
    """Equal values of the same types, with every location equal (file:line:col)."""
    from engine.loading.yamlio import LocDict, LocList

    assert type(a) is type(b)
    if isinstance(a, (LocDict, LocList)):
        assert (a.file, a.loc) == (b.file, b.loc)
    if isinstance(a, LocDict):
        assert list(a) == list(b) and a.key_locs == b.key_locs and a.value_locs == b.value_locs
        for k in a:
            _same_reading(a[k], b[k])
    elif isinstance(a, LocList):
        assert len(a) == len(b) and a.item_locs == b.item_locs
        for x, y in zip(a, b, strict=True):
            _same_reading(x, y)
    else:
        assert a == b


@pytest.fixture
def ycache(tmp_path, monkeypatch):
    """A fresh YAML cache in a temporary folder; returns a reader as a new process reads."""
    from engine.loading import yamlcache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DAIMYO_NO_CACHE", raising=False)
    monkeypatch.setattr(yamlcache, "_CACHE", [])

    def read(path: Path, name: str = "pkg/rules.yaml"):
        yamlcache._CACHE.clear()  # a new process
        diags = Diagnostics()
        return yamlcache.load_yaml_cached(path, diags, display_name=name), diags

    return read


def _entry(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "cache" / "daimyo").rglob("*.json")
    return path


def test_every_bundled_file_reads_back_from_the_cache_exactly(ycache, tmp_path):
    from engine.loading.yamlio import load_yaml

    files = sorted((ROOT / "rulesets").rglob("*.yaml"))
    for path in files:
        fresh = load_yaml(path, Diagnostics(), display_name=str(path))
        first, d1 = ycache(path, str(path))
        again, d2 = ycache(path, str(path))
        assert not d1.items and not d2.items
        _same_reading(fresh, first)
        _same_reading(fresh, again)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == len({p.read_bytes() for p in files})


def test_a_cached_file_takes_the_name_it_is_read_under(ycache, tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(YAML_TEXT, encoding="utf-8")
    ycache(path, "a/rules.yaml")
    value, _ = ycache(path, "b/rules.yaml")
    assert value.file == "b/rules.yaml" and str(value["steps"]["take_turn"].value_locs["count"]) == "b/rules.yaml:4:12"


def test_a_file_with_problems_is_not_kept_and_its_errors_stay_located(ycache, tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("steps:\n  a: 1\n  a: 2\n", encoding="utf-8")
    _, d1 = ycache(path)
    _, d2 = ycache(path)
    assert [d.render() for d in d1] == [d.render() for d in d2] and d1.items[0].code == "Y002"
    assert str(d2.items[0].loc) == "pkg/rules.yaml:3:3"
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_no_yaml_cache_when_caching_is_off(ycache, tmp_path, monkeypatch):
    monkeypatch.setenv("DAIMYO_NO_CACHE", "1")
    path = tmp_path / "rules.yaml"
    path.write_text(YAML_TEXT, encoding="utf-8")
    ycache(path)
    ycache(path)
    assert not (tmp_path / "cache").exists()


def _hostile_yaml_entries(good: list) -> dict[str, bytes]:
    """Entries a crash or an attacker could leave under the right name."""
    def edited(change) -> bytes:
        doc = json.loads(json.dumps(good))
        change(doc[1])
        return json.dumps(doc).encode()

    def steps(root):  # [key line, key col, "steps", node] of the first pair
        return root[3][0]

    def turn(root):
        return steps(root)[3][3][0][3]  # the mapping of take_turn

    def set_count(root, value):
        turn(root)[3][1][3][2] = value

    return {
        "garbage": b"\x00\xff not json",
        "truncated": json.dumps(good).encode()[:-5],
        "wrong format": json.dumps([99, good[1]]).encode(),
        "not a node": edited(lambda r: r.__setitem__(3, {"a": 1})),
        "unknown kind": edited(lambda r: r.__setitem__(0, "x")),
        "object value": edited(lambda r: set_count(r, {"a": 1})),
        "changed number": edited(lambda r: set_count(r, 4)),
        "number as text": edited(lambda r: set_count(r, "3")),
        "changed text": edited(lambda r: turn(r)[3][0][3].__setitem__(2, "another text")),
        "changed key": edited(lambda r: turn(r)[3][1].__setitem__(2, "amount")),
        "shifted line": edited(lambda r: turn(r)[3][1][3].__setitem__(0, 5)),
        "past the line": edited(lambda r: turn(r)[3][1][3].__setitem__(1, 40)),
        "past the text": edited(lambda r: turn(r)[3][1][3].__setitem__(0, 400)),
        "out of order": edited(lambda r: turn(r)[3].reverse()),
        "duplicate key": edited(lambda r: turn(r)[3].append(turn(r)[3][1])),
        "bool line": edited(lambda r: turn(r)[3][1][3].__setitem__(0, True)),
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "huge": b" " * 10_000_000,
    }


@pytest.mark.parametrize("kind", ["garbage", "truncated", "wrong format", "not a node", "unknown kind", "object value",
                                  "changed number", "number as text", "changed text", "changed key", "shifted line",
                                  "past the line", "past the text", "out of order", "duplicate key", "bool line",
                                  "deep", "huge"])
def test_a_damaged_or_hostile_yaml_entry_is_ignored_and_rewritten(ycache, tmp_path, kind):
    from engine.loading.yamlio import load_yaml

    path = tmp_path / "rules.yaml"
    path.write_text(YAML_TEXT, encoding="utf-8")
    ycache(path)
    entry = _entry(tmp_path)
    good = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_bytes(_hostile_yaml_entries(good)[kind])
    value, diags = ycache(path)
    assert not diags.items
    _same_reading(load_yaml(path, Diagnostics(), display_name="pkg/rules.yaml"), value)  # a fresh reading
    assert json.loads(entry.read_text(encoding="utf-8")) == good  # and the entry is whole again


def test_a_fifo_or_folder_in_place_of_a_yaml_entry_does_not_hang_or_crash(ycache, tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(YAML_TEXT, encoding="utf-8")
    fresh, _ = ycache(path)
    entry = _entry(tmp_path)
    entry.unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(entry)
        _same_reading(fresh, ycache(path)[0])
        entry.unlink()
    entry.mkdir()
    _same_reading(fresh, ycache(path)[0])


def test_a_second_validation_reads_every_file_from_the_cache(tmp_path):
    """After one run has filled the cache, no YAML is parsed: PyYAML is not even imported."""
    code = ("import sys; from engine.model.validate import validate_targets; "
            "d, _ = validate_targets(['rulesets/shogun', 'rulesets/samurai-swords']); "
            "print(len(d.errors), 'yaml' in sys.modules)")
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first, again = _python(code, env=env), _python(code, env=env)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert first.stdout.split() == ["0", "True"] and again.stdout.split() == ["0", "False"]


def _nesting_by_characters(source: str) -> int:
    """The specification of codegen._nesting: one character at a time."""
    depth = deepest = 0
    quote, escaped = "", False
    for ch in source:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


@pytest.mark.parametrize("seed", range(4))
def test_bracket_nesting_skips_strings_as_a_character_scan_does(seed):
    from dsl.codegen import _nesting
    rng = random.Random(seed)
    fixed = ["", "((", "'((' + (x)", '"\\"((" [', "'unclosed ((", "'a\\\\' (", "'\\", "f(g[h{1}])", ")))(("]
    texts = fixed + ["".join(rng.choice("()[]{}'\"\\ax\n") for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    for text in texts:
        assert _nesting(text) == _nesting_by_characters(text), repr(text)


def test_validation_leaves_no_young_objects_to_scan_and_restores_collection():
    import gc

    from engine.model.validate import _fewer_collections, validate_targets
    before = gc.get_threshold()
    diags, checked = validate_targets([str(ROOT / "rulesets" / "shogun")])
    assert checked and not diags.errors
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    # What validation made and kept goes to the oldest generation unscanned (docs/performance.md),
    # so that the next allocation does not start one collection scanning all of it.
    with _fewer_collections():
        kept = [[i] for i in range(20_000)]
    oldest = {id(x) for x in gc.get_objects(generation=2)}
    assert all(id(x) in oldest for x in kept)


def test_a_patched_content_found_valid_is_not_checked_again_and_errors_always_are(monkeypatch):
    import engine.loading.layering as layering
    from engine.base.diagnostics import Diagnostics
    from engine.loading.package import resolve_combo
    checked = []
    real = layering.check_data
    monkeypatch.setattr(layering, "check_data", lambda *a, **k: checked.append(a[1]) or real(*a, **k))

    def resolve_twice(combo_text: str) -> list[list[str]]:
        found = []
        with layering.reading_cache():
            for _ in range(2):
                diags = Diagnostics()
                combo = resolve_combo(combo_text, diags, {}, 2)
                layering.resolve(combo, diags)
                found.append([f"{d.code} {d.loc} {d.message}" for d in diags])
        return found

    ok = resolve_twice(f"{ROOT}/tests/rulesets/mini-map+{ROOT}/tests/rulesets/mini-map-plus")
    assert ok == [[], []] and len(checked) == 1  # the same patched sections: checked once
    checked.clear()
    bad = resolve_twice(f"{ROOT}/tests/rulesets/race+{ROOT}/tests/broken/patch-bad-value")
    assert len(checked) == 4 and bad[0] == bad[1]  # a problem is found again (alone, then in full)
    assert any("S004" in d and "after patches" in d for d in bad[0])
    # What is remembered is each section, or each entry of a section whose schema checks entries
    # one by one: right while the schema's top level only says "a mapping of these sections".
    top = json.loads((ROOT / "schemas" / "ruleset.schema.json").read_text(encoding="utf-8"))
    assert set(top) - {"$schema", "$id", "title", "description", "$defs"} == \
        {"type", "additionalProperties", "properties"}
    assert top["type"] == "object" and top["additionalProperties"] is False


def test_a_patched_entry_found_valid_is_not_checked_again_in_another_combo(monkeypatch):
    import engine.loading.layering as layering
    from engine.base.diagnostics import Diagnostics
    checked = []
    real = layering.check_data
    monkeypatch.setattr(layering, "check_data", lambda *a, **k: checked.append(a[1]) or real(*a, **k))
    a, b, c = {"do": "x = 1"}, {"do": "x = 2"}, {"flow": ["a"]}

    def check(steps: dict) -> list[str]:
        res = layering.Resolved(layering._empty_data())
        res.data["steps"] = steps
        res.patched_sections = {"steps"}
        diags = Diagnostics()
        layering.check_resolved(res, diags)
        return [d.code for d in diags]

    def entries() -> list[list[str]]:  # the steps each check_data call saw, since the last call
        seen = [sorted(data.get("steps", {})) for data in checked]
        checked.clear()
        return seen

    with layering.reading_cache():
        assert check({"a": a, "b": b}) == [] and entries() == [["a", "b"]]
        assert check({"a": a, "c": c}) == [] and entries() == [["c"]]  # only the new entry
        assert check({"c": c, "b": b, "a": a}) == [] and entries() == []  # every entry known
        # A new entry with a problem: found alone, then the whole check says what and where.
        assert check({"a": a, "bad": {"do": 3}}) == ["S004"] and entries() == [["bad"], ["a", "bad"]]
        assert check({"a": a, "bad": {"do": 3}}) == ["S004"] and entries() == [["bad"], ["a", "bad"]]
        assert check({"a": {"do": "x = 2"}}) == [] and entries() == [["a"]]  # a known name, new content


def test_the_grammar_names_file_matches_the_grammar():
    """dsl/names.json (the rule and terminal names the parse cache checks entries against) is
    what lark reads from dsl/daimyo.lark; after editing the grammar, write it again (dsl/tree.py)."""
    from dsl.tree import NAMES_FILE, grammar_text, known_names, names_of
    written = json.loads((ROOT / "dsl" / NAMES_FILE).read_text(encoding="utf-8"))
    assert written == names_of(compiler.parser(), grammar_text())
    terminals, rules = known_names(grammar_text())
    assert dict(terminals)["NAME"] and "binop" in rules
    assert known_names(grammar_text() + "\n// edited\n") is None  # another grammar: lark is asked


def test_a_warm_validation_does_not_import_lark_and_a_cold_one_says_the_same(tmp_path):
    code = ("import sys, json; from engine.model.validate import validate_targets; "
            "d, _ = validate_targets(['tests/rulesets/mini-map+tests/broken/dsl-unknown-id', "
            "'tests/rulesets/race+tests/broken/dsl-syntax-unclosed', "
            "'tests/rulesets/race+tests/broken/dsl-syntax-text-insert']); "
            "print(json.dumps([[x.code, str(x.loc), x.message, x.hint] for x in d.sorted()])); "
            "print('lark' in sys.modules)")
    runs = [_python(code, env={"XDG_CACHE_HOME": str(tmp_path)}) for _ in range(2)]
    runs.append(_python(code, env={"DAIMYO_NO_CACHE": "1"}))
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    first, warm, uncached = (r.stdout.splitlines() for r in runs)
    assert first[0] == warm[0] == uncached[0]
    assert sorted(d[0] for d in json.loads(first[0])) == ["D001", "D001", "D101"]
    # The syntax errors are parsed again in every run (failures are not kept): lark then loads.
    assert [first[1], uncached[1]] == ["True", "True"]
    # A text with a problem is parsed again too (a cached tree must compile cleanly to be used);
    # clean packages whose trees are all in the cache never load lark.
    clean = _python(code.replace("'tests/rulesets/mini-map+tests/broken/dsl-unknown-id', "
                                 "'tests/rulesets/race+tests/broken/dsl-syntax-unclosed', "
                                 "'tests/rulesets/race+tests/broken/dsl-syntax-text-insert'",
                                 "'tests/rulesets/mini-map', 'tests/rulesets/race'"),
                    env={"XDG_CACHE_HOME": str(tmp_path)})
    assert clean.stdout.splitlines() == ["[]", "False"]


def test_a_tree_from_lark_deeper_than_the_stack_converts():
    from lark import Token as LarkToken
    from lark import Tree as LarkTree

    from dsl.tree import Token, Tree, from_lark
    deep = LarkTree("expression", [LarkToken("NAME", "x", 0, 1, 1)])
    for _ in range(5 * sys.getrecursionlimit()):
        deep = LarkTree("neg", [deep])
    tree = from_lark(deep)
    depth = 0
    while isinstance(tree, Tree):
        tree, depth = tree.children[0], depth + 1
    assert isinstance(tree, Token) and (tree, tree.type, tree.line, tree.column) == ("x", "NAME", 1, 1)
    assert depth == 5 * sys.getrecursionlimit() + 1


def test_our_data_folders_are_found_as_importlib_resources_finds_them():
    from importlib import resources

    from engine.base.files import package_dir
    for name in ("rulesets", "schemas", "dsl"):
        assert package_dir(name) == Path(str(resources.files(name)))
    with pytest.raises(ModuleNotFoundError):
        package_dir("no_such_daimyo_package")
    out = _python("import sys; from engine.cli import main; main(['validate', 'shogun']); "
                  "print('importlib.resources' in sys.modules)")
    assert out.stdout.splitlines()[-1] == "False", out.stderr


@pytest.mark.parametrize("name", ["plan", "3", 3, "", "label", None])
def test_an_item_answers_to_the_names_it_lists(name):
    from engine.loading.layering import _answers_to, _item_names
    items = ["plan", "3", 3, "", {"step": "plan"}, {"label": "plan", "step": "x"}, {"name": 3},
             {"name": "3", "step": 4}, {"label": None, "step": "label"}, [], None, {"do": ["plan"]}]
    for item in items:
        assert _answers_to(item, name) == (name in _item_names(item)), item


def test_the_initial_state_shares_no_list_or_map_between_entities():
    """initial_state copies each kind's fields once as plain data, then per item (a plain dict
    copy when every field is a scalar): no two entities, and no entity and the model, share a
    container, so a move that changes one entity's list changes only that."""
    from engine import load
    from engine.model.checks import initial_state
    model = load("shogun")
    state = initial_state(model, 4)
    seen: set[int] = set()
    stack = [state]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, dict)):
            assert id(v) not in seen and id(v) not in model.frozen_ids
            seen.add(id(v))
            stack.extend(v.values() if isinstance(v, dict) else v)
    assert all(type(e) is dict for e in state["ent"].values())
    assert len(state["ent"]) > 40 and json.dumps(state) == json.dumps(initial_state(model, 4))


def test_a_new_game_starts_from_its_own_copy_of_the_initial_state():
    """A new game's state is loaded from the initial state kept marshalled once per model and
    player count (engine/run/state.py `_initial`): equal to a fresh `initial_state`, its texts
    interned, and sharing no list or map with another game's state, so that a move in one game
    never shows in another started from the same model."""
    from engine import load
    from engine.model.checks import initial_state
    from engine.run.game import Game
    model = load("shogun")
    first, second = (Game.new(model, 4, seed, log=False, defer=True).state for seed in (1, 2))
    fresh = initial_state(model, 4)
    for state in (first, second):
        assert json.dumps(state["ent"]) == json.dumps(fresh["ent"])
        assert json.dumps(state["globals"]) == json.dumps(fresh["globals"])
    ids: dict[int, int] = {}
    for n, state in enumerate((first, second)):
        stack: list = [state["globals"], state["ent"], state["players"]]
        while stack:
            v = stack.pop()
            if isinstance(v, (list, dict)):
                assert ids.setdefault(id(v), n) == n and id(v) not in model.frozen_ids
                stack.extend(v.values() if isinstance(v, dict) else v)
                if isinstance(v, dict):
                    assert all(sys.intern(k) is k for k in v if type(k) is str)
            elif type(v) is str:
                assert sys.intern(v) is v
    first["ent"]["P1"]["provinces"].append("x")
    assert Game.new(model, 4, 3, log=False, defer=True).state["ent"]["P1"]["provinces"] == []


@pytest.mark.parametrize("combo", ["samurai-swords", "shogun"])
def test_the_state_and_the_static_data_hold_their_texts_interned(combo):
    """Rule code reads fields by names Python interned (`E[x]['owner']`): every key and text of a
    new game's state, and every id and attribute name of the static data, is that same object,
    so that a read finds its key without comparing characters (engine/model/checks.py
    `interned`). Interning changes no value: the state is equal to a plain copy's."""
    from engine import load
    from engine.model.checks import initial_state, interned
    model = load(combo)
    state = initial_state(model, 4)
    texts, stack = [], [state["globals"], state["ent"], state["players"]]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            texts.extend(k for k in v if type(k) is str)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif type(v) is str:
            texts.append(v)
    assert len(texts) > 300
    assert [t for t in texts if sys.intern(t) is not t] == []
    static_names = [t for iid, attrs in model.static.items() for t in (iid, *attrs)]
    assert [t for t in static_names if sys.intern(t) is not t] == []
    assert all(sys.intern(i) is i for ids in model.collections.values() for i in ids)
    # texts as values too (no bundled kind starts with one): made at run time, so not interned yet
    made = "".join(["own", "er"])
    value = {made: [made, {made: made}], "n": 1}
    got = interned(value)
    assert got == value and got is not value
    assert all(t is sys.intern(made) for t in (*got, got[made][0], *got[made][1], got[made][1][made]) if t != "n")


def test_a_clean_board_is_built_once_per_validation_and_a_board_with_problems_every_time(monkeypatch):
    import engine.model.build  # noqa: F401  (the module: `engine.model.build` is also a function)
    from engine.base.diagnostics import Diagnostics
    from engine.model.validate import validate_targets
    build_mod = sys.modules["engine.model.build"]
    built = []
    real = build_mod.build_board
    monkeypatch.setattr(build_mod, "build_board", lambda *a, **k: built.append(1) or real(*a, **k))
    from engine.loading.package import resolve_combo
    from engine.model.validate import variants
    builds = len(variants(resolve_combo(str(ROOT / "rulesets" / "shogun"), Diagnostics(), {}, None)))
    diags, checked = validate_targets([str(ROOT / "rulesets" / "shogun")])
    assert len(checked) == 1 and not diags.errors
    assert builds >= 3 and len(built) == 2  # one map per side (sun, moon), whatever the other options
    built.clear()
    bad = f"{ROOT}/tests/broken/board-self-link"
    first, _ = validate_targets([bad])
    assert first.errors and len(built) >= 1
    with build_mod.board_cache():
        for _ in range(2):
            again = Diagnostics()
            build_mod.build(bad, {}, None, again)
            assert [d.render() for d in again] == [d.render() for d in first]  # found again, each time


def _snapshot(value: object) -> object:
    """A value read from YAML with every location, as plain nested tuples."""
    from engine.loading.yamlio import LocDict, LocList
    if isinstance(value, LocDict):
        return ("map", value.loc, tuple(value.key_locs.items()), tuple(value.value_locs.items()),
                tuple((k, _snapshot(v)) for k, v in value.items()))
    if isinstance(value, LocList):
        return ("list", value.loc, tuple(value.item_locs), tuple(_snapshot(v) for v in value))
    if isinstance(value, (dict, list)):
        return (type(value).__name__, tuple(_snapshot(v) for v in (value.items() if isinstance(value, dict)
                                                                     else value)))
    return (type(value).__name__, value)


def test_validation_shares_the_files_values_and_never_changes_them(monkeypatch):
    """Every build of a validation reads the very values the reading cache read (copy on change:
    engine/loading/layering.py `_own`), so a patch of one build must never show in another:
    after validating base games, expansions that patch flows, merge kinds and replace entries,
    and their option and player-count variants, every file reads as it did when first read, and
    the remembered base layers too."""
    import engine.loading.layering as layering
    from engine.model.validate import validate_targets
    read, bases = [], []
    real_read, real_base = layering.load_yaml_cached, layering._from_base

    def recording_read(*args, **kwargs):
        value = real_read(*args, **kwargs)
        read.append((value, _snapshot(value)))
        return value

    def recording_base(data, provenance, notes):
        bases.append((data, _snapshot(data), dict(provenance)))
        return real_base(data, provenance, notes)
    monkeypatch.setattr(layering, "load_yaml_cached", recording_read)
    monkeypatch.setattr(layering, "_from_base", recording_base)
    targets = [str(ROOT / "rulesets" / name) for name in ("shogun", "chambers", "military-leaders", "samurai-swords",
                                                          "samurai-swords-objectives", "shogun-cards-wagers")]
    diags, checked = validate_targets(targets)
    assert len(checked) == 6 and not diags.errors
    assert len(read) > 30 and len(bases) > 10  # shared for real: far fewer base layers made than used
    assert len({id(data) for data, _, _ in bases}) < len(bases)
    for value, before in read:
        assert _snapshot(value) == before
    for data, before, _ in bases:
        assert _snapshot(data) == before


def _rule(value: object) -> object:
    """A compiled rule as what it was compiled from (its generated source and place), any other
    value as it is: two validations compile the same text into different functions."""
    if isinstance(value, dict):
        return {k: _rule(v) for k, v in value.items()}
    if not callable(value):
        return value
    cells = tuple(repr(c.cell_contents) for c in (getattr(value, "__closure__", None) or ()))
    name = getattr(value, "what", None) or value.__qualname__  # (a Rule says what it is)
    return (name, getattr(value, "source", None), getattr(value, "loc", None),
            None if hasattr(value, "source") else cells)


def test_a_remembered_step_flow_gives_the_nodes_a_fresh_walk_gives(monkeypatch):
    """The flow memo (engine/model/flow.py) copies a step's nodes only where walking it again
    would read the same: every build's node table, the names its rules read (R011) and every
    diagnostic are the same with and without it, for the bundled rulesets and broken cases
    whose steps call unknown steps or steps with other parameters in one build only."""
    import engine.model.flow as flow
    from engine.model.validate import validate_targets
    build = sys.modules["engine.model.build"]

    def run(targets: list[str], memo: bool) -> tuple:
        tables = []
        real = build._compile

        def recording(*args):
            model = real(*args)
            if model is not None:
                tables.append(([{k: _rule(v) for k, v in vars(n).items()} for n in model.nodes],
                               sorted(model.reads)))
            return model
        with monkeypatch.context() as m:
            m.setattr(build, "_compile", recording)
            if not memo:
                m.setattr(flow._FLOWS, "get", lambda: None)
            copied = []
            real_copy = flow.FlowCompiler._copy
            m.setattr(flow.FlowCompiler, "_copy", lambda self, w: copied.append(1) or real_copy(self, w))
            diags, _ = validate_targets(targets)
        return tables, [d.render() for d in diags], len(copied)

    cases = [[str(ROOT / "rulesets" / n) for n in ("shogun", "chambers", "samurai-swords-objectives")],
             [str(ROOT / "tests" / "broken" / "option-gated-file-broken")],
             [str(ROOT / "tests" / "broken" / "player-gated-file-broken")]]
    for targets in cases:
        with_memo, without = run(targets, True), run(targets, False)
        assert without[2] == 0
        assert with_memo[:2] == without[:2]
    assert run(cases[0], True)[2] > 50  # the memo is used: most steps are not walked again


def test_each_builtin_takes_the_arguments_its_signature_says():
    """The built-ins' argument counts and keywords are read from their code objects (validation
    does not import inspect): the same as inspect.signature gives, for every built-in."""
    import inspect

    from dsl.primitives import PRIMITIVES

    assert len(PRIMITIVES) > 40
    for name, prim in PRIMITIVES.items():
        params = list(inspect.signature(prim.fn).parameters.values())[1:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = any(p.kind is p.VAR_POSITIONAL for p in params)
        kw = tuple(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
                   and p.default is not p.empty)
        assert (prim.min_args, prim.max_args, prim.kwargs) == (
            len([p for p in positional if p.default is p.empty]), -1 if var else len(positional), kw), name
        assert prim.doc == (inspect.getdoc(prim.fn) or ""), name


def test_an_editors_unsaved_text_is_kept_in_no_files_pack(cache, monkeypatch, tmp_path):
    """A file read from an editor's buffer (the language server) no longer names the pack of its
    saved bytes: the buffer's texts are not written into that file's pack."""
    from engine.base import diskcache
    from engine.loading import yamlcache
    from engine.loading.yamlio import overridden

    monkeypatch.setattr(yamlcache, "_CACHE", [])
    monkeypatch.setattr(diskcache, "SOURCES", {})
    path = tmp_path / "rules.yaml"
    path.write_text("constants: {a: 1}\n", encoding="utf-8")
    yamlcache.load_yaml_cached(path, Diagnostics(), display_name="pkg/rules.yaml")
    assert "pkg/rules.yaml" in diskcache.SOURCES
    with overridden({str(path): "constants: {a: 2}\n"}):
        value = yamlcache.load_yaml_cached(path, Diagnostics(), display_name="pkg/rules.yaml")
    assert value["constants"]["a"] == 2 and "pkg/rules.yaml" not in diskcache.SOURCES
