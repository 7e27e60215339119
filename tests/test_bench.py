"""`daimyo bench`: every figure says what it measured (combo, options, players, set-up, load).

Benchmarks only measure: these tests check what the report names, never a time.
"""
from __future__ import annotations

import json

import pytest

from engine import load
from engine.cli import main


def test_bench_json_names_the_options_players_and_set_up(capsys):
    code = main(["bench", "shogun", "--players", "3", "--option", "tower=one_pool",
                 "--option", "side=moon", "--seconds", "0.01", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["asked"]["options"] == {"tower": "one_pool", "side": "moon"}
    (row,) = out["rulesets"]
    assert row["combo"] == "shogun" and row["players"] == 3
    # the options the game ran with: the ones asked for, and the defaults of the rest
    assert row["options"]["tower"] == "one_pool" and row["options"]["side"] == "moon"
    assert row["options"]["setup"] == "claim"
    assert row["setup"]["log"] is False and "random" in row["setup"]["bots"]
    assert row["setup"]["driven_by"] == "Game.play_out"
    assert row["games"] >= 1 and row["decisions_per_game"] > 0
    assert out["load_average"] is None or len(out["load_average"]) == 3


def test_bench_human_output_names_what_it_measured(capsys):
    assert main(["bench", "shogun", "--players", "4", "--option", "tower=two_ledges",
                 "--seconds", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out
    assert "shogun (4 players; options: side=sun, setup=claim, tower=two_ledges)" in out
    assert "set-up: random bots, no log" in out


def test_bench_option_without_a_value_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["bench", "shogun", "--option", "tower", "--seconds", "0.01"])
    assert e.value.code == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_bench_reports_an_unknown_option_value_instead_of_measuring(capsys):
    code = main(["bench", "shogun", "--players", "4", "--option", "tower=wooden", "--seconds", "0.01",
                 "--json"])
    row = json.loads(capsys.readouterr().out)["rulesets"][0]
    assert code == 1 and "error" in row and row["options"] == {"tower": "wooden"}


def test_bench_plays_the_same_games_played_out_or_step_by_step(capsys):
    from tools.bench import _play_rate
    model = load("samurai-swords", players=4)
    out, stepwise = _play_rate(model, 4, 0), _play_rate(model, 4, 0, stepwise=True)  # one game each
    assert out["games"] == stepwise["games"] == 1
    assert out["decisions_per_game"] == stepwise["decisions_per_game"] > 100
    assert main(["bench", "shogun", "--seconds", "0.01", "--stepwise", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rulesets"]
    assert row["setup"]["driven_by"] == "Game.apply, decision by decision"
