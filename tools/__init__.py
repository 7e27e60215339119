"""Author and analyst tools built on the engine, beside the front door (engine/cli).

Each tool module declares its `daimyo` subcommand with `add_parser(sub)`; `register_cli` adds
them all and is registered in pyproject.toml under the `daimyo.commands` entry point group,
so the front door finds the tools without importing them. Tools may import every engine
layer, never the front door.
"""
from __future__ import annotations

import argparse
import importlib

TOOL_MODULES: list[str] = ["bench", "simulate", "tournament", "report", "mapdraw", "docsgen", "difftest"]


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add the tools' subcommands to the `daimyo` parser."""
    for module_name in TOOL_MODULES:
        importlib.import_module(f"tools.{module_name}").add_parser(sub)
