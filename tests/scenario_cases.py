"""Scenario files as pytest cases: one test per scenario, named by folder, file and title.

Each file runs once, when its first case runs (not at collection), so a failing scenario
is reported under its own name with its file:line failures."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from engine.base.diagnostics import Diagnostics
from engine.cli.scenario import Outcome, run_paths
from engine.loading.yamlio import load_yaml


def scenario_cases(*dirs: Path) -> list:
    """pytest params (file, index) for every scenario in the folders."""
    params = []
    for d in dirs:
        for f in sorted(Path(d).glob("*.yaml")):
            data = load_yaml(f, Diagnostics(), display_name=str(f))
            items = data if isinstance(data, list) else [data]
            for i, sc in enumerate(items):
                title = sc.get("scenario", f.stem) if isinstance(sc, dict) else f.stem
                params.append(pytest.param(str(f), i, id=f"{Path(d).name}/{f.stem}: {title}"))
    return params


@cache
def _outcomes(file: str) -> tuple[Outcome, ...]:
    return tuple(run_paths([file]))


def check_scenario(file: str, index: int) -> None:
    outcomes = _outcomes(file)
    assert index < len(outcomes), f"scenario {index} of {file} did not run"
    outcome = outcomes[index]
    assert outcome.ok, "\n".join(f"{loc}: {msg}" for loc, msg in outcome.failures)
