#!/usr/bin/env python3
"""LoRA fine-tuning of a frozen transformer encoder: fe's `Estimator.fit` next to a hand-written torch loop.

Run from the repository root with an environment that has fe-core and fe-torch:

    .venvs/fe/bin/python tools/bench/bench_frozen_encoder.py [--pairs 8] [--steps 8] [--dim 256] [--depth 12]
        [--tokens 64] [--threads 1] [--deterministic] [--quick]

The pattern of FastEstimator's LoRA app (a SAM ViT image encoder with LoRA adapters, batch 1), at a size this
machine runs in seconds: `--depth` pre-norm blocks (nn.MultiheadAttention with 8 heads, a 4x MLP) of width `--dim`
over `--tokens` tokens, every weight frozen (`requires_grad=False`), rank-4 LoRA adapters on both Linear layers of
each block's MLP and a trainable classification head; batch 1, Adam(1e-3) built on all parameters (as
`fe.build(optimizer_fn=lambda p: Adam(p))` does), cross entropy from logits.

  fe:   Pipeline(NumpyDataset, batch 1) -> ModelOp -> CrossEntropy(from_logits) -> UpdateOp, `fit()` with
        log_steps=None; each training epoch (`--steps` steps) is timed by a trace and paired with an epoch of
        the hand-written loop (tools/bench/pairing.py: order alternating, position bias cancelled);
  hand: the same batches as tensors, forward, `F.cross_entropy`, `torch.autograd.grad` of the trainable
        parameters, optimizer step.

Besides the rates, it counts what each side runs: calls of the encoder's forward and backward passes through it
(an identity autograd function on the encoder's output), per training step and in fe's warmup. Both should be one
forward and one backward per step, and fe's warmup one forward and no backward (the UpdateOp's warmup check finds
the LoRA weights in the recorded graph without a backward pass). `--deterministic` calls `enable_deterministic`
first (deterministic torch algorithms on both sides). Single-threaded (OMP_NUM_THREADS=1, torch threads 1) unless
`--threads` says otherwise (both sides then share that many torch threads: on a machine busy with other work, compare
runs with 1 thread and with the core count to see what oversubscription costs).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import PAIRED_HEADER, machine_line, print_table, summarize_pairs  # noqa: E402
from pairing import PairedEpochs  # noqa: E402

CLASSES, RANK, HEADS = 10, 4, 8


def make_model_fn(dim: int, depth: int, counts: Dict[str, int]) -> Any:
    """A function building the frozen encoder with LoRA adapters; `counts` receives forward / backward counts."""
    import torch  # pylint: disable=import-outside-toplevel
    from torch import nn  # pylint: disable=import-outside-toplevel

    class CountPasses(torch.autograd.Function):  # identity; counts the backward passes through the encoder's output
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:  # type: ignore[override]
            return x.view_as(x)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:  # type: ignore[override]
            counts["backward"] += 1
            return grad

    class LoRALinear(nn.Module):
        def __init__(self, base: nn.Linear) -> None:
            super().__init__()
            self.base = base
            self.down = nn.Linear(base.in_features, RANK, bias=False)
            self.up = nn.Linear(RANK, base.out_features, bias=False)
            nn.init.zeros_(self.up.weight)

        def forward(self, x: Any) -> Any:
            return self.base(x) + self.up(self.down(x))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = nn.MultiheadAttention(dim, HEADS, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x: Any) -> Any:
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.norm2(x))

    class LoRAEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(dim, dim)
            self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
            self.requires_grad_(False)  # the pretrained encoder stays frozen
            for block in self.blocks:
                block.mlp[0], block.mlp[2] = LoRALinear(block.mlp[0]), LoRALinear(block.mlp[2])
            self.head = nn.Linear(dim, CLASSES)

        def forward(self, x: Any) -> Any:
            counts["forward"] += 1
            out = self.head(self.blocks(self.embed(x)).mean(dim=1))
            return CountPasses.apply(out) if out.requires_grad else out

    return LoRAEncoder


def run(args: argparse.Namespace) -> List[List[str]]:
    import torch  # pylint: disable=import-outside-toplevel
    import torch.nn.functional as F  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(args.threads)
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.determinism import enable_deterministic  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.trace import Trace  # pylint: disable=import-outside-toplevel

    if args.deterministic:
        enable_deterministic(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.steps, args.tokens, args.dim)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=args.steps).astype(np.int64)

    hand_counts = {"forward": 0, "backward": 0}
    hand_model = make_model_fn(args.dim, args.depth, hand_counts)()
    optimizer = torch.optim.Adam(hand_model.parameters(), lr=1e-3)
    params = [p for p in hand_model.parameters() if p.requires_grad]
    batches = [(torch.from_numpy(x[i:i + 1]), torch.from_numpy(y[i:i + 1])) for i in range(args.steps)]

    def hand_epoch() -> float:
        hand_model.train()
        start = time.perf_counter()
        for features, labels in batches:
            loss = F.cross_entropy(hand_model(features), labels)
            grads = torch.autograd.grad(loss, params)
            for param, grad in zip(params, grads):
                param.grad = grad
            optimizer.step()
            for param in params:
                param.grad = None
        return len(batches) / (time.perf_counter() - start)

    fe_counts = {"forward": 0, "backward": 0}
    model = build(model_fn=make_model_fn(args.dim, args.depth, fe_counts),
                  optimizer_fn=lambda parameters: torch.optim.Adam(parameters, lr=1e-3))

    class WarmupCounts(Trace):
        def __init__(self) -> None:
            super().__init__(mode="train")
            self.at_start: Dict[str, int] = {}

        def on_begin(self, data: Any) -> None:  # after the warmup, before the first training step
            self.at_start = dict(fe_counts)

    paired = PairedEpochs(hand_epoch)
    warmup = WarmupCounts()
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=1)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=args.pairs, traces=[warmup, paired],
                          log_steps=None)
    start = time.perf_counter()
    estimator.fit()
    whole = time.perf_counter() - start

    fe_steps = args.pairs * args.steps
    hand_steps = len(paired.pairs) * args.steps
    workload = f"LoRA on frozen encoder {args.depth}x{args.dim}, {args.tokens} tokens, batch 1"
    rows = summarize_pairs(workload, {"fe fit": paired.pairs}, "hand-written loop")
    print(machine_line(torch=torch.__version__) + f"; torch threads {torch.get_num_threads()}"
          + ("; deterministic" if args.deterministic else ""))
    print(f"fe fit() whole run ({args.pairs} epochs x {args.steps} steps, warmup and paired hand-written epochs "
          f"included): {whole:.2f} s")
    per_step = {side: {kind: (counts[kind] - base.get(kind, 0)) / steps for kind in ("forward", "backward")}
                for side, counts, base, steps in (("fe", fe_counts, warmup.at_start, fe_steps),
                                                  ("hand-written", hand_counts, {}, hand_steps))}
    print(f"passes through the encoder: fe warmup {warmup.at_start['forward']} forward, "
          f"{warmup.at_start['backward']} backward; per training step fe {per_step['fe']['forward']:.2f} forward, "
          f"{per_step['fe']['backward']:.2f} backward; hand-written {per_step['hand-written']['forward']:.2f} "
          f"forward, {per_step['hand-written']['backward']:.2f} backward")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=8, help="fe epochs, each paired with a hand-written epoch")
    parser.add_argument("--steps", type=int, default=8, help="training steps per epoch (batch 1)")
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (both sides)")
    parser.add_argument("--deterministic", action="store_true", help="call enable_deterministic(0) first")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 pairs of 2 steps, 2 blocks of 32")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.steps, args.dim, args.depth, args.tokens = 2, 2, 32, 2, 8
    rows = run(args)
    print_table(rows, PAIRED_HEADER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
