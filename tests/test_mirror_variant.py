"""The mirror-move limit ("Variante Mosse Speculari", game option mirror=K): hand-made positions,
random games against the plain-Python reference (with a player that mirrors often), symmetry
consistency, the reasons given for illegal moves, and records."""

import zlib

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.env.reference import ReferenceGame
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import GameSpecError, parse_game
from helpers import assert_same, play_both


def play(spec: str, moves: list[str]):
    env, states, refs = play_both(spec, moves)
    return env, states[-1], refs[0]


def legal(env: VecEnv, state, move: str) -> bool:
    return bool(env.legal_mask(state)[0, env.game.parse_move(move)])


def test_the_option_is_parsed_and_named():
    game = parse_game("hex-5:mirror=2")
    assert game.mirror == 2 and game.spec == "hex-5:mirror=2"
    assert game.mirror_symmetries == ("rot180", "transpose", "antitranspose")
    assert len(parse_game("conhex:mirror=1").mirror_symmetries) == 7
    assert "at most 2 consecutive mirror moves" in game.rules_summary
    with pytest.raises(GameSpecError):
        parse_game("hex-5:mirror=0")
    with pytest.raises(GameSpecError):
        parse_game("hex-5:mirror")


def test_a_third_consecutive_mirror_is_illegal_and_the_reason_says_so():
    env, state, ref = play("hex-5:mirror=2", ["a1", "e5", "b1", "d5", "c1"])  # e5, d5: 180-degree turns of a1, b1
    assert not legal(env, state, "c5") and not ref.is_legal(env.game.parse_move("c5"))
    assert legal(env, state, "c4")  # any other move is fine
    reason = env.why_illegal(state, 0, env.game.parse_move("c5"))
    assert "third consecutive move mirroring" in reason and "rot180" in reason
    # Only the mirroring player is limited: the first player may mirror the second's moves freely.
    env, state, _ = play("hex-5:mirror=2", ["a1", "c3", "e5", "b1", "d5"])
    assert legal(env, state, "c5")


def test_a_broken_streak_starts_again_and_symmetries_count_apart():
    # e5 mirrors a1 (rot180), then c3 is no mirror: the streak restarts.
    env, state, _ = play("hex-5:mirror=2", ["a1", "e5", "b1", "c3", "c1", "c5", "d2"])
    assert legal(env, state, "b4")  # rot180 of d2: only the second consecutive mirror
    # Two mirrors under rot180, then the transpose of the opponent's move: a different symmetry.
    env, state, _ = play("hex-5:mirror=2", ["a1", "e5", "b1", "d5", "a2"])
    assert not legal(env, state, "e4") and legal(env, state, "b1") is False  # e4 = rot180(a2); b1 taken
    assert legal(env, state, "d3") is True
    env, state, _ = play("hex-5:mirror=1", ["b1", "d5", "c2"])
    assert not legal(env, state, "c4") and legal(env, state, "b3")  # c4 = rot180(c2); b3 = transpose(c2)


def test_the_swap_ends_the_streaks():
    env, state, _ = play("hex-5:swap,mirror=1", ["a1", "swap", "b2"])
    assert int(state.last[0]) == env.game.parse_move("b2")
    assert int(state.streak.abs().sum()) == 0


def test_the_extra_stone_is_not_a_mirror():
    env, state, _ = play("hex-5:noswap,extra-stone,mirror=1", ["a1", "e5", "b2", "a2"])
    assert int(state.streak[0, 1].sum()) == 0  # b2 followed the player's own e5


def mirroring_actions(env: VecEnv, state, gen: torch.Generator, prob: float = 0.6) -> torch.Tensor:
    """Random legal moves that mirror the opponent's last move (under a random symmetry) when they can."""
    legal_mask = env.legal_mask(state)
    B, S = state.batch_size, env.num_mirrors
    pick = torch.randint(S, (B,), generator=gen)
    image = env.mirror_image[state.last.clamp(min=0), pick]
    ok = (state.last >= 0) & legal_mask.gather(1, image[:, None])[:, 0] & (torch.rand(B, generator=gen) < prob)
    u = torch.rand(legal_mask.shape, generator=gen)
    return torch.where(ok, image, (u * legal_mask).argmax(1))


@pytest.mark.parametrize("spec, games", [("hex-5:mirror=2", 120), ("hex-6:swap,mirror=1", 80),
                                         ("hex-5:extra-stone,mirror=1", 60), ("conhex:mirror=2", 40),
                                         ("hex-7:random=1,mirror=2", 40)])
def test_random_mirroring_games_match_the_reference(spec, games):
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(zlib.crc32(spec.encode()))
    refs = [ReferenceGame(spec) for _ in range(games)]
    state = env.initial_state(games)
    banned_seen = 0
    while not bool(state.done.all()):
        legal_mask = env.legal_mask(state)
        for b in range(games):
            assert set(legal_mask[b].nonzero().flatten().tolist()) == set(refs[b].legal_actions()), b
        banned_seen += int(env._mirror_banned(state).sum())
        action = mirroring_actions(env, state, gen)
        live = (~state.done).nonzero().flatten().tolist()
        state = env.step(state, action)
        for b in live:
            refs[b].play(int(action[b]))
        assert_same(state, refs)
    assert banned_seen > 0, "the sample must reach positions where a mirror move is barred"


@pytest.mark.parametrize("spec", ["hex-6:mirror=1", "conhex:mirror=1"])
def test_legality_is_symmetric(spec):
    """A symmetry of the board maps the barred moves of a position onto those of its image."""
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(2)
    state = env.initial_state(64)
    for _ in range(7):
        state = env.reset_done(env.step(state, mirroring_actions(env, state, gen, prob=0.9)))
    barred = env._mirror_banned(state)
    assert barred.any()
    for k in range(1, len(env.symmetries)):
        image = env.symmetries.apply(state, k)
        mapped = env.symmetries.apply_actions(torch.cat([barred, barred[:, :1]], 1).float(), k)[:, :-1] > 0
        assert torch.equal(env._mirror_banned(image), mapped), env.symmetries.names[k]


def test_replay_reports_the_illegal_third_mirror_with_its_move_number(capsys):
    assert main(["replay", "hex-5:mirror=2", "a1", "e5", "b1", "d5", "c1", "c5"]) == 2
    err = capsys.readouterr().err
    assert "6" in err and "mirror" in err
