"""What a network can learn of connection values in minutes of CPU (issue 56, item 1).

    python benchmarks/knowledge_bench.py --models l4h64 l4h64c l4h64r2 l4h64r2c --seconds 300
    python benchmarks/knowledge_bench.py --models l4h64 l4h64c --train-boards hex-5 hex-6 --test-boards hex-7
    python benchmarks/knowledge_bench.py --checkpoints checkpoints/hex7-l4h64.pt --seconds 0   # as shipped

Reads the positions with exact values of ``knowledge_data.py`` (``benchmarks/data/knowledge.pt``)
and splits each board's positions, once and for all by a fixed seed, into a training part (80%)
and a held-out part. Each candidate network (a model name: ``l4h64``, ``l4h64c``, ``l4h64r2c``...;
or a checkpoint to start from) is trained by supervised learning on the value alone (squared error
of its value head against +1/-1 for the mover), batches of 128 drawn from the training boards in
proportion to their positions, each under a random symmetry of its board, AdamW at 2e-3, one torch
thread, for ``--seconds`` of this process's **CPU time** (so a slower network, or one whose
features cost more to encode, gets fewer steps, and another job on the machine changes nothing).
Every fifth of the budget, and at the end, it is scored on the held-out positions of the test
boards (their time is not counted): the share whose value has the exact result's sign (0 counts as
wrong) and the value's squared error, overall and by stage (empty cells: late at most 8, middle
9-16, early 17 or more).

Prints a table and writes ``--json`` (default ``runs/bench/knowledge.json``; the published results
are ``benchmarks/results/knowledge.json``): per candidate its steps, positions a CPU second, and each
score along the way.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import torch

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.encode import Encoder
from conhex_zero.nn.model import GraphNet, ModelConfig, num_parameters

STAGES = (("late", 0, 8), ("middle", 9, 16), ("early", 17, 99))
BATCH = 128
LR = 2e-3


class Board:
    """One board's positions, split into training and held-out parts, with its engine and encoders."""

    def __init__(self, spec: str, data: dict, split_seed: int, held_out: float):
        self.spec = spec
        self.env = VecEnv(data["game"])
        n = data["value"].shape[0]
        order = torch.randperm(n, generator=torch.Generator().manual_seed(split_seed))
        cut = int(round(n * (1 - held_out)))
        self.train_index, self.test_index = order[:cut], order[cut:]
        self.states = State(**{k: v for k, v in data["states"].items()})
        self.value = data["value"].float()
        self.empty = data["empty"].long()
        self._encoders: dict[bool, Encoder] = {}

    def encoder(self, connection: bool) -> Encoder:
        if connection not in self._encoders:
            self._encoders[connection] = Encoder(self.env, connection=connection)
        return self._encoders[connection]

    def batch(self, index: torch.Tensor, generator: torch.Generator, augment: bool) -> tuple[State, torch.Tensor]:
        state = self.states[index] if index.numel() > 1 else self.states.map(lambda t: t[index])
        if augment:  # one random symmetry for the batch (the value for the mover is unchanged)
            k = int(torch.randint(len(self.env.symmetries), (1,), generator=generator))
            state = self.env.symmetries.apply(state, k)
        return state, self.value[index]


def load_boards(path: str, split_seed: int, held_out: float) -> dict[str, Board]:
    data = torch.load(path, weights_only=True)
    if not isinstance(data, dict) or data.get("format") != "conhex-zero knowledge set":
        raise SystemExit(f"{path} is not a knowledge set (benchmarks/knowledge_data.py writes one)")
    return {spec: Board(spec, d, split_seed, held_out) for spec, d in data["boards"].items()}


def score(model: GraphNet, boards: list[Board]) -> dict:
    """Sign agreement and squared error on the held-out positions, overall and by stage."""
    model.eval()
    out: dict = {}
    right_all = total_all = 0
    sq_all = 0.0
    for board in boards:
        enc = board.encoder(model.config.connection)
        values = []
        with torch.no_grad():
            for i in range(0, board.test_index.numel(), 256):
                index = board.test_index[i:i + 256]
                state, _ = board.batch(index, torch.Generator(), augment=False)
                values.append(model(enc(state), enc.graph)[1])
        value = torch.cat(values)
        target = board.value[board.test_index]
        empty = board.empty[board.test_index]
        right = (torch.sign(value) == target)
        row = {"positions": int(target.numel()), "sign": float(right.float().mean()),
               "mse": float(((value - target) ** 2).mean())}
        for name, lo, hi in STAGES:
            mask = (empty >= lo) & (empty <= hi)
            if mask.any():
                row[name] = {"positions": int(mask.sum()), "sign": float(right[mask].float().mean())}
        out[board.spec] = row
        right_all += int(right.sum())
        total_all += int(target.numel())
        sq_all += float(((value - target) ** 2).sum())
    out["all"] = {"positions": total_all, "sign": right_all / max(total_all, 1), "mse": sq_all / max(total_all, 1)}
    return out


def train(model: GraphNet, train_boards: list[Board], test_boards: list[Board], seconds: float, seed: int,
          checks: int = 5, say=print) -> dict:
    """Supervised value training for ``seconds`` of CPU time; scores after every ``seconds / checks``."""
    gen = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    sizes = torch.tensor([b.train_index.numel() for b in train_boards], dtype=torch.float)
    history = [{"cpu_seconds": 0.0, "steps": 0, **score(model, test_boards)}]
    spent, steps, positions = 0.0, 0, 0
    next_check = seconds / checks
    while spent < seconds:
        start = time.process_time()
        model.train()
        board = train_boards[int(torch.multinomial(sizes, 1, generator=gen))]
        pick = board.train_index[torch.randint(board.train_index.numel(), (BATCH,), generator=gen)]
        state, target = board.batch(pick, gen, augment=True)
        enc = board.encoder(model.config.connection)
        value = model(enc(state), enc.graph)[1]
        loss = ((value - target) ** 2).mean()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        steps += 1
        positions += BATCH
        spent += time.process_time() - start
        if spent >= next_check or spent >= seconds:
            next_check += seconds / checks
            row = {"cpu_seconds": round(spent, 1), "steps": steps, **score(model, test_boards)}
            history.append(row)
            say(f"  {model.config.name}: {spent:.0f} s, {steps} steps, held-out sign {row['all']['sign']:.3f}, "
                f"mse {row['all']['mse']:.3f}")
    return {"steps": steps, "positions_per_cpu_s": positions / max(spent, 1e-9), "history": history,
            "final": history[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="benchmarks/data/knowledge.pt")
    parser.add_argument("--models", nargs="*", default=[], help="model names to train from scratch")
    parser.add_argument("--checkpoints", nargs="*", default=[], help="checkpoints to start from (scored as they are first)")
    parser.add_argument("--seconds", type=float, default=300.0, help="CPU seconds of training each (default 300)")
    parser.add_argument("--train-boards", nargs="*", help="boards to train on (default: all in the data)")
    parser.add_argument("--test-boards", nargs="*", help="boards to score on (default: all in the data)")
    parser.add_argument("--held-out", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0, help="the networks' initial weights and batches")
    parser.add_argument("--json", default="runs/bench/knowledge.json",
                        help="where the results go (benchmarks/results/knowledge.json holds the published ones)")
    args = parser.parse_args(argv)
    if not args.models and not args.checkpoints:
        parser.error("name --models or --checkpoints")
    torch.set_num_threads(1)
    boards = load_boards(args.data, split_seed=56, held_out=args.held_out)
    pick = lambda names: [boards[n] for n in (names or boards)]  # noqa: E731
    train_boards, test_boards = pick(args.train_boards), pick(args.test_boards)
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    results: dict = {"data": args.data, "seconds": args.seconds, "train_boards": [b.spec for b in train_boards],
                     "test_boards": [b.spec for b in test_boards], "seed": args.seed, "torch": str(torch.__version__),
                     "machine": platform.processor() or platform.machine(), "candidates": {}}
    for b in boards.values():
        results.setdefault("sizes", {})[b.spec] = {"train": int(b.train_index.numel()), "test": int(b.test_index.numel())}
    stems = [Path(c).stem for c in args.checkpoints]
    labels = [stem if stems.count(stem) == 1 else f"{Path(c).parent.parent.name}/{stem}"
              for stem, c in zip(stems, args.checkpoints)]  # runs/x/checkpoints/iter_0200.pt -> x/iter_0200
    candidates = [(name, None) for name in args.models] + list(zip(labels, args.checkpoints))
    for label, path in candidates:
        torch.manual_seed(args.seed)
        model = load_checkpoint(path).model if path else GraphNet(ModelConfig.from_name(label))
        say(f"{label}: {num_parameters(model):,} parameters")
        row = train(model, train_boards, test_boards, args.seconds, args.seed, say=say)
        row["parameters"] = num_parameters(model)
        row["model"] = model.config.name
        results["candidates"][label] = row
    print(f"{'candidate':<20} {'params':>8} {'steps':>6} {'pos/cpu-s':>9} " + " ".join(
        f"{b.spec + ' sign':>11} {'mse':>5}" for b in test_boards) + f" {'all sign':>8}")
    for label, row in results["candidates"].items():
        final = row["final"]
        print(f"{label:<20} {row['parameters']:>8,} {row['steps']:>6} {row['positions_per_cpu_s']:>9.0f} " + " ".join(
            f"{final[b.spec]['sign']:>11.3f} {final[b.spec]['mse']:>5.3f}" for b in test_boards) + f" {final['all']['sign']:>8.3f}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    say(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
