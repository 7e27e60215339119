"""Hostile and careless input never hangs, never crashes and never loses a game (issue 15).

Four tables, one row per case, each checked for its code or message, its location (a file,
line and column; a save's field; a log's line), exit status 1 and a time cap:
- PLAY: packages under tests/broken/play-* that validate cleanly and fail in play (the work
  budget, size caps, only data in the state);
- SAVES: damaged copies of a real save for `daimyo play --load`;
- LOGS: edited copies of a real log for `daimyo replay`;
- PROMPT: what a person types at the terminal.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Game, load
from engine.cli import main
from engine.run.state import save_checksum

REPO = Path(__file__).resolve().parent.parent
BROKEN = REPO / "tests" / "broken"
RACE = "tests/rulesets/race"
SECONDS = 20.0  # the cap for each case, in-process or as a subprocess (typically well under 2 s)


@pytest.fixture(autouse=True)
def at_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def run_main(*args: str) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue(), time.monotonic() - start


def daimyo(*args: str, stdin: str | bytes = "", env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "engine.cli", *args], input=stdin, capture_output=True,
                       text=isinstance(stdin, str), cwd=REPO, timeout=120, env=env)
    return r, time.monotonic() - start


# ---- play: budgets, caps, data only ----

PLAY: dict[str, tuple[str, int, int, str]] = {  # case: (code, line, column, words)
    "play-budget-shared":      ("E002", 12, 11, "more than 1,000,000 steps of work without reaching a decision"),
    "play-step-runs-itself":   ("E002", 13, 7, "nested more than 1,000 levels deep"),
    "play-flow-is-itself":     ("E002", 12, 12, "nested more than 1,000 levels deep"),
    "play-nested-repeat":      ("E002", 15, 13, "steps of work"),
    "play-heavy-while":        ("E002", 12, 10, "steps of work"),
    "play-unique-quadratic":   ("E002", 13, 7, "steps of work"),
    "play-sorted-key-heavy":   ("E002", 13, 7, "steps of work"),
    "play-count-where-heavy":  ("E002", 14, 7, "steps of work"),
    "play-tower-bomb":         ("E002", 11, 7, "steps of work"),
    "play-shuffle-loop":       ("E002", 12, 11, "steps of work"),
    "play-remove-loop":        ("E002", 13, 11, "steps of work"),
    "play-text-doubling":      ("E002", 14, 11, "steps of work"),  # (each join costs its length)
    "play-template-doubling":  ("E002", 14, 11, "steps of work"),
    "play-join-bomb":          ("E003", 13, 7, "more than 1,000,000 characters"),
    "play-list-doubling":      ("E002", 15, 11, "steps of work"),
    "play-shared-list-bomb":   ("E003", 16, 7, "too large to keep in the game state"),
    "play-deep-value":         ("E003", 13, 7, "nested too deeply to keep in the game state"),
    "play-number-growth":      ("E003", 15, 11, "more than 1,000 digits"),
    "play-number-doubling":    ("E003", 14, 11, "more than 1,000 digits"),
    "play-function-in-state":  ("E004", 13, 7, "a function cannot be kept in the game state"),
    "play-do-text-under-loop": ("E001", 12, 10, "cannot evaluate this"),
    "play-score-not-a-number": ("E001", 12, 11, "the score of P1 must be a number, got none"),
    "play-infinite-number":    ("E003", 14, 7, "the number inf cannot be kept in the game state"),
    "play-compare-bomb":       ("E002", 12, 7, "steps of work"),
    "play-compare-loop":       ("E002", 13, 11, "steps of work"),
    "play-copy-loop":          ("E002", 12, 11, "steps of work"),
    "play-join-loop":          ("E002", 12, 11, "steps of work"),
    "play-format-bomb":        ("E001", 11, 7, "remainder of two numbers"),
    "play-argument-loop":      ("E002", 16, 9, "steps of work"),  # (a flow item's copy: located there)
}
CLEAN_PLAY = {"play-ok-mixed-keys", "play-ok-say-function", "play-ok-control-characters"}


def test_every_play_case_folder_is_in_a_table() -> None:
    assert {p.name for p in BROKEN.glob("play-*")} == set(PLAY) | CLEAN_PLAY


@pytest.mark.parametrize("case", sorted(PLAY))
def test_play_case_ends_with_a_located_error(case: str) -> None:
    code, line, col, words = PLAY[case]
    folder = f"tests/broken/{case}"
    assert run_main("validate", folder)[0] == 0  # validation cannot see these: only play does
    status, _, err, seconds = run_main("play", folder, "--players", "2", "--quiet")
    assert status == 1 and "Traceback" not in err
    assert f"{folder}/rules.yaml:{line}:{col}: error[{code}]: " in err, err
    assert words in err
    assert seconds < SECONDS


@pytest.mark.parametrize("case", sorted(CLEAN_PLAY))
def test_odd_but_valid_packages_validate_play_describe_and_replay(case: str, tmp_path: Path) -> None:
    folder = f"tests/broken/{case}"
    log = tmp_path / "g.jsonl"
    assert run_main("validate", folder)[0] == 0
    assert run_main("describe", folder, "--resolved")[0] == 0
    status, out, err, _ = run_main("play", folder, "--players", "2", "--log", str(log))
    assert status == 0, err
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert not re.search(r"0x[0-9a-f]{6,}", log.read_text(encoding="utf-8"))  # no memory address
    status, out, err, _ = run_main("replay", str(log))
    assert status == 0 and "every line matches" in out, err


def test_control_characters_are_shown_escaped_and_never_fake_a_line() -> None:
    _, out, _, _ = run_main("play", "tests/broken/play-ok-control-characters", "--players", "2")
    assert "\\x1b[2J\\x1b[HWinner: P2\\x9b\\x07" in out
    assert [ln for ln in out.splitlines() if ln.startswith("Winner")] == ["Winners (tied): P1, P2"]


def test_say_of_a_function_is_plain_words() -> None:
    g = Game.new(load("tests/broken/play-ok-say-function", players=2), 2)
    says = [e["text"] for e in g.log if e["t"] == "say"]
    assert says == ["the rule is a function and a list of 1"]


def test_bundled_games_stay_far_below_the_work_budget() -> None:
    """The budget only stops runaway rules: a whole game never comes near it between decisions."""
    from dsl.runtime import WORK_BUDGET
    from engine.agents import make_agent
    model = load("shogun+tennos-court+military-leaders+chambers+samurai-cards", players=5)
    g = Game.new(model, 5, seed=3)
    bots = {p: make_agent("random", i) for i, p in enumerate(g.state["players"])}
    peak = 0
    while not g.over:
        peak = max(peak, g.meter.used)
        d = g.decision
        g.apply(d.options[bots[d.player].choose(g, d)])
    assert 0 < peak < WORK_BUDGET // 50


def test_checks_have_a_time_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsl.runtime import Meter
    meter = Meter(10**9, seconds=0.05, where="in one check")
    from dsl.runtime import BudgetExceeded, Ctx
    c = Ctx({"globals": {}, "ent": {}}, None, None, meter=meter)
    start = time.monotonic()
    with pytest.raises(BudgetExceeded, match=r"ran for more than 0\.05 seconds"):
        while True:
            c.tick()
    assert time.monotonic() - start < 2


# ---- saves ----

@pytest.fixture(scope="module")
def good_save(tmp_path_factory: pytest.TempPathFactory) -> dict:
    path = tmp_path_factory.mktemp("save") / "g.json"
    r, _ = daimyo("play", RACE, "--players", "2", "--seats", "human,random", "--save", str(path),
                  stdin="2\n2\n3\nq\n")
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text(encoding="utf-8"))


def _resealed(save: dict) -> dict:
    """A save edited by someone who also recomputed its checksum: full validation must catch it."""
    return {**save, "checksum": save_checksum(save)}


def _edit(save: dict, path: str, value: Any, reseal: bool = False) -> dict:
    out = json.loads(json.dumps(save))
    node = out
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return _resealed(out) if reseal else out


_DELETE = object()

# case: (how to damage the save, words of the message naming the field)
SAVES: dict[str, tuple[Any, str]] = {
    "truncated":         (lambda s: json.dumps(s)[:200], "not valid JSON (line 1, column"),
    "empty":             (lambda s: "", "not valid JSON (line 1, column 1"),
    "binary":            (lambda s: b"\xff\xfe\x00garbage", "not UTF-8"),
    "a-list":            (lambda s: "[1, 2]", "not a JSON object"),
    "wrong-format":      (lambda s: _edit(s, "format", "other/9"), "`format` is \"other/9\""),
    "players-as-text":   (lambda s: _edit(s, "players", "2"), "`players` is missing or not a number"),
    "ruleset-missing":   (lambda s: _edit(s, "ruleset", _DELETE), "`ruleset` is missing"),
    "ruleset-gone":      (lambda s: _edit(s, "ruleset", "/no/such/folder"), "cannot be loaded"),
    "other-rules":       (lambda s: _edit(s, "fingerprint", "0000000000000000"), "made with different rules"),
    "bad-seats":         (lambda s: _edit(s, "seats", ["human", "alien"]), "`seats` must list one of"),
    "edited-score":      (lambda s: _edit(s, "state.ent.P1.total", 19), "`checksum` does not match"),
    "edited-result":     (lambda s: _edit(s, "state.seq", 0), "`checksum` does not match"),
    "no-checksum":       (lambda s: _edit(s, "checksum", _DELETE), "`checksum` is missing"),
    "huge-number":       (lambda s: json.dumps(s).replace('"seq": ', '"seq": 1' + "0" * 5000 + ', "x": '),
                          "a number of 5,001 digits"),
    "deep-nesting":      (lambda s: "[" * 100_000 + "]" * 100_000, "nested more than 200 levels"),
    "not-a-number":      (lambda s: json.dumps(s).replace('"seq": ', '"seq": NaN, "x": '), "`NaN`"),
    "too-large":         (lambda s: " " * 20_000_001, "larger than 20,000,000 bytes"),
    "extra-state-field": (lambda s: _edit(s, "state.cheat", 1, reseal=True), "unknown field `state.cheat`"),
    "missing-entity":    (lambda s: _edit(s, "state.ent.P2", _DELETE, reseal=True), "`P2` is missing"),
    "entity-fields":     (lambda s: _edit(s, "state.ent.P1.gold", 5, reseal=True), "`state.ent.P1`"),
    "bad-frame":         (lambda s: _edit(s, "state.flow.0.n", 10**6, reseal=True), "`state.flow[0]`"),
    "huge-frame-count":  (lambda s: _edit(s, "state.flow.0.i", 10**30, reseal=True), "`state.flow[0]`"),
    "bad-pending":       (lambda s: _edit(s, "state.pending.player", "P7", reseal=True), "`state.pending`"),
    "rng-out-of-range":  (lambda s: _edit(s, "state.rng", -1, reseal=True), "`state.rng` is out of range"),
    "over-disagrees":    (lambda s: _edit(s, "state.over", True, reseal=True), "`state.over`"),
}


@pytest.mark.parametrize("case", sorted(SAVES))
def test_damaged_save_is_refused_naming_the_field(case: str, good_save: dict, tmp_path: Path) -> None:
    damage, words = SAVES[case]
    made = damage(good_save)
    path = tmp_path / f"{case}.json"
    if isinstance(made, bytes):
        path.write_bytes(made)
    else:
        path.write_text(made if isinstance(made, str) else json.dumps(made), encoding="utf-8")
    status, out, err, seconds = run_main("play", "--load", str(path), "--quiet")
    assert status == 1 and "Traceback" not in err and "Final table" not in out
    assert err.startswith(f"daimyo: cannot load `{path}`") or err.startswith(f"daimyo: cannot continue `{path}`"), err
    assert words in err, err
    assert seconds < SECONDS


def test_an_intact_save_loads_and_finishes(good_save: dict, tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(json.dumps(good_save), encoding="utf-8")
    r, _ = daimyo("play", "--load", str(path), "--quiet", stdin="3\n" * 40)
    assert r.returncode == 0, r.stderr


def test_load_keeps_people_in_their_seats(good_save: dict, tmp_path: Path) -> None:
    assert good_save["seats"] == ["human", "random"]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(good_save), encoding="utf-8")
    r, _ = daimyo("play", "--load", str(path), stdin="3\n" * 40)  # no --seats: the save says who plays
    assert r.returncode == 0, r.stderr
    assert "P1 [" in r.stdout or "\nP1" in r.stdout  # P1 is asked: still a person


# ---- logs ----

@pytest.fixture(scope="module")
def good_log(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = tmp_path_factory.mktemp("log") / "g.jsonl"
    status, _, err, _ = run_main("play", RACE, "--players", "2", "--quiet", "--log", str(path), "--seed", "4")
    assert status == 0, err
    return path.read_text(encoding="utf-8").splitlines()


def _decision_at(lines: list[str], k: int = 1) -> int:
    """The index of the k-th decision line."""
    return [i for i, ln in enumerate(lines) if '"t":"decision"' in ln][k - 1]


def _set(lines: list[str], i: int, text: str) -> list[str]:
    return [*lines[:i], text, *lines[i + 1:]]


def _start(lines: list[str], **change: Any) -> list[str]:
    start = json.loads(lines[0])
    for k, v in change.items():
        if v is _DELETE:
            del start[k]
        else:
            start[k] = v
    return [json.dumps(start), *lines[1:]]


def _choice(lines: list[str], value: Any) -> list[str]:
    i = _decision_at(lines, 2)
    e = json.loads(lines[i])
    e["choice"] = value
    return _set(lines, i, json.dumps(e, separators=(",", ":")))


# case: (edit -> (lines, the 1-based line the error must name), words)
LOGS: dict[str, tuple[Any, str]] = {
    "truncated-line":   (lambda L: ([*L[:6], L[6][:15]], 7), "not valid JSON"),
    "bad-json":         (lambda L: (_set(L, 4, '{"t": x'), 5), "not valid JSON"),
    "not-an-object":    (lambda L: (_set(L, 3, "[1, 2]"), 4), "a JSON object with a `t`"),
    "blank-line":       (lambda L: ([*L[:5], "", *L[5:]], 6), "not valid JSON"),
    "deep-nesting":     (lambda L: (_set(L, 2, "[" * 50_000 + "]" * 50_000), 3), "nested more than 200"),
    "huge-number":      (lambda L: (_set(L, 2, '{"t":"decision","choice":' + "9" * 5000 + "}"), 3),
                         "5,000 digits"),
    "not-a-number":     (lambda L: (_set(L, 2, '{"t":"decision","choice":Infinity}'), 3), "`Infinity`"),
    "start-players":    (lambda L: (_start(L, players="P1,P2"), 1), "`players` is missing or damaged"),
    "start-seed-text":  (lambda L: (_start(L, seed="4"), 1), "`seed` is missing or damaged"),
    "start-no-ruleset": (lambda L: (_start(L, ruleset=_DELETE), 1), "`ruleset` is missing or damaged"),
    "start-path-gone":  (lambda L: (_start(L, ruleset="/no/such/folder"), 1), "cannot load ruleset"),
    "other-rules":      (lambda L: (_start(L, fingerprint="0" * 16), 1), "rules differ"),
    "illegal-choice":   (lambda L: (_choice(L, 7), _decision_at(L, 2) + 1), "illegal move in the log"),
    "no-choice":        (lambda L: (_choice(L, _DELETE) if False else
                                    _set(L, _decision_at(L, 2), '{"t":"decision"}'), _decision_at(L, 2) + 1),
                         "has no `choice`"),
    "edited-account":   (lambda L: (_set(L, _decision_at(L, 3) + 1, '{"t":"say","text":"P1 wins"}'),
                                    _decision_at(L, 3) + 2), "does not match the game here"),
    "ends-early":       (lambda L: (L[:_decision_at(L, 4)], _decision_at(L, 4) + 1), "ends before the game does"),
    "goes-on-after":    (lambda L: ([*L, L[-1]], len(L) + 1), "goes on after the game ended"),
    "not-utf8":         (lambda L: ([*L[:2], b"\xff\xfe".decode("latin-1"), *L[2:]], 3), "not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(LOGS))
def test_edited_log_names_the_right_line(case: str, good_log: list[str], tmp_path: Path) -> None:
    edit, words = LOGS[case]
    lines, line = edit(list(good_log))
    path = tmp_path / f"{case}.jsonl"
    data = "\n".join(lines) + "\n"
    path.write_bytes(data.encode("latin-1") if case == "not-utf8" else data.encode("utf-8"))
    status, _, err, seconds = run_main("replay", str(path))
    assert status == 1 and "Traceback" not in err
    assert err.startswith(f"{path}:{line}: "), err[:300]
    assert words in err, err[:300]
    assert seconds < SECONDS


def test_a_log_too_large_is_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.cli.replay as replay
    monkeypatch.setattr(replay, "MAX_LOG_BYTES", 1000)
    path = tmp_path / "big.jsonl"
    path.write_text("x" * 1001, encoding="utf-8")
    status, _, err, _ = run_main("replay", str(path))
    assert status == 1 and "larger than 1,000 bytes" in err


# ---- the prompt ----

def _race(*extra: str, stdin: str | bytes) -> subprocess.CompletedProcess:
    r, seconds = daimyo("play", RACE, "--players", "2", "--seats", "human,random", *extra, stdin=stdin)
    assert seconds < SECONDS and "Traceback" not in (r.stderr if isinstance(r.stderr, str) else r.stderr.decode())
    return r


PROMPT: dict[str, tuple[str, str]] = {  # what is typed first, then what the person is told
    "superscript-two":    ("²", "only the digits 0-9 are read as numbers"),
    "circled-one":        ("①", "only the digits 0-9 are read as numbers"),
    "arabic-indic-two":   ("٢", "only the digits 0-9 are read as numbers"),
    "five-thousand-digits": ("9" * 5000, "is not one of the options"),
    "zero":               ("0", "0 is not one of the options; type a number from 1 to 3"),
    "a-word-with-s":      ("sure", "type a number from 1 to 3, or h for help"),
    "save-to-a-folder":   ("s tests", "could not save to tests"),
    "save-to-no-folder":  ("s no/such/dir/g.json", "could not save to no/such/dir/g.json"),
}


@pytest.mark.parametrize("case", sorted(PROMPT))
def test_prompt_explains_and_asks_again(case: str) -> None:
    typed, told = PROMPT[case]
    r = _race(stdin=f"{typed}\n" + "3\n" * 40)
    assert told in r.stdout, r.stdout[-500:]
    assert r.returncode == 0 and "Final table" in r.stdout  # nothing lost: the game went on to its end


def test_invalid_utf8_gets_a_new_prompt() -> None:
    r = _race(stdin=b"\xff\xfe\n" + b"3\n" * 40)
    assert r.returncode == 0 and b"Final table" in r.stdout


def test_a_word_starting_with_s_does_not_save(tmp_path: Path) -> None:
    r = _race("--save", str(tmp_path / "g.json"), stdin="sure\nsx\nsave-me\n" + "3\n" * 40)
    assert "saved to" not in r.stdout and r.stdout.count("type a number from 1 to 3") == 3


def test_end_of_input_without_save_warns_and_exits_1() -> None:
    r = _race(stdin="2\n")
    assert r.returncode == 1 and "NOT saved" in r.stderr


def test_end_of_input_with_save_saves(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    r = _race("--save", str(path), stdin="2\n")
    assert r.returncode == 0 and path.is_file() and json.loads(path.read_text())["seats"] == ["human", "random"]


def test_output_paths_are_checked_before_the_game() -> None:
    r = _race("--save", "no/such/dir/g.json", stdin="")
    assert r.returncode == 1 and "cannot use --save" in r.stderr and "Preparation" not in r.stdout
    assert "the folder `no/such/dir` does not exist" in r.stderr
    r = _race("--log", "tests", stdin="")
    assert r.returncode == 1 and "`tests` is a folder" in r.stderr


@pytest.mark.parametrize("spec, words", [("P2", "needs PLAYER=FILE"), ("P9=x.jsonl", "not a player here"),
                                         ("=x.jsonl", "needs PLAYER=FILE"), ("P2=", "needs PLAYER=FILE")])
def test_log_for_needs_player_and_file(spec: str, words: str) -> None:
    status, out, err, seconds = run_main("play", RACE, "--players", "2", "--quiet", "--log-for", spec)
    assert status == 2 and words in err and out == "" and seconds < SECONDS


def test_failed_save_asks_again_then_saves(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    r = _race(stdin=f"s {tmp_path}\nq {path}\n")
    assert "could not save to" in r.stdout and f"saved to {path}" in r.stdout and r.returncode == 0


def test_interrupt_saves_to_the_save_file(tmp_path: Path) -> None:
    import signal
    path = tmp_path / "g.json"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "play", RACE, "--players", "2", "--seats",
                             "human,random", "--save", str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    time.sleep(3)  # the first prompt is up: the person presses Ctrl-C there
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=SECONDS)
    assert proc.returncode == 130, err
    assert path.is_file() and f"saved to {path}" in err and "Traceback" not in err


def test_numbers_are_typed_as_shown_and_keep_their_place() -> None:
    from engine.cli.human import numbered

    class D:
        def __init__(self, options: list, step: str = "s") -> None:
            self.options, self.player, self.step = options, "P1", step
    assert numbered(D([0, 1, 2, None])) == [(0, 0), (1, 1), (2, 2)]  # a bid of 1 is typed 1
    table: dict = {}
    first = numbered(D(["a", "b", "c"]), table)
    second = numbered(D(["c", "a"]), table)  # b was taken: a and c keep their numbers
    assert first == [(1, 0), (2, 1), (3, 2)] and second == [(1, 1), (3, 0)]
    assert numbered(D(["d", "c"]), table) == [(1, 0), (3, 1)]  # a new option takes a free number


def test_view_is_readable_and_says_how_much_it_shows() -> None:
    from engine.cli.human import render_view
    g = Game.new(load("shogun", players=3), 3, seed=2)
    text = render_view(g, g.decision.player)
    assert not text.lstrip().startswith("{") and '"globals"' not in text
    assert "(you)" in text and "P2 (Barbara)" in text
    assert "hidden" in text  # the others' secrets are shown as hidden, never as values


def test_targets_say_who_owns_them() -> None:
    from engine.cli.human import _show
    g = Game.new(load("shogun", players=3), 3, seed=2)
    province = g.model.collections["provinces"][0]
    g.state["ent"][province]["owner"] = "P2"
    assert _show(g, province).endswith("[P2 (Barbara)]")
    g.state["ent"][province]["owner"] = None
    assert _show(g, province).endswith("[no owner]")


def test_two_people_at_one_screen_get_a_hand_over_line() -> None:
    r, _ = daimyo("play", RACE, "--players", "2", "--seats", "human,human", stdin="\n3\n\n3\n" * 30)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    first = out.index("Hand over to P1")
    second = out.index("Hand over to P2")
    assert first < out.index("P1: how far?") < second  # P1 is asked only after the hand-over
    between = out[second - 200:second]
    assert "\n" * 20 in out[first:second + 1] or between.count("\n") > 10  # P1's screen scrolled away


def test_interrupt_between_bot_moves_saves_a_whole_game(tmp_path: Path) -> None:
    """Ctrl-C while the engine is busy waits for the move to finish: the save always loads."""
    import signal
    path = tmp_path / "g.json"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "play", "shogun", "--players", "4", "--quiet",
                             "--bots", "search", "--save", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    time.sleep(4)  # search bots think for minutes: the game is well under way
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=SECONDS)
    assert "Traceback" not in err
    assert proc.returncode == 130 and path.is_file() and f"saved to {path}" in err
    assert json.loads(path.read_text(encoding="utf-8"))["seats"] == ["search"] * 4
    r, _ = daimyo("play", "--load", str(path), "--quiet", "--seats", "random,random,random,random")
    assert r.returncode == 0 and "Final table" in r.stdout, r.stderr


def test_map_without_numpy_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """networkx's layouts need numpy (a dependency now); if it is missing, one line says so."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now fails
    status, _, err, _ = run_main("map", "tests/rulesets/mini-map", "--players", "2", "--layout", "spring",
                                 "--out", str(tmp_path / "m.svg"))
    assert status == 1 and err.count("\n") == 1 and "needs numpy (pip install numpy)" in err, err


def test_failed_atomic_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.base import files

    def full_disk(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        files.write_atomic(tmp_path / "g.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_temporary_files_of_a_killed_writer_are_removed(tmp_path: Path) -> None:
    from engine.base.files import write_atomic
    dead = tmp_path / ".g.json.tmp999999999"  # no process has this id
    dead.write_text("half a save", encoding="utf-8")
    write_atomic(tmp_path / "g.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]
