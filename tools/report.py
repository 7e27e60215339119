"""`daimyo report`: balance tables (and charts) from a `daimyo simulate` results file.

For each sweep: win rate per seat and per bot with 95% Wilson intervals (a seat whose
interval leaves out the fair share 1/N is flagged), score distributions per seat, game
length, and how often each step, trigger and event fired, with the rules that never fired
flagged. With several sweeps in the file (combos, options, bots), a side-by-side
comparison follows. `--plots DIR` writes the charts as PNG and SVG (needs matplotlib:
`pip install 'daimyo[plots]'`; it is imported only then).

A tie counts as a win for every tied player, so win rates of one game can add up to more
than 100%; the tables give the tie rate.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from tools.store import Store, Sweep

Z95 = 1.959963984540054


# --------------------------------------------------------------------------- statistics

def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n (95% by default); (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def diff_rates(a: Rate, b: Rate, z: float = Z95) -> dict:
    """b - a for two win rates: the difference, its 95% (Wald) interval and the two-sided
    p-value of a two-proportion z-test (pooled standard error)."""
    if not a.trials or not b.trials:
        return {"diff": None, "ci95": None, "p": None}
    pa, pb = a.wins / a.trials, b.wins / b.trials
    se = math.sqrt(pa * (1 - pa) / a.trials + pb * (1 - pb) / b.trials)
    pool = (a.wins + b.wins) / (a.trials + b.trials)
    se0 = math.sqrt(pool * (1 - pool) * (1 / a.trials + 1 / b.trials))
    pval = math.erfc(abs(pb - pa) / se0 / math.sqrt(2)) if se0 > 0 else 1.0
    return {"diff": pb - pa, "ci95": [pb - pa - z * se, pb - pa + z * se], "p": pval}


def diff_means(xs: list[float], ys: list[float], z: float = Z95) -> dict:
    """mean(ys) - mean(xs) with a 95% interval and a two-sided p-value (Welch, normal approximation)."""
    if len(xs) < 2 or len(ys) < 2:
        return {"diff": None, "ci95": None, "p": None}
    dx, dy = describe(xs), describe(ys)
    se = math.sqrt(dx["sd"] ** 2 / len(xs) + dy["sd"] ** 2 / len(ys))
    d = dy["mean"] - dx["mean"]
    pval = math.erfc(abs(d) / se / math.sqrt(2)) if se > 0 else (1.0 if d == 0 else 0.0)
    return {"diff": d, "ci95": [d - z * se, d + z * se], "p": pval}


def quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if not sorted_xs:
        return float("nan")
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def describe(xs: list[float]) -> dict[str, float]:
    """n, mean, sd, min, p10, median, p90, max of a list of numbers."""
    if not xs:
        return {"n": 0}
    s = sorted(xs)
    n = len(s)
    mean = sum(s) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    return {"n": n, "mean": mean, "sd": sd, "min": s[0], "p10": quantile(s, 0.1), "median": quantile(s, 0.5),
            "p90": quantile(s, 0.9), "max": s[-1]}


@dataclass
class Rate:
    wins: int = 0
    trials: int = 0

    @property
    def rate(self) -> float:
        return self.wins / self.trials if self.trials else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.trials)

    def to_json(self) -> dict:
        lo, hi = self.ci
        return {"wins": self.wins, "games": self.trials, "rate": self.rate, "ci95": [lo, hi]}


@dataclass
class RoundRate(Rate):
    """A win rate over player-rounds. Rounds of one player in one game share that game's
    outcome, so the interval is the Wilson interval of the same rate over the player-games
    that held the value (`clusters`): wider, and honest about how much evidence there is."""
    clusters: int = 0

    @property
    def ci(self) -> tuple[float, float]:
        if not self.trials:
            return wilson(0, 0)
        return wilson(round(self.rate * self.clusters), self.clusters)

    def to_json(self) -> dict:
        return {**super().to_json(), "player_games": self.clusters}


@dataclass
class SweepStats:
    sweep: Sweep
    games: int = 0
    failed: int = 0
    ties: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # first line of each error -> games
    seats: dict[str, Rate] = field(default_factory=dict)
    bots: dict[str, Rate] = field(default_factory=dict)
    scores: dict[str, list[float]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)
    round_step: str | None = None  # the step counted as one round (hints.round, else guessed)
    rounds: list[int] = field(default_factory=list)
    breakdowns: dict[str, dict[str, Rate]] = field(default_factory=dict)  # hints.breakdown name -> value -> rate
    # hints.round_breakdown name -> value -> rate over player-rounds (a round held by a winner is a win)
    round_breakdowns: dict[str, dict[str, RoundRate]] = field(default_factory=dict)
    fired_games: dict[str, int] = field(default_factory=dict)  # count key -> games where it happened
    fired_total: dict[str, int] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        return self.games - self.failed

    @property
    def fair(self) -> float:
        return 1.0 / self.sweep.players

    def rules(self) -> list[dict]:
        """Every declared rule and every count seen: kind, name, share of games, mean per game, never."""
        declared = {("step", s) for s in self.sweep.rules.get("steps", [])}
        declared |= {("trigger", t) for t in self.sweep.rules.get("triggers", [])}
        declared |= {("event", e) for e in self.sweep.rules.get("events", [])}
        seen = set()
        for key in self.fired_total:
            kind, _, name = key.partition(":")
            if kind in ("by", "byround"):  # breakdown tags, not rules
                continue
            if not name:
                kind, name = "step", key
            seen.add((kind, name))
        out = []
        order = {"step": 0, "decision": 1, "trigger": 2, "event": 3}
        for kind, name in sorted(declared | seen, key=lambda kn: (order.get(kn[0], 9), kn[1])):
            key = name if kind == "step" else f"{kind}:{name}"
            total = self.fired_total.get(key, 0)
            g = self.fired_games.get(key, 0)
            out.append({"kind": kind, "name": name, "games": g,
                        "share": g / self.games if self.games else 0.0,
                        "per_game": total / self.games if self.games else 0.0,
                        "never": total == 0 and kind != "decision"})
        return out

    def to_json(self) -> dict:
        s = self.sweep
        return {
            "sweep": s.id, "combo": s.combo, "options": s.options, "players": s.players, "bots": s.bots,
            "rotate": s.rotate, "seed": s.seed, "games": self.games, "failed": self.failed, "errors": self.errors,
            "ties": self.ties, "fair_share": self.fair,
            "seats": {k: v.to_json() for k, v in self.seats.items()},
            "bots_win": {k: v.to_json() for k, v in self.bots.items()},
            "scores": {k: describe(v) for k, v in self.scores.items()},
            "length": describe([float(x) for x in self.lengths]),
            "rounds": {"step": self.round_step, **describe([float(x) for x in self.rounds])},
            "breakdowns": {n: {v: r.to_json() for v, r in vals.items()} for n, vals in self.breakdowns.items()},
            "round_breakdowns": {n: {v: r.to_json() for v, r in vals.items()}
                                 for n, vals in self.round_breakdowns.items()},
            "rules": self.rules(),
        }


def round_step(sweep: Sweep, rows: list[dict]) -> str | None:
    """The step that makes one round: the ruleset's `hints.round` when it loads and says so,
    else the step run most often in the most games while never more than a few dozen times
    a game (a guess, named in the report)."""
    try:
        from engine.model import load
        declared = load(sweep.combo, sweep.options, sweep.players).hints.get("round")
    except Exception:  # a ruleset changed or moved since the sweep: fall back to the guess
        declared = None
    if declared:
        return str(declared)
    steps = set(sweep.rules.get("steps") or [])
    per_game: dict[str, list[int]] = {}
    for row in rows:
        for k, v in (row["counts"] or {}).items():
            if k in steps:
                per_game.setdefault(k, []).append(v)
    candidates = [(len(v), min(v), k) for k, v in per_game.items() if len(v) == len(rows) and 2 <= max(v) <= 40]
    return max(candidates)[2] if candidates else None


def collect(store: Store, sweep: Sweep) -> SweepStats:
    """Aggregate one sweep's rows."""
    st = SweepStats(sweep)
    rows = list(store.games(sweep.id))
    st.round_step = round_step(sweep, rows) if rows else None
    seat_ids = [f"P{i + 1}" for i in range(sweep.players)]
    for p in seat_ids:
        st.seats[p] = Rate()
        st.scores[p] = []
    for row in rows:
        st.games += 1
        counts = row["counts"] or {}
        for k, v in counts.items():
            if v:
                st.fired_games[k] = st.fired_games.get(k, 0) + 1
                st.fired_total[k] = st.fired_total.get(k, 0) + v
        if row["error"] or row["winners"] is None:
            st.failed += 1
            first = (row["error"] or "no result").splitlines()[0][:160]
            st.errors[first] = st.errors.get(first, 0) + 1
            continue
        winners = set(row["winners"])
        if len(winners) > 1:
            st.ties += 1
        st.lengths.append(row["length"])
        for k, v in counts.items():
            tag, _, rest = k.partition(":")
            if tag in ("by", "byround") and "@" in rest:
                what, _, player = rest.rpartition("@")
                name, _, value = what.partition("=")
                if tag == "by":
                    r = st.breakdowns.setdefault(name, {}).setdefault(value, Rate())
                    r.trials += 1
                    r.wins += player in winners
                else:  # v rounds held by one player in one game
                    rr = st.round_breakdowns.setdefault(name, {}).setdefault(value, RoundRate())
                    rr.trials += v
                    rr.wins += v * (player in winners)
                    rr.clusters += 1
        if st.round_step:
            st.rounds.append((row["counts"] or {}).get(st.round_step, 0))
        for i, p in enumerate(seat_ids):
            won = p in winners
            st.seats[p].trials += 1
            st.seats[p].wins += won
            bot = row["seats"][i] if i < len(row["seats"]) else "?"
            r = st.bots.setdefault(bot, Rate())
            r.trials += 1
            r.wins += won
            score = (row["scores"] or {}).get(p)
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                st.scores[p].append(float(score))
    return st


# --------------------------------------------------------------------------- tables

def _table(headers: list[str], rows: list[list[Any]], fmt: str, right: set[int] | None = None) -> str:
    right = right if right is not None else set(range(1, len(headers)))
    cells = [[str(c) for c in r] for r in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(headers) + " |",
               "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]

    def line(r: list[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        return "  ".join(padded).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _natural(text: str) -> tuple:
    """Sort key: numbers as numbers (2 before 10), then text."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _pct(x: float) -> str:
    return "-" if x != x else f"{100 * x:.1f}%"


def _num(x: Any) -> str:
    if not isinstance(x, (int, float)) or x != x:
        return "-"
    if float(x).is_integer() and abs(x) < 1e12:
        return str(int(x))
    return f"{x:.2f}"


def _ci(r: Rate) -> str:
    lo, hi = r.ci
    return f"{100 * lo:.1f}-{100 * hi:.1f}%"


def _flag(r: Rate, fair: float) -> str:
    lo, hi = r.ci
    if r.trials == 0:
        return ""
    if lo > fair:
        return "above fair share"
    if hi < fair:
        return "below fair share"
    return ""


def render_sweep(st: SweepStats, fmt: str = "text", rules: str = "all") -> str:
    s = st.sweep
    h = "## " if fmt == "markdown" else ""
    out = []
    title = f"{h}Sweep {s.id}: {s.label}"
    out += [title, "" if fmt == "markdown" else "=" * len(title)]
    out.append(f"{st.games} games ({st.failed} failed, {st.ties} tied), seed {s.seed}, "
               f"ruleset fingerprint {s.fingerprint}")
    for msg, n in sorted(st.errors.items(), key=lambda kv: -kv[1])[:5]:
        out.append(f"  failed x{n}: {msg}")
    out.append("")
    out.append(f"{h}Win rate per seat (fair share {_pct(st.fair)}; ties count for every tied player)")
    rows = [[p, r.wins, r.trials, _pct(r.rate), _ci(r), _flag(r, st.fair)] for p, r in st.seats.items()]
    out += [_table(["seat", "wins", "games", "win rate", "95% CI", ""], rows, fmt, {1, 2, 3, 4}), ""]
    if len(st.bots) > 1:
        out.append(f"{h}Win rate per bot (per seat played)")
        rows = [[b, r.wins, r.trials, _pct(r.rate), _ci(r), _flag(r, st.fair)] for b, r in sorted(st.bots.items())]
        out += [_table(["bot", "wins", "seat-games", "win rate", "95% CI", ""], rows, fmt, {1, 2, 3, 4})]
        if not s.rotate:
            out.append("(bots sat in fixed seats: seat advantage is mixed into these figures; use --rotate)")
        out.append("")
    out.append(f"{h}Scores per seat")
    rows = []
    for p, xs in st.scores.items():
        d = describe(xs)
        rows.append([p] + [_num(d.get(k)) for k in ("n", "mean", "sd", "min", "p10", "median", "p90", "max")])
    out += [_table(["seat", "n", "mean", "sd", "min", "p10", "median", "p90", "max"], rows, fmt), ""]
    out.append(f"{h}Game length (decisions)")
    d = describe([float(x) for x in st.lengths])
    out += [_table(["n", "mean", "sd", "min", "p10", "median", "p90", "max"],
                   [[_num(d.get(k)) for k in ("n", "mean", "sd", "min", "p10", "median", "p90", "max")]], fmt,
                   set(range(8))), ""]
    for name, vals in st.breakdowns.items():
        out.append(f"{h}Win rate by {name} (the ruleset's hints.breakdown, at the end of the game)")
        rows = [[v, r.wins, r.trials, _pct(r.rate), _ci(r), _flag(r, st.fair)]
                for v, r in sorted(vals.items(), key=lambda kv: _natural(kv[0]))]
        out += [_table([name, "wins", "player-games", "win rate", "95% CI", ""], rows, fmt, {1, 2, 3, 4}), ""]
    for name, vals in st.round_breakdowns.items():
        out.append(f"{h}Win rate by {name} held in a round (the ruleset's hints.round_breakdown; "
                   "each round a player held it counts once; interval over player-games)")
        rows = [[v, r.wins, r.trials, r.clusters, _pct(r.rate), _ci(r), _flag(r, st.fair)]
                for v, r in sorted(vals.items(), key=lambda kv: _natural(kv[0]))]
        out += [_table([name, "wins", "player-rounds", "player-games", "win rate", "95% CI", ""], rows, fmt,
                       {1, 2, 3, 4, 5}), ""]
    if st.round_step:
        out.append(f"{h}Game length (rounds: times the step `{st.round_step}` ran)")
        d = describe([float(x) for x in st.rounds])
        out += [_table(["n", "mean", "sd", "min", "p10", "median", "p90", "max"],
                       [[_num(d.get(k)) for k in ("n", "mean", "sd", "min", "p10", "median", "p90", "max")]], fmt,
                       set(range(8))), ""]
    if rules != "none":
        table = st.rules()
        never = [r for r in table if r["never"]]
        shown = never if rules == "never" else table
        out.append(f"{h}Rules fired (steps, choices, triggers, events): {len(never)} never fired")
        rows = [[r["kind"], r["name"], _pct(r["share"]), f"{r['per_game']:.2f}", "NEVER FIRED" if r["never"] else ""]
                for r in shown]
        if rows:
            out.append(_table(["kind", "name", "in games", "per game", ""], rows, fmt, {2, 3}))
        out.append("")
    return "\n".join(out)


def differences(base: SweepStats, other: SweepStats) -> list[tuple[str, dict, bool]]:
    """(what, difference, is a rate) for every figure both sweeps have: other - base."""
    out: list[tuple[str, dict, bool]] = []
    for p in base.seats:
        if p in other.seats:
            out.append((f"{p} win rate", diff_rates(base.seats[p], other.seats[p]), True))
    for b in sorted(set(base.bots) & set(other.bots)):
        if len(base.bots) > 1 or len(other.bots) > 1:
            out.append((f"{b} win rate", diff_rates(base.bots[b], other.bots[b]), True))
    out.append(("tie rate", diff_rates(Rate(base.ties, base.finished), Rate(other.ties, other.finished)), True))
    out.append(("length (decisions)", diff_means([float(x) for x in base.lengths], [float(x) for x in other.lengths]),
                False))
    if base.round_step and base.round_step == other.round_step:
        out.append(("length (rounds)", diff_means([float(x) for x in base.rounds], [float(x) for x in other.rounds]),
                    False))
    return out


def render_differences(stats: list[SweepStats], fmt: str) -> list[str]:
    """Each sweep against the first: the difference, its 95% interval, the p-value, and `*`
    where the interval leaves out 0 (significant at 5%)."""
    h = "### " if fmt == "markdown" else ""
    base = stats[0]
    out: list[str] = []
    for st in stats[1:]:
        out.append(f"{h}Difference #{st.sweep.id} - #{base.sweep.id} (95% interval, p-value; * significant at 5%)")
        rows = []
        for what, d, is_rate in differences(base, st):
            if d["diff"] is None:
                rows.append([what, "-", "-", "-", ""])
                continue
            show = (lambda x: f"{x * 100:+.1f} pts") if is_rate else (lambda x: f"{x:+.2f}")
            lo, hi = d["ci95"]
            rows.append([what, show(d["diff"]), f"{show(lo)} .. {show(hi)}", f"{d['p']:.3f}",
                         "*" if d["p"] < 0.05 else ""])
        out += [_table(["figure", "difference", "95% interval", "p", ""], rows, fmt, {1, 2, 3}), ""]
    return out


def render_comparison(stats: list[SweepStats], fmt: str = "text", top_rules: int = 25) -> str:
    h = "## " if fmt == "markdown" else ""
    out = [f"{h}Comparison", "" if fmt == "markdown" else "=" * 10]
    for st in stats:
        out.append(f"  #{st.sweep.id}: {st.sweep.label}")
    out.append("")
    headers = ["", *[f"#{st.sweep.id}" for st in stats]]
    rows: list[list[Any]] = [["games", *[st.games for st in stats]],
                             ["failed", *[st.failed for st in stats]],
                             ["tied", *[_pct(st.ties / st.finished) if st.finished else "-" for st in stats]]]
    for key in ("mean", "median"):
        rows.append([f"length {key}", *[_num(describe([float(x) for x in st.lengths]).get(key)) for st in stats]])
    seats = max(st.sweep.players for st in stats)
    for i in range(seats):
        p = f"P{i + 1}"
        rows.append([f"{p} win rate", *[(f"{_pct(st.seats[p].rate)} ({_ci(st.seats[p])})" if p in st.seats else "-")
                                         for st in stats]])
    for i in range(seats):
        p = f"P{i + 1}"
        rows.append([f"{p} mean score", *[_num(describe(st.scores.get(p, [])).get("mean")) for st in stats]])
    bots = sorted({b for st in stats for b in st.bots})
    if len(bots) > 1:
        for b in bots:
            rows.append([f"{b} win rate", *[(f"{_pct(st.bots[b].rate)} ({_ci(st.bots[b])})" if b in st.bots else "-")
                                            for st in stats]])
    out += [_table(headers, rows, fmt), ""]
    out += render_differences(stats, fmt)
    # Rules whose firing differs most between the sweeps, and those that never fire in one of them.
    table: dict[tuple[str, str], list[dict | None]] = {}
    for j, st in enumerate(stats):
        for r in st.rules():
            table.setdefault((r["kind"], r["name"]), [None] * len(stats))[j] = r
    def spread(vals: list[dict | None]) -> float:
        shares = [v["per_game"] for v in vals if v is not None]
        return (max(shares) - min(shares)) / (max(shares) or 1) if len(shares) > 1 else 0.0
    ranked = sorted(table.items(), key=lambda kv: (-(any(v and v["never"] for v in kv[1])), -spread(kv[1]), kv[0]))
    rows = []
    for (kind, name), vals in ranked[:top_rules]:
        rows.append([kind, name, *[("-" if v is None else ("NEVER" if v["never"] else f"{v['per_game']:.2f}"))
                                   for v in vals]])
    if rows:
        out.append(f"{h}Rules fired per game: the {len(rows)} that differ most (NEVER: declared but never fired)")
        out += [_table(["kind", "name", *headers[1:]], rows, fmt, set(range(2, 2 + len(stats)))), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- charts

def write_plots(stats: list[SweepStats], folder: str) -> list[str]:
    """Charts as PNG and SVG in `folder`; the list of files written. Needs matplotlib."""
    try:
        import matplotlib
    except ImportError as e:
        raise RuntimeError("--plots needs matplotlib: pip install 'daimyo[plots]'") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(folder, exist_ok=True)
    written: list[str] = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        for ext in ("png", "svg"):
            path = os.path.join(folder, f"{name}.{ext}")
            fig.savefig(path, dpi=110, bbox_inches="tight")
            written.append(path)
        plt.close(fig)

    # Win rate per seat, one bar per sweep, with 95% intervals and each sweep's fair share.
    seats = max(st.sweep.players for st in stats)
    width = 0.8 / len(stats)
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * seats * max(1, len(stats) / 2)), 4))
    for j, st in enumerate(stats):
        xs, ys, lo, hi = [], [], [], []
        for i in range(st.sweep.players):
            r = st.seats[f"P{i + 1}"]
            a, b = r.ci
            xs.append(i + (j - (len(stats) - 1) / 2) * width)
            ys.append(100 * (r.rate if r.trials else 0))
            lo.append(100 * max(0.0, (r.rate if r.trials else 0) - a))
            hi.append(100 * max(0.0, b - (r.rate if r.trials else 0)))
        ax.bar(xs, ys, width * 0.95, yerr=[lo, hi], capsize=3, label=f"#{st.sweep.id} {st.sweep.label}")
    for n in sorted({st.sweep.players for st in stats}):
        ax.axhline(100 / n, linestyle="--", linewidth=1, color="grey")
    ax.set_xticks(range(seats), [f"P{i + 1}" for i in range(seats)])
    ax.set_ylabel("win rate (%)")
    ax.set_title("Win rate per seat (95% Wilson CI; dashed: fair share)", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    save(fig, "winrate-seats")

    bots = sorted({b for st in stats for b in st.bots})
    if len(bots) > 1:
        fig, ax = plt.subplots(figsize=(max(5, 1.5 * len(bots)), 4))
        for j, st in enumerate(stats):
            xs, ys, lo, hi = [], [], [], []
            for i, b in enumerate(bots):
                r = st.bots.get(b)
                if r is None or not r.trials:
                    continue
                a, c = r.ci
                xs.append(i + (j - (len(stats) - 1) / 2) * width)
                ys.append(100 * r.rate)
                lo.append(100 * (r.rate - a))
                hi.append(100 * (c - r.rate))
            ax.bar(xs, ys, width * 0.95, yerr=[lo, hi], capsize=3, label=f"#{st.sweep.id}")
        ax.set_xticks(range(len(bots)), bots)
        ax.set_ylabel("win rate (%)")
        ax.set_title("Win rate per bot (95% Wilson CI)", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        save(fig, "winrate-bots")

    # Score distribution per seat, per sweep.
    for st in stats:
        data = [xs for xs in st.scores.values()]
        if not any(data):
            continue
        fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(data)), 4))
        ax.boxplot([xs or [float("nan")] for xs in data], tick_labels=list(st.scores))
        ax.set_ylabel("final score")
        ax.set_title(f"Scores per seat: #{st.sweep.id} {st.sweep.label}", fontsize=9)
        save(fig, f"scores-{st.sweep.id}")

    # Game length, all sweeps overlaid.
    fig, ax = plt.subplots(figsize=(6, 4))
    for st in stats:
        if st.lengths:
            ax.hist(st.lengths, bins=min(40, max(5, len(set(st.lengths)))), histtype="step", linewidth=1.5,
                    label=f"#{st.sweep.id}")
    ax.set_xlabel("decisions per game")
    ax.set_ylabel("games")
    ax.set_title("Game length", fontsize=10)
    ax.legend(fontsize=7)
    save(fig, "length")

    # Rules fired: share of games, never-fired rules in red.
    for st in stats:
        table = [r for r in st.rules() if r["kind"] != "decision"]
        if not table:
            continue
        table = table[:80]
        fig, ax = plt.subplots(figsize=(7, max(3, 0.22 * len(table) + 1)))
        names = [f"{r['kind']}: {r['name']}" for r in table]
        shares = [100 * r["share"] for r in table]
        colors = ["#c0392b" if r["never"] else "#4c72b0" for r in table]
        ax.barh(range(len(table)), shares, color=colors)
        for i, r in enumerate(table):
            if r["never"]:
                ax.text(1, i, "never fired", va="center", fontsize=7, color="#c0392b")
        ax.set_yticks(range(len(table)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 105)
        ax.set_xlabel("% of games in which it happened")
        ax.set_title(f"Rules fired: #{st.sweep.id} {st.sweep.label}", fontsize=9)
        save(fig, f"rules-{st.sweep.id}")
    return written


# --------------------------------------------------------------------------- command line

def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="balance tables and charts from a simulate results file",
        description="Print balance tables for every sweep in FILE (from `daimyo simulate --db FILE`): win rate "
        "per seat and per bot with 95% Wilson intervals, score distributions, game length, how often each "
        "rule fired (rules that never fired are flagged), and a side-by-side comparison when FILE holds several "
        "sweeps. See docs/simulate.md.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--sweep", type=int, action="append", default=[], metavar="ID",
                   help="only these sweeps (repeat the flag; default: all)")
    p.add_argument("--format", choices=["human", "text", "markdown", "json"], default="human",
                   help="human (or text): tables for people (default); markdown; json: one JSON document on stdout "
                   "(docs/output-formats.md)")
    p.add_argument("--rules", choices=["all", "never", "none"], default="all",
                   help="rule table: every rule (default), only the never-fired ones, or none")
    p.add_argument("--plots", metavar="DIR", help="write charts (PNG and SVG) here; needs matplotlib")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    import sqlite3
    if not os.path.isfile(args.file):
        print(f"daimyo: no such results file: {args.file}", file=sys.stderr)
        return 1
    try:
        store = Store(args.file, readonly=True)
        sweeps = store.sweeps()
    except sqlite3.DatabaseError as e:
        print(f"daimyo: {args.file} is not a daimyo results file ({e})", file=sys.stderr)
        return 1
    if args.sweep:
        unknown = sorted(set(args.sweep) - {s.id for s in sweeps})
        if unknown:
            print(f"daimyo: no sweep {', '.join(map(str, unknown))} in {args.file}; it has "
                  f"{', '.join(str(s.id) for s in sweeps) or 'none'}", file=sys.stderr)
            return 1
        sweeps = [s for s in sweeps if s.id in args.sweep]
    sweeps = [s for s in sweeps if s.games]
    if not sweeps:
        print(f"daimyo: {args.file} holds no games yet", file=sys.stderr)
        return 1
    if args.plots:  # say it now, not after the whole report
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("daimyo: --plots needs matplotlib: pip install 'daimyo[plots]'", file=sys.stderr)
            return 1
    stats = [collect(store, s) for s in sweeps]
    store.close()
    if args.format == "json":
        diffs = [{"sweep": st.sweep.id, "base": stats[0].sweep.id,
                  "figures": {what: d for what, d, _ in differences(stats[0], st)}} for st in stats[1:]]
        print(json.dumps({"file": args.file, "sweeps": [st.to_json() for st in stats], "differences": diffs},
                         indent=1, default=str))
    else:
        parts = [render_sweep(st, args.format, args.rules) for st in stats]
        if len(stats) > 1:
            parts.append(render_comparison(stats, args.format))
        print("\n".join(parts).rstrip())
    if args.plots:
        try:
            files = write_plots(stats, args.plots)
        except RuntimeError as e:
            print(f"daimyo: {e}", file=sys.stderr)
            return 1
        print(f"wrote {len(files)} chart files to {args.plots}", file=sys.stderr)
    return 0
