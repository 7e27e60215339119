"""`daimyo serve`: play in the browser. Starts a local web server (a lobby to create games,
a live board per game) and, given a COMBO, creates one game at once and prints its links."""
from __future__ import annotations

import argparse
import sys

from engine.base.console import EPILOG, parse_options
from engine.cli import help_of

INSTALL_HINT = "daimyo serve needs starlette, uvicorn and websockets: pip install 'daimyo[web]'"


def serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from engine.cli.web.app import create_app
        from engine.cli.web.hub import Hub, LobbyError
        from engine.cli.web.store import Store
    except ImportError:
        print(f"daimyo: {INSTALL_HINT}", file=sys.stderr)
        return 1
    hub = Hub(Store(args.db), bot_delay=args.bot_delay)
    resumed = hub.resume()
    base = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}"
    if resumed:
        print(f"resumed {resumed} stored game(s) from {args.db}")
    for msg in hub.errors.values():
        print(f"daimyo: {msg}", file=sys.stderr)
    if args.combo:
        seats = [s.strip() for s in args.seats.split(",")] if args.seats else []
        try:
            room = hub.create(args.combo, args.players, parse_options(args.option), seats, args.seed)
        except (LobbyError, ValueError) as e:
            print(f"daimyo: error: {e}", file=sys.stderr)
            return 2 if "seat" in str(e) else 1
        print(f"{room.model.name}, {len(room.players)} players (game {room.id}):")
        for role, token in room.links().items():
            what = {"table": "hot-seat (all people at one screen)", "watch": "spectator",
                    "admin": "admin (download the save and log)"}.get(role, f"seat {role}")
            print(f"  {what:<38} {base}/g/{room.id}#{token}")
    print(f"lobby: {base}/   (Ctrl-C stops the server; games are kept in {args.db})", flush=True)
    uvicorn.run(create_app(hub), host=args.host, port=args.port, log_level="warning", ws_max_size=65536)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help=help_of("serve"),
                       epilog=EPILOG, description="Start a web server (127.0.0.1 unless --host). With COMBO, "
                       "create one game at once and print a private link per person's seat, a hot-seat link "
                       "and a spectator link. Games are stored in --db and resume when the server restarts.")
    p.add_argument("combo", metavar="COMBO", nargs="?", default=None)
    p.add_argument("--players", type=int, default=None, help="number of players (default: the ruleset's minimum)")
    p.add_argument("--seats", default=None, help="comma-separated seat kinds: human,random,heuristic,search "
                   "(bot specs are passed on as written); seats not named are people")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="e.g. side=moon")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--db", default="daimyo-games.db", help="SQLite file of games (default daimyo-games.db)")
    p.add_argument("--bot-delay", type=float, default=0.4, metavar="SECONDS",
                   help="pause between bot moves, so people can watch (default 0.4)")
    p.set_defaults(func=serve)
