"""The opening book (``conhex_zero.book``): keys up to symmetry and transposition, minimax with
proofs, growth best first, the file (checksums, torn lines, refusals), the first-move table against
the exact solver on Hex 4x4, the player that plays the book, and the pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from conhex_zero.analysis.solver import HexSolver
from conhex_zero.book import store
from conhex_zero.book.folder import check_same, new_book, open_book
from conhex_zero.book.graph import Book, Node, Search
from conhex_zero.book.grow import Grower
from conhex_zero.book.keys import Canonical, UnsupportedGame
from conhex_zero.book.store import BookError
from conhex_zero.book.table import move_table
from conhex_zero.env.notation import play_moves
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.checkpoint_files import checkpoint_digest

ROOT = Path(__file__).resolve().parent.parent
HEX4 = str(ROOT / "checkpoints" / "hex4-l3h32.pt")


def children(env: VecEnv, state: State) -> tuple[list[int], State]:
    legal = torch.nonzero(env.legal_mask(state)[0]).flatten().tolist()
    return legal, env.step(State.cat([state] * len(legal)), torch.tensor(legal))


# ------------------------------------------------------------------------------------------ keys
@pytest.mark.parametrize("game, distinct", [("conhex", 22), ("hex-5", 13), ("hex-4", 8), ("hex-7", 25)])
def test_first_moves_up_to_symmetry(game, distinct):
    """ConHex has 22 distinct first moves (CONHEX_BOARD.md: the square's 8 symmetries, of which
    the 4 that keep the sides keep the opener's colour); n x n Hex (n^2 + 1) / 2 up to the 180-degree turn."""
    env = VecEnv(game)
    canon = Canonical(env)
    _, kids = children(env, env.initial_state(1))
    assert len(set(canon.keys(kids).keys)) == distinct


def test_transpositions_and_symmetric_positions_share_a_key():
    env = VecEnv("hex-5")
    canon = Canonical(env)
    a = play_moves(env, ["a1", "c3", "b4"])
    b = play_moves(env, ["b4", "c3", "a1"])  # another order, same position
    turned = play_moves(env, ["e5", "c3", "d2"])  # the 180-degree image of a
    other = play_moves(env, ["a1", "c3", "b3"])
    keys = canon.keys(State.cat([a, b, turned, other])).keys
    assert keys[0] == keys[1] == keys[2] != keys[3]


def test_moves_map_between_a_position_and_its_key():
    """A canonical move taken back to the real position leads to a position with the key of the
    canonical frame's child; every symmetry's inverse undoes it."""
    env = VecEnv("conhex")
    canon = Canonical(env)
    state = play_moves(env, ["F6", "swap", "C5"])
    keyed = canon.keys(state)
    k = keyed.symmetry[0]
    legal, kids = children(env, state)
    child_keys = canon.keys(kids).keys
    for real, child_key in list(zip(legal, child_keys))[::7]:
        canonical = canon.to_canonical([real], k)[0]
        assert canon.to_real([canonical], k) == [real]
        again = env.step(state, torch.tensor(canon.to_real([canonical], k)))
        assert canon.keys(again).keys[0] == child_key
    for j in range(len(canon.tables)):
        assert canon.to_real(canon.to_canonical(legal, j), j) == legal


def test_the_swap_reaches_the_position_of_another_opening_without_the_swap():
    """After F6 and the swap, the position is the image of one first move with the swap gone: one
    node for both (the key names the swap's legality instead of the ply)."""
    env = VecEnv("conhex")
    canon = Canonical(env)
    swapped = play_moves(env, ["F6", "swap"])
    key = canon.keys(swapped).keys[0]
    assert key.endswith("|-") and canon.keys(play_moves(env, ["F6"])).keys[0].endswith("|s")
    pieces = key.split("|")[0]
    assert pieces.count("x") + pieces.count("o") == 1


def test_variants_a_book_cannot_name_are_refused():
    with pytest.raises(UnsupportedGame, match="random opening pieces"):
        Canonical(VecEnv("hex-5:random=1"))


# ------------------------------------------------------------------------------------ minimax
def _node(key: str, value: float, best: int | None = 0, proven: int = 0, line=None) -> Node:
    first = Search(value=value, best=best, proven=proven)
    return Node(key=key, line=line or [], legal=3, first=first, rest=first)


def test_minimax_backs_up_refutations_and_keeps_proofs():
    """A node's value is the best of its rest's estimate and its children's (negated); a proven
    child decides its parent exactly, whatever the estimates."""
    book = Book("r")
    book.nodes = {"r": _node("r", 0.6, best=0), "a": _node("a", -0.2, best=1, line=[0]),
                  "b": _node("b", 0.5, best=2, line=[1])}
    root = book.nodes["r"]
    root.children = {0: "a"}
    root.rest = Search(value=0.1, best=1, excluded=frozenset({0}))
    book.update()
    assert root.value == pytest.approx(0.2)  # the child's -(-0.2) beats the rest's 0.1
    root.children[1] = "b"
    root.rest = Search(value=-0.3, best=2, excluded=frozenset({0, 1}))
    book.update()
    assert root.value == pytest.approx(0.2)  # b is worth -0.5 to the root: a stays best
    book.nodes["a"].first = book.nodes["a"].rest = Search(value=0.9, best=1, proven=1)  # a proven win for its mover
    book.update()
    assert book.nodes["a"].proven == 1 and root.value == pytest.approx(-0.3)  # now the rest is best
    book.nodes["b"].exact = -1  # b lost for its mover: the root wins
    book.update()
    assert root.proven == 1 and root.value == 1.0


def test_a_node_is_lost_only_when_every_move_is_proven_lost():
    book = Book("r")
    book.nodes = {"r": _node("r", 0.0), "a": _node("a", 1.0, proven=1, line=[0])}
    root = book.nodes["r"]
    root.children = {0: "a"}
    root.rest = Search(value=-0.9, best=1, excluded=frozenset({0}))
    book.update()
    assert root.proven == 0  # the rest is only an estimate
    root.rest = Search(value=-1.0, best=1, proven=-1, excluded=frozenset({0}))
    book.update()
    assert root.proven == -1 and root.value == -1.0


def test_growth_costs_favour_even_positions_and_best_moves():
    book = Book("r")
    book.nodes = {"r": _node("r", 0.0)}
    near = book.move_cost(book.nodes["r"], 0.0)
    sure = book.move_cost(book.nodes["r"], 0.8)
    assert near < sure  # the start: no gap term, a sure value costs more
    book.nodes["r"].value = 0.5
    book.start = "elsewhere"
    assert book.move_cost(book.nodes["r"], 0.5) < book.move_cost(book.nodes["r"], 0.3)  # worse moves cost more


# ---------------------------------------------------------------------------------- growth
def grow(folder: Path, checkpoint: str = HEX4, nodes: int = 40, sims: int = 32, batch: int = 16, exact: bool = False,
         after: list[str] | None = None):
    ckpt = load_checkpoint(checkpoint)
    env = VecEnv(ckpt.game)
    start = play_moves(env, after) if after else env.initial_state(1)
    if (folder / store.BOOK_FILE).exists():
        opened = open_book(folder)
    else:
        opened = new_book(folder, env.game.spec, after or [], Canonical(env).keys(start).keys[0], checkpoint,
                          checkpoint_digest(checkpoint), sims)
    grower = Grower(env, ckpt.model, folder, opened.book, start, sims=sims, batch=batch,
                    solver=HexSolver(env.game.board) if exact else None)
    while len(opened.book) < nodes:
        result = grower.round(nodes - len(opened.book))
        if result.new_nodes == 0 and result.searches == 0:
            break
    return opened, env, start


@pytest.fixture(scope="module")
def hex4_book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book") / "hex4"
    opened, env, start = grow(folder, nodes=60)
    return folder, opened, env, start


def test_the_first_move_table_matches_the_exact_solver_on_hex4(hex4_book):
    """Every first move of Hex 4x4 is in the table, classified as the solver does, and every move
    the book calls decided is right."""
    folder, opened, env, start = hex4_book
    wins = {env.game.action_name(a) for a in HexSolver(env.game.board).winning_openings()}
    rows = move_table(env, opened.book, start, {env.game.action_name(a): env.game.action_name(a) in wins
                                                 for a in range(16)})
    assert len(rows) == 16 and len({m.group for m in rows}) == 8
    assert all((m.win_rate > 0.5) == m.exact_win for m in rows)
    decided = [m for m in rows if m.decided]
    assert decided and all((m.win_rate > 0.5) == m.exact_win for m in decided)
    assert {m.move for m in rows if m.swap} == wins  # the swap map: swap after the winning openings


def test_the_book_grows_below_the_first_moves_and_links_transpositions(hex4_book):
    folder, opened, env, start = hex4_book
    book = opened.book
    assert len(book) >= 60
    deep = [n for n in book.nodes.values() if len(n.line) >= 3]
    assert deep, "the book grew below the replies"
    assert any(len(n.parents) > 1 for n in book.nodes.values()), "a position reached two ways is one node"
    for node in book.nodes.values():  # each node's key is its line's position's key
        state = play_moves(env, [env.game.action_name(a) for a in node.line]) if node.line else start
        assert Canonical(env).keys(state).keys[0] == node.key
        for a, child in node.children.items():  # every edge leads where its move leads
            real = Canonical(env).to_real([a], Canonical(env).keys(state).symmetry[0])[0]
            after = env.step(state, torch.tensor([real]))
            assert Canonical(env).keys(after).keys[0] == child


def test_the_file_replays_to_the_same_book(hex4_book):
    folder, opened, env, start = hex4_book
    again = open_book(folder).book
    assert set(again.nodes) == set(opened.book.nodes)
    for key, node in opened.book.nodes.items():
        assert again.nodes[key].value == pytest.approx(node.value, abs=1e-4)
        assert again.nodes[key].children == node.children
    log_size = (folder / store.BOOK_FILE).stat().st_size
    store.compact(folder, open_book(folder).header, again, open_book(folder).runs)
    assert (folder / store.BOOK_FILE).stat().st_size == 0 and 0 < (folder / store.BASE_FILE).stat().st_size < log_size / 3
    compacted = open_book(folder).book
    assert {k: round(n.value, 4) for k, n in compacted.nodes.items()} == {k: round(n.value, 4)
                                                                          for k, n in again.nodes.items()}


def test_a_compacted_book_grows_on_and_its_base_is_checked(tmp_path):
    import gzip

    folder = tmp_path / "b"
    opened, env, start = grow(folder, nodes=10)
    store.compact(folder, opened.header, opened.book, opened.runs)
    grow(folder, nodes=16)  # appended to the emptied log, over the compacted base
    assert len(open_book(folder).book) >= 16 and (folder / store.BOOK_FILE).stat().st_size > 0
    lines = gzip.decompress((folder / store.BASE_FILE).read_bytes()).decode().splitlines()
    entry = json.loads(lines[2])
    entry["legal"] = entry.get("legal", 0) + 1
    lines[2] = json.dumps(entry)
    (folder / store.BASE_FILE).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(BookError, match=r"book.jsonl.gz:3: the line's checksum does not match"):
        open_book(folder)


def test_exact_solver_marks_every_position_proven(tmp_path):
    opened, env, start = grow(tmp_path / "b", nodes=12, exact=True)
    wins = {env.game.action_name(a) for a in HexSolver(env.game.board).winning_openings()}
    rows = move_table(env, opened.book, start)
    assert all(m.proven is not None and m.decided for m in rows)
    assert {m.move for m in rows if m.proven == "win"} == wins


def test_a_damaged_line_is_refused_and_a_torn_last_line_dropped(tmp_path):
    folder = tmp_path / "b"
    grow(folder, nodes=12)
    path = folder / store.BOOK_FILE
    lines = path.read_text().splitlines(keepends=True)
    torn = "".join(lines) + lines[-2][:40]  # a write cut short by kill -9
    path.write_text(torn)
    opened = open_book(folder)
    assert len(opened.book) >= 12
    grow(folder, nodes=len(opened.book) + 4)  # growing on drops the torn line first
    assert len(open_book(folder).book) >= 16
    lines = path.read_text().splitlines(keepends=True)
    entry = json.loads(lines[3])
    entry["line"] = entry.get("line", []) + [0]  # valid JSON, another position's line: the checksum tells
    path.write_text("".join(lines[:3] + [json.dumps(entry) + "\n"] + lines[4:]))
    with pytest.raises(BookError, match=r"book.jsonl:4: the line's checksum does not match"):
        open_book(folder)


def _rewrite_base(folder: Path, change) -> None:
    import gzip

    base = folder / store.BASE_FILE
    lines = gzip.decompress(base.read_bytes()).decode().splitlines(keepends=True)
    base.write_bytes(gzip.compress("".join(change(lines)).encode()))


def test_a_sealed_book_knows_its_whole_content(tmp_path):
    """Issue 58: one edge line deleted from book.jsonl.gz dropped an opening group from the table;
    124 rest lines deleted changed values and best lines; both read as whole. Now every deletion,
    duplicate, reordering or addition is refused, naming the file it is in."""
    from conhex_zero.book.store import compact

    folder = tmp_path / "b"
    grow(folder, nodes=30)
    opened = open_book(folder)
    compact(folder, opened.header, opened.book, opened.runs)
    good = (folder / store.BASE_FILE).read_bytes()
    assert len(open_book(folder).book) == len(opened.book)

    def kinds(lines, kind):
        return [i for i, line in enumerate(lines) if f'"type": "{kind}"' in line]

    cases = {
        "an edge deleted": lambda lines: [x for i, x in enumerate(lines) if i != kinds(lines, "edge")[3]],
        "every rest deleted": lambda lines: [x for i, x in enumerate(lines) if i not in kinds(lines, "rest")],
        "a node duplicated": lambda lines: lines[:5] + [lines[4]] + lines[5:],
        "two lines swapped": lambda lines: lines[:3] + [lines[4], lines[3]] + lines[5:],
        "the seal cut off": lambda lines: lines[:-1],
    }
    for name, change in cases.items():
        _rewrite_base(folder, change)
        with pytest.raises(BookError, match=r"book\.jsonl\.gz(:\d+)?: (the seal does not match|\d+ lines after its last seal)"):
            open_book(folder)
        (folder / store.BASE_FILE).write_bytes(good)
    # A round in flight when its process was killed (its lines, no seal yet) is dropped on reading.
    grow(folder, nodes=len(opened.book) + 6)
    log = folder / store.BOOK_FILE
    lines = log.read_text().splitlines(keepends=True)
    last_seal = max(kinds(lines, "seal"))
    before = len(open_book(folder).book)
    log.write_text("".join(lines[:last_seal]))  # the last round's lines without their seal
    assert len(open_book(folder).book) < before
    # A line that does not fit is named in its own file (it said book.jsonl for a line of the .gz):
    # a node deleted and the file sealed again (as a program of this code could).
    def resealed(lines):
        entries = [json.loads(x) for x in lines if '"type": "seal"' not in x]
        node = [i for i, e in enumerate(entries) if e["type"] == "node"][-1]
        del entries[node]
        for e in entries:
            e.pop("crc")
        return [json.dumps(e) + "\n" for e in store._with_seals(entries, store._Sealer())]

    (folder / store.BASE_FILE).write_bytes(good)
    log.write_text("")
    _rewrite_base(folder, resealed)
    with pytest.raises(BookError, match=r"^book\.jsonl\.gz:\d+: a edge line that does not fit the book"):
        open_book(folder)


def test_a_book_from_before_the_seals_is_read_as_before(tmp_path):
    """A book written before the seals (no "sealed" in its header, no seal lines) reads as before."""
    import shutil

    folder = tmp_path / "old"
    shutil.copytree(ROOT / "checkpoints" / "books" / "hex4-l3h32", folder)

    def unsealed(lines):
        entries = [json.loads(x) for x in lines if '"type": "seal"' not in x]
        entries[0].pop("sealed")
        return [json.dumps(store.sealed({k: v for k, v in e.items() if k != "crc"})) + "\n" for e in entries]

    _rewrite_base(folder, unsealed)
    assert len(open_book(folder).book) == 300 == len(open_book(ROOT / "checkpoints" / "books" / "hex4-l3h32").book)


def test_a_book_grown_with_two_models_says_so_with_their_positions(tmp_path, capsys):
    """Issue 58: a book grown further with --other-model named only the last model."""
    from conhex_zero.cli.main import main

    folder = tmp_path / "b"
    other = tmp_path / "other.pt"
    from conhex_zero.nn.checkpoint import save_checkpoint
    ckpt = load_checkpoint(HEX4)
    with torch.no_grad():
        ckpt.model.policy.bias.add_(0.01)  # another model of the same size and game
    save_checkpoint(other, ckpt.model, ckpt.game)
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "12", "--sims", "8", "--quiet", "--no-exact"]) == 0
    assert main(["book", "grow", str(other), "--out", str(folder), "--nodes", "5", "--quiet", "--no-exact",
                 "--other-model"]) == 0
    capsys.readouterr()
    assert main(["book", "show", str(folder), "--json", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "warning: grown with 2 models, its values mix their judgements:" in out
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["mixed_models"] and [m["file"] for m in data["models"]] == [HEX4, str(other)]
    assert [m["positions"] for m in data["models"]][1] >= 5 and sum(m["positions"] for m in data["models"]) == data["book_nodes"]
    assert main(["book", "html", str(folder), "--out", str(tmp_path / "pages"), "--quiet"]) == 0
    assert "grown with 2 models" in (tmp_path / "pages" / "index.html").read_text()


def test_a_book_refuses_another_model_game_or_start(tmp_path):
    folder = tmp_path / "b"
    opened, env, start = grow(folder, nodes=4)
    with pytest.raises(BookError, match="grown with .* another model"):
        check_same(opened, "hex-4", [], "0" * 16, "other.pt", allow_other_model=False)
    check_same(opened, "hex-4", [], "0" * 16, "other.pt", allow_other_model=True)
    with pytest.raises(BookError, match="a book of hex-4"):
        check_same(opened, "hex-5", [], opened.model_digest, "x.pt", allow_other_model=False)
    with pytest.raises(BookError, match="starts at the empty board"):
        check_same(opened, "hex-4", ["b2"], opened.model_digest, "x.pt", allow_other_model=False)


def test_a_book_from_a_later_position(tmp_path):
    opened, env, start = grow(tmp_path / "b", nodes=20, after=["b2"])
    rows = move_table(env, opened.book, start)
    assert len(rows) == 15 and opened.start_moves == ["b2"]


# ----------------------------------------------------------------------------------- in play
def test_a_session_plays_the_book_move_while_in_the_book(hex4_book):
    from conhex_zero.play.session import PlaySession

    folder, opened, env, start = hex4_book
    session = PlaySession("hex-4", HEX4, simulations=8, book=str(folder))
    move = session.ai_move()
    assert move.analysis.source == "book"
    best = opened.book.best_move(opened.book.nodes[opened.book.start])
    k = Canonical(env).keys(start).symmetry[0]
    assert move.action == Canonical(env).to_real([best], k)[0]
    assert session.to_json()["book"] is not None
    plain = PlaySession("hex-4", HEX4, simulations=8)
    assert plain.ai_move().analysis.source == "search" and plain.to_json()["book"] is None


def test_a_book_player_from_its_name(hex4_book):
    from conhex_zero.agents.player_specs import PlayerSpecError, parse_player
    from conhex_zero.agents.players import make_player

    folder, opened, env, start = hex4_book
    player = make_player(f"{HEX4}:sims=8:book={folder}", env)
    state = State.cat([env.initial_state(1), play_moves(env, ["a1", "d4", "a2", "d3", "a3"])])
    actions = player.act(state)
    assert player.book_moves[0] and int(actions[0]) >= 0 and int(actions[1]) >= 0
    with pytest.raises(PlayerSpecError, match="no opening book"):
        parse_player(f"{HEX4}:book={folder}-missing")


def test_the_ais_words_name_the_book_and_another_games_book_is_refused(hex4_book, capsys):
    """Issue 57: a book move was explained as "drawn at temperature 0 from the policy (prior 0.000)";
    a book of another game was ignored without a word; GTP said "1 book positions"."""
    from conhex_zero.cli.main import main
    from conhex_zero.cli.play_cmd import format_ai_move
    from conhex_zero.play.gtp_engine import book_note
    from conhex_zero.play.session import PlaySession

    folder, opened, env, start = hex4_book
    session = PlaySession("hex-4", HEX4, simulations=8, book=str(folder))
    move = session.ai_move(top=16)
    lines = format_ai_move(move, "O", 16, 0.0)
    assert lines[0].startswith(f"  {move.move} is the opening book's move")
    assert not any("policy" in line or "drawn at temperature" in line for line in lines)
    assert "from the opening book" in lines[1]
    assert book_note("b2", 61.8, 1).endswith("(61.8% to win by the book, 1 book position below)")
    assert book_note("b2", 61.8, 2).endswith("2 book positions below)")
    hex5 = str(ROOT / "checkpoints" / "hex5-l4h64.pt")
    assert main(["play", hex5, "--book", str(folder)]) == 2
    assert f"--book {folder} is a book of hex-4, not of hex-5: it would never be used" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- pages
def test_pages_link_every_book_move_and_draw_the_line(hex4_book, tmp_path):
    from conhex_zero.book.pages import page_name, write_pages

    folder, opened, env, start = hex4_book
    rows = move_table(env, opened.book, start)
    count = write_pages(opened, env, start, rows, tmp_path / "pages")
    assert count == len(opened.book)  # the start's page is index.html
    index = (tmp_path / "pages" / "index.html").read_text()
    assert len(re.findall(r'<a href="p-[0-9a-f]{16}\.html" class="move"', index)) == 16  # every first move on the board
    def name(key):
        return "index.html" if key == opened.book.start else page_name(key)

    for node in list(opened.book.nodes.values())[:20]:
        page = (tmp_path / "pages" / name(node.key)).read_text()
        pieces = re.findall(r'data-move="(\w+)" data-piece="([xo])"', page)
        assert sorted(m for m, _ in pieces) == sorted(env.game.action_name(a) for a in node.line)
        for child in node.children.values():
            assert name(child) in page and (tmp_path / "pages" / name(child)).exists()


def _broken_links(folder: Path) -> list[str]:
    broken = []
    for page in folder.glob("*.html"):
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            if not (folder / href).is_file():
                broken.append(f"{page.name} -> {href}")
    return broken


@pytest.mark.parametrize("depth, pages", [(1, None), (2, None), (3, None), (None, 20), (2, 30)])
def test_pages_never_link_to_a_page_not_written(hex4_book, tmp_path, depth, pages):
    """Issue 57: --depth 3 wrote 4,722 ConHex pages of which 1,765 linked to 8,792 never written."""
    from conhex_zero.book.pages import select_pages, write_pages

    folder, opened, env, start = hex4_book
    rows = move_table(env, opened.book, start)
    out = tmp_path / "pages"
    count = write_pages(opened, env, start, rows, out, max_depth=depth, max_pages=pages)
    assert count == len(list(out.glob("*.html"))) == len(select_pages(opened, depth, pages)) < len(opened.book)
    assert _broken_links(out) == []
    assert len(re.findall(r'href="p-', (out / "index.html").read_text())) > 0


@pytest.mark.slow
@pytest.mark.parametrize("depth, pages", [(1, 10_000), (2, 10_000), (3, 1200)])
def test_the_conhex_books_pages_have_no_broken_link(tmp_path, depth, pages):
    from conhex_zero.cli.main import main

    out = tmp_path / "pages"
    assert main(["book", "html", str(ROOT / "checkpoints" / "books" / "conhex-l4h64-v4"), "--out", str(out),
                 "--depth", str(depth), "--pages", str(pages), "--quiet"]) == 0
    assert _broken_links(out) == []
    assert len(list(out.glob("*.html"))) == {1: 23, 2: 387, 3: 1200}[depth]


def test_every_view_gives_a_move_the_same_number_and_says_whose_it_is(tmp_path, capsys):
    """Issue 57: D6 was 34 on the index page's board, 66.4 in its table and 38% in serve."""
    from conhex_zero.book.pages import write_pages
    from conhex_zero.book.table import CONVENTION
    from conhex_zero.cli.main import main
    from conhex_zero.play.book_browser import BookBrowser

    folder = ROOT / "checkpoints" / "books" / "conhex-l4h64-v4"
    assert main(["book", "show", str(folder), "--json", str(tmp_path / "t.json")]) == 0
    shown = capsys.readouterr().out
    table = json.loads((tmp_path / "t.json").read_text())
    assert CONVENTION in shown and table["convention"].startswith(CONVENTION)
    browser = BookBrowser(str(folder))
    served = {m["move"]: m["win_percent"] for m in browser.position("")["moves"]}
    assert browser.position("")["convention"] == CONVENTION
    opened = open_book(folder)
    env = VecEnv(opened.game)
    start = env.initial_state(1)
    write_pages(opened, env, start, move_table(env, opened.book, start), tmp_path / "pages", max_pages=1)
    index = (tmp_path / "pages" / "index.html").read_text()
    assert CONVENTION.replace("'", "&#x27;") in index
    board = dict(re.findall(r'<g class="hole" data-move="(\w+)"><circle[^>]*/><text[^>]*>(\d+)</text>', index))
    for row in table["openings"]:
        move, percent = row["move"], row["win_percent"]
        assert served[move] == percent, move  # serve and book show
        assert int(board[move]) == round(percent), move  # the pages' board
        assert f"<tr><td>{move}</td><td>{percent:.1f}</td>" in index, move  # the pages' tables (no links: 1 page)
    d6 = next(r for r in table["openings"] if r["move"] == "D6")
    assert d6["win_percent"] == 37.8 and round(100 * d6["win_rate"], 1) == 66.4  # the swap answers D6


# ------------------------------------------------------------------------------------- command
def test_book_commands(tmp_path, capsys):
    from conhex_zero.cli.main import main

    out = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(out), "--nodes", "20", "--sims", "16", "--quiet",
                 "--no-exact"]) == 0
    assert main(["book", "grow", HEX4, "--out", str(out), "--nodes", "5", "--quiet", "--no-exact"]) == 0
    assert main(["book", "show", str(out), "--json", str(tmp_path / "t.json")]) == 0
    text = capsys.readouterr().out
    assert "exact solver: the book classifies 16 of 16 moves correctly" in text
    table = json.loads((tmp_path / "t.json").read_text())
    first = table["openings"][0]
    for key in ("move", "win_rate", "value", "minimax_value", "search_value", "decided", "proven", "swap",
                "nodes", "best_line"):
        assert key in first
    assert len(table["openings"]) == 16 and table["book_nodes"] >= 25
    runs = open_book(out).runs
    assert [r["nodes_before"] for r in runs] == [0, runs[0]["nodes_after"]] and runs[0]["sims"] == 16
    assert len(open_book(out).book.rounds) >= 3 and open_book(out).minutes > 0  # kept through the compactions
    assert main(["book", "grow", str(ROOT / "checkpoints" / "hex5-l4h64.pt"), "--out", str(out), "--nodes", "1"]) == 2
    assert "a book of hex-4" in capsys.readouterr().err
    assert main(["book", "show", str(tmp_path / "nothing")]) == 2
    assert "no book at" in capsys.readouterr().err
    assert main(["book", "html", str(out), "--out", str(tmp_path / "pages")]) == 0
    assert (tmp_path / "pages" / "index.html").exists()


def test_the_report_shows_the_book_beside_the_opening_table(hex4_book, tmp_path):
    from conhex_zero.cli.main import main

    folder, opened, env, start = hex4_book
    out = tmp_path / "report"
    assert main(["report", HEX4, "--games", "2", "--sims", "4", "--opening-sims", "8", "--random-games", "10",
                 "--book", str(folder), "--out", str(out), "--quiet"]) == 0
    text = (out / "report.md").read_text()
    assert "### The opening book" in text and re.search(r"The book and the table put \d+ of 8 opening groups", text)
    book = json.loads((out / "report.json").read_text())["book"]
    assert len(book["openings"]) == 16 and book["book_nodes"] == len(opened.book)


@pytest.mark.slow
def test_kill_9_loses_at_most_the_round_in_flight(tmp_path):
    """A real ``book grow`` killed with SIGKILL between and during its writes: the book reads back
    with every round written before the kill, and the same command grows it on."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "b"
    command = [sys.executable, "-m", "conhex_zero", "book", "grow", HEX4, "--out", str(out), "--nodes", "100000",
               "--sims", "16", "--batch", "4", "--no-exact", "--quiet", "--threads", "1"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # a few rounds written
            if (out / store.BOOK_FILE).exists() and (out / store.BOOK_FILE).read_text().count('"type": "round"') >= 4:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    text = (out / store.BOOK_FILE).read_text()
    rounds = text.count('"type": "round"')
    assert rounds >= 4
    opened = open_book(out)  # every complete line; a torn last one is dropped
    assert len(opened.book.rounds) in (rounds, rounds - 1) and len(opened.book) >= 9
    before = len(opened.book)
    done = subprocess.run([*command[:command.index("--nodes")], "--nodes", "5", *command[command.index("--nodes") + 2:]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(open_book(out).book) >= before + 5


def test_one_grow_at_a_time(hex4_book, capsys):
    import fcntl

    from conhex_zero.cli.main import main

    folder = hex4_book[0]
    with open(folder / ".grow.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "1", "--quiet"]) == 2
    assert "being grown by another book grow" in capsys.readouterr().err


def test_a_second_grow_is_refused_before_it_reads_the_book_or_imports_torch(hex4_book):
    import fcntl

    from fresh_process import run_fresh

    folder = hex4_book[0]
    with open(folder / ".grow.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, err = run_fresh(["book", "grow", HEX4, "--out", str(folder), "--nodes", "1"])
    assert code == 2 and err[-1] == "torch imported: False", err
    assert "is being grown by another book grow" in err[0]


@pytest.mark.slow
def test_two_grows_started_3_s_apart_keep_every_position_of_the_first(tmp_path):
    """Issue 58: the second grow read the book before the lock, then compacted its stale copy over
    the first one's work (30 positions, 5 rounds and a grow record gone, both exit 0)."""
    import os
    import subprocess
    import sys
    import time

    folder = tmp_path / "b"
    command = [sys.executable, "-m", "conhex_zero", "book", "grow", HEX4, "--out", str(folder), "--sims", "48",
               "--quiet", "--no-exact"]
    env = {**os.environ, "CONHEX_ZERO_BACKEND": "eager"}
    # The first grows for 30 s of the clock (not a number of positions: on a quiet machine 120 took
    # under 3 s, and the second then found the book free); the second starts once the first holds
    # the folder's lock and has begun, whatever the machine's load.
    first = subprocess.Popen(command + ["--minutes", "0.5"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _held(folder / ".grow.lock"):
        assert first.poll() is None and time.monotonic() < deadline, "the first grow never took the lock"
        time.sleep(0.1)
    time.sleep(3)
    second = subprocess.run(command + ["--nodes", "10"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out, err = first.communicate(timeout=900)
    assert first.returncode == 0, err
    assert second.returncode == 2 and "is being grown by another book grow" in second.stderr
    opened = open_book(folder)
    assert len(opened.runs) == 1 and len(opened.book) == opened.runs[0]["nodes_after"] > 1  # the first's work, whole


def _held(lock: Path) -> bool:
    """Whether a process holds a lock on the file ``lock``, read from /proc/locks (never by taking it:
    a probe holding it for a moment could make the grow it waits for see the book as busy)."""
    try:
        inode = lock.stat().st_ino
    except FileNotFoundError:
        return False
    return any(line.split()[5].rsplit(":", 1)[-1] == str(inode)
               for line in Path("/proc/locks").read_text().splitlines() if len(line.split()) > 5)


def test_show_checks_by_games_where_book_and_table_disagree(hex4_book, tmp_path, capsys):
    """``book show --table FILE --check-games N``: self-play games from each opening group on the other
    side of 50% in the table, and which estimate they agree with."""
    from conhex_zero.cli.main import main

    folder, opened, env, start = hex4_book
    rows = move_table(env, opened.book, start)
    flipped = {"game": "hex-4", "openings": [{"move": m.move, "win_rate": 1 - m.win_rate} for m in rows[:3]]}
    (tmp_path / "table.json").write_text(json.dumps(flipped))
    assert main(["book", "show", str(folder), "--table", str(tmp_path / "table.json"), "--check-games", "4",
                 "--check-sims", "2", "--json", str(tmp_path / "out.json")]) == 0
    out = capsys.readouterr().out
    groups = len({m.group for m in rows[:3]})
    assert f"the table beside: {groups} opening groups on the other side of 50% from the book" in out
    checks = json.loads((tmp_path / "out.json").read_text())["checks"]
    assert len(checks) == groups and all(c["right"] in ("book", "table", "undecided") for c in checks)
    assert all(0 < c["games"] <= 4 for c in checks)
    (tmp_path / "bad.json").write_text("{}")
    assert main(["book", "show", str(folder), "--table", str(tmp_path / "bad.json")]) == 2
    assert "not an opening table" in capsys.readouterr().err


def test_an_arena_match_with_a_book_player(hex4_book, tmp_path, capsys):
    """``CKPT:book=DIR`` in the arena: the book's moves while in the book (no search), a search
    elsewhere."""
    from conhex_zero.cli.main import main

    folder, opened, env, start = hex4_book
    assert main(["arena", f"{HEX4}:book={folder}", HEX4, "--games", "4", "--sims", "4", "--json", "--quiet",
                 "--opening-plies", "0", "--records", str(tmp_path / "r.jsonl")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 4 and "book=" in json.dumps(result)
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    games = [r for r in records if "moves" in r]
    assert len(games) == 4
    for g in games:  # the book player's moves in the book cost no search; the plain player always searches
        side = "first" if "book=" in g["first"] else "second"
        other = "second" if side == "first" else "first"
        assert g["effort"][side]["sims_min"] == 0 and g["effort"][other]["sims_min"] > 0



def test_a_book_from_a_position_with_a_winning_move_ends(tmp_path):
    """A start whose mover can win at once: its winning move is no position, the start is proven,
    and growth stops when nothing is left to grow instead of searching forever."""
    moves = ["a1", "b1", "a2", "b2", "a3", "b3"]  # the first player to move wins with a4
    opened, env, start = grow(tmp_path / "b", nodes=1000, after=moves)
    start_node = opened.book.nodes[opened.book.start]
    assert start_node.proven == 1 and len(opened.book) < 1000


def test_the_table_counts_the_replies_proven_to_fail_below_each_move(hex4_book):
    """book show's refuted replies: a reply whose position is proven a win for the player to move
    there (the first move's maker) counts, each real reply once (the empty board's half-turn joins two
    first moves in one book child, so one proof there counts two), and the line names the move."""
    import copy

    from conhex_zero.book.table import _replies_refuted
    from conhex_zero.cli.book_show_cmd import format_table

    folder, opened, env, start = hex4_book
    opened = copy.deepcopy(opened)
    book = opened.book
    rows = {m.move: m for m in move_table(env, book, start)}
    assert all(m.replies_legal == 15 for m in rows.values())
    opening = next(m for m in rows.values() if m.proven is None and len(book.nodes[m.key].children) >= 2)
    node = book.nodes[opening.key]
    fresh = [c for c in node.children.values() if not book.nodes[c].proven][:2]
    assert len(fresh) == 2
    for child in fresh:
        book.nodes[child].exact = 1  # the first move's maker, to move there, wins: the reply fails
    book.update()
    after = {m.move: m for m in move_table(env, book, start)}
    assert after[opening.move].replies_refuted == opening.replies_refuted + 2
    if after[opening.move].proven is None:
        assert f"{opening.move}" in format_table(opened, list(after.values()), None).split("replies proven to fail")[1]
    # at the empty board (a half-turn maps each first move onto another) one proof is two moves
    start_node = book.nodes[book.start]
    before, legal = _replies_refuted(env, Canonical(env), book, start, start_node)
    assert legal == 16
    child = next(c for c in start_node.children.values() if not book.nodes[c].proven and not book.nodes[c].exact)
    book.nodes[child].exact = 1  # the second player wins after that first move: it fails
    book.update()
    assert _replies_refuted(env, Canonical(env), book, start, start_node) == (before + 2, 16)
