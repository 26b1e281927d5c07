"""An arena match knows what played (issue 43, item 1): a checkpoint player is its file's content
(a digest), so a changed file is another match (a new default records file; an explicit one of the
old contents is refused, naming the player), a file replaced during a match is noticed and never
mixed into one score or one ladder name, and every game read back is replayed before it counts:
an edited or damaged record is refused, naming its line."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import torch

from conhex_zero.agents.match_records import seal
from conhex_zero.cli.main import main
from conhex_zero.nn.checkpoint import save_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig


def _model(path: Path, seed: int) -> Path:
    torch.manual_seed(seed)
    return save_checkpoint(path, GraphNet(ModelConfig(1, 8), NUM_FEATURES), "hex-3")


@pytest.fixture
def two(tmp_path, monkeypatch) -> tuple[Path, Path]:
    monkeypatch.chdir(tmp_path)  # default records go to ./runs/arena, here
    (tmp_path / "W").mkdir()
    return _model(tmp_path / "W" / "x.pt", 1), _model(tmp_path / "W" / "y.pt", 2)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _arena(capsys, *args: str) -> tuple[int, dict | None, str]:
    capsys.readouterr()
    code = main(["arena", *args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def _swap(a: Path, b: Path) -> None:
    tmp = a.with_suffix(".swap")
    shutil.move(a, tmp)
    shutil.move(b, a)
    shutil.move(tmp, b)


def test_swapped_checkpoints_are_another_match(two, capsys):
    x, y = two
    match = ["W/x.pt:sims=2", "W/y.pt:sims=2", "--games", "6", "--records", "W/xy.jsonl"]
    code, first, _ = _arena(capsys, *match)
    assert code == 0 and first["games"] == 6
    digests = {r["match"]["checkpoints"][0] for r in _lines(Path("W/xy.jsonl"))}
    assert len(digests) == 1 and len(digests.pop()) == 16
    _swap(x, y)
    code, _, err = _arena(capsys, *match)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("conhex-zero arena: error: W/xy.jsonl holds games that player 1, W/x.pt:sims=2, played "
                          "as another model: its file has changed since (sha256 "), err
    assert len(_lines(Path("W/xy.jsonl"))) == 6  # nothing written


def test_a_retrained_checkpoint_gets_its_own_default_records(two, capsys):
    x, y = two
    code, first, _ = _arena(capsys, "W/x.pt:sims=2", "random", "--games", "4")
    assert code == 0 and Path(first["records"]).is_file()
    code, again, err = _arena(capsys, "W/x.pt:sims=2", "random", "--games", "4")
    assert code == 0 and again["records"] == first["records"] and "the match is complete" in err
    shutil.copyfile(y, x)  # runs/x/best.pt retrained in place
    code, fresh, err = _arena(capsys, "W/x.pt:sims=2", "random", "--games", "4")
    assert code == 0 and fresh["records"] != first["records"] and "resuming" not in err and "complete" not in err
    assert len(_lines(Path(fresh["records"]))) == 4 and len(_lines(Path(first["records"]))) == 4


def _edit(path: Path, line: int, change, reseal: bool = True) -> None:
    """Change one record; ``reseal``: and seal it again as the arena would (an edit made with this
    program's code, which only the replay of the record can catch)."""
    entries = _lines(path)
    change(entries[line])
    if reseal:
        entries[line] = seal(entries[line])
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def _flip_winner(e: dict) -> None:
    e["winner"] = 1 - e["winner"]
    e["winner_name"] = [e["first"], e["second"]][e["winner"]]


def _forge_forfeit(e: dict) -> None:
    e["result"] = "forfeit: someone: lost its connection"


def _drop_last_move(e: dict) -> None:
    e["moves"] = e["moves"][:-1]
    e["plies"] -= 1


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[str, dict]:
    """A 6-game match's records (as written) and its result, played once for the edits below."""
    records = tmp_path_factory.mktemp("played") / "m.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["arena", "random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records",
                     str(records), "--json"]) == 0
    return records.read_text(), json.loads(out.getvalue())


@pytest.mark.parametrize("change, words", [
    (_flip_winner, "is recorded as won by"),
    (lambda e: e.update(winner=1 - e["winner"]), "but its winner_name is"),
    (lambda e: e.update(winner=7), "winner is 7, not 0 (the first player) or 1 (the second)"),
    (lambda e: e.update(winner=True), "not an arena record of this version (field 'winner' is true)"),
    (lambda e: e["moves"].__setitem__(1, e["moves"][0]), "move 2 ("),
    (lambda e: e["moves"].append("a1"), "is not legal there"),
    (_drop_last_move, "is recorded as won by"),
    (_forge_forfeit, "is recorded as a forfeit, but its moves end with the connection"),
    (lambda e: e.update(first=e["second"], second=e["first"]), "in this match"),
    (lambda e: e.update(pieces=e["pieces"] + 1), "pieces, not the"),
    (lambda e: e.update(plies=e["plies"] + 1), "plies are"),
    (lambda e: e.update(result="resigned"), "result is 'resigned'"),
    (lambda e: e.update(opening=0), "opening of 0 moves does not fit this match"),
])
def test_an_edited_record_is_refused_naming_its_line(played, tmp_path, capsys, change, words):
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    kept, first = played
    records.write_text(kept)
    _edit(records, 2, change)
    code, _, err = _arena(capsys, *match)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"conhex-zero arena: error: {records}:3: ") and words in err, err
    assert err.rstrip().endswith("delete that line to play the game again, or move the file away") or \
        "not an arena record" in err, err
    records.write_text(kept)  # the file as written reads back whole: the same result, nothing played
    code, again, err = _arena(capsys, *match)
    assert code == 0 and again["wins"] == first["wins"] and "the match is complete" in err


def test_a_record_rewritten_into_another_legal_game_by_hand_is_refused(played, tmp_path, capsys):
    """Issue 50, 2.2: game 3 rewritten as the game its pair played (the same opening, colours
    exchanged, so legal and self-consistent in every field the replay checks: moves, winner, plies,
    pieces) was accepted and changed the score; the record's seal no longer matches it."""
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    kept, first = played
    entries = [json.loads(x) for x in kept.splitlines() if x.strip()]
    line = next(k for k, e in enumerate(entries) if e["index"] == 3)
    pair = next(e for e in entries if e["index"] == 2)
    forged = entries[line]
    forged.update(moves=pair["moves"], winner=pair["winner"], plies=pair["plies"], pieces=pair["pieces"],
                  result=pair["result"], winner_name=[forged["first"], forged["second"]][pair["winner"]])
    records.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code, _, err = _arena(capsys, *match)
    assert code == 2, "the forged game was accepted"
    assert f"{records}:{line + 1}: the record is not as the arena wrote it (its digest does not match" in err, err
    _edit(records, line, lambda e: None)  # sealed again with this program's code: the replay is all that is left
    code, again, _ = _arena(capsys, *match)
    assert code == 0 and len(_lines(records)) == 6  # a legal game of the right opening: counted as written


def test_a_line_added_by_hand_among_sealed_ones_is_refused(played, tmp_path, capsys):
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    kept, _ = played
    entries = [json.loads(x) for x in kept.splitlines() if x.strip()]
    copy = dict(entries[0])
    del copy["digest"]
    records.write_text(kept + json.dumps(copy) + "\n")
    code, _, err = _arena(capsys, *match)
    assert code == 2 and f"{records}:7: a record without its digest among sealed ones" in err, err


def test_records_whose_digests_were_all_deleted_are_refused_unless_asked(played, tmp_path, capsys):
    """Issue 58: with the digest field deleted from every line, the records read as from before the
    seals, and a game rewritten into a loss was accepted (0.875 reported, 1.000 played)."""
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    kept, result = played
    entries = [json.loads(x) for x in kept.splitlines() if x.strip()]
    for e in entries:
        del e["digest"]
    records.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code, _, err = _arena(capsys, *match)
    assert code == 2 and f"{records}: its records carry no digest" in err and "--unsealed-records" in err, err
    code, again, err = _arena(capsys, *match, "--unsealed-records")  # asked for: read as they are (replayed)
    assert code == 0 and again["wins"] == result["wins"], err


def test_an_edited_record_or_another_matchs_file_is_refused_before_torch(played, tmp_path):
    """Issue 58, 7: these refusals came after torch (2.1-3.1 s of CPU)."""
    from fresh_process import run_fresh

    def fresh(*args):
        return run_fresh(list(args))

    records = tmp_path / "m.jsonl"
    kept, _ = played
    entries = [json.loads(x) for x in kept.splitlines() if x.strip()]
    entries[2]["plies"] += 1  # edited by hand
    records.write_text("".join(json.dumps(e) + "\n" for e in entries))
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    code, err = fresh("arena", *match)
    assert code == 2 and err[-1] == "torch imported: False" and "the record is not as the arena wrote it" in err[0], err
    records.write_text(kept)
    code, err = fresh("arena", "random", "mcts-rollout:5", "--game", "hex-4", "--games", "6", "--records", str(records))
    assert code == 2 and err[-1] == "torch imported: False" and "holds games of another match (players" in err[0], err


def test_a_deleted_damaged_line_is_played_again(tmp_path, capsys):
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:4", "--game", "hex-4", "--games", "6", "--records", str(records)]
    code, first, _ = _arena(capsys, *match)
    entries = _lines(records)
    records.write_text("".join(json.dumps(e) + "\n" for k, e in enumerate(entries) if k != 2))
    code, again, err = _arena(capsys, *match)
    assert code == 0 and "resuming: 5 of 6 games are there" in err
    assert again["wins"] == first["wins"] and len(_lines(records)) == 6  # deterministic players: the same game


def test_rounds_of_an_odd_size_read_their_own_records_back(tmp_path, capsys):
    records = tmp_path / "m.jsonl"
    match = ["random", "mcts-rollout:2", "--game", "hex-3", "--games", "9", "--until-decided", "--round", "3",
             "--records", str(records)]
    code, first, _ = _arena(capsys, *match)
    assert code == 0
    firsts = [(r["index"], r["first"]) for r in _lines(records)]
    assert ("random" if firsts[3][0] % 3 % 2 == 0 else "mcts-rollout:2") == firsts[3][1]
    code, again, err = _arena(capsys, *match)
    assert code == 0 and again["wins"] == first["wins"] and "resuming" in err


def test_records_of_an_older_version_are_refused(tmp_path, capsys):
    records = tmp_path / "m.jsonl"
    match = ["random", "random", "--game", "hex-3", "--games", "2", "--records", str(records)]
    assert _arena(capsys, *match)[0] == 0
    entries = _lines(records)
    for e in entries:  # as an older version wrote them: no checkpoint digests, no seals
        del e["match"]["checkpoints"]
        del e["digest"]
    records.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code, _, err = _arena(capsys, *match)
    assert code == 2 and "holds games recorded before the arena noted what each checkpoint file held" in err


def test_a_checkpoint_replaced_during_the_match_is_never_mixed(two, capsys, monkeypatch):
    import conhex_zero.agents.match_records as match_records

    x, y = two
    written = []
    append = match_records.append_record

    def append_then_replace(path, record):
        append(path, record)
        written.append(record.index)
        if len(written) == 2:
            shutil.copyfile(y, x)  # retrained in place while the match runs

    monkeypatch.setattr(match_records, "append_record", append_then_replace)
    match = ["W/x.pt:sims=2", "random", "--games", "6", "--records", "W/m.jsonl", "--ladder", "W/ladder"]
    code, result, err = _arena(capsys, *match)
    assert code == 0 and result["games"] == 6
    assert "W/x.pt changed during the match: all its games were played by the model it held when the match began" \
        in err and "the match is not added to W/ladder" in err
    assert len({json.dumps(r["match"]) for r in _lines(Path("W/m.jsonl"))}) == 1  # one model, one digest
    assert not Path("W/ladder/ladder.jsonl").exists()
    monkeypatch.setattr(match_records, "append_record", append)
    code, _, err = _arena(capsys, *match)  # the same command: the file now holds another model
    assert code == 2 and "holds games that player 1, W/x.pt:sims=2, played as another model" in err


def test_the_ladder_keeps_a_name_to_one_model(two, capsys):
    x, y = two
    code, _, _ = _arena(capsys, "W/x.pt:sims=2", "random", "--games", "2", "--ladder", "W/ladder")
    assert code == 0
    players = {e["name"]: e for e in _lines(Path("W/ladder/ladder.jsonl")) if e["type"] == "player"}
    assert len(players["W/x.pt:sims=2"]["sha256"]) == 16 and "sha256" not in players["random"]
    before = Path("W/ladder/ladder.jsonl").read_text()
    shutil.copyfile(y, x)
    code, _, err = _arena(capsys, "W/x.pt:sims=2", "random", "--games", "2", "--ladder", "W/ladder")
    assert code == 0 and "is another model than the one rated there under that name" in err
    assert Path("W/ladder/ladder.jsonl").read_text() == before


def test_an_unwritable_default_records_folder_is_refused_before_any_game(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("runs").write_text("a file where the folder goes")
    code, _, err = _arena(capsys, "random", "random", "--game", "hex-3", "--games", "2")
    assert code == 2
    assert err == ("conhex-zero arena: error: --records runs/arena: runs is not a directory (the default records "
                   "folder: give --records FILE)\n")
