"""The GTP engine: transcripts checked line by line, framing, errors, fuzzing; ``conhex-zero gtp`` as
a process, played through the arena's ``gtp:`` player and our GTP client (swap both ways)."""

import io
import random
import re
import sys
from pathlib import Path


from conhex_zero import __version__
from conhex_zero.agents.gtp_player import GTPPlayer
from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves, render_state, summarize
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.play.gtp_engine import GTPEngine
from conhex_zero.play.session import position_line

CKPT = str(Path(__file__).resolve().parent.parent / "checkpoints" / "hex5-l4h64.pt")
ENGINE = f"{sys.executable} -m conhex_zero.cli.main gtp"
ANALYSIS_LINE = re.compile(r"^(\w+) visits (\d+) winrate (-|0\.\d{3}|1\.000) prior ([01]\.\d{4})"
                           r"(?: proven (win|loss))? pv (\w+(?: \w+)*)$")




def check(engine, pairs):
    """Send each command; compare each response, without its final empty line, with the expected."""
    for command, expected in pairs:
        response = engine.handle(command)
        assert response.endswith("\n\n") and "\n\n" not in response[:-2], (command, response)
        assert response[:-2] == expected, (command, response)


def test_a_transcript_line_by_line():
    e = GTPEngine("mcts-rollout:16", game="hex-3")
    check(e, [
        ("protocol_version", "= 2"),
        ("1 name", "=1 conhex-zero"),
        ("2 version", f"=2 {__version__}"),
        ("known_command genmove", "= true"),
        ("known_command fly", "= false"),
        ("boardsize 3", "= "),
        ("play b b2", "= "),
        ("play w b2", "? illegal move: b2: the cell is already taken"),
        ("play b a1", "? out of turn: w is to move"),
        ("play w c1", "= "),
        ("play black a1", "= "),
        ("all_legal_moves", "= b1 a2 c2 a3 b3 c3"),
        ("undo", "= "),
        ("showboard", "= \n    a b c\n 1  . . O\n  2  . X .\n   3  . . .\n       a b c\nX to move (top-bottom) after 2 plies"),
        ("final_score", "? game not over"),
        ("play b b1", "= "),
        ("play w b3", "= "),
        ("genmove b", "= a2"),  # a weak search: a2 threatens a3, but a3 won at once
        ("play w a3", "= "),
        ("genmove b", "= c2"),
        ("genmove w", "= c3"),
        ("final_score", "= W+"),
        ("showboard", "= \n    a b c\n 1  . X O\n  2  X X X\n   3  O O O\n       a b c\n"
                      "O wins (left-right connected) after 8 plies"),
        ("play b c3", "? the game is over: w won"),
        ("genmove b", "? the game is over: w won"),
        ("undo", "= "),
        ("all_legal_moves", "= a1 c3"),
        ("final_score", "? game not over"),
        ("quit", "= "),
    ])
    assert e.quit


def test_framing_ids_comments_case_tabs_and_errors():
    e = GTPEngine("random", game="hex-4")
    assert e.handle("") == "" and e.handle("   # only a comment") == "" and e.handle("\r\n") == ""
    assert e.handle("7 NAME # trailing comment\r\n") == "=7 conhex-zero\n\n"
    assert e.handle("\tprotocol_version\t") == "= 2\n\n"
    assert e.handle("12 frobnicate") == "?12 unknown command\n\n"
    assert e.handle("pl\x00ay b a1") == "= \n\n"  # control characters are dropped
    # GTP 2, section 2.2: every control character but tab and newline is removed (tabs are spaces)
    assert e.handle("na\x00me") == e.handle("name") == "= conhex-zero\n\n"
    assert e.handle("\x01\x1bna\x7fme\x07\r") == "= conhex-zero\n\n"
    assert e.handle("known_command\tname") == "= true\n\n"
    assert e.handle("3 play b a2") == "?3 out of turn: w is to move\n\n"
    assert e.handle("play purple a2") == "? invalid color 'purple': expected b, black, w or white\n\n"
    assert e.handle("play w") == "? syntax error: play COLOR MOVE\n\n"
    assert e.handle("genmove") == "? syntax error: genmove COLOR\n\n"
    assert e.handle("play w z9").startswith("? invalid move: 'z9' is not a move in hex-4")
    assert e.handle("play w swap") == "? illegal move: swap: the swap rule is off in this game\n\n"
    assert e.handle("42") == "?42 missing command\n\n"
    listed = e.handle("list_commands")[2:-2].split("\n")
    assert {"protocol_version", "name", "version", "known_command", "list_commands", "boardsize", "clear_board",
            "play", "genmove", "undo", "showboard", "final_score", "quit", "all_legal_moves", "time_settings",
            "time_left", "conhex-analyze"} <= set(listed)
    assert all(e.handle(f"known_command {c}") == "= true\n\n" for c in listed)


def test_boardsize_keeps_the_options_of_the_game():
    e = GTPEngine("random", game="hex-7:swap")
    for size in ("5", "5 5", "5x5", "5X5"):
        assert e.handle(f"boardsize {size}") == "= \n\n" and e.session.game.spec == "hex-5:swap"
    for bad in ("1", "20", "5 6", "abc", "", "5 5 5", "99999999999999999999"):
        assert e.handle(f"boardsize {bad}") == "? unacceptable size\n\n"
    assert e.session.game.spec == "hex-5:swap"
    assert e.handle("boardsize conhex") == "= \n\n" and e.session.game.spec == "conhex"
    c = GTPEngine("random", game="conhex:noswap")
    assert c.handle("boardsize 11") == "= \n\n" and c.session.game.spec == "hex-11"
    assert c.handle("boardsize CONHEX") == "= \n\n" and c.session.game.spec == "conhex:noswap"
    c.handle("play b F6")
    assert c.handle("boardsize conhex") == "= \n\n" and c.session.moves == []  # the board is cleared


def test_a_third_mirror_move_is_refused_with_the_reason():
    e = GTPEngine("random", game="hex-7:mirror=2")
    assert e.handle("boardsize 5") == "= \n\n" and e.session.game.spec == "hex-5:mirror=2"
    check(e, [("play b a1", "= "), ("play w e5", "= "), ("play b b1", "= "), ("play w d5", "= "), ("play b c1", "= "),
              ("play w c5", "? illegal move: c5: it would be the third consecutive move mirroring the opponent's "
                            "(rot180); mirror=2 allows 2")])
    assert "c5" not in e.handle("all_legal_moves").split()
    check(e, [("play w c4", "= ")])


def test_conhex_holes_and_the_swap_by_any_name():
    e = GTPEngine("random", game="conhex", swap_name="swap-pieces")
    check(e, [("play black F6", "= "), ("play white swap-pieces", "= "), ("play b c2", "= "),
              ("play w swap", "? illegal move: swap: only allowed as the second player's first move (ply 2), "
                              "not at ply 4")])
    assert e.session.moves == ["F6", "swap", "C2"]
    e.handle("clear_board")
    e.handle("play b A1")
    assert "swap-pieces" in e.handle("all_legal_moves").split()
    assert e.handle("undo") == "= \n\n" and e.handle("undo") == "? cannot undo\n\n"


def test_genmove_final_score_and_game_over():
    e = GTPEngine(f"{CKPT}:sims=4", game="hex-3")  # the network's search always takes a win in one
    for line in ("play b a1", "play w c1", "play b a2", "play w c2"):
        assert e.handle(line) == "= \n\n"
    assert e.handle("genmove w") == "? out of turn: b is to move\n\n"
    assert e.handle("reg_genmove b") == "= a3\n\n" and e.session.moves == ["a1", "c1", "a2", "c2"]
    assert e.handle("genmove b") == "= a3\n\n"
    assert e.handle("final_score") == "= B+\n\n"
    assert e.handle("genmove w") == "? the game is over: b won\n\n"
    assert e.handle("play w b2") == "? the game is over: b won\n\n"
    assert e.handle("conhex-analyze") == "? the game is over\n\n"
    e.handle("clear_board")
    assert e.handle("final_score") == "? game not over\n\n"
    for line in ("play b a1", "play w a2", "play b b1", "play w b2", "play b a3", "play w c2"):
        e.handle(line)
    assert e.handle("final_score") == "= W+\n\n"


def test_analysis_lines_and_the_winning_move():
    e = GTPEngine(f"{CKPT}:sims=8", game="hex-5")
    for m in ["c1", "a5", "c2", "b5", "c3", "d5", "c4", "e5"]:  # c5 wins for X (and would for O)
        e.handle(f"play {'bw'[len(e.session.moves) % 2]} {m}")
    response = e.handle("conhex-analyze 3")
    lines = response[2:-2].split("\n")
    assert response.startswith("= ") and 1 <= len(lines) <= 3
    parsed = [ANALYSIS_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert parsed[0].group(1) == "c5" and parsed[0].group(3) == "1.000" and parsed[0].group(6).startswith("c5")
    assert parsed[0].group(5) == "win"  # a move that wins at once is a proven win
    assert e.handle("conhex-analyze 0").startswith("? syntax error")
    assert e.handle("genmove b") == "= c5\n\n" and e.handle("final_score") == "= B+\n\n"
    p = GTPEngine(f"policy:{CKPT}", game="hex-5")
    lines = p.handle("conhex-analyze 2")[2:-2].split("\n")
    assert len(lines) == 2 and all(ANALYSIS_LINE.match(x) and " visits 0 winrate - " in x for x in lines)
    assert GTPEngine("random", game="hex-5").handle("conhex-analyze") == "= \n\n"


def test_resigning_only_when_enabled():
    hopeless = ["c1", "a1", "c2", "a2", "c3", "a3", "c4"]  # O cannot stop both b5 and c5
    for threshold, answer in ((None, r"= [a-e][1-5]\n\n"), (0.9, r"= resign\n\n")):
        e = GTPEngine(f"{CKPT}:sims=8", game="hex-5", resign_threshold=threshold)
        for k, m in enumerate(hopeless):
            e.handle(f"play {'bw'[k % 2]} {m}")
        assert re.fullmatch(answer, e.handle("genmove w"))
    assert len(e.session.moves) == len(hopeless)  # a resignation plays nothing


def test_time_settings_are_accepted_and_cap_the_search():
    e = GTPEngine("mcts-rollout:64", game="hex-5")
    assert e.handle("time_settings 300 10 5") == "= \n\n"
    assert e.handle("time_left b 120 0") == "= \n\n"
    for bad in ("time_settings 1 2", "time_settings a 1 1", "time_settings -1 0 0", "time_settings 1 1 1.5",
                "time_left b 10", "time_left x 10 0", "time_settings inf 0 0"):
        assert e.handle(bad).startswith("? "), bad
    e.handle("time_settings 300 10 5")
    e.time_left = {}
    # 300 s of main time over at least 4 (here 12 = 25 legal / 2) own moves left, times SAFETY
    assert abs(e._think_seconds(0) - 0.8 * 300 / 12.5) < 1e-9
    e.handle("time_left b 2 0")  # 2 s left for the game: about 0.13 s for this move
    assert re.fullmatch(r"= [a-e][1-5]\n\n", e.handle("genmove b"))
    e.handle("time_left w 1.0 0")  # 1 s for the rest of the game: about 0.8 / 12 s a move
    assert 0.05 <= e._think_seconds(1) <= 0.1
    e.handle("time_left w 0.001 0")  # nearly out of time: still the least a move is given
    assert e._think_seconds(1) == 0.05
    e.handle("time_left w 100 1")  # a byo-yomi period of 100 s for one move
    assert abs(e._think_seconds(1) - 80.0) < 1e-9
    e.handle("time_left w 0.5 1")
    assert re.fullmatch(r"= [a-e][1-5]\n\n", e.handle("genmove w"))  # searched until its deadline (0.4 s)
    e.handle("time_settings 0 1 0")  # GTP's "no time limit"
    assert e._think_seconds(1) is None
    own = GTPEngine(CKPT, game="hex-5", seconds=0.2)  # a checkpoint player's own clock caps the allocation
    own.handle("time_settings 300 10 5")
    assert own._think_seconds(0) == 0.2


def test_a_given_simulation_count_bounds_a_timed_move():
    """With time controls, an engine whose player has a simulation count (``CKPT:sims=N``) thinks at
    most N simulations however much time the clock allows; without one it uses the clock."""
    capped = GTPEngine(f"{CKPT}:sims=16", game="hex-5")
    capped.handle("time_settings 0 2 1")  # byo-yomi: 2 s for each move
    assert re.fullmatch(r"= [a-e][1-5]\n\n", capped.handle("genmove b"))
    assert int(capped.session.player.last.visit_counts.sum()) <= 16
    assert GTPEngine(CKPT, game="hex-5").session.simulation_cap is None  # the default effort: no cap
    assert GTPEngine(CKPT, game="hex-5", simulations=12).session.simulation_cap == 12


def test_fuzz_never_raises_and_errors_are_gtp_errors():
    rng = random.Random(1234)
    e = GTPEngine("random", game="hex-4")
    words = ["play", "genmove", "boardsize", "undo", "showboard", "final_score", "all_legal_moves", "clear_board",
             "time_settings", "time_left", "conhex-analyze", "known_command", "name", "reg_genmove", "quit",
             "list_commands", "b", "w", "black", "WHITE", "a1", "b2", "d4", "swap", "swap-pieces", "conhex", "4",
             "3", "19", "0", "-1", "1e309", "nan", "#", "\t", "x", "9" * 30, "é", "\ufffd", "1.5", "zz"]
    answered = {"=": 0, "?": 0}
    played = 0
    for _ in range(3000):
        kind = rng.random()
        if kind < 0.3:  # well-formed moves, in turn or not, legal or not
            line = rng.choice(["play b", "play w", "genmove b", "genmove w", "undo"])
            if line.startswith("play"):
                line += " " + rng.choice(["a1", "b2", "c3", "d4", "d1", "a4", "c2", "b3", "e5", "swap"])
        elif kind < 0.7:
            line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.3:
                line = f"{rng.randint(0, 999)} {line}"
        else:
            line = bytes(rng.randrange(256) for _ in range(rng.randint(0, 30))).decode("utf-8", errors="replace")
        if "boardsize" in line and rng.random() < 0.8:
            line = line.replace("boardsize", "showboard")  # keep the boards small (and the test fast)
        before = len(e.session.moves)
        r = e.handle(line)
        played += len(e.session.moves) > before
        if r == "":
            continue
        assert re.match(r"^[=?][0-9]* ", r) and r.endswith("\n\n") and "\n\n" not in r[:-2], (line, r)
        assert "internal error" not in r, (line, r)
        answered[r[0]] += 1
    assert answered["="] > 300 and answered["?"] > 1000 and played > 20  # both kinds, and real games
    assert e.handle("boardsize 4") == "= \n\n" and e.handle("play b a1") == "= \n\n"  # still sane


def test_the_command_reads_bytes_and_answers(monkeypatch, capsys):
    data = b"1 name\nplay b \xff\xfe\nboardsize 3\nplay b b2\ngenmove w\nquit\nname\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["gtp", "mcts-rollout:8", "--game", "hex-3"]) == 0
    out = capsys.readouterr().out
    responses = out.split("\n\n")[:-1]
    assert responses[0] == "=1 conhex-zero"
    assert responses[1].startswith("? invalid move: '\ufffd\ufffd' is not a move in hex-3")
    assert responses[2:4] == ["= ", "= "] and re.fullmatch(r"= [abc][123]", responses[4])
    assert responses[5] == "= " and len(responses) == 6  # nothing is read after quit


def test_the_command_with_bad_arguments(capsys):
    assert main(["gtp", "nonsense"]) == 2
    assert "unknown player 'nonsense'" in capsys.readouterr().err
    assert main(["gtp", "random", "--resign", "2"]) == 2
    assert "--resign must be a number from 0 to 1, not 2" in capsys.readouterr().err


def test_two_instances_play_through_the_arena(capsys, tmp_path):
    code = main(["arena", f"gtp:{ENGINE} random --game hex-4", f"gtp:{ENGINE} mcts-rollout:8 --game hex-4",
                 "--game", "hex-4", "--games", "2", "--gtp-parallel", "1", "--gtp-timeout", "60", "--json",
                 "--records", str(tmp_path / "r.jsonl")])
    out = capsys.readouterr().out
    assert code == 0 and '"forfeits": 0' in out and '"games": 2' in out
    records = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(records) == 2 and all('"connection"' in r for r in records)


def test_our_client_and_engine_swap_both_ways():
    env = VecEnv("hex-5:swap")
    gtp = GTPPlayer(env, f"{ENGINE} {CKPT}:sims=16 --game hex-5:swap", timeout=60, parallel=1)
    try:
        # The engine takes the swap: after a centre opening it swaps (the centre wins on 5 x 5).
        state = play_moves(env, ["c3"])
        assert env.game.action_name(int(gtp.act(state, history=[[12]])[0])) == "swap"
        assert gtp.last_failures == {}
        # The engine is told of a swap: its picture matches ours, and it answers a legal move.
        moves = [env.game.parse_move(m) for m in ("a2", "swap")]
        state = play_moves(env, moves)
        action = int(gtp.act(state, history=[moves])[0])
        assert gtp.last_failures == {} and bool(env.legal_mask(state)[0, action])
        engine = gtp.engines[0]
        after = play_moves(env, moves + [action])
        picture = render_state(env, after, last=action).rsplit("\n", 1)[0]
        expected = picture + "\n" + position_line(summarize(env, after))  # the ply: moves played, as in JSON
        assert engine.send("showboard") == expected.strip()  # the client strips
        # And on to the end of the game against our own random choices.
        moves.append(action)
        while not bool(after.done[0]):
            if int(after.to_move[0]) == 0:
                action = int(gtp.act(after, history=[moves])[0])
                assert gtp.last_failures == {}
            else:
                action = int(env.random_actions(after)[0])
            moves.append(action)
            after = play_moves(env, moves)
        assert engine.send("final_score") == ("B+" if int(after.winner[0]) == 0 else "W+")
    finally:
        gtp.close()
