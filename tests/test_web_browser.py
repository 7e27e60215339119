"""`daimyo serve` in a real headless browser (Debian's chromium and chromium-driver, via selenium).

Games are played by clicking in the page: a whole 4-player Shogun game with one clicked seat and
three bots, a hot-seat round for two people, a Samurai Swords round, a card-game game, the replay
viewer, and a server restart mid-game. Screenshots go to tests/screenshots/ (git-ignored); the
measured figures (page load, click to updated board) to tests/screenshots/figures.json.
Without a browser these tests skip, saying why; in CI (the CI variable set) that is a failure.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from webserver import free_port, running

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SHOTS = Path(__file__).parent / "screenshots"
FIGURES: dict[str, list[float]] = {}


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'daimyo[test]')"
    for path in (CHROMIUM, DRIVER):
        if not shutil.which(path):
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run in CI: {why}")
        pytest.skip(f"no browser: {why}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="daimyo-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", "--window-size=1400,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(30)
    SHOTS.mkdir(exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
    if FIGURES:
        (SHOTS / "figures.json").write_text(json.dumps(
            {k: {"n": len(v), "median_ms": sorted(v)[len(v) // 2], "max_ms": max(v)} for k, v in FIGURES.items()},
            indent=1))


def body(driver, key: str) -> str:
    return driver.execute_script(f"return document.body.dataset.{key} || ''")


def wait(driver, cond, what: str, timeout: float = 20) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return
        time.sleep(0.02)
    driver.save_screenshot(str(SHOTS / "timeout.png"))
    raise AssertionError(f"timed out waiting for {what}; page says: "
                         f"{driver.find_element('id', 'msg').text!r} / {driver.find_element('id', 'turn').text!r}")


def open_game(driver, url: str) -> None:
    start = time.time()
    driver.get(url)
    wait(driver, lambda: body(driver, "seq") != "", "the first board")
    FIGURES.setdefault("page_load_ms", []).append((time.time() - start) * 1000)


def my_turn_or_over(driver) -> bool:
    return bool(body(driver, "n") or body(driver, "over") or body(driver, "draft").endswith("r")
                or body(driver, "handover"))


PICK_JS = """
const q = (s) => [...document.querySelectorAll(s)];
const ho = document.getElementById('handbtn'), ok = document.getElementById('confirm'),
      num = document.getElementById('numberok');
if (document.body.dataset.handover) return ho;
if ((document.body.dataset.draft || '').endsWith('r')) return ok;
if (num) return num;
const all = [...q('#board .space.opt'), ...q('#own .card.opt'), ...q('#options button.option')];
return all[Math.floor(arguments[0] * all.length)];
"""


def click_once(driver, rng: random.Random, native: bool = False) -> None:
    """Take one decision by clicking: hand over, confirm drafted secrets, else a random offered
    option (a highlighted space on the board, a highlighted card, the number control or a
    button). `native`: a pointer click through the driver; otherwise the element's own
    click() in the page (the same handler, without the driver's slow round trips)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    before = body(driver, "renders")
    driver.execute_script("document.body.dataset.clickms = ''")
    t0 = time.time()
    for _ in range(5):
        el = driver.execute_script(PICK_JS, rng.random())
        assert el is not None, "nothing to click"
        try:
            if native and el.tag_name in ("g", "svg"):
                from selenium.webdriver import ActionChains
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
                ActionChains(driver).move_to_element(el).click().perform()
            elif native:
                el.click()
            else:
                driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", el)
            break
        except (StaleElementReferenceException, WebDriverException):
            time.sleep(0.05)  # the page was redrawn under the pointer: pick again
    wait(driver, lambda: body(driver, "renders") != before, "the board to update after a click")
    FIGURES.setdefault("click_to_board_ms_with_driver", []).append((time.time() - t0) * 1000)
    wait(driver, lambda: body(driver, "clickms") or body(driver, "handover"), "the page's own timing", 5)
    in_page = body(driver, "clickms")  # measured by the page itself: the click to the board redrawn
    if in_page:
        FIGURES.setdefault("click_to_board_ms", []).append(float(in_page))


def play(driver, rng: random.Random, until, limit: int, timeout: float = 20) -> int:
    clicks = 0
    while not until() and clicks < limit:
        wait(driver, lambda: my_turn_or_over(driver), "my turn", timeout)
        if until() or body(driver, "over"):
            break
        msg = driver.find_element("id", "msg").text
        assert not msg, f"the page shows an error: {msg}"
        click_once(driver, rng, native=clicks % 10 == 0)
        clicks += 1
    return clicks


def create(base: str, combo: str, players: int, seats: list[str], **options) -> dict:
    import httpx
    r = httpx.post(f"{base}/api/games", json={"combo": combo, "players": players, "seats": seats,
                                              "options": options, "seed": 2})
    assert r.status_code == 200, r.text
    return r.json()


def test_shogun_whole_game_one_clicked_seat_three_bots(browser, tmp_path):
    from selenium.webdriver.common.by import By
    rng = random.Random(1)
    with running(str(tmp_path / "g.db")) as (base, hub):
        browser.get(base + "/")  # the lobby: one person, three bots
        wait(browser, lambda: browser.find_elements(By.ID, "seat-4"), "the lobby's seats")
        assert browser.find_element(By.ID, "base").get_attribute("value") == "shogun"  # the default game
        for i, kind in ((2, "random"), (3, "heuristic"), (4, "random")):
            browser.execute_script(f"document.getElementById('seat-{i}').value = '{kind}'")
        browser.find_element(By.ID, "create").click()
        wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "a[data-role=P1]"), "the links")
        url = browser.find_element(By.CSS_SELECTOR, "a[data-role=P1]").get_attribute("href")
        assert not browser.find_elements(By.CSS_SELECTOR, "a[data-role=P2]")  # bots get no link
        open_game(browser, url)
        browser.save_screenshot(str(SHOTS / "shogun-start.png"))
        clicks = play(browser, rng, lambda: body(browser, "over") == "1", 2000)
        assert body(browser, "over") == "1"
        assert "winner" in browser.find_element(By.ID, "result").text
        room = next(iter(hub.rooms.values()))
        assert room.game.over and clicks > 30
        assert any(e["t"] == "decision" and e["player"] == "P1" and e.get("secret") for e in room.game.log)
        assert "== " in browser.find_element(By.ID, "account").text
        assert room.game.model.combo.base.id == "shogun"
        browser.save_screenshot(str(SHOTS / "shogun-over.png"))


def test_lobby_player_count_follows_the_chosen_expansions(browser, tmp_path):
    """Samurai Swords is for 2-5 players, its VP variant for 3-5: ticking the variant narrows the
    lobby's player count (the seats follow)."""
    from selenium.webdriver.common.by import By
    with running(str(tmp_path / "g.db")) as (base, _hub):
        browser.get(base + "/")
        wait(browser, lambda: browser.find_elements(By.ID, "seat-4"), "the lobby's seats")
        browser.execute_script("const b = document.getElementById('base'); b.value = 'samurai-swords';"
                               "b.dispatchEvent(new Event('change'));")
        wait(browser, lambda: browser.find_elements(By.ID, "exp-samurai-swords-vp"), "the expansions")
        players = browser.find_element(By.ID, "players")
        browser.execute_script("arguments[0].value = 2; arguments[0].dispatchEvent(new Event('change'))", players)
        assert players.get_attribute("min") == "2"
        browser.find_element(By.ID, "exp-samurai-swords-vp").click()
        assert players.get_attribute("min") == "3" and players.get_attribute("max") == "5"
        assert players.get_attribute("value") == "3"
        assert browser.find_elements(By.ID, "seat-3") and not browser.find_elements(By.ID, "seat-4")


def test_hot_seat_round_for_two_people(browser, tmp_path):
    from selenium.webdriver.common.by import By
    rng = random.Random(2)
    with running(str(tmp_path / "h.db")) as (base, hub):
        got = create(base, "shogun-cards", 2, ["human", "human"])
        open_game(browser, base + got["links"]["table"])
        room = hub.rooms[got["id"]]
        handovers = 0
        for _ in range(60):
            wait(browser, lambda: my_turn_or_over(browser), "a turn or a hand-over")
            if body(browser, "handover"):
                handovers += 1
                # Nothing secret before the next person says so: no hand shown, no decision.
                assert browser.find_element(By.ID, "ownsec").get_attribute("hidden") is not None
                assert browser.find_element(By.ID, "decide").get_attribute("hidden") is not None
                assert browser.find_element(By.ID, "handover").is_displayed()
                if handovers == 1:
                    browser.save_screenshot(str(SHOTS / "hotseat-handover.png"))
            click_once(browser, rng)
            if room.game.state["globals"].get("turns_played", 0) >= 2:
                break
        assert handovers >= 2
        assert room.game.state["globals"]["turns_played"] >= 2  # a round: both people took a turn


def test_samurai_swords_round_by_clicking(browser, tmp_path):
    rng = random.Random(3)
    with running(str(tmp_path / "s.db")) as (base, hub):
        got = create(base, "samurai-swords", 3, ["human", "random", "random"])
        open_game(browser, base + got["links"]["P1"])
        room = hub.rooms[got["id"]]
        play(browser, rng, lambda: room.game.state["globals"]["round"] >= 2 or room.game.over, 400)
        assert room.game.state["globals"]["round"] >= 2 or room.game.over
        browser.save_screenshot(str(SHOTS / "samurai-swords.png"))


def test_card_game_by_clicking(browser, tmp_path):
    from selenium.webdriver.common.by import By
    rng = random.Random(4)
    with running(str(tmp_path / "c.db")) as (base, hub):
        got = create(base, "shogun-cards", 2, ["human", "random"])
        open_game(browser, base + got["links"]["P1"])
        cards = browser.find_elements(By.CSS_SELECTOR, "#own .card")
        assert len(cards) >= 5  # the hand, by face
        play(browser, rng, lambda: body(browser, "over") == "1", 400)
        assert hub.rooms[got["id"]].game.over
        browser.save_screenshot(str(SHOTS / "shogun-cards.png"))


def test_replay_viewer_steps_through_a_game(browser, tmp_path):
    from selenium.webdriver.common.by import By

    from engine import Game, load
    from engine.run.state import canonical
    game = Game.new(load("shogun", players=3), players=3, seed=9)
    r = random.Random(9)
    while not game.over:
        game.apply(r.choice(game.decision.options))
    log = tmp_path / "game.jsonl"
    log.write_text("".join(canonical(e) + "\n" for e in game.log))
    total = sum(1 for e in game.log if e["t"] == "decision")
    with running(str(tmp_path / "r.db")) as (base, _):
        browser.get(base + "/replay")
        browser.find_element(By.ID, "logfile").send_keys(str(log))
        wait(browser, lambda: browser.find_element(By.ID, "pos").text == f"decision 0 of {total}", "the replay")
        browser.find_element(By.ID, "next").click()
        wait(browser, lambda: browser.find_element(By.ID, "pos").text == f"decision 1 of {total}", "a step")
        owned = lambda: browser.execute_script(  # noqa: E731
            "return [...document.querySelectorAll('#board rect.owner')]"
            ".filter(r => r.getAttribute('fill') !== 'transparent').length")
        jump = browser.find_element(By.ID, "jump")
        jump.clear()
        jump.send_keys("40")
        browser.find_element(By.ID, "go").click()
        wait(browser, lambda: browser.find_element(By.ID, "pos").text == f"decision 40 of {total}", "the jump")
        assert owned() > 0  # provinces claimed by then show their owners
        browser.find_element(By.ID, "prev").click()
        wait(browser, lambda: browser.find_element(By.ID, "pos").text == f"decision 39 of {total}", "a step back")
        browser.find_element(By.ID, "last").click()
        wait(browser, lambda: browser.find_element(By.ID, "pos").text == f"decision {total} of {total}", "the end")
        assert "winner" in browser.find_element(By.ID, "result").text
        browser.save_screenshot(str(SHOTS / "replay.png"))


def test_server_restart_mid_game(browser, tmp_path):
    rng = random.Random(5)
    db, port = str(tmp_path / "restart.db"), free_port()
    with running(db, port) as (base, hub):
        got = create(base, "shogun", 3, ["human", "random", "random"])
        open_game(browser, base + got["links"]["P1"])
        play(browser, rng, lambda: False, 6)
        seq = int(body(browser, "seq"))
    with running(db, port) as (base, hub):  # a new server process state: only the database is kept
        room = hub.rooms[got["id"]]
        assert room.game.state["seq"] >= seq
        wait(browser, lambda: browser.find_element("id", "conn").text == "connected", "the page to reconnect")
        play(browser, rng, lambda: False, 6)
        assert int(body(browser, "seq")) > seq  # the game went on after the restart
