"""Players behind one interface, checkpoints, and batched matches."""

import json
from pathlib import Path

import pytest
import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.ladder.ratings import wilson
from conhex_zero.agents.players import PlayerSpecError, make_player
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES)
    return save_checkpoint(tmp_path / "net.pt", model, "hex-5", {"step": 7}), model


def test_checkpoint_round_trip(checkpoint, tmp_path):
    path, model = checkpoint
    ckpt = load_checkpoint(path)
    assert ckpt.game == "hex-5" and ckpt.meta == {"step": 7} and ckpt.model.name == "l2h16"
    for a, b in zip(model.state_dict().values(), ckpt.model.state_dict().values()):
        assert torch.equal(a, b)
    assert not (tmp_path / "net.pt.tmp").exists()
    with pytest.raises(CheckpointError, match="no checkpoint file"):
        load_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match=r"not a conhex-zero checkpoint \(unreadable"):
        load_checkpoint(tmp_path / "junk.pt")
    torch.save({"format": "other"}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a conhex-zero checkpoint"):
        load_checkpoint(tmp_path / "other.pt")


@pytest.mark.parametrize("name", ["random", "mcts-rollout:4", "policy:{ckpt}", "{ckpt}", "{ckpt}:sims=4"])
def test_every_player_makes_legal_moves(name, checkpoint):
    path, _ = checkpoint
    env = VecEnv("hex-5:swap")
    player = make_player(name.format(ckpt=path), env, seed=1, simulations=4)
    state = env.initial_state(8)
    for _ in range(6):
        action = player.act(state)
        env.check_actions(state, action)
        state = env.step(state, action)


@pytest.mark.parametrize("name, message", [("mcts-rollout", "mcts-rollout:K"), ("mcts-rollout:0", "at least 1"),
                                           ("nothing", "unknown player"), ("nothing.pt", "no checkpoint file at nothing.pt")])
def test_bad_player_names(name, message):
    with pytest.raises(PlayerSpecError, match=message):
        make_player(name, VecEnv("hex-5"))


def test_identical_players_score_about_half():
    env = VecEnv("hex-5")
    r = play_match(env, make_player("random", env, 0), make_player("random", env, 1), 400, seed=3, progress=False)
    assert sum(r.wins) == 400 and 0.42 < r.score < 0.58
    (p1_first, p1_second), (p2_first, p2_second) = r.wins_by_colour["player1"], r.wins_by_colour["player2"]
    assert p1_first + p1_second == r.wins[0] and p2_first + p2_second == r.wins[1]
    # Each player moved first in 200 games: its first-move wins plus the other's second-move wins.
    assert p1_first + p2_second == 200 and p2_first + p1_second == 200
    assert p1_first + p2_first + p1_second + p2_second == 400


def test_rollout_search_beats_random():
    env = VecEnv("hex-4")
    r = play_match(env, make_player("mcts-rollout:48", env, 0), make_player("random", env, 1), 40, seed=0,
                   progress=False)
    assert r.score >= 0.8


def test_arena_command_json(capsys, checkpoint, tmp_path, monkeypatch):
    path, _ = checkpoint
    checkout = Path(__file__).resolve().parent.parent / "runs" / "arena"
    before = sorted(checkout.glob("*")) if checkout.is_dir() else []
    monkeypatch.chdir(tmp_path)  # the default records file goes to ./runs/arena: here, not into the checkout
    code = main(["arena", "random", f"{path}:sims=4", "--game", "hex-4", "--games", "6", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["games"] == 6 and len(data["wins"]) == 2 and sum(data["wins"]) == 6
    assert data["score"] == data["wins"][0] / 6
    assert Path(data["records"]).parent == Path("runs") / "arena" and (tmp_path / data["records"]).is_file()
    assert (sorted(checkout.glob("*")) if checkout.is_dir() else []) == before


def test_arena_command_errors(capsys):
    assert main(["arena", "random", "nope.pt", "--game", "hex-4"]) == 2
    assert "no checkpoint file at nope.pt" in capsys.readouterr().err
    assert main(["arena", "random", "nope", "--game", "hex-4"]) == 2
    assert "unknown player 'nope'" in capsys.readouterr().err
    assert main(["arena", "random", "random", "--games", "0"]) == 2


def test_deterministic_players_still_play_distinct_games():
    env = VecEnv("hex-5")
    p1 = make_player("mcts-rollout:8", env, 0)
    p2 = make_player("mcts-rollout:8", env, 1)
    # From the empty board the two deterministic players repeat the same two games...
    same = play_match(env, p1, p2, 12, seed=0, progress=False, opening_plies=0, fixed_openings=True)
    assert len(set(same.lengths[0::2])) == 1 and len(set(same.lengths[1::2])) == 1
    assert same.distinct_games == 2 and same.distinct_openings == 1 and same.openings_repeat
    # ...distinct random openings (shared by each colour-exchanged pair) make the games distinct.
    varied = play_match(env, p1, p2, 24, seed=0, progress=False, opening_plies=0)
    assert varied.distinct_games == 24 and varied.distinct_openings == 12 and varied.opening_plies == 1


def test_identical_deterministic_players_score_exactly_half():
    env = VecEnv("hex-5")
    a, b = make_player("mcts-rollout:8", env, 0), make_player("mcts-rollout:8", env, 0)
    b.name = "twin"
    # Both games of a pair start from the same opening with colours exchanged, so twins split every pair.
    r = play_match(env, a, b, 20, seed=4, progress=False, opening_plies=2)
    assert r.score == 0.5


def test_a_stronger_reference_wins_clearly():
    env = VecEnv("hex-5")
    r = play_match(env, make_player("mcts-rollout:128", env, 0), make_player("mcts-rollout:4", env, 1), 40, seed=1,
                   progress=False, opening_plies=1)
    assert r.score >= 0.8 and r.score_ci95[0] > 0.5 and r.elo > 0


def test_records_replay_to_the_recorded_result(tmp_path):
    from conhex_zero.env.notation import play_moves

    env = VecEnv("conhex:random=1")
    r = play_match(env, make_player("random", env, 0), make_player("mcts-rollout:4", env, 1), 8, seed=2,
                   progress=False, opening_plies=1)
    path = r.write_records(tmp_path / "games.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 8 and all(rec["opening"] == 3 for rec in records)
    for rec in records:  # the random pieces are ordinary moves at the start of the record
        state = play_moves(VecEnv(rec["game"]), rec["moves"])
        assert int(state.winner[0]) == rec["winner"] and rec["result"] == "connection"
        assert (rec["first"], rec["second"])[rec["winner"]] == rec["winner_name"]
        assert len(rec["moves"]) == int(state.ply[0])


def test_until_decided_stops_early(capsys, tmp_path):
    code = main(["arena", "mcts-rollout:64", "random", "--game", "hex-4", "--games", "200", "--round", "20",
                 "--until-decided", "--json", "--records", str(tmp_path / "r.jsonl")])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["decided"] is True and data["games"] < 200 and data["games"] % 20 == 0
    for key in ("score_ci95", "elo", "elo_ci95", "wins_by_colour", "mean_length", "records"):
        assert key in data
    assert data["score_ci95"][0] > 0.5 and data["records"] == str(tmp_path / "r.jsonl")
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == data["games"]


def test_replay_command_checks_a_record(tmp_path, capsys):
    env = VecEnv("hex-4")
    r = play_match(env, make_player("random", env, 0), make_player("random", env, 1), 4, seed=0, progress=False)
    path = r.write_records(tmp_path / "g.jsonl")
    assert main(["replay", "--record", str(path), "--index", "3"]) == 0
    assert "as recorded" in capsys.readouterr().out
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["winner"], rec["winner_name"] = 1 - rec["winner"], "someone else"
    path.write_text(json.dumps(rec) + "\n")
    assert main(["replay", "--record", str(path), "--index", "0"]) == 2
    assert "the record says" in capsys.readouterr().err


class _RecordingBar:
    """A stand-in for tqdm that records, at every update, the plies counted, the estimated total and
    how many games had finished."""

    bars: list["_RecordingBar"] = []

    def __init__(self, total=None, desc="", unit="it", disable=False, **kwargs):
        self.total, self.unit, self.disable, self.n, self.postfix = total, unit, disable, 0, ""
        self.updates: list[tuple[int, int, str]] = []
        _RecordingBar.bars.append(self)

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def update(self, k=1):
        self.n += k
        self.updates.append((self.n, self.total, self.postfix))

    def close(self):
        pass


def test_match_progress_counts_plies_with_an_estimated_total(monkeypatch):
    import conhex_zero.agents.arena as arena

    _RecordingBar.bars = []
    monkeypatch.setattr(arena, "progress_bar", _RecordingBar)
    env = VecEnv("hex-5")
    r = play_match(env, make_player("random", env, 0), make_player("mcts-rollout:4", env, 1), 8, seed=0,
                   progress=True, opening_plies=1)
    (bar,) = _RecordingBar.bars
    assert bar.unit == "ply" and not bar.disable
    # The bar moves while every game is still running: one update per step, before any game ends.
    before_any_end = [u for u in bar.updates if u[2] == "games 0/8"]
    assert len(before_any_end) >= 5 and before_any_end[0][0] == 8  # 8 games moved once each
    counts = [n for n, _, _ in bar.updates]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    # It ends at the match's real number of plies (without the random openings), all games finished.
    assert bar.n == sum(r.lengths) - 8 * 1 and bar.total == bar.n
    wins = r.wins[0]
    low, high = wilson(wins, 8)
    assert bar.updates[-1][2] == f"games 8/8, score {wins}/8 ({low:.2f}-{high:.2f})"  # player 1's score so far
    scores = [text for _, _, text in bar.updates if "score" in text]
    assert scores and all(t.startswith("games ") for t in scores)  # shown from the first finished game on
    # Its total is an estimate (games x expected length), refined as games finish.
    assert all(total >= n for n, total, _ in bar.updates)
    assert len({total for _, total, _ in bar.updates}) > 2


def test_self_play_progress_counts_the_first_movers_wins(monkeypatch):
    # One player against itself (the report's self-play): both sides share a name, so "player 1's
    # score" would be every game; the line shows the first mover's wins instead.
    import conhex_zero.agents.arena as arena

    _RecordingBar.bars = []
    monkeypatch.setattr(arena, "progress_bar", _RecordingBar)
    env = VecEnv("hex-5")
    player = make_player("random", env, 1)
    r = play_match(env, player, player, 8, seed=3, progress=True, opening_plies=1)
    (bar,) = _RecordingBar.bars
    first_wins = sum(1 for rec in r.records if rec.winner == 0)
    assert 0 < first_wins < 8  # this seed's games split, so the count is not "all" by construction
    low, high = wilson(first_wins, 8)
    assert bar.updates[-1][2] == f"games 8/8, first player {first_wins}/8 ({low:.2f}-{high:.2f})"


def test_a_typo_after_a_checkpoint_names_the_option(checkpoint):
    from conhex_zero.agents.player_specs import parse_player

    path, _ = checkpoint
    for spec, option in ((f"{path}:sim=10", "sim=10"), (f"{path}:sims=10:x", "sims=10:x"),
                         (f"{path}:seconds=1:sims=3", "seconds=1:sims=3")):
        with pytest.raises(PlayerSpecError) as err:
            parse_player(spec)
        assert f"unknown option '{option}' after the checkpoint {path}: write CKPT:sims=N" in str(err.value)
    assert parse_player(f"{path}:sims=10").simulations == 10


def test_why_a_file_is_unreadable_ends_between_words():
    from conhex_zero.nn.checkpoint import unreadable_reason

    torch_says = RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory. "
                              "This is an internal error, please report it")
    assert unreadable_reason(torch_says) == \
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"
    long = unreadable_reason(ValueError("word " * 40))
    assert long.endswith(" word...") and len(long) <= len("ValueError: ") + 100


def test_a_cut_or_damaged_checkpoint_is_told_without_torch(checkpoint, tmp_path):
    from conhex_zero.nn.checkpoint_files import check_checkpoint_archive

    path, _ = checkpoint
    check_checkpoint_archive(path)
    data = path.read_bytes()
    for name, content, words in (("cut.pt", data[:len(data) // 2], "not a whole zip archive"),
                                 ("empty.pt", b"", "not a whole zip archive"),
                                 ("flipped.pt", data[:100] + bytes([data[100] ^ 1]) + data[101:], "checksum does not match")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(CheckpointError, match=words):
            check_checkpoint_archive(tmp_path / name)


def test_a_timed_player_gets_its_games_a_pair_at_a_time(checkpoint):
    """A timed player searches one position after another: the arena gives it a colour-exchanged
    pair at a time, so games end (and reach the records) pair after pair, not all at the end."""
    path, _ = checkpoint
    env = VecEnv("hex-5")
    timed, other = make_player(f"{path}:seconds=0.01", env, 0), make_player("random", env, 1)
    assert timed.max_parallel_games == 2 and make_player(str(path), env, 0).max_parallel_games is None
    batches, ended = [], []
    act = timed.act

    def counting_act(state, keys=None, history=None):
        batches.append(state.batch_size)
        return act(state, keys, history)

    timed.act = counting_act
    r = play_match(env, timed, other, 6, seed=0, progress=False, on_game_end=lambda rec: ended.append(rec.index))
    assert r.games == 6 and max(batches) <= 2
    assert [sorted(ended[i:i + 2]) for i in (0, 2, 4)] == [[0, 1], [2, 3], [4, 5]]
