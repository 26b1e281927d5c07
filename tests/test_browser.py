"""The browser page in a real headless browser: Debian's chromium driven by playwright (never a
browser downloaded by ``playwright install``). The page is loaded from ``conhex-zero serve``'s server
running in this process; moves are played by clicking holes, the AI's answers, the end of the game,
undo, swap, hint, errors and the ConHex board's 69 holes and 41 cells are checked. Screenshots go to
``runs/test-screenshots/`` (printed in the test output).

Skipped, with the reason, when playwright or chromium is missing, unless ``CONHEX_ZERO_REQUIRE``
names ``browser`` (``.ci/run`` does when it could install chromium): then that is a failure.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import torch

from conhex_zero.play.server import GameServer, PlayServer, start_in_thread
from optional import missing

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parent.parent / "runs" / "test-screenshots"
TIMEOUT_MS = 20_000


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _missing(reason: str):
    missing("browser", reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the python package playwright is not installed (pip install -e '.[dev]')")
    exe = _chromium()
    if exe is None:
        _missing("chromium is not installed (Debian: apt-get install chromium)")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()
            torch.set_num_threads(before)


@pytest.fixture
def serve():
    """``serve(player, game, human)`` -> the page's URL; servers stop after the test."""
    servers = []

    def start(player: str, game: str, human: int = 0) -> str:
        server = PlayServer(GameServer(player, game, human), "127.0.0.1", 0)
        start_in_thread(server)
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
        server.game.close()


@pytest.fixture
def page(browser, capsys):
    context = browser.new_context(viewport={"width": 1200, "height": 820}, reduced_motion="reduce")
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    # (answers 400 are expected where a test provokes an error; the page shows those itself)
    pg.on("console", lambda msg: errors.append(msg.text)
          if msg.type == "error" and "status of 400" not in msg.text else None)
    pg.set_default_timeout(TIMEOUT_MS)
    yield pg
    context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def screenshot(page, name: str, capsys) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.mouse.move(0, 0)
    page.screenshot(path=str(path))
    with capsys.disabled():
        print(f"\n  screenshot: {path}")
    return path


def stones(page) -> int:
    return page.locator(".hole.stone-0, .hole.stone-1").count()


def settled(page) -> None:
    """Wait until the page is idle: the person's move, or the game is over."""
    page.wait_for_function("document.querySelector('#status.over') !== null || "
                           "document.querySelectorAll('.hole.legal').length > 0")


def click_and_wait_for_ai(page, move: str) -> None:
    before = stones(page)
    page.click(f'.hole.legal[data-move="{move}"]')
    page.wait_for_function(f"document.querySelector('#status.over') !== null || "
                           f"document.querySelectorAll('.hole.stone-0, .hole.stone-1').length >= {before + 2}")
    settled(page)


def status(page) -> str:
    return page.inner_text("#status-text")


def test_a_hex_game_clicked_to_the_end(page, serve, capsys):
    page.goto(serve("random", "hex-3"))
    settled(page)
    assert page.locator(".hole").count() == 9 and page.locator("polygon.cell").count() == 9
    assert status(page) == "Your move (X, top–bottom)"
    assert page.is_disabled("#undo") and page.is_disabled("#swap") and page.is_enabled("#hint")
    plan = ["b1", "b2", "b3", "a2", "c2", "a3", "c1", "a1", "c3"]
    clicks = 0
    while page.query_selector("#status.over") is None:
        legal = [m for m in plan if page.query_selector(f'.hole.legal[data-move="{m}"]')]
        before = stones(page)
        click_and_wait_for_ai(page, legal[0])
        clicks += 1
        if page.query_selector("#status.over") is None:  # the AI answered: two more stones
            assert stones(page) == before + 2
            assert page.locator(".hole.last-move.stone-1").count() == 1
    text = status(page)
    assert re.fullmatch(r"Game over: (you win — connected top to bottom|the AI wins — connected left to right)", text)
    assert page.locator(".hole.legal").count() == 0 and page.is_disabled("#hint")
    assert page.locator("polygon.cell.win").count() >= 3  # the winning chain crosses the board
    assert page.locator("#moves li").count() == stones(page) and clicks >= 2
    screenshot(page, "hex3-game-over", capsys)


def test_swap_undo_hint_and_new_game_form(page, serve, capsys):
    page.goto(serve("mcts-rollout:8", "hex-3"))
    settled(page)
    # New game from the form: Hex 4x4 with swap, the person second; the AI opens.
    page.fill("#new-spec", "hex-4:swap")
    page.check('input[name="side"][value="second"]')
    page.click("#new-button")
    page.wait_for_function("document.querySelectorAll('.hole').length === 16 && "
                           "document.querySelectorAll('.hole.stone-0').length === 1")
    settled(page)
    assert status(page) == "Your move (O, left–right): play a hole, or swap"
    assert page.is_enabled("#swap") and "AI" in page.inner_text("#game-info")
    page.click("#swap")  # the AI's opening stone becomes ours (mirrored); the AI answers
    page.wait_for_function("document.querySelectorAll('.hole.stone-0, .hole.stone-1').length === 2")
    settled(page)
    assert page.locator(".hole.stone-1").count() == 1 and page.locator(".hole.stone-0").count() == 1
    assert page.is_disabled("#swap") and [t.strip() for t in page.locator("#moves li").all_inner_texts()][1].endswith("swap")
    # Hint: the AI's suggestion is ringed on the board and listed.
    page.click("#hint")
    page.wait_for_selector(".hole.hint")
    assert page.text_content("#eval-title") == "Hint" and page.locator("#candidates tbody tr").count() >= 1
    hinted = page.get_attribute(".hole.hint", "data-move")
    click_and_wait_for_ai(page, hinted)
    assert stones(page) == 4 and page.text_content("#eval-title") == "AI's evaluation"
    assert re.search(r"AI's chance to win: \d+%", page.inner_text("#eval-text"))
    assert page.locator("#candidates tbody tr").count() >= 1
    screenshot(page, "hex4-swap-hint", capsys)
    # Undo takes back our move and the AI's reply.
    page.click("#undo")
    page.wait_for_function("document.querySelectorAll('.hole.stone-0, .hole.stone-1').length === 2")
    settled(page)
    assert page.locator("#moves li").count() == 3
    # Errors are shown in the page, and the game is left as it was.
    page.fill("#new-spec", "hex-99")
    page.click("#new-button")
    page.wait_for_selector("#error:not([hidden])")
    assert "cannot start 'hex-99'" in page.inner_text("#error-text")
    assert page.locator(".hole").count() == 16 and stones(page) == 2
    page.click("#error-close")
    assert page.is_hidden("#error")


def test_conhex_board_and_the_ai_answering(page, serve, capsys):
    page.goto(serve("mcts-rollout:8", "conhex"))
    settled(page)
    assert page.locator(".hole").count() == 69 and page.locator("polygon.cell").count() == 41
    frame = page.eval_on_selector_all("line.frame", "ls => ls.map(l => l.getAttribute('stroke'))")
    assert set(frame) == {"#b2182b", "#2166ac"} and len(frame) >= 20
    assert page.locator('.hole[data-move="F6"] title').text_content() == "F6"
    page.evaluate("""() => {  // every status the page shows, to see the transient "AI is thinking…"
        window.statuses = [];
        const el = document.getElementById("status-text");
        new MutationObserver(() => window.statuses.push(el.textContent))
            .observe(el, {childList: true, characterData: true, subtree: true});
    }""")
    for move in ("F6", "E4", "G8"):
        legal = page.query_selector(f'.hole.legal[data-move="{move}"]')
        if legal is None:
            continue
        click_and_wait_for_ai(page, move)
    assert stones(page) >= 4 and page.locator(".hole.stone-1").count() >= 2
    assert page.locator("#candidates tbody tr").count() == 5
    assert re.search(r"AI's chance to win: \d+% · yours: \d+%", page.inner_text("#eval-text"))
    assert status(page) == "Your move (X, top–bottom)"
    assert "AI is thinking…" in page.evaluate("window.statuses")
    filled = page.eval_on_selector_all("polygon.cell.owner-0, polygon.cell.owner-1",
                                       "cs => cs.map(c => getComputedStyle(c).fill)")
    assert set(filled) <= {"rgb(244, 199, 195)", "rgb(198, 219, 239)"}  # the owners' light colours
    screenshot(page, "conhex-in-progress", capsys)


# ----------------------------------------------------------------------------------- the book
@pytest.fixture(scope="module")
def hex4_book_pages(tmp_path_factory):
    """A small Hex 4x4 book and its pages (``book grow`` and ``book html``)."""
    from conhex_zero.cli.main import main

    root = tmp_path_factory.mktemp("book")
    checkpoint = str(Path(__file__).resolve().parent.parent / "checkpoints" / "hex4-l3h32.pt")
    assert main(["book", "grow", checkpoint, "--out", str(root / "book"), "--nodes", "40", "--sims", "16",
                 "--no-exact", "--quiet"]) == 0
    assert main(["book", "html", str(root / "book"), "--out", str(root / "pages")]) == 0
    return root


def board_pieces(page) -> list[str]:
    return sorted(page.eval_on_selector_all("g.hole[data-piece]", "gs => gs.map(g => g.dataset.move)"))


def line_of(page) -> list[str]:
    return page.inner_text("h1").split() if page.inner_text("h1") != "the start position" else []


def test_book_pages_clicked_move_by_move(page, hex4_book_pages, capsys):
    """The static pages in the browser: a click on a move on the board leads to its page, whose board
    holds exactly the pieces of its line; the line's links lead back."""
    page.goto((hex4_book_pages / "pages" / "index.html").as_uri())
    assert board_pieces(page) == [] and page.locator("#first-moves tr").count() == 17
    first = page.get_attribute("a.move", "data-move")
    page.click(f'a.move[data-move="{first}"]')
    page.wait_for_load_state()
    assert line_of(page) == [first] and board_pieces(page) == [first]
    screenshot(page, "book-hex4-first-move", capsys)
    for _ in range(2):  # deeper: every page's board matches its line
        links = page.locator("a.move")
        if links.count() == 0:
            break
        before = line_of(page)
        reply = links.first.get_attribute("data-move")
        links.first.click()
        page.wait_for_load_state()
        line = line_of(page)
        assert board_pieces(page) == sorted(line) and reply in line and len(line) == len(before) + 1
    page.click("p.nav a >> nth=0")  # back to the start along the line
    page.wait_for_load_state()
    assert page.locator("#first-moves").count() == 1


def test_serve_shows_the_book(page, hex4_book_pages, capsys):
    """serve --book DIR: the book's values on the board and in the book's card; the AI's move from the
    book says so."""
    checkpoint = str(Path(__file__).resolve().parent.parent / "checkpoints" / "hex4-l3h32.pt")
    server = PlayServer(GameServer(checkpoint, "hex-4", 1, book=str(hex4_book_pages / "book")), "127.0.0.1", 0)
    start_in_thread(server)
    try:
        page.goto(server.url)
        settled(page)  # the AI opened from the book
        assert "from the opening book" in page.inner_text("#eval-text")
        assert page.is_visible("#book-card") and page.locator("#book-moves tbody tr").count() >= 1
        assert page.locator(".hole.book-move").count() >= 1
        value = page.text_content(".hole.book-move .book-value")
        assert re.fullmatch(r"\d+%|proven (win|loss)", value)
        screenshot(page, "serve-book", capsys)
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()


# ------------------------------------------------------------------ the opening book (issue 57)
BOOKS = Path(__file__).resolve().parent.parent / "checkpoints" / "books"
CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"


def test_the_book_page_walks_the_book_by_clicks_back_and_the_url(page, capsys):
    from conhex_zero.play.book_browser import BookBrowser

    book = str(BOOKS / "conhex-l4h64-v4")
    server = PlayServer(GameServer(str(CHECKPOINTS / "conhex-l4h64-v4.pt"), "conhex", 0, book=book,
                                   simulations=16), "127.0.0.1", 0)
    start_in_thread(server)
    try:
        reference = BookBrowser(book)
        page.goto(server.url + "book")
        page.wait_for_selector('.hole.book-move[data-move="D6"]')
        assert page.locator(".hole.book-move").count() == len([m for m in reference.position("")["moves"]
                                                                if m["move"] != "swap"])
        d6 = next(m for m in reference.position("")["moves"] if m["move"] == "D6")
        assert page.text_content('.hole.book-move[data-move="D6"] text') == str(round(d6["win_percent"]))
        assert "after the opponent's best answer" in page.inner_text("#convention")
        page.click('.hole.book-move[data-move="D6"]')  # a click goes to the move's position
        page.wait_for_url(re.compile(r"/book\?line=D6$"))
        page.wait_for_selector('#book-moves tr[data-move="swap"]')
        after = reference.position("D6")
        assert page.locator('.hole[data-move="D6"] circle').get_attribute("fill") != "#fff"  # the stone is drawn
        first = after["moves"][1]["move"]  # a hole move below D6
        page.click(f'#book-moves tr[data-move="{first}"] a')
        page.wait_for_url(re.compile(rf"/book\?line=D6,{first}$"))
        page.wait_for_selector("#steps a[data-move]")
        assert page.locator("#steps a[data-move]").count() == 2
        page.go_back()  # the browser's back walks the line
        page.wait_for_url(re.compile(r"/book\?line=D6$"))
        page.wait_for_function("document.querySelectorAll('#steps a[data-move]').length === 1")
        page.click("#back")
        page.wait_for_url(re.compile(r"/book$"))
        page.goto(server.url + f"book?line=D6,{first}")  # the URL names the position: reopened as shared
        page.wait_for_function("document.querySelectorAll('#steps a[data-move]').length === 2")
        page.click("#search")  # a live search on request
        page.wait_for_function("document.querySelector('#search-out').textContent.includes('simulations')")
        screenshot(page, "book-page", capsys)
        page.goto(server.url + "book?line=D6,Z99")  # a bad link: the start, and why
        page.wait_for_selector("#error:not([hidden])")
        assert "Z99" in page.inner_text("#error-text")
        page.wait_for_selector('.hole.book-move[data-move="D6"]')
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_static_book_pages_open_and_every_link_leads_to_a_page(page, tmp_path, depth):
    """``book html --depth D`` on the ConHex book (a page cap keeps depth 3 short): every link of
    the pages a click reaches opens a written page in the browser."""
    from conhex_zero.cli.main import main

    out = tmp_path / "pages"
    assert main(["book", "html", str(BOOKS / "conhex-l4h64-v4"), "--out", str(out), "--depth", str(depth),
                 "--pages", "120", "--quiet"]) == 0
    page.goto((out / "index.html").as_uri())
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert links
    for href in links[:25]:
        assert (out / href).is_file(), href
        page.goto((out / href).as_uri())
        assert page.title().startswith("conhex book")
