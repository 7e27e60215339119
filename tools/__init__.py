"""Author and analyst tools built on the engine. Each tool may add a `daimyo` subcommand."""
from __future__ import annotations

import argparse


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add the tools' subcommands to the `daimyo` parser."""
    for module_name in TOOL_MODULES:
        module = __import__(f"tools.{module_name}", fromlist=["add_parser"])
        module.add_parser(sub)


TOOL_MODULES: list[str] = ["simulate", "report", "mapdraw", "docsgen"]
