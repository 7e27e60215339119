"""`daimyo validate`: check ruleset packages the way CI and the language server do."""
from __future__ import annotations

import argparse
import sys

from engine.base.console import EPILOG, add_format_option, report
from engine.cli import help_of
from engine.model.validate import validate_targets


def add_parser(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("validate", help=help_of("validate"),
                       description="Validate ruleset packages (ids, folders or COMBOs). An expansion is "
                       "checked together with the rulesets it extends. Exit 0 clean, 1 on errors. What a combo's "
                       "builds found is kept in the cache folder and given again for the same files and the "
                       "same daimyo (DAIMYO_NO_CACHE=1: validate without any cache).", epilog=EPILOG)
    v.add_argument("targets", nargs="+", metavar="PATH_OR_ID")
    add_format_option(v)
    v.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    diags, checked = validate_targets(args.targets)
    report(diags, args.format)
    if args.format == "human":
        status = "ok" if not diags.errors else "FAILED"
        print(f"validated {len(checked)} ruleset combination(s): {', '.join(checked)}: {status}",
              file=sys.stderr if diags.errors else sys.stdout)
    return 1 if diags.errors else 0
