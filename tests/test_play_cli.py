"""``conhex-zero play``: scripted terminal games, commands, messages, polite endings, errors."""

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv

HOLES_3 = ["b2", "a1", "a2", "a3", "b1", "c1", "c2", "b3", "c3"]


def play(monkeypatch, capsys, script, *argv):
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    code = main(["play", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_scripted_game_against_random_to_the_end(monkeypatch, capsys):
    # b2 twice (refused the second time), then every hole in turn: occupied ones are refused, the
    # rest are played, until the game ends (here with X's win; other seeds let random win).
    script = "b2\n" + "\n".join(HOLES_3 * 2) + "\n"
    code, out, err = play(monkeypatch, capsys, script, "random", "--game", "hex-3", "--seed", "2")
    assert code == 0 and err == "" and "Traceback" not in out
    assert out.startswith("hex-3 (swap off): you are X (first player, top-bottom); the AI, random, is O")
    moves = re.search(r"^Moves: (.*)$", out, re.M).group(1).split()
    state = play_moves(VecEnv("hex-3"), moves)  # the game shown is a real, finished game
    winner = int(state.winner[0])
    assert winner == 0 and moves == ["b2", "a1", "a2", "c3", "a3", "b3", "b1"]
    assert "You win!" in out and "random (O) wins." not in out
    assert f"{'XO'[winner]} wins ({['top-bottom', 'left-right'][winner]} connected) after {len(moves)} plies" in out
    assert out.count("random (O) plays") == len(moves) // 2
    assert "illegal move: b2: the cell is already taken" in out
    assert "illegal move: a1: the cell is already taken" in out
    assert out.count("X to move> ") == len(moves) - len(moves) // 2 + out.count("illegal move")


def test_commands_and_messages(monkeypatch, capsys):
    script = "help\nmoves\nhlep\nd4\nb2 c2\nswap\nundo\nb2\nb2\nhint\nundo\nboard\nquit\nc3\n"
    code, out, err = play(monkeypatch, capsys, script, "mcts-rollout:16", "--game", "hex-3")
    assert code == 0 and err == ""
    assert "swap          take over the first move" in out  # help
    assert "legal moves (9): a1 b1 c1 a2 b2 c2 a3 b3 c3" in out
    assert "'hlep' is not a move in hex-3 (cells are named like a1 .. c3). Did you mean 'help'?" in out
    assert "'d4' is not a move in hex-3 (cells are named like a1 .. c3); nearby cells: c3." in out
    assert "one move at a time, please (got 'b2 c2')" in out
    assert "illegal move: swap: the swap rule is off in this game" in out
    assert "nothing to undo: you have not moved yet" in out
    assert "illegal move: b2: the cell is already taken" in out
    reply = re.search(r"mcts-rollout:16 \(O\) plays (\w+)\.", out).group(1)
    assert re.search(r"evaluation for mcts-rollout:16 \(O\): [+-]\d\.\d\d \(\d+% to win; after 16 simulations\)", out)
    assert re.search(r"hint: \w\d\n  evaluation for you: [+-]\d\.\d\d", out)
    assert f"taken back: b2 {reply}" in out
    assert out.rstrip().endswith("Game left unfinished. Goodbye.")
    assert out.count("X to move> ") == 13  # quit stops reading: 'c3' is never read


def test_playing_second_the_ai_opens_and_resign_ends(monkeypatch, capsys):
    code, out, _ = play(monkeypatch, capsys, "resign\n", "mcts-rollout:8", "--game", "hex-4", "--as", "second")
    assert code == 0
    assert "you are O (second player, left-right); the AI, mcts-rollout:8, is X (first player" in out
    assert out.index("mcts-rollout:8 (X) plays") < out.index("O to move> ")
    assert "You resign: mcts-rollout:8 (X) wins." in out


def test_conhex_default_game_with_swap(monkeypatch, capsys):
    code, out, _ = play(monkeypatch, capsys, "undo\nF6\n", "random", "--as", "second")
    assert code == 0 and "conhex (swap on)" in out and "Type a move such as" in out
    ai_first = re.search(r"random \(X\) plays (\w+)\.", out).group(1)
    assert "nothing to undo" in out
    assert out.rstrip().endswith("End of input: game left unfinished. Goodbye.")
    assert ai_first in out


def test_a_swap_is_announced_whoever_makes_it(monkeypatch, capsys):
    code, out, _ = play(monkeypatch, capsys, "swap\nquit\n", "random", "--game", "hex-3:swap", "--as", "second",
                        "--seed", "0")
    first = re.search(r"random \(X\) plays (\w\d)\.", out).group(1)
    mirrored = {"a1": "a1", "b1": "a2", "c1": "a3", "a2": "b1", "b2": "b2", "c2": "b3", "a3": "c1", "b3": "c2",
                "c3": "c3"}[first]  # the transpose, hex-3's swap symmetry
    assert code == 0 and (f"You swap: X's {first} is now O's {mirrored} (the pie rule: the board mirrored, colours "
                          f"exchanged); random (X) moves next.") in out
    code, out, _ = play(monkeypatch, capsys, "b1\nquit\n", "mcts-rollout:200", "--game", "hex-3:swap", "--seed", "1")
    assert code == 0 and ("mcts-rollout:200 (O) swaps: X's b1 is now O's a2 (the pie rule: the board mirrored, "
                          "colours exchanged); you move next.") in out
    assert "plays swap" not in out


def test_a_move_drawn_at_a_temperature_shows_its_own_evaluation(monkeypatch, capsys):
    from conhex_zero.play.session import PlaySession

    ckpt = str(Path(__file__).resolve().parent.parent / "checkpoints" / "hex5-l4h64.pt")
    args = ("--game", "hex-5", "--sims", "16", "--temperature", "1", "--seed", "3")
    code, out, _ = play(monkeypatch, capsys, "a1\nquit\n", ckpt, *args)
    assert code == 0
    played = re.search(r"\(O\) plays (\w\d)\.", out).group(1)
    m = re.search(rf"  {played} was drawn at temperature 1 from the search's visits, (\d+) of 16 visits; its best "
                  rf"move was (\w\d)\n  evaluation for \S+ \(O\) of the move played, {played}: ([+-]\d\.\d\d) "
                  rf"\((\d+)% to win; after 16 simulations\)\n  \(of its best move, (\w\d): ([+-]\d\.\d\d), "
                  rf"(\d+)% to win\)", out)
    assert m and m[2] == m[5] != played
    # the same search, seen from the session: the values shown are the played and the best move's
    session = PlaySession("hex-5", ckpt, seed=3, simulations=16, temperature=1)
    session.play("a1")
    analysis = session.analyse(top=25)
    own = next(c for c in analysis.candidates if c.move == played)
    assert float(m[3]) == pytest.approx(own.value, abs=0.005) and int(m[1]) == own.visits
    assert float(m[6]) == pytest.approx(analysis.value, abs=0.005) and analysis.best.move == m[2]
    assert float(m[3]) != float(m[6])
    # at temperature 0 the best move is played and its evaluation is the one shown, as before
    code, out, _ = play(monkeypatch, capsys, "a1\nquit\n", ckpt, "--game", "hex-5", "--sims", "16")
    assert "was drawn" not in out and re.search(r"evaluation for \S+ \(O\): [+-]\d\.\d\d", out)


def test_end_of_input_and_interrupt_are_polite(monkeypatch, capsys):
    code, out, err = play(monkeypatch, capsys, "", "random", "--game", "hex-3")
    assert code == 0 and "End of input" in out and err == ""

    class Interrupting(io.StringIO):
        def readline(self, *a):
            raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stdin", Interrupting())
    code = main(["play", "random", "--game", "hex-3"])
    out, err = capsys.readouterr()
    assert code == 130 and "Interrupted: game left unfinished. Goodbye." in out and "Traceback" not in out + err


@pytest.mark.parametrize("argv, message", [
    (["nonsense"], "unknown player 'nonsense'"),
    (["random", "--sims", "0"], "--sims must be from 1 to 100000, not 0"),
    (["random", "--temperature", "-1"], "--temperature must be a number from 0 to 100, not -1"),
    (["random", "--game", "hexx-5"], "unknown game 'hexx-5'"),
    (["mcts-rollout:x"], "write mcts-rollout:K"),
])
def test_errors_are_one_line(monkeypatch, capsys, argv, message):
    code, out, err = play(monkeypatch, capsys, "", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_as_a_process_with_real_stdin():
    proc = subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", "play", "random", "--game", "hex-2"],
                          input="a1\nb1\na2\nb2\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "X to move> a1" in proc.stdout  # scripted input is echoed after the prompt
    assert re.search(r"(You win!|random \(O\) wins\.)\nMoves: ", proc.stdout)


def test_the_session_reports_each_simulation():
    from conhex_zero.play.session import PlaySession

    s = PlaySession("hex-3", "mcts-rollout:20", seed=0)
    calls = []
    s.on_simulation = lambda k, total: calls.append((k, total))
    s.hint()
    assert calls == [(k, 20) for k in range(1, 21)]
    calls.clear()
    s.play("b2")
    s.ai_move(simulations=7)
    assert calls == [(k, 7) for k in range(1, 8)]
    assert "run" not in vars(s.player.search)  # the search is left as it was
    s.on_simulation = None
    calls.clear()
    s.hint()
    assert calls == []


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_thinking_line_shows_progress_and_is_erased():
    import time

    from conhex_zero.cli.play_cmd import Thinking

    stream = FakeTerminal()
    with Thinking(stream, "random (O) is thinking", interval=0.01) as line:
        line.update(5, 10)
        deadline = time.time() + 10
        while "5/10 simulations" not in stream.getvalue() and time.time() < deadline:
            time.sleep(0.01)
    text = stream.getvalue()
    assert text.startswith("\r| random (O) is thinking... 0.0 s")
    assert "5/10 simulations" in text
    assert text.endswith("\r" + " " * line.width + "\r") and "\n" not in text


def test_thinking_is_shown_on_a_terminal_only(monkeypatch, capsys):
    from conhex_zero.cli.play_cmd import TerminalGame
    from conhex_zero.play.session import PlaySession

    session = PlaySession("hex-3", "mcts-rollout:30", seed=0)
    progress = FakeTerminal()
    out = io.StringIO()
    TerminalGame(session, 0, io.StringIO("b2\nhint\nquit\n"), out, progress=progress).run()
    assert "mcts-rollout:30 (O) is thinking..." in progress.getvalue()
    assert "mcts-rollout:30 is looking for a hint..." in progress.getvalue()
    assert re.search(r"mcts-rollout:30 \(O\) plays \w+ \(\d+\.\d s\)\.", out.getvalue())
    assert "\r" not in out.getvalue() and session.on_simulation is None
    # scripted (not a terminal): nothing on stderr, no times in the output
    code, out, err = play(monkeypatch, capsys, "b2\nhint\nquit\n", "mcts-rollout:30", "--game", "hex-3")
    assert code == 0 and err == "" and re.search(r"mcts-rollout:30 \(O\) plays \w+\.\n", out)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_terminal_sees_the_ai_thinking():
    import os
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: conhex-zero play on the pseudo-terminal
        os.execv(sys.executable, [sys.executable, "-m", "conhex_zero.cli.main", "play", "mcts-rollout:300",
                                  "--game", "hex-4", "--no-color"])
    seen, deadline = b"", time.time() + 120
    try:
        sent = False
        while time.time() < deadline and b" plays " not in seen:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    break
            if not sent and b"X to move> " in seen:
                os.write(fd, b"b2\n")
                sent = True
        assert b"is thinking..." in seen and b" plays " in seen
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def test_scoring_keeps_a_running_pair_score(monkeypatch, capsys):
    # Game 1: you (X) resign at once, the AI has placed nothing. Game 2, colours exchanged: the AI (X)
    # opens and you resign: the AI won both games, so it wins the pair whatever the pieces.
    code, out, _ = play(monkeypatch, capsys, "resign\nresign\nquit\n", "random", "--game", "hex-3", "--scoring")
    assert code == 0
    assert "The AI won with 0 pieces." in out and "The pair's second game follows, with colours exchanged." in out
    assert "New game: you are O (second player, left-right)" in out and "The AI won with 1 piece." in out
    assert "pair 1: your wins scored -, the AI's 1 pieces (lower wins): the AI wins the pair" in out
    assert "pairs won: you 0, the AI 1" in out and out.rstrip().endswith("Final score: pairs won: you 0, the AI 1")


def test_running_pair_score_lower_total_wins_and_ties_draw():
    from conhex_zero.play.pair_score import AI, YOU, RunningPairScore

    score = RunningPairScore(first_side=1)
    assert score.human_side() == 1 and score.record(YOU, 5) is None and score.human_side() == 0
    assert score.current_totals() == {"you": 5, "ai": None}
    assert score.record(AI, 7).result == "player1"  # you won with 5, the AI with 7: lower wins
    score.record(AI, 6)
    assert score.record(YOU, 6).result == "draw"
    score.record(YOU, 9)
    assert score.record(YOU, 3).result == "player1"  # both games: the pair, whatever the pieces
    assert score.pairs_won() == {"you": 2, "ai": 0, "draw": 1}
    data = score.to_json()
    assert data["pairs_won"] == {"you": 2, "ai": 0, "draw": 1} and data["current_pair"]["games"] == 0
    assert len(data["games"]) == 6 and data["next_side"] == "second"
