"""Instruction counts and log digests: the measures behind the figures in docs/performance.md.

Wall-clock seconds on a shared machine move with its load; the number of machine instructions
a piece of work takes does not. These measures run the work under valgrind's callgrind (Debian
package `valgrind`) twice, once small and once larger, and report the difference per unit, so
that start-up and loading cancel out:

    python -m tools.instructions games shogun                 # per 4-player random game (games 2-6 of seeds 1-6)
    python -m tools.instructions games samurai-swords --games 3
    python -m tools.instructions sweep shogun                 # per sweep game: the game, its bots, its figures
    python -m tools.instructions validate                     # one cold `daimyo validate rulesets/*`, twice
    python -m tools.instructions decisions                    # per trivial decision, 9 to 31 frames deep
    python -m tools.instructions digests > before.txt          # seeded log digests of every bundled combo

`digests` is the sameness check between two versions of the code: it plays seeded random games
of every bundled combo at every player count with the full log on and prints one digest per
game (the ruleset fingerprint left out, since editing a rule text changes it); `diff` the
output of two versions. (`daimyo difftest` compares the two flow machines of one version.)

Run from the checkout to measure: the current folder's code is what runs. The small run is
made once uncounted first, so that the bytecode and caches a first run writes are counted in
neither; `validate` likewise counts the cold command as a user meets it after the first run:
once as it is (what each combo's builds found is kept, engine/model/verdicts.py), once with
those results removed, so that every combo is built from the parse and YAML caches.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

DIGEST_SET = [  # combo, player counts, games per count
    ("shogun", (3, 4, 5), 30),
    ("shogun+tennos-court+military-leaders+chambers+samurai-cards", (3, 4, 5), 20),
    ("shogun-cards", (2, 3, 4), 30),
    ("shogun-cards+shogun-cards-advanced+shogun-cards-wagers", (2, 3, 4), 30),
    ("samurai-swords", (2, 3, 4, 5), 6),
    ("samurai-swords+samurai-swords-objectives", (2, 3, 4, 5), 4),
    ("samurai-swords+samurai-swords-vp", (3, 4, 5), 4),
]


# ---- the work that is counted (run inside callgrind by `_count`) ----

def play(combo: str, players: int, games: int, stepwise: bool = False) -> None:
    """`games` random games (seeds 1..games), no log: what `daimyo bench` plays, played out
    (`Game.play_out`), or with `stepwise` decision by decision (`Game.apply`, as `daimyo bench
    --stepwise` and every count before session 30)."""
    from engine.agents.basic import RandomAgent
    from engine.model import load
    from engine.run.game import Game
    model = load(combo, {}, players)
    bot = RandomAgent(1)  # (random.Random(1), as the bench's)
    for seed in range(1, games + 1):
        g = Game.new(model, players, seed, log=False)
        if not stepwise:
            g.play_out(bot.pick)
        while not g.over:
            d = g.decision
            g.apply(d.options[bot.choose(g, d)])


def sweep(combo: str, players: int, games: int) -> None:
    """`games` games of a sweep (`daimyo simulate`'s `play_game`: random bots, round figures)."""
    from engine.model import load
    from tools.simulate import play_game
    model = load(combo, {}, players)
    for game in range(games):
        play_game(model, players, ["random"] * players, False, 1, game)


# A flow that asks one trivial choice again and again, `depth` levels of a step below the game's
# turn: what a decision costs the flow itself, and whether the frames waiting below it cost more.
DEPTHS = (1, 6, 12)
RACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "rulesets", "race")
DEEP_RULES = """
globals: {{depth: 0, picked: 0}}
steps:
  dive:
    flow:
      - do: "depth += 1"
      - if: "depth < {depth}"
        then: [dive]
        else:
          - repeat: 1000000
            do:
              - choose: k
                player: '"P1"'
                from: "[1, 2]"
                then:
                  - do: "picked += k"
triggers:
  go:
    "on": before_take_turn
    when: "depth == 0"
    do: run(dive)
"""


def deep_combo(folder: str, depth: int) -> str:
    """The combo of the race test game and a package whose choice is asked `depth` levels down."""
    with open(os.path.join(folder, "ruleset.yaml"), "w", encoding="utf-8") as fh:
        fh.write(f"id: deep{depth}\nname: deep\nversion: 1\nplayers: {{min: 2, max: 4}}\nextends: race\n")
    with open(os.path.join(folder, "rules.yaml"), "w", encoding="utf-8") as fh:
        fh.write(DEEP_RULES.format(depth=depth))
    return f"{os.path.normpath(RACE)}+{folder}"


def decisions(depth: int, count: int) -> int:
    """`count` decisions of the deep flow, silent; gives the frames waiting at the first."""
    from engine.model import load
    from engine.run.game import Game
    if not os.path.isdir(RACE):
        raise SystemExit(f"`decisions` needs the checkout's test game ({os.path.normpath(RACE)}): "
                         "run it from a checkout")
    folder = os.path.join(tempfile.gettempdir(), f"daimyo-deep-flow-{depth}")  # one place: the caches find it
    os.makedirs(folder, exist_ok=True)
    g = Game.new(load(deep_combo(folder, depth), {}, 2), 2, 1, log=False)
    frames = len(g.state["flow"])
    for _ in range(count):
        g.apply(1)
    return frames


def digests(out: object = sys.stdout) -> None:
    """One line per seeded game of DIGEST_SET: combo, players, seed, digest of its full log."""
    from engine.model import load
    from engine.run.game import Game
    for combo, counts, games in DIGEST_SET:
        for players in counts:
            model = load(combo, {}, players)
            for seed in range(1, games + 1):
                rng = random.Random(seed)
                g = Game.new(model, players, seed)
                while not g.over:
                    options = g.decision.options
                    g.apply(options[rng.randrange(len(options))])
                text = "\n".join(json.dumps({k: v for k, v in e.items() if k != "fingerprint"}, ensure_ascii=False)
                                 for e in g.log)
                print(combo, players, seed, hashlib.sha256(text.encode()).hexdigest()[:16], file=out, flush=True)


# ---- counting ----

def _count(python_args: list[str]) -> int:
    """Instructions callgrind counts for `python <python_args>`."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           *python_args], capture_output=True, text=True, env=_env(), check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the counted run failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def _env() -> dict[str, str]:
    """The environment of a measured run: the same dict layouts every run (a fixed hash seed),
    and bytecode kept as an installed package keeps it."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def per_unit(small: list[str], large: list[str], units: int) -> float:
    """Instructions per unit of work: (count of `large` - count of `small`) / `units`. The
    small run is made once uncounted first, so that bytecode and caches written on a first run
    are counted in neither."""
    subprocess.run([sys.executable, "-m", "tools.instructions", *small], env=_env(), check=True, capture_output=True)
    return (_count(["-m", "tools.instructions", *large]) - _count(["-m", "tools.instructions", *small])) / units


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.instructions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True, metavar="{games,sweep,validate,decisions,digests}")
    for name, text in (("games", "instructions per random game, loading left out"),
                       ("sweep", "instructions per game of a sweep (bots and round figures included)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("combo")
        p.add_argument("--players", type=int, default=4)
        p.add_argument("--games", type=int, default=6, help="games counted, less the first (default 6: 5 counted)")
        if name == "games":
            p.add_argument("--stepwise", action="store_true",
                           help="drive each game decision by decision through Game.apply, as `daimyo bench "
                                "--stepwise` does (the counts before session 30), not Game.play_out")
    sub.add_parser("validate", help="instructions of one cold `daimyo validate rulesets/*`: with the results "
                                    "kept, and with every combo built")
    sub.add_parser("decisions", help="instructions the flow takes per trivial decision, asked in a step that runs "
                                     f"itself {', '.join(map(str, DEPTHS))} times")
    sub.add_parser("digests", help="seeded log digests of every bundled combo and player count (no valgrind)")
    inner = sub.add_parser("run")  # what runs inside callgrind (no help: not listed)
    inner.add_argument("work", choices=("games", "stepwise", "sweep", "decisions"))  # (decisions: COMBO is the depth)
    inner.add_argument("combo")
    inner.add_argument("players", type=int)
    inner.add_argument("games", type=int)
    args = parser.parse_args(argv)
    if args.what == "digests":
        digests()
        return 0
    if args.what == "run":
        if args.work == "decisions":
            decisions(int(args.combo), args.games)
        elif args.work == "sweep":
            sweep(args.combo, args.players, args.games)
        else:
            play(args.combo, args.players, args.games, stepwise=args.work == "stepwise")
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is needed to count instructions (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.what == "validate":
        folders = sorted(f"rulesets/{p}" for p in os.listdir("rulesets") if not p.startswith((".", "_")))
        subprocess.run([sys.executable, "-m", "engine.cli", "validate", *folders], env=_env(), capture_output=True,
                       check=False)  # uncounted: bytecode and caches written, as after any first run
        n = _count(["-m", "engine.cli", "validate", *folders])
        print(f"cold validate rulesets/*: {n / 1e6:,.0f}M instructions (the same files again: results kept)")
        from engine.base.diskcache import cache_folder
        from engine.model.verdicts import FORMAT
        kept = cache_folder(FORMAT)
        if kept is not None:
            shutil.rmtree(kept, ignore_errors=True)
        n = _count(["-m", "engine.cli", "validate", *folders])
        print(f"cold validate rulesets/*, every combo built: {n / 1e6:,.0f}M instructions "
              "(rule texts and YAML from the caches)")
        return 0
    if args.what == "decisions":
        for depth in DEPTHS:
            frames = decisions(depth, 0)
            n = per_unit(["run", "decisions", str(depth), "2", "1000"], ["run", "decisions", str(depth), "2", "21000"],
                         20_000)
            print(f"a trivial decision with {frames} frames below it: {n:,.0f} instructions (decisions 1,001-21,000)")
        return 0
    if args.games < 2:
        parser.error("--games must be at least 2 (the first game is the baseline)")
    work = "stepwise" if getattr(args, "stepwise", False) else args.what
    n = per_unit(["run", work, args.combo, str(args.players), "1"],
                 ["run", work, args.combo, str(args.players), str(args.games)], args.games - 1)
    print(f"{args.combo} ({args.players} players): {n / 1e6:.1f}M instructions per "
          f"{'game' if args.what == 'games' else 'sweep game'} (games 2-{args.games}"
          f"{', decision by decision' if work == 'stepwise' else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
