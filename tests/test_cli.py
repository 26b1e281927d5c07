"""The conhex-zero command line: output, JSON keys, and clear one-line errors with exit code 2."""

import json

import pytest

from conhex_zero.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_rules_text(capsys):
    code, out, _ = run(capsys, "rules", "conhex")
    assert code == 0
    assert "69 holes, 41 cells, 104 adjacent cell pairs" in out
    assert "4 corner (3 holes, need 2), 12 edge (3 holes, need 2), 24 inner (6 holes, need 3), " \
           "1 centre (5 holes, need 3)" in out
    assert "rules: swap on" in out
    assert " 1  .-----------+" in out  # the picture


def test_rules_text_on_hex_speaks_of_cells(capsys):
    code, out, _ = run(capsys, "rules", "hex-5")
    assert code == 0 and "hex-5: 25 cells, 56 adjacent cell pairs" in out and "holes" not in out
    assert "neighbours per cell: 2/3/4/6" in out


def test_rules_json(capsys):
    code, out, _ = run(capsys, "rules", "conhex", "--json")
    data = json.loads(out)
    assert {"holes", "cells", "adjacency", "players"} <= set(data)
    assert len(data["holes"]) == 69 and len(data["cells"]) == 41 and len(data["adjacency"]) == 104
    assert data["holes"][0] == {"name": "A1", "x": 0.0, "y": 0.0}
    assert data["cells"][0]["holes"] == ["A1", "C2", "B3"] and data["cells"][0]["need"] == 2
    assert data["cells"][0]["sides"] == ["top", "left"]
    assert data["players"][0]["sides"] == ["top", "bottom"]
    assert data["players"][1]["sides"] == ["left", "right"]
    code, out, _ = run(capsys, "rules", "hex-5", "--json")
    data = json.loads(out)
    assert len(data["holes"]) == 25 and data["cells"][0]["holes"] == ["a1"]
    assert data["rules"]["mirror"] is None and data["rules"]["mirror_symmetries"] == []
    code, out, _ = run(capsys, "rules", "hex-5:mirror=2", "--json")
    rules = json.loads(out)["rules"]
    assert rules["mirror"] == 2 and rules["mirror_symmetries"] == ["rot180", "transpose", "antitranspose"]
    code, out, _ = run(capsys, "rules", "conhex:mirror=3", "--json")
    assert json.loads(out)["rules"]["mirror"] == 3 and len(json.loads(out)["rules"]["mirror_symmetries"]) == 7


def test_rules_help_explains_the_variants(capsys):
    with pytest.raises(SystemExit):
        main(["rules", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "mirror=K" in text and "the (K+1)-th is illegal" in text and "Variante Mosse Speculari" in text
    assert "--scoring" in text and "equal totals make a drawn pair" in text


def test_replay_text_and_json(capsys):
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "c1", "a2", "c2", "a3")
    assert code == 0 and "X wins" in out
    code, out, _ = run(capsys, "replay", "conhex", "C2,swap", "--json")
    data = json.loads(out)
    assert data["winner"] is None and data["to_move"] == 0 and data["moves"] == ["C2", "swap"]
    assert len(data["cell_owners"]) == 41 and set(data["cell_owners"]) == {None}
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "c1", "a2", "c2", "a3", "--json")
    data = json.loads(out)
    assert data["winner"] == 0 and data["cell_owners"][0] == 0 and data["cell_owners"][2] == 1


@pytest.mark.parametrize("argv, message", [
    (["replay", "conhex", "F6", "F6"], "move 2 (F6): F6: the hole is already taken"),
    (["replay", "conhex", "F6", "E5"], "move 2 (E5): 'E5' is not a move in conhex"),
    (["replay", "conhex", "swap"], "move 1 (swap): swap: only allowed"),
    (["replay", "hex-3", "a1", "c1", "a2", "c2", "a3", "b2"], "move 6 (b2): b2: the game is already over"),
    (["replay", "hexx-5", "a1"], "unknown game 'hexx-5'"),
    (["rules", "hex-40"], "between 2 and 19"),
    (["rules", "conhex:swapp"], "Did you mean 'swap'"),
    (["bench", "env", "--batch", "0"], "--batch must be from 1 to 262144, not 0"),
    (["bench", "env", "--device", "tpu"], "unknown device"),
    (["bench", "search", "--threads", "-1"], "--threads must be from 0 to 4096, not -1"),
    (["bench", "selfplay", "--threads", "-2"], "--threads must be from 0 to 4096, not -2"),
])
def test_errors_are_one_clear_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bench_commands_default_to_one_thread(capsys):
    code, out, _ = run(capsys, "bench", "env", "--game", "hex-4", "--batch", "8", "--seconds", "0.05")
    assert code == 0 and "(1 thread):" in out
    code, out, _ = run(capsys, "bench", "search", "--game", "hex-4", "--model", "l1h8", "--batch", "2", "--sims", "2",
                       "--seconds", "0.05")
    assert code == 0 and "(1 thread):" in out


def test_bench_env_json(capsys):
    code, out, _ = run(capsys, "bench", "env", "--game", "hex-5", "--batch", "64", "--seconds", "0.2", "--json")
    data = json.loads(out)
    assert code == 0 and data["steps_per_s"] > 0 and data["batch"] == 64 and data["game"] == "hex-5"
    assert data["live_steps"] > 0


def test_no_command_prints_help(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "rules" in out and "replay" in out


def test_bench_net_and_search_json(capsys):
    code, out, _ = run(capsys, "bench", "net", "--game", "hex-4", "--model", "l1h8", "--batch", "4",
                       "--seconds", "0.1", "--json")
    data = json.loads(out)
    assert code == 0 and data["evals_per_s"] > 0 and data["model"] == "l1h8"
    code, out, _ = run(capsys, "bench", "search", "--game", "hex-4", "--model", "l1h8", "--batch", "4",
                       "--sims", "4", "--seconds", "0.1", "--json")
    data = json.loads(out)
    assert code == 0 and data["sims_per_s"] > 0 and 0 < data["network_fraction"] < 1
    assert data["searches"] >= 1 and data["simulations"] == 4
    # Evaluations are counted per position: the batched tree evaluates each position's root and
    # one leaf a simulation; the lean tree only new leaves, several a network call.
    code, out, _ = run(capsys, "bench", "search", "--game", "hex-4", "--model", "l1h8", "--batch", "4",
                       "--sims", "16", "--seconds", "0.1", "--tree", "batched", "--json")
    data = json.loads(out)
    assert data["evals_per_sim"] == (1 + 16) / 16 and data["network_calls_per_s"] * 4 == data["evals_per_s"]
    code, out, _ = run(capsys, "bench", "search", "--game", "conhex", "--model", "l1h8", "--batch", "1",
                       "--sims", "64", "--seconds", "0.1", "--tree", "lean", "--json")
    data = json.loads(out)
    assert 0 < data["evals_per_sim"] < 1 and data["evals_per_s"] > data["network_calls_per_s"]
    assert data["network_us_per_eval"] > 0


def test_bench_rejects_bad_model_names(capsys):
    code, _, err = run(capsys, "bench", "net", "--model", "huge")
    assert code == 2 and "l<layers>h<hidden>" in err


@pytest.mark.parametrize("command", ["", "train", "arena", "play", "serve", "gtp", "replay", "openings", "report", "curve", "average",
                                     "ladder", "rules"])
def test_help_texts_are_wrapped_and_show_plain_percent_signs(monkeypatch, capsys, command):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"] if command else ["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "%%" not in out
    long = [line for line in out.splitlines() if len(line) > 100]
    assert long == [], long
    expected = {"arena": "95% intervals", "openings": "(win %)", "report": "95% intervals", "curve": "95% interval",
                "gtp": "2.5% chance"}.get(command)
    if expected:
        assert expected in " ".join(out.split())


def test_gtp_help_gives_the_hexgui_command(monkeypatch, capsys):
    from conhex_zero.cli.gtp_cmd import HEXGUI_COMMAND

    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(["gtp", "--help"])
    out = capsys.readouterr().out
    assert f"\n  {HEXGUI_COMMAND}\n" in out and "Program > New Program" in out
    assert HEXGUI_COMMAND == "conhex-zero gtp /path/to/CKPT --game hex-11:swap --swap-name swap-pieces"


def test_replay_text_and_json_agree_on_the_ply(capsys):
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "c1", "a2")
    assert code == 0 and out.rstrip().endswith("O to move (left-right) after 3 plies") and "ply 4" not in out
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "c1", "a2", "--json")
    assert json.loads(out)["ply"] == 3
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "--json")
    assert json.loads(out)["ply"] == 1
    code, out, _ = run(capsys, "replay", "hex-3", "a1")
    assert out.rstrip().endswith("O to move (left-right) after 1 ply")
    code, out, _ = run(capsys, "replay", "hex-3", "a1", "c1", "a2", "c2", "a3")
    assert out.rstrip().endswith("X wins (top-bottom connected) after 5 plies")


def test_review_losses_are_never_negative(capsys):
    from conhex_zero.records.review import review_game

    moves = ["b2", "c3", "b3", "a4", "c2", "d1"]
    review = review_game("hex-4", moves, "mcts-rollout:16", seed=0)
    gains = [m for m in review.moves
             if (m.value_after - m.value_before) * (1 if m.player == 0 else -1) > 0]
    assert gains  # moves that turned out better than the search expected: no loss, not a negative one
    assert all(m.loss == 0.0 for m in gains) and all(m.loss >= 0 for m in review.moves)
    assert any(m.loss > 0 for m in review.moves)
    code, out, _ = run(capsys, "replay", "hex-4", *moves, "--analyse", "mcts-rollout:16", "--json")
    data = json.loads(out)
    assert code == 0 and all(m["loss"] >= 0 for m in data["moves"])
    code, out, _ = run(capsys, "replay", "hex-4", *moves, "--analyse", "mcts-rollout:16")
    lines = out.splitlines()
    loss_end = next(line for line in lines if line.startswith(" ply")).index("loss") + len("loss")
    rows = [line for line in lines[-12:] if line[:4].strip().isdigit()]
    assert code == 0 and len(rows) == 6 and " -" not in "".join(line[loss_end - 6:loss_end] for line in rows)


def test_hex_without_swap_does_not_suggest_swap(capsys):
    code, _, err = run(capsys, "replay", "hex-5", "z9")
    assert code == 2 and "'z9' is not a move in hex-5 (cells are named like a1 .. e5)" in err and "swap" not in err
    code, _, err = run(capsys, "replay", "hex-5:swap", "z9")
    assert code == 2 and "(cells are named like a1 .. e5, or 'swap')" in err
    code, _, err = run(capsys, "replay", "conhex", "Z9")
    assert code == 2 and "or 'swap')" in err


FAST_HELP = """
import contextlib, io, sys
from conhex_zero.cli.main import COMMANDS, build_parser, main
parser = build_parser()
commands = [action for action in parser._subparsers._group_actions[0].choices]
for argv in [["--help"], *[[c, "--help"] for c in commands], ["bench", "env", "--help"], ["arena"],
             ["replay", "--index", "x"], ["train", "--stop-after"], ["nosuch"]]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
print(len(commands), sorted(m for m in ("torch", "numpy", "tqdm") if m in sys.modules))
"""


def test_help_and_option_errors_do_not_import_torch():
    """--help, every command's --help and argparse's errors answer without importing torch (seconds
    of CPU): the command modules import their heavy modules inside run()."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FAST_HELP], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, imported = out.stdout.split(" ", 1)
    assert int(count) >= 13 and imported.strip() == "[]"


BROKEN_PIPE = """
import io, sys
from conhex_zero.cli.main import main

class Closed(io.TextIOWrapper):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")  # the reader (head & co.) has gone

sys.stdout = Closed(io.BytesIO())
sys.stdout.fileno = lambda: 1
sys.exit(main(["rules", "hex-3"]))
"""


def test_output_piped_into_a_reader_that_stops_ends_quietly():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", BROKEN_PIPE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stderr == ""
