"""The same engine code on CUDA gives exactly the CPU results (skipped without a GPU)."""

import pytest
import torch

from conhex_zero.env.vec_env import VecEnv
from helpers import random_actions

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.parametrize("spec", ["conhex", "hex-11:swap", "hex-7:forbid=1,random=1"])
def test_cuda_matches_cpu(spec):
    cpu, gpu = VecEnv(spec, "cpu"), VecEnv(spec, "cuda")
    gen = torch.Generator().manual_seed(0)
    a = cpu.initial_state(512)
    b = gpu.initial_state(512)
    while not bool(a.done.all()):
        action = random_actions(cpu, a, gen)
        assert torch.equal(cpu.legal_mask(a), gpu.legal_mask(b).cpu())
        a = cpu.step(a, action)
        b = gpu.step(b, action.cuda())
        assert a.equal(b.to("cpu"))
