"""What `daimyo validate` found is kept on disk and given again only for the same files, the
same working folder and the same engine (engine/model/verdicts.py): an edit, a new file, an
editor's unsaved buffer or a damaged entry are validated afresh, never answered from the cache."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.base.diagnostics import Diagnostics
from engine.loading.yamlio import overridden
from engine.model import validate, verdicts

ROOT = Path(__file__).resolve().parent.parent
RACE = ROOT / "tests" / "rulesets" / "race"


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder with the verdicts on (tests/conftest.py turns them off), and a copy of
    the race game in `pkg`; returns the folder of the verdicts."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DAIMYO_NO_CACHE", raising=False)
    monkeypatch.setattr(verdicts, "_CACHE", [])
    monkeypatch.setattr(verdicts, "_DIGESTS", {})
    # The engine's name, fixed: a source edited a moment before the run would keep nothing
    # (test_the_engines_sources_name_the_entries checks how it is found).
    monkeypatch.setattr(verdicts, "_SALT", [b"this engine"])
    monkeypatch.chdir(tmp_path)
    shutil.copytree(RACE, tmp_path / "pkg")
    return tmp_path / "cache" / "daimyo" / verdicts.FORMAT


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The combos whose variants were really built (not given from the cache)."""
    made: list[str] = []
    real = validate._build_variants
    monkeypatch.setattr(validate, "_build_variants", lambda combo, diags: made.append(combo.name) or real(combo, diags))
    return made


def found(target: str = "pkg") -> list[tuple]:
    diags, _ = validate.validate_targets([target])
    return [(d.code, str(d.loc), d.severity, d.message, d.hint) for d in diags.sorted()]


def uncached(monkeypatch: pytest.MonkeyPatch, target: str = "pkg") -> list[tuple]:
    with monkeypatch.context() as m:
        m.setattr(verdicts, "_CACHE", [None])
        return found(target)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_same_files_are_not_built_again_and_give_the_same(kept, builds, monkeypatch):
    edit(Path("pkg/rules.yaml"), "when: n == 3", "when: n == three")  # an error, to be given again
    first = found()
    assert [d[0] for d in first] == ["D101"] and first[0][1] == "pkg/rules.yaml:15:16"
    assert len(builds) == 1 and len(list(kept.rglob("*.json"))) == 1
    assert found() == first and len(builds) == 1  # the second time from the cache, no build
    assert uncached(monkeypatch) == first


@pytest.mark.parametrize("change", ["edit a rule", "add a file", "edit the manifest"])
def test_a_changed_package_is_validated_again(kept, builds, monkeypatch, change):
    assert found() == []
    pkg = Path("pkg")
    if change == "edit a rule":
        edit(pkg / "rules.yaml", "when: n == 3", "when: n == three")
    elif change == "add a file":  # the manifest lists no files: every YAML file of the folder is loaded
        (pkg / "more.yaml").write_text("key: [unclosed\n", encoding="utf-8")
    else:
        edit(pkg / "ruleset.yaml", "default: 20", "default: 30")
    again = found()
    assert len(builds) == 2 and again == uncached(monkeypatch) and again != []


def test_another_working_folder_names_files_from_there(kept, builds, tmp_path, monkeypatch):
    edit(Path("pkg/rules.yaml"), "when: n == 3", "when: n == three")
    target = str(tmp_path / "pkg")  # the same target, named the same way, from two folders
    assert found(target)[0][1] == "pkg/rules.yaml:15:16"
    monkeypatch.chdir(tmp_path / "pkg")
    assert found(target)[0][1] == "rules.yaml:15:16"
    assert len(builds) == 2


def test_an_editors_buffer_is_never_kept_or_answered_from_the_cache(kept, builds):
    assert found() == []
    rules = Path("pkg/rules.yaml").resolve()
    broken = rules.read_text(encoding="utf-8").replace("when: n == 3", "when: n == three")
    with overridden({str(rules): broken}):
        assert [d[0] for d in found()] == ["D101"]
    assert found() == [] and len(builds) == 2
    assert len(list(kept.rglob("*.json"))) == 1  # only the files on disk were kept


@pytest.mark.parametrize("entry", [b"\x00 not json", b'["verdict-1"]', b'["verdict-0", []]',
                                   b'["verdict-1", [["D101", "m", "f", "1", 1, "error", ""]]]',
                                   b'["verdict-1", [["D101", "m", "f", 1, 1, "fatal", ""]]]',
                                   b'["verdict-1", [["D101", "m", "f", 1, 1, "error"]]]',
                                   b"[" * 100_000])
def test_a_damaged_entry_is_ignored_and_written_again(kept, builds, entry):
    edit(Path("pkg/rules.yaml"), "when: n == 3", "when: n == three")
    first = found()
    (path,) = kept.rglob("*.json")
    good = path.read_bytes()
    path.write_bytes(entry)
    assert found() == first and len(builds) == 2
    assert path.read_bytes() == good


def test_a_forged_clean_entry_is_what_the_cache_trusts(kept, builds):
    """The cache is the user's own, as the parse caches are: what an entry says, the same files
    are taken to give (DAIMYO_NO_CACHE=1 validates without it)."""
    edit(Path("pkg/rules.yaml"), "when: n == 3", "when: n == three")
    assert found() != []
    (path,) = kept.rglob("*.json")
    path.write_text(json.dumps([verdicts.FORMAT, []]), encoding="utf-8")
    assert found() == [] and len(builds) == 1


def test_each_file_is_read_once_unless_it_just_changed(kept, builds, monkeypatch):
    rules = Path("pkg/rules.yaml").resolve()
    reads: list[str] = []
    real = verdicts.diskcache.DiskCache.read
    monkeypatch.setattr(verdicts.diskcache.DiskCache, "read",
                        staticmethod(lambda path, limit: reads.append(str(path)) or real(path, limit)))
    assert found() == [] and found() == []
    assert reads.count("pkg/rules.yaml") == 3  # before and after the build, and the second time: just written
    monkeypatch.setattr(verdicts, "RACY", 0)  # as if written long ago
    reads.clear()
    assert found() == [] and found() == []
    assert reads.count("pkg/rules.yaml") == 1 and str(rules) in verdicts._DIGESTS
    edit(rules, "when: n == 3", "when: n == x")  # the same size: its status still changes
    assert [d[0] for d in found()] == ["D101"] and len(builds) == 2


def test_a_file_changed_while_the_builds_ran_is_not_kept(kept, monkeypatch):
    real = validate._build_variants

    def racing(combo, diags):
        real(combo, diags)
        edit(Path("pkg/rules.yaml"), "when: n == 3", "when: n == 4")

    monkeypatch.setattr(validate, "_build_variants", racing)
    assert found() == []
    assert list(kept.rglob("*.json")) == []


def test_the_engines_sources_name_the_entries(tmp_path, monkeypatch):
    engine = tmp_path / "engine"
    shutil.copytree(ROOT / "dsl", engine, ignore=shutil.ignore_patterns("__pycache__"))
    assert verdicts._salt([engine]) is None  # written a moment ago: nothing is kept yet
    monkeypatch.setattr(verdicts, "RACY", 0)
    before = verdicts._salt([engine])
    assert before is not None and verdicts._salt([engine]) == before
    (engine / "notes.txt").write_text("not a source", encoding="utf-8")  # only sources count
    assert verdicts._salt([engine]) == before
    edit(engine / "runtime.py", "MAX_", "MAX__")
    assert verdicts._salt([engine]) != before
    after = verdicts._salt([engine])
    edit(engine / "runtime.py", "MAX__", "MAX_X")  # the same size
    assert verdicts._salt([engine]) not in (before, after, None)


def test_nothing_is_kept_with_caching_off(kept, builds, monkeypatch):
    monkeypatch.setenv("DAIMYO_NO_CACHE", "1")
    monkeypatch.setattr(verdicts, "_CACHE", [])
    assert found() == [] and found() == [] and len(builds) == 2
    assert not kept.exists()


def test_validation_results_are_the_kept_ones_for_every_bundled_ruleset(kept, builds):
    targets = [str(p) for p in sorted((ROOT / "rulesets").iterdir()) if (p / "ruleset.yaml").is_file()]
    first = validate.validate_targets(targets)
    again = validate.validate_targets(targets)
    assert again[1] == first[1] and len(first[1]) == 11
    assert [d.to_json() for d in again[0].sorted()] == [d.to_json() for d in first[0].sorted()]
    assert len(builds) == 11  # the second validation built nothing
    assert isinstance(first[0], Diagnostics)
