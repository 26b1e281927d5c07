"""A line's files describe one model (issue 50, 1.1 and 1.2): another line's ``carry.pt`` is refused
from the line's logs and metrics even without ``pieces.jsonl``; what a rolled-back line holds past
its carried state moves into ``LINE/dropped/`` (nothing lost, said in one line), ``rate --list`` and
``ladder`` no longer show it, and each piece record names its checkpoint's digest, which the file matches."""

import json
import shutil
from pathlib import Path

import pytest

from conhex_zero.cli.main import main
from conhex_zero.files import file_seal
from conhex_zero.files.jsonl import read_jsonl, rewrite_jsonl
from conhex_zero.nn.checkpoint_files import checkpoint_digest
from conhex_zero.train.line import Line, LineError
from conhex_zero.train.line_identity import check_checkpoints, check_identity
from conhex_zero.train.line_past import find_past, set_aside
from conhex_zero.train.piece import run_piece

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
QUIET = dict(progress=False, log=lambda *_: None, install_signals=False)
OTHER_ID = "0123456789abcdef"


@pytest.fixture(scope="module")
def two_pieces(tmp_path_factory) -> tuple[Path, bytes]:
    """A tiny line of two pieces (iterations 1-3, then 4-5), and the carry.pt its first piece wrote."""
    tmp = tmp_path_factory.mktemp("two-pieces")
    line = tmp / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp / "r1", **QUIET)
    first_carry = (line / "carry.pt").read_bytes()
    run_piece(line, overrides=["iterations=5"], minutes=5, run_dir=tmp / "r2", **QUIET)
    return line, first_carry


def _copy(two_pieces, tmp_path: Path) -> tuple[Path, bytes]:
    line, first_carry = two_pieces
    shutil.copytree(line, tmp_path / "line")
    return tmp_path / "line", first_carry


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _jsonl(data: bytes) -> list[dict]:
    return [json.loads(text) for text in data.decode().splitlines() if text.strip()]


# ---------------------------------------------------------------- 1.1: another line's carry.pt
def test_another_lines_carry_is_refused_from_the_logs_and_metrics_without_pieces_jsonl(two_pieces, tmp_path, capsys):
    line, first_carry = _copy(two_pieces, tmp_path)
    own_id = Line(line).read_carry()["line"]["id"]
    (line / "pieces.jsonl").unlink()
    # another line's state after its first piece (iteration 1): as a copied carry.pt holds it
    (line / "carry.pt").write_bytes(first_carry)
    data = file_seal.load(line / "carry.pt")
    data["line"] = {"id": OTHER_ID, "piece": 1}
    data["iteration"] = 1
    file_seal.save(data, line / "carry.pt")
    before = _files(line)
    with pytest.raises(LineError, match=f"line {OTHER_ID}'s state but the line's other files .*line {own_id}'s"):
        run_piece(line, overrides=["iterations=5"], minutes=5, run_dir=tmp_path / "r3", **QUIET)
    assert main(["piece", str(line), "--quiet", "--run-dir", str(tmp_path / "r4"), "iterations=5"]) == 2
    err = capsys.readouterr().err
    assert OTHER_ID in err and own_id in err and "logs/piece-002.log" in err and len(err.strip().splitlines()) == 1
    assert main(["rate", str(line), "--list"]) == 2
    assert OTHER_ID in capsys.readouterr().err
    assert _files(line) == before  # nothing renamed, moved or written


# ---------------------------------------------------------------- issue 58, 3: a line without carry.pt
def test_a_line_whose_carry_is_missing_never_starts_over_on_its_own_files(two_pieces, tmp_path, capsys):
    """It said "a new line", rewrote pieces.jsonl, metrics.jsonl and ladder.jsonl, and kept the old
    checkpoints beside the new iter_0001.pt; now it is refused, naming what is there, before torch."""
    line, _ = _copy(two_pieces, tmp_path)
    (line / "carry.pt").unlink()
    before = _files(line)
    with pytest.raises(LineError, match="has no carry.pt but holds an earlier line's work"):
        run_piece(line, minutes=5, run_dir=tmp_path / "r3", **QUIET)
    assert main(["piece", str(line), "--quiet", "--run-dir", str(tmp_path / "r4")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 piece records in pieces.jsonl" in err and "metric lines" in err
    assert "restore its carry.pt (e.g. git checkout --" in err and "start a new line in another folder" in err
    assert _files(line) == before  # nothing rewritten
    with pytest.raises(LineError, match="holds an earlier line's work"):  # nor with --config
        run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r5", **QUIET)
    assert _files(line) == before


def test_a_lines_refusals_need_no_torch(two_pieces, tmp_path):
    """Issue 58, 7: another line's carry.pt, a checkpoint that is not its record's model and --out
    into another line were refused after torch (2.8-3.6 s of CPU); now from the files' plain fields."""
    from fresh_process import run_fresh

    def fresh(*args):
        return run_fresh(list(args))

    line, first_carry = _copy(two_pieces, tmp_path)
    other = tmp_path / "other"
    shutil.copytree(line, other)
    data = file_seal.load(other / "carry.pt")
    data["line"] = {"id": OTHER_ID, "piece": 2}
    file_seal.save(data, other / "carry.pt")
    for path in list((other).glob("*.jsonl")) + list((other / "logs").glob("*.log")):
        path.write_text(path.read_text().replace(Line(line).read_carry()["line"]["id"], OTHER_ID))
    code, err = fresh("piece", str(line), "--out", str(other))  # --out into another line
    assert code == 2 and err[-1] == "torch imported: False" and f"holds line {OTHER_ID}" in err[0], err
    (line / "carry.pt").write_bytes((other / "carry.pt").read_bytes())  # another line's carry.pt copied in
    code, err = fresh("piece", str(line))
    assert code == 2 and err[-1] == "torch imported: False" and f"is line {OTHER_ID}'s state" in err[0], err
    shutil.rmtree(line)
    line, _ = _copy(two_pieces, tmp_path / "again")
    newest = sorted((line / "checkpoints").glob("iter_*.pt"))[-1]
    oldest = sorted((line / "checkpoints").glob("iter_*.pt"))[0]
    newest.write_bytes(oldest.read_bytes())  # a checkpoint that is not its record's model
    code, err = fresh("piece", str(line))
    assert code == 2 and err[-1] == "torch imported: False" and newest.name in err[0], err


def test_the_line_id_is_learnt_from_each_kind_of_file(tmp_path):
    line = Line(tmp_path / "line")
    line.logs.mkdir(parents=True)
    carry = {"iteration": 3, "line": {"id": OTHER_ID, "piece": 1}}
    assert check_identity(line, carry, []) == OTHER_ID  # nothing names another line
    (line.logs / "piece-001.log").write_text("00:00:01 note: a note\n00:00:02 piece 1 of line x (id "
                                             "fedcba9876543210; a new line): 5 minutes on cpu\n")
    with pytest.raises(LineError, match="logs/piece-001.log\\) are line fedcba9876543210's"):
        check_identity(line, carry, [])
    (line.logs / "piece-001.log").write_text("00:00:02 piece 1 of line x (a new line): 5 minutes\n")  # before ids
    rewrite_jsonl(line.metrics_file, [{"iteration": 1, "line_id": "fedcba9876543210"}])
    with pytest.raises(LineError, match="\\(metrics.jsonl\\) are line fedcba9876543210's"):
        check_identity(line, carry, [])
    with pytest.raises(LineError, match="belongs to no line but .* to line fedcba9876543210"):
        check_identity(line, {"iteration": 3}, [])


# ---------------------------------------------------------------- 1.2: an older carry.pt of the line
def test_a_rolled_back_line_moves_what_it_dropped_aside_and_rate_does_not_offer_it(two_pieces, tmp_path, capsys):
    line, first_carry = _copy(two_pieces, tmp_path)
    dropped_files = {name: (line / name).read_bytes() for name in
                     ("checkpoints/iter_0004.pt", "checkpoints/iter_0005.pt", "logs/piece-002.log")}
    dropped_record = Line(line).pieces()[1]
    (line / "carry.pt").write_bytes(first_carry)  # the line rolled back to its first piece (iteration 3)
    assert main(["rate", str(line), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "iter_0003: still" in listed and "iter_0004: still" not in listed and "iter_0005: still" not in listed
    assert main(["ladder", str(line), "--json", "--png", str(tmp_path / "ladder.png")]) == 0
    shown = capsys.readouterr()
    players = {p["name"] for p in json.loads(shown.out)["players"]}
    assert "iter_0003" in players and not players & {"iter_0004", "iter_0005"} and "left out" in shown.err
    said: list[str] = []
    result = run_piece(line, overrides=["iterations=5"], minutes=5, run_dir=tmp_path / "r3", stop_after=1,
                       progress=False, log=said.append, install_signals=False)
    notes = [s for s in said if "past its carried state" in s]
    assert len(notes) == 1 and "dropped" in notes[0] and "moved into" in notes[0], said
    # nothing lost: the dropped piece's files, record, metric lines and ladder entries are kept aside
    [folder] = (line / "dropped").iterdir()
    for name, data in dropped_files.items():
        assert (folder / name).read_bytes() == data, name
    assert read_jsonl(folder / "pieces.jsonl") == [dropped_record]
    assert [m["iteration"] for m in read_jsonl(folder / "metrics.jsonl")] == [4, 5]
    assert {e["iteration"] for e in read_jsonl(folder / "ladder.jsonl")} == {4, 5}
    assert (folder / "why.txt").read_text().startswith("Dropped from the line")
    # the line describes one model: the new iteration 4, in its record, file, metrics and ladder
    rec = result.record
    assert (rec["piece"], rec["first_iteration"], rec["last_iteration"]) == (2, 4, 4)
    assert [r["piece"] for r in Line(line).pieces()] == [1, 2] and Line(line).pieces()[1] == rec
    assert [p.name for p in Line(line).checkpoint_files()] == [f"iter_{i:04d}.pt" for i in range(1, 5)]
    assert rec["checkpoint"] == "checkpoints/iter_0004.pt"
    assert rec["checkpoint_digest"] == checkpoint_digest(line / rec["checkpoint"]) \
        == checkpoint_digest(tmp_path / "r3" / rec["checkpoint"])
    assert [m["iteration"] for m in read_jsonl(line / "metrics.jsonl")] == [1, 2, 3, 4]
    named = {e.get(k) for e in read_jsonl(line / "ladder.jsonl") for k in ("name", "first", "second")}
    assert "iter_0004" in named and "iter_0005" not in named
    assert (line / "logs" / "piece-002.log").read_bytes() != dropped_files["logs/piece-002.log"]
    assert main(["rate", str(line), "--list"]) == 0
    assert "iter_0005" not in capsys.readouterr().out
    check_checkpoints(Line(line), Line(line).pieces())  # every record's checkpoint is its model


def _fake_line(root: Path) -> Line:
    """A line's files as a rolled-back line holds them (no torch: checkpoints are placeholders)."""
    line = Line(root)
    line.checkpoints.mkdir(parents=True)
    line.logs.mkdir()
    for i in range(1, 6):
        (line.checkpoints / f"iter_{i:04d}.pt").write_bytes(f"model {i}".encode())
    for n in (1, 2):
        (line.logs / f"piece-{n:03d}.log").write_text(f"piece {n}\n")
    rewrite_jsonl(line.pieces_file, [{"piece": 1, "last_iteration": 3}, {"piece": 2, "last_iteration": 5}])
    rewrite_jsonl(line.metrics_file, [{"iteration": i} for i in range(1, 6)])
    rewrite_jsonl(line.ladder_file, [
        {"type": "player", "name": "random", "kind": "reference", "iteration": 1},
        {"type": "player", "name": "iter_0003", "kind": "checkpoint", "iteration": 3},
        {"type": "result", "first": "iter_0003", "second": "random", "first_wins": 1, "second_wins": 0, "iteration": 3},
        {"type": "player", "name": "iter_0005", "kind": "checkpoint", "iteration": 5},
        {"type": "result", "first": "iter_0005", "second": "iter_0003", "first_wins": 1, "second_wins": 0, "iteration": 5},
        # rate's neighbour match, tagged with the rated checkpoint's iteration: it names a dropped one
        {"type": "result", "first": "iter_0002", "second": "iter_0005", "first_wins": 0, "second_wins": 1, "iteration": 2},
    ])
    return line


def test_set_aside_moves_every_later_file_and_entry_and_keeps_the_rest(tmp_path):
    line = _fake_line(tmp_path / "line")
    before = _files(line.path)
    said: list[str] = []
    folder = set_aside(line, find_past(line, 3, 1), said.append, by="a test")
    assert folder is not None and folder.parent == line.path / "dropped" and len(said) == 1
    assert "2 checkpoints (iter_0004-iter_0005), 1 piece record, 2 metric lines, 3 ladder entries, 1 log" in said[0]
    assert [p.name for p in line.checkpoint_files()] == ["iter_0001.pt", "iter_0002.pt", "iter_0003.pt"]
    assert line.log_numbers() == [1] and [r["piece"] for r in line.pieces()] == [1]
    assert [m["iteration"] for m in read_jsonl(line.metrics_file)] == [1, 2, 3]
    assert not any("iter_0005" in (e.get("name"), e.get("first"), e.get("second")) for e in read_jsonl(line.ladder_file))
    # every byte is still somewhere: the line's files and the dropped folder's
    after = _files(line.path)
    for name in ("checkpoints/iter_0004.pt", "checkpoints/iter_0005.pt", "logs/piece-002.log"):
        assert after[str(folder.relative_to(line.path) / name)] == before[name]
    kept_and_dropped = read_jsonl(line.ladder_file) + read_jsonl(folder / "ladder.jsonl")
    assert sorted(map(str, kept_and_dropped)) == sorted(map(str, _jsonl(before["ladder.jsonl"])))
    assert not find_past(line, 3, 1)  # nothing past any more: a second call moves nothing
    assert set_aside(line, find_past(line, 3, 1), said.append, by="a test") is None and len(said) == 1


def test_logs_alone_are_not_work_past_the_state(tmp_path):
    """A log of the next number with nothing else past it: an attempt that saved nothing (``piece.py``
    keeps it under another name), not a rolled-back line."""
    line = _fake_line(tmp_path / "line")
    for p in line.checkpoint_files()[3:]:
        p.unlink()
    rewrite_jsonl(line.pieces_file, line.pieces()[:1])
    rewrite_jsonl(line.metrics_file, [{"iteration": i} for i in range(1, 4)])
    rewrite_jsonl(line.ladder_file, read_jsonl(line.ladder_file)[:3])
    past = find_past(line, 3, 1)
    assert past.logs and not past


def test_a_checkpoint_is_never_kept_over_another_model_of_its_name(tmp_path):
    line = _fake_line(tmp_path / "line")
    newer = tmp_path / "run" / "iter_0005.pt"
    newer.parent.mkdir()
    newer.write_bytes(b"another model 5")
    line._keep_checkpoint(newer, ())
    assert (line.checkpoints / "iter_0005.pt").read_bytes() == b"another model 5"
    [aside] = (line.path / "dropped").rglob("iter_0005.pt")
    assert aside.read_bytes() == b"model 5"
    line._keep_checkpoint(newer, ())  # the same model again: nothing moves
    assert len(list((line.path / "dropped").rglob("*.pt"))) == 1


def test_a_record_whose_checkpoint_is_another_model_is_refused(tmp_path):
    line = _fake_line(tmp_path / "line")
    record = {"piece": 1, "checkpoint": "checkpoints/iter_0003.pt",
              "checkpoint_digest": checkpoint_digest(line.checkpoints / "iter_0003.pt")}
    check_checkpoints(line, [record, {"piece": 0, "checkpoint": "checkpoints/iter_0001.pt"}])  # no digest: not checked
    (line.checkpoints / "iter_0003.pt").write_bytes(b"a model put there by hand")
    with pytest.raises(LineError, match="iter_0003.pt is not the model piece 1 recorded there"):
        check_checkpoints(line, [record])
