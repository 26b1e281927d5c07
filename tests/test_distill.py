"""Distillation (``train/distill.py``, ``conhex-zero distill``): the teacher's positions carry its
own outputs, a student learns them (its outputs move towards the teacher's), the positions can be
kept and read again, and a student saved part way continues with --resume."""

from pathlib import Path

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.encode import Encoder
from conhex_zero.train.distill import DistillSet, generate, teacher_outputs

ROOT = Path(__file__).resolve().parent.parent
TEACHER = ROOT / "checkpoints" / "hex4-l3h32.pt"


def test_the_teachers_positions_carry_its_outputs_and_cover_the_game():
    env = VecEnv("hex-4")
    teacher = load_checkpoint(TEACHER).model
    data = generate(teacher, env, 600, games=32, temperature=1.0, random_moves=0.2, seed=3)
    assert len(data) == 600 and data.game == "hex-4"
    batch = data.sample(64, torch.Generator().manual_seed(0))
    policy, value, ownership, legal = teacher_outputs(teacher, Encoder(env), env, batch.state)
    assert torch.allclose(batch.policy, policy, atol=2e-3) and torch.allclose(batch.value, value, atol=4e-3)
    assert torch.allclose(batch.ownership, ownership, atol=4e-3)
    assert torch.all(batch.policy[~legal] == 0) and torch.allclose(batch.policy.sum(1), torch.ones(64), atol=2e-3)
    plies = data.states["ply"].long()
    assert plies.min() == 0 and plies.max() >= 6  # openings and later positions, games restarted
    assert (batch.ready == 1).all()


def test_a_student_learns_the_teachers_outputs(tmp_path):
    out, data = tmp_path / "student.pt", tmp_path / "set.pt"
    args = ["distill", str(TEACHER), "--model", "l2h16", "--positions", "1500", "--games", "64", "--epochs", "4",
            "--batch", "64", "--lr", "3e-3", "--data", str(data), "--out", str(out), "--quiet"]
    assert main(args) == 0
    student = load_checkpoint(out)
    assert student.model.config.name == "l2h16" and student.game == "hex-4"
    assert student.meta["distilled_from"] == str(TEACHER) and student.meta["positions"] == 1500
    env = VecEnv("hex-4")
    held_out = generate(load_checkpoint(TEACHER).model, env, 256, games=64, seed=99)
    batch = held_out.sample(256, torch.Generator().manual_seed(1))
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig

    torch.manual_seed(0)
    untrained = GraphNet(ModelConfig.from_name("l2h16"), NUM_FEATURES).eval()

    def gap(model) -> float:  # cross-entropy of the model's policy against the teacher's, on new positions
        p, _, _, _ = teacher_outputs(model, Encoder(env), env, batch.state)
        return float(-(batch.policy * p.clamp(min=1e-9).log()).sum(1).mean())

    assert gap(student.model) < gap(untrained) - 0.1
    # the kept positions are read again (no teacher games), and a saved student continues
    assert DistillSet.load(data).teacher == str(TEACHER)
    assert main(args[:-1] + ["--epochs", "6", "--resume", "--quiet"]) == 0
    assert load_checkpoint(out).meta["step"] == 141  # ceil(1500 * 6 / 64)


@pytest.mark.parametrize("extra, message", [
    (["--positions", "1e30"], "--positions must be a whole number from 1 to 50000000, not '1e30'"),
    (["--temperature", "nan"], "--temperature must be a number from 0 to 100, not nan"),
    (["--out", "x.txt"], "the file name must end in .pt"),
    (["--resume"], "does not exist yet"),
])
def test_distill_errors_are_one_line(tmp_path, capsys, extra, message):
    base = ["distill", str(TEACHER), "--out", str(tmp_path / "s.pt")]
    assert main(base + extra) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
