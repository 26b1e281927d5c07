"""The in-tree visit floor (``SearchConfig.visit_floor``): Gumbel's in-tree rule matches visits to
pi' = softmax(logits + sigma), which sharpens as a node's visits grow, so a move whose completed Q
sits a little below the favourite's is never tried at high effort; a floor of the prior under pi'
keeps every move searched. Checked on a hand-made node row (the batched rule and the lean search's
two forms of it alike) and on the Hex 4x4 position where the plain rule's value drifted away from
the exact solver's as simulations grew (docs/analysis.md)."""

import pytest
import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.search_configs import play_config
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search import rng
from conhex_zero.search import select as rules
from conhex_zero.search.lean_rules import RowRules, by_score
from conhex_zero.search.mcts import SearchConfig

PRIOR = [0.5, 0.43, 0.07]  # the favourite, a visited poor move, an untried move of small prior
Q = [-0.70, -0.95, 0.90]  # what each move is worth (the untried one is the best)


def select_until(visit_floor: float, steps: int) -> tuple[list[int], int | None]:
    """Run the in-tree rule of one node ``steps`` times from 800 visits on the favourite and 4 on
    the poor move, each visit returning the move's value ``Q``; the visits, and the step at which
    the untried move was first chosen (None: never). Every form of the rule must choose alike."""
    cfg = SearchConfig(q_min_spread=0.1, visit_floor=visit_floor)
    lean = RowRules(cfg)
    logits = torch.tensor([PRIOR]).log()
    legal = torch.ones(1, 3, dtype=torch.bool)
    prior = rules.masked_softmax(logits, legal)
    n = torch.tensor([[800.0, 4.0, 0.0]])
    first = None
    for step in range(steps):
        w = n * torch.tensor([Q])
        raw = torch.tensor([-0.9])  # the network's value of the node
        sigma = rules.sigma_completed_q(n, w, prior, legal, raw, cfg.c_visit, cfg.c_scale, False, cfg.q_min_spread)
        action = int(rules.gumbel_interior(logits, legal, sigma, n, cfg.visit_floor)[0])
        n_np, w_np, p_np, l_np = n[0].numpy(), w[0].numpy(), prior[0].numpy(), logits[0].numpy()
        assert lean.interior(n_np, w_np, l_np, p_np, legal[0].numpy(), -0.9, 0.0) == action
        order = by_score(legal[0].numpy(), l_np)
        assert lean.interior_visited(n_np, w_np, p_np, -0.9, order) == action
        if action == 2 and first is None:
            first = step
        n[0, action] += 1
    return n[0].int().tolist(), first


def test_without_a_floor_the_untried_move_is_never_chosen():
    visits, first = select_until(0.0, 2000)
    assert first is None and visits[2] == 0
    assert visits[0] > 2700  # every visit went to the favourite


@pytest.mark.parametrize("floor", [0.05, 0.25])
def test_a_floor_tries_the_move_and_follows_its_value(floor):
    visits, first = select_until(floor, 2000)
    assert first is not None and first < 200  # tried early: its share of the visits is at least floor x P
    assert visits[2] > visits[0] - 800  # once tried, its value makes it the new favourite


def test_a_floor_of_zero_is_gumbels_rule():
    logits = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    legal = torch.rand(5, 7, generator=torch.Generator().manual_seed(1)) < 0.8
    legal[:, 0] = True
    n = torch.randint(0, 30, (5, 7), generator=torch.Generator().manual_seed(2)).float() * legal
    sigma = torch.rand(5, 7, generator=torch.Generator().manual_seed(3)) * 20
    assert torch.equal(rules.gumbel_interior(logits, legal, sigma, n, 0.0), rules.gumbel_interior(logits, legal, sigma, n))
    improved = rules.masked_softmax(logits + sigma, legal)  # Gumbel MuZero's rule, written out
    expected = torch.where(legal, improved - n / (1 + n.sum(1, keepdim=True)), -float("inf")).argmax(1)
    assert torch.equal(rules.gumbel_interior(logits, legal, sigma, n, 0.0), expected)
    assert not torch.equal(rules.gumbel_interior(logits, legal, sigma, n, 1.0), expected)  # the floor acts
    with pytest.raises(ValueError, match="visit_floor"):
        SearchConfig(visit_floor=1.5)


def test_the_floor_finds_the_answer_the_plain_rule_never_tries():
    # Hex 4x4, a1 and d1 played: the mover's only winning move is c2, and after c2 c1 the only
    # winning answer is b2 (prior 0.067). The plain rule gives the answer a3 hundreds of visits and
    # b2 none, and c2's value turns negative by 1,024 simulations; with the floor it stays right.
    env = VecEnv("hex-4")
    state = env.initial_state(1)
    for move in (0, 3):
        state = env.step(state, torch.tensor([move]))
    assert bool(HexSolver(env.game.board).state_winners(state)[0] == state.to_move[0])  # the mover wins
    evaluator = NetworkEvaluator(load_checkpoint("checkpoints/hex4-l3h32.pt").model, env)
    values = {}
    for name, changes in (("plain", dict(visit_floor=0.0)), ("play", {})):  # play: the shipped settings
        cfg = play_config(1024, leaves_per_call=1, **changes)  # one leaf a call: the batched search
        assert (cfg.visit_floor > 0) == (name == "play")
        out = GameSearch(env, evaluator, cfg, lean_max_batch=4).run(state, rng.make_keys(0, 1))
        assert int(out.action[0]) == 6  # c2
        values[name] = float(out.q_values[0, 6])
    assert values["plain"] < 0 < values["play"]

