"""`daimyo serve` without a browser: the room as the only authority, the store, and the leak
test (every message seat A receives in a whole game is searched for seat B's secrets)."""
from __future__ import annotations

import json
import random
import select

import httpx
import pytest
import websocket
from webserver import running

from engine.cli.web.hub import Hub, LobbyError
from engine.cli.web.store import Store
from engine.model import PLAYER_KIND


def _hub() -> Hub:
    return Hub(Store(":memory:"), bot_delay=0)


def test_create_checks_the_lobby_request():
    hub = _hub()
    with pytest.raises(LobbyError, match="unknown seat `robot`"):
        hub.create("shogun", 4, {}, ["human", "robot"])
    with pytest.raises(LobbyError):
        hub.create("no-such-game", 4, {}, [])
    room = hub.create("shogun", 4, {"side": "moon"}, ["human", "random", "heuristic", "search"])
    assert room.kinds == ["human", "random", "heuristic", "search"]
    assert room.model.combo.options["side"] == "moon"
    roles = sorted(r[0] if r[0] != "seat" else r[1] for r in room.tokens.values())
    assert roles == ["P1", "admin", "table", "watch"]  # a token per person, none for bots
    assert all(len(t) >= 24 for t in room.tokens)


def test_two_people_with_two_hands_each_get_one_seat_each():
    """Samurai Swords for 2 (ruleset-format.md, several hands per player): the room seats the two
    people, gives the one person one link, colours all four hands, and asks the person who plays
    the hand that must decide."""
    room = _hub().create("samurai-swords", 2, {}, ["human", "random"], seed=1)
    assert room.players == ["P1", "P2"] and room.humans == ["P1"]
    assert sorted(r for r in room.tokens.values() if r[0] == "seat") == [("seat", "P1")]
    assert room.table_seats() == (["P1", "P2", "P3", "P4"], ["human", "random", "human", "random"])
    asked = set()
    for _ in range(60):
        d = room.game.decision
        asked.add(d.player)
        if d.player == "P1":
            draft = room.drafts.get("P1")
            if draft is not None and draft.review:  # secret choices all made: send them
                assert room.confirm("P1") is None
            else:  # the real decision, or the next one of a secret draft
                assert room.act("P1", room.pending_for("P1").number, 0) is None
        else:
            room.step_bot()
    assert asked == {"P1", "P2"}  # every decision went to one of the two people


def test_the_room_refuses_wrong_seat_stale_and_malformed_actions():
    hub = _hub()
    room = hub.create("shogun", 3, {}, ["human", "human", "human"])
    d = room.game.decision
    other = next(p for p in room.players if p != d.player)
    before = room.game.state_hash()
    assert room.act(other, d.number, 0) == "it is not your turn to decide"
    assert "stale" in room.act(d.player, d.number + 5, 0)
    assert "no option" in room.act(d.player, d.number, 99)
    assert "malformed" in room.act(d.player, "1", 0)
    assert room.game.state_hash() == before  # refused messages leave the game untouched
    assert room.act(d.player, d.number, 0) is None
    assert "stale" in room.act(d.player, d.number, 0)  # the same message again: replayed, refused


def test_secret_choices_are_drafted_then_confirmed():
    hub = _hub()
    room = hub.create("shogun-cards", 2, {}, ["human", "human"])
    d = room.game.decision
    assert d.secret
    seat = d.player
    before = room.game.state_hash()
    assert room.act(seat, d.number, 0) is None
    assert room.game.state_hash() == before  # drafted on a copy: the game has not moved
    draft = room.drafts[seat]
    while not draft.review:
        assert room.act(seat, draft.game.decision.number, 0) is None
    assert room.reset(seat) is None and seat not in room.drafts  # start over
    assert room.act(seat, d.number, 1) is None
    draft = room.drafts[seat]
    while not draft.review:
        room.act(seat, draft.game.decision.number, 0)
    chosen = [c for c, _ in draft.choices]
    assert room.confirm(seat) is None
    mine = [e["choice"] for e in room.game.log if e["t"] == "decision" and e["player"] == seat]
    assert mine == chosen  # confirmed choices were applied, in order


def test_store_resumes_games_with_their_seats_and_log(tmp_path):
    db = str(tmp_path / "g.db")
    hub = Hub(Store(db), bot_delay=0)
    room = hub.create("shogun", 3, {}, ["human", "random", "human"])
    room.act(room.game.decision.player, room.game.decision.number, 0)
    hub.persist(room)
    hub.store.close()
    again = Hub(Store(db), bot_delay=0)
    assert again.resume() == 1
    back = again.rooms[room.id]
    assert back.kinds == ["human", "random", "human"] and back.tokens == room.tokens
    assert back.game.state == room.game.state and back.game.log == room.game.log


def test_terminal_save_opens_and_exports_with_seats():
    from engine import Game, load
    game = Game.new(load("shogun", players=3), players=3, seed=4)
    save = game.save()
    save["seats"] = ["human", "heuristic", "human"]
    hub = _hub()
    room = hub.open_save(json.loads(json.dumps(save)))
    assert room.kinds == ["human", "heuristic", "human"]  # people stay people
    assert room.game.state == game.state
    out = hub.export(room)
    assert out["seats"] == save["seats"] and Game.from_save(room.model, out).state == game.state


def _secret_strings(room, seat: str) -> set[str]:
    """The entity ids in `seat`'s hidden fields (its hand, its face-down cards) right now."""
    model = room.model
    out: set[str] = set()
    kinds = model.kinds
    for eid, fields in room.game.state["ent"].items():
        k = kinds[PLAYER_KIND] if eid in room.players else kinds.get(model.kind_of.get(eid, ""))
        if k is None:
            continue
        owner = eid if k.name == PLAYER_KIND else (fields.get(k.owner) if k.owner else None)
        if owner != seat:
            continue
        for f, v in fields.items():
            if k.visible.get(f, "all") == "all":
                continue
            items = v if isinstance(v, list) else list(v) if isinstance(v, dict) else [v]
            out.update(x for x in items if isinstance(x, str) and x in model.kind_of)
    return out


def _hidden_parts(room, view_of_b: dict, seat: str) -> list[str]:
    """`seat`'s hidden values as JSON, from the referee's state (empty and trivial ones skipped)."""
    out = []
    k = room.model.kinds[PLAYER_KIND]
    for f, v in room.game.state["ent"][seat].items():
        if k.visible.get(f, "all") != "all" and v not in (None, 0, [], {}, "", False) and v != k.fields.get(f):
            text = json.dumps(v)
            if len(text) > 6 and not (isinstance(v, str) and v in room.model.kind_of):  # a bare card name is
                # shared by every seat's copy (P1 may hold its own `chest_2`); structures are searched
                out.append(text)
    return out


@pytest.mark.parametrize("combo,players,limit", [("shogun", 4, 10_000), ("samurai-swords", 3, 250)])
def test_leak_every_page_message_of_a_whole_game(combo, players, limit):
    """Every message P1's page is sent during a whole game (built exactly as the socket sends
    it) shows the others' hidden fields only by their size, and holds none of their secrets."""
    from engine.cli.web.app import Page
    rng = random.Random(2)
    hub = _hub()
    room = hub.create(combo, players, {}, ["human"] * players, seed=6)
    page = Page(room, ("seat", "P1"))
    n = 0
    while not room.game.over and n < limit:  # Samurai Swords: its first two rounds (a whole game is slow)
        with room.lock:
            msg = page.message()
            # A value also on the table (a province's name) is no secret, nor what P1 was shown by the
            # rules (a spy's report in its own `spied` field).
            known = json.dumps(room.game.view(None)) + json.dumps(room.game.view("P1")["ent"]["P1"])
            secrets = [x for q in room.players if q != "P1" for x in _hidden_parts(room, msg, q) if x not in known]
        text = json.dumps(msg)
        for q in room.players[1:]:
            for f, v in msg["view"]["ent"][q].items():
                if room.model.kinds[PLAYER_KIND].visible.get(f, "all") == "owner":
                    assert v in ("?", {"?": v.get("?") if isinstance(v, dict) else None}) or set(v) <= {"?"}, (q, f, v)
        for s in secrets:
            assert s not in text, f"P1 was sent another seat's hidden value {s}"
        d = room.game.decision
        seat = d.player
        draft = room.drafts.get(seat)
        if draft and draft.review:
            assert room.confirm(seat) is None
        else:
            dd = draft.game.decision if draft else d
            assert room.act(seat, dd.number, rng.randrange(len(dd.options))) is None
        n += 1
    assert n > 100


@pytest.mark.parametrize("combo,players", [("shogun-cards", 2)])
def test_leak_seat_a_never_receives_seat_b_secrets(tmp_path, combo, players):
    """A whole game over websockets: every message to P1 is searched for the others' secrets."""
    rng = random.Random(5)
    with running(str(tmp_path / "leak.db")) as (base, hub):
        r = httpx.post(f"{base}/api/games", json={"combo": combo, "players": players,
                                                   "seats": ["human"] * players, "seed": 3})
        got = r.json()
        room = hub.rooms[got["id"]]
        socks = {}
        for p in room.players:
            ws = websocket.create_connection(f"ws{base[4:]}/ws/{got['id']}", timeout=10)
            ws.send(json.dumps({"type": "hello", "token": got["links"][p].split("#")[1]}))
            socks[p] = ws
        received: list[tuple[str, set[str]]] = []  # (text P1 got, the others' secrets then)
        checked = 0

        def secrets_now() -> set[str]:
            with room.lock:
                public = json.dumps(room.game.view(None))
                ids = set().union(*(_secret_strings(room, q) for q in room.players if q != "P1"))
            return {x for x in ids if f'"{x}"' not in public}  # ids also on the table are not secrets

        def recv(p: str, wait: float) -> dict | None:
            if not select.select([socks[p].sock], [], [], wait)[0]:  # a short socket timeout could cut a frame
                return None
            text = socks[p].recv()
            if p == "P1":
                received.append((text, secrets_now()))
            return json.loads(text)

        latest: dict[str, dict | None] = {}
        steps = 0
        while not room.game.over and steps < 5000:
            steps += 1
            with room.lock:  # not while a move is half applied
                d = room.game.decision
            if d is None:
                break
            for p in room.players:  # everything sent so far; the last state message of each seat counts
                while (msg := recv(p, 0.001 if p != d.player or latest.get(p) else 2)) is not None:
                    if msg["type"] == "state":
                        latest[p] = msg
            msg = latest.get(d.player)
            if msg is None:
                continue
            if msg.get("draft") and msg["draft"]["review"]:
                socks[d.player].send(json.dumps({"type": "confirm"}))
            elif msg.get("decision"):
                dd = msg["decision"]
                socks[d.player].send(json.dumps({"type": "act", "n": dd["n"],
                                                 "i": rng.randrange(len(dd["options"]))}))
            latest[d.player] = None
        assert room.game.over, "the game did not finish"
        for text, secrets in received:
            for s in secrets:
                assert f'"{s}"' not in text, f"P1 received another seat's secret {s}"
            checked += 1
        assert checked > 20
        for ws in socks.values():
            ws.close()


def test_socket_refuses_bad_tokens_and_bad_messages(tmp_path):
    with running(str(tmp_path / "s.db")) as (base, hub):
        got = httpx.post(f"{base}/api/games", json={"combo": "shogun", "players": 3,
                                                    "seats": ["human", "human", "human"]}).json()
        url = f"ws{base[4:]}/ws/{got['id']}"
        ws = websocket.create_connection(url, timeout=10)
        ws.send(json.dumps({"type": "hello", "token": "guessed"}))
        assert "not valid" in json.loads(ws.recv())["message"]
        ws.close()
        watch = websocket.create_connection(url, timeout=10)
        watch.send(json.dumps({"type": "hello", "token": got["links"]["watch"].split("#")[1]}))
        assert json.loads(watch.recv())["type"] == "hello"
        state = json.loads(watch.recv())
        assert state["decision"] is None and state["you"] is None
        room = hub.rooms[got["id"]]
        before = room.game.state_hash()
        for bad in ["not json", json.dumps({"type": "act", "n": 1, "i": 0}), json.dumps([1]),
                    json.dumps({"type": "act", "pad": "x" * 5000})]:
            watch.send(bad)
            assert json.loads(watch.recv())["type"] == "error"
        assert room.game.state_hash() == before
        watch.close()
        r = httpx.get(f"{base}/api/games/{got['id']}/save", params={"t": got["links"]["P1"].split("#")[1]})
        assert r.status_code == 403  # only the admin link downloads the whole (secret) state


def test_daimyo_serve_prints_links_and_binds_locally(tmp_path):
    import subprocess
    import sys
    import time

    from webserver import free_port

    from engine.cli import main
    assert main(["serve", "shogun", "--seats", "human,robot", "--db", str(tmp_path / "x.db")]) == 2
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "shogun", "--players", "3", "--seats",
                             "human,random,human", "--port", str(port), "--db", str(tmp_path / "s.db")],
                            stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(6)]
        text = "".join(lines)
        assert "seat P1" in text and "seat P3" in text and "seat P2" not in text  # a bot has no link
        assert "spectator" in text and f"http://127.0.0.1:{port}/g/" in text
        for _ in range(100):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert r.status_code == 200 and "daimyo lobby" in r.text
    finally:
        proc.terminate()
        proc.wait(10)
