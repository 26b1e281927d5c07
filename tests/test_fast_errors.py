"""A user's typo is answered before torch is imported (importing it costs seconds of CPU, tens of
seconds on a loaded machine): bad game names, missing checkpoints and records, unknown players, bad
model names, and a run or line that another process is training. Each command runs in a fresh
interpreter, and the test asserts it ended with one error line and exit code 2 without torch in
``sys.modules`` (the CPU seconds themselves are measured by benchmarks/fast_errors.py, not here)."""

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from conhex_zero.train.run_lock import RunLock
from fresh_process import run_fresh

ROOT = Path(__file__).resolve().parent.parent


LONG = "x" * 300
CASES = [
    (["rules", "hexx"], "Did you mean 'hex'?"),
    (["arena", "no/such/file.pt", "random"], "no checkpoint file at no/such/file.pt"),
    (["arena", LONG, "random", "--game", "hex-3", "--games", "2"], "unknown player 'xxxx"),
    (["arena", LONG + ".pt", "random"], "no checkpoint file at xxxx"),
    (["arena", "random", "mcts-rollout:0", "--game", "hex-3"], "at least 1 simulation"),
    (["arena", "random", "random", "--game", "hexx"], "unknown game 'hexx'"),
    (["play", "no.pt"], "no checkpoint file at no.pt"),
    (["gtp", "nobody"], "unknown player 'nobody'"),
    (["serve", "random", "--game", "hex-99"], "Hex board size must be between 2 and 19, got 99"),
    (["openings", "no.pt"], "no checkpoint file at no.pt"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--other", "none.pt"], "--other: no checkpoint file at none.pt"),
    (["report", "no.pt"], "no checkpoint file at no.pt (or give mcts-rollout:K)"),
    (["replay", "hexx", "a1"], "unknown game 'hexx'"),
    (["replay", "--record", "no/such.sgf"], "no record file at no/such.sgf"),
    (["replay", "hex-3", "a1", "--analyse", "no.pt"], "no checkpoint file at no.pt"),
    (["average", "none.pt", "--out", "runs/avg.pt"], "none.pt does not exist"),
    (["ladder", "runs/none"], "runs/none does not exist"),  # issue 57: it said "holds no results yet"
    (["curve", "runs/none"], "runs/none does not exist"),  # issue 57: it said "has no evaluated iterations"
    (["ladder", "docs"], "docs/ladder.jsonl holds no results yet"),
    (["curve", "docs"], "docs has no evaluated iterations"),
    # issue 57: a misspelt book folder was refused after torch (4.4 s)
    (["book", "show", "checkpoints/books/hex5-l4h46"], "no book at checkpoints/books/hex5-l4h46: it does not exist"),
    (["book", "html", "checkpoints/books/hex5-l4h46", "--out", "runs/pages"], "no book at checkpoints/books/hex5-l4h46"),
    (["book", "show", "README.md"], "README.md is a file, not a book folder"),
    (["book", "show", "docs"], "no book at docs"),
    # issue 58, 5: empty strings were taken (--out '' wrote into the working folder, --host '' listened
    # on every interface, --after '' grew from the empty board)
    (["book", "html", "checkpoints/books/hex4-l3h32", "--out", ""], "--out: an empty value"),
    (["serve", "random", "--host", ""], "--host: an empty value"),
    (["serve", "random", "--allow-host", " "], "--allow-host: an empty value"),
    (["book", "grow", "checkpoints/hex4-l3h32.pt", "--out", "runs/b", "--after", ""], "--after: an empty value"),
    (["arena", "random", "random", "--records", ""], "--records: an empty value"),
    (["bench", "search", "--model", "l9"], "model name 'l9'"),
    (["bench", "env", "--game", "hexx"], "unknown game 'hexx'"),
    (["train", "--config", "none.yaml"], "config file none.yaml does not exist"),
    (["train", "--resume", "runs/none"], "runs/none does not exist"),
    (["piece", "runs/none"], "holds no line"),
    # issue 43: config keys and values, options that conflict, numbers, outputs, a player's typo
    (["train", "--config", "configs/tiny.yaml", "optim.learning_rate=1e-3"], "unknown config key 'optim.learning_rate'"),
    (["train", "--config", "configs/tiny.yaml", "optim.lr=fast"], "optim.lr: expected a number, got 'fast'"),
    (["train", "--resume", "runs/none", "selfplay.gamez=4"], "unknown config key 'selfplay.gamez'"),
    (["bench", "selfplay", "optim.lr=fast"], "optim.lr: expected a number, got 'fast'"),
    (["play", "random", "--sims", "10", "--seconds", "1"], "--sims and --seconds: give one"),
    (["serve", "random", "--port", "8765000"], "--port must be from 0 to 65535, not 8765000"),
    (["serve", "random", "--temperature", "nan"], "--temperature must be a number from 0 to 100, not nan"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--sims", "-5"], "--sims must be from 1 to 100000, not -5"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--sims", "99999999999999999999"], "--sims must be from 1 to 100000"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--sims", "8,,16"], "without empty items"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--repeats", "99999999999999999999"], "--repeats must be from 1"),
    (["openings", "checkpoints/hex5-l4h64.pt", "--check-games", "1e20"], "--check-games must be an even number"),
    (["report", "checkpoints/hex5-l4h64.pt", "--out", "pyproject.toml/report"],
     "--out pyproject.toml/report: pyproject.toml is not a directory"),
    (["report", "checkpoints/hex5-l4h64.pt", "--opening-sims", "0", "--other", "checkpoints/hex5-l4h64.pt"],
     "--opening-sims 0 skips the opening table"),
    (["arena", "random", "random", "--records", "pyproject.toml/m.jsonl"], "--records pyproject.toml/m.jsonl: "),
    (["arena", "checkpoints/hex5-l4h64.pt:sim=10", "random"], "unknown option 'sim=10' after the checkpoint"),
    (["gtp", "random", "--resign", "nan"], "--resign must be a number from 0 to 1, not nan"),
    (["bench", "search", "--sims", "0"], "--sims must be from 1 to 100000, not 0"),
    (["replay", "hex-3", "a1", "--to-sgf", "pyproject.toml/x.sgf"], "--to-sgf pyproject.toml/x.sgf: pyproject.toml is "),
    (["average", "checkpoints/hex5-l4h64.pt", "--out", "pyproject.toml/a.pt"], "--out pyproject.toml/a.pt: "),
    # issue 50: a misspelt move and a config value out of its range
    (["replay", "conhex", "F6", "Z99"], "move 2 (Z99): 'Z99' is not a move in conhex"),
    (["replay", "hex-5", "a1,c9"], "move 2 (c9): "),
    (["train", "--config", "configs/tiny.yaml", "selfplay.games=-5"], "invalid value for selfplay.games: at least 1"),
    (["train", "optim.lr=-1"], "invalid value for optim.lr: positive"),
    (["train", "--config", "configs/tiny.yaml", "--run-dir", "pyproject.toml/run"],
     "--run-dir pyproject.toml/run: pyproject.toml is not a directory"),
    (["train", "--config", "configs/tiny.yaml", "--run-dir", "/proc/x/run"], "--run-dir /proc/x/run: cannot write in /proc"),
]


@pytest.mark.parametrize("name, value, message", [
    ("CONHEX_ZERO_BACKEND", "bogus", "CONHEX_ZERO_BACKEND='bogus' is none of auto, aoti, eager"),
    ("CONHEX_ZERO_BUILD", "later", "CONHEX_ZERO_BUILD='later' is none of background, wait"),
    ("CONHEX_ZERO_CACHE", "", "CONHEX_ZERO_CACHE is empty"),
])
def test_an_unknown_environment_value_is_refused(monkeypatch, name, value, message):
    """Issue 58: CONHEX_ZERO_BACKEND=bogus ran as auto without a word (--backend bogus was refused)."""
    monkeypatch.setenv(name, value)
    code, err = run_fresh(["rules", "hex"], ROOT)
    assert code == 2 and err[-1] == "torch imported: False", err
    assert len(err) == 2 and message in err[0], err


@pytest.mark.parametrize("args, message", CASES, ids=[" ".join(a)[:40] for a, _ in CASES])
def test_a_bad_argument_is_refused_without_torch(args, message):
    code, err = run_fresh(args, ROOT)
    assert code == 2, err
    assert err[-1] == "torch imported: False", err
    assert len(err) == 2 and message in err[0], err


@pytest.mark.parametrize("command", ["train", "piece"])
def test_a_second_trainer_is_refused_before_torch(tmp_path, command):
    run = tmp_path / "run"
    run.mkdir()
    lock = RunLock(run)
    lock.acquire(note=lambda _: None)  # this process trains it
    try:
        args = ["train", "--resume", str(run)] if command == "train" else ["piece", str(run), "--config",
                                                                            str(ROOT / "configs" / "tiny.yaml")]
        code, err = run_fresh(args, tmp_path)
    finally:
        lock.release()
    assert code == 2 and err[-1] == "torch imported: False", err
    assert len(err) == 2 and f"pid {os.getpid()}" in err[0] and "is in use" in err[0], err


def test_a_cut_checkpoint_and_an_unwritable_default_folder_are_refused_before_torch(tmp_path):
    cut = tmp_path / "cut.pt"
    cut.write_bytes((ROOT / "checkpoints" / "hex5-l4h64.pt").read_bytes()[:100_000])
    for args in (["arena", str(cut), "random"], ["openings", str(cut)], ["play", str(cut)]):
        code, err = run_fresh(args, tmp_path)
        assert code == 2 and err[-1] == "torch imported: False", err
        assert len(err) == 2 and f"{cut} is not a conhex-zero checkpoint (unreadable: not a whole zip archive" in err[0]
    (tmp_path / "runs").write_text("a file where the records folder goes")
    code, err = run_fresh(["arena", "random", "random", "--game", "hex-3"], tmp_path)
    assert code == 2 and err[-1] == "torch imported: False", err
    assert err[0] == ("conhex-zero arena: error: --records runs/arena: runs is not a directory (the default records "
                      "folder: give --records FILE)")


def test_a_cut_or_damaged_carried_state_is_refused_before_torch(tmp_path):
    line = tmp_path / "line"
    (line / "checkpoints").mkdir(parents=True)
    (line / "checkpoints" / "iter_0020.pt").write_bytes(b"")
    whole = (ROOT / "checkpoints" / "lines" / "conhex-gpu" / "carry.pt").read_bytes()
    for damage, words in ((whole[: len(whole) // 2], "is damaged or cut short"),
                          (whole[:1000] + bytes([whole[1000] ^ 1]) + whole[1001:], "its checksum does not match")):
        (line / "carry.pt").write_bytes(damage)
        for args in (["piece", str(line)], ["rate", str(line)]):
            code, err = run_fresh(args, tmp_path)
            assert code == 2 and err[-1] == "torch imported: False", err
            assert len(err) == 2 and words in err[0] and "restore the line's carry.pt" in err[0], err


def test_a_book_refusal_needs_no_torch(tmp_path):
    """Issue 58, 7: a book of another model or start, a damaged or cut book, a missing base: refused
    before torch (they cost 2.7-4.1 s of CPU)."""
    import gzip

    book = tmp_path / "b"
    shutil.copytree(ROOT / "checkpoints" / "books" / "hex4-l3h32", book)
    hex4, hex5 = str(ROOT / "checkpoints" / "hex4-l3h32.pt"), str(ROOT / "checkpoints" / "hex5-l4h64.pt")
    other = tmp_path / "other-hex4.pt"  # the same game's checkpoint with other bytes: another model's digest
    with zipfile.ZipFile(ROOT / "checkpoints" / "hex4-l3h32.pt") as src, zipfile.ZipFile(other, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item.filename))
        dst.writestr("other/extra", b"another model")
    cases = [(["book", "grow", str(other), "--out", str(book), "--nodes", "1"], "is another model"),
             (["book", "grow", hex5, "--out", str(book), "--nodes", "1"], "is a book of hex-4, not of hex-5"),
             (["book", "grow", hex4, "--out", str(book), "--nodes", "1", "--after", "a1"], "asks for another start")]
    for args, message in cases:
        code, err = run_fresh(args, tmp_path)
        assert code == 2 and err[-1] == "torch imported: False" and message in err[0], err
    base = book / "book.jsonl.gz"
    lines = gzip.decompress(base.read_bytes()).decode().splitlines(keepends=True)
    base.write_bytes(gzip.compress("".join(lines[:5] + lines[6:]).encode()))  # a line deleted
    for args in (["book", "show", str(book)], ["book", "html", str(book), "--out", str(tmp_path / "p")],
                 ["book", "grow", hex4, "--out", str(book), "--nodes", "1"]):
        code, err = run_fresh(args, tmp_path)
        assert code == 2 and err[-1] == "torch imported: False" and "the seal does not match" in err[0], err
    base.unlink()  # a book whose base is gone and whose log is empty
    code, err = run_fresh(["book", "show", str(book)], tmp_path)
    assert code == 2 and err[-1] == "torch imported: False", err
