"""Counter-based random numbers: right distributions, independent of the batch."""

import torch

from conhex_zero.search import rng


def test_same_key_same_numbers_in_any_batch():
    keys = rng.make_keys(0, 100)
    assert torch.equal(rng.uniform(keys[37:38], 5, 20), rng.uniform(keys, 5, 20)[37:38])
    assert not torch.equal(rng.uniform(keys, 5, 20), rng.uniform(keys, 6, 20))
    assert not torch.equal(rng.uniform(keys, 5, 20), rng.uniform(rng.fold(keys, 1), 5, 20))


def test_distributions():
    keys = rng.make_keys(1, 2000)
    u = rng.uniform(keys, 0, 500)
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    n = rng.normal(keys, 0, 500)
    assert abs(n.mean()) < 0.01 and abs(n.var() - 1) < 0.01
    for alpha in (0.03, 0.3, 2.0):
        g = rng.gamma(keys, 0, 500, alpha)
        assert abs(g.mean() - alpha) < 0.03 * max(alpha, 0.3) and abs(g.var() - alpha) < 0.1 * max(alpha, 0.3)
    mask = torch.rand(2000, 12, generator=torch.Generator().manual_seed(0)) > 0.3
    d = rng.dirichlet(keys, 0, mask, 0.3)
    assert torch.allclose(d.sum(1)[mask.any(1)], torch.ones(int(mask.any(1).sum())), atol=1e-5)
    assert (d[~mask] == 0).all()
