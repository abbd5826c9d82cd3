#!/usr/bin/env python3
"""Sharded (FSDP2) vs replicated (DDP) training on 2 gloo processes: memory per process, and fe's step time vs a
hand-written FSDP2 loop in the same processes.

    .venvs/torch/bin/python tools/bench/bench_fsdp.py [--nproc 2] [--width 4096] [--layers 7] [--epochs 7] [--quick]

Run normally, the script starts itself under `torchrun --nproc_per_node N` (gloo, CPU, 127.0.0.1, a free port).

1. Memory: an MLP of `--layers` Linear layers of width `--width` (6 x 4096 x 4096 + 4096 x 10: 100.7M parameters),
   one Adam step by each engine, one after the other in the same processes: the bytes each process holds in
   parameters, gradients and optimizer state right after the step (before the gradients are dropped), counted from
   the tensors (a DTensor counts its local slice; DDP's gradient buckets are counted too), and the process's peak RSS
   after each phase (FSDP first, so its peak is its own). fe's sharded model is measured the same way after one
   `fit` step (fe drops gradients after each step, so its gradients are counted as one slice per parameter).
2. Step time: a smaller MLP (`--time_width`, 4 layers) sharded with one unit per Linear layer, Adam, global batch 64:
   fe (`build(sharding=FSDP(...))`, ModelOp -> CrossEntropy -> UpdateOp, `Estimator.fit`) with each epoch paired with
   an epoch of a hand-written FSDP2 loop (`fully_shard` per layer then the root, forward, cross entropy,
   `zero_grad(set_to_none=True)`, `backward`, `step`), on every rank in step (pairing.py). Rank 0 prints the medians
   and the median per-pair ratio fe / hand-written. One thread per process (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_parallel import (argument_parser, hand_written_epochs, print_paired_rates, relaunch,  # noqa: E402
                           under_torchrun)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

CLASSES = 10


def mlp(width: int, layers: int) -> torch.nn.Module:
    blocks = []
    for _ in range(layers - 1):
        blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*blocks, torch.nn.Linear(width, CLASSES))


def launch(args: argparse.Namespace) -> int:
    return relaunch(__file__, args.nproc, ["--width", str(args.width), "--layers", str(args.layers), "--epochs",
                                           str(args.epochs), "--time_width", str(args.time_width), "--steps",
                                           str(args.steps)], timeout=3600)


def _local(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def _bytes(tensors) -> int:
    return sum(_local(t).numel() * _local(t).element_size() for t in tensors if isinstance(t, torch.Tensor))


def accounting(model: torch.nn.Module, optimizer: torch.optim.Optimizer, grads_as_params: bool = False,
               ddp: torch.nn.Module = None) -> Dict[str, int]:
    params = list(model.parameters())
    grads = _bytes(params) if grads_as_params else _bytes(p.grad for p in params)
    if ddp is not None:  # DDP's flat gradient buckets (copies of the gradients, unless gradient_as_bucket_view)
        reducer = getattr(ddp, "reducer", None)
        buckets = getattr(reducer, "_get_zeros_like_grad_buckets", None)
        grads += sum(bucket.buffer().numel() * bucket.buffer().element_size() for bucket in buckets()) if buckets \
            else 0
    state = _bytes(value for entry in optimizer.state.values() for value in entry.values())
    return {"params": _bytes(params), "grads": grads, "optimizer": state}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory(width: int, layers: int, rank: int, world: int) -> Dict[str, Dict[str, float]]:
    from torch.distributed.fsdp import fully_shard  # pylint: disable=import-outside-toplevel
    generator = torch.Generator().manual_seed(0)  # the same data on every rank
    x = torch.randn(8, width, generator=generator)
    y = torch.randint(0, CLASSES, (8,), generator=generator)
    results: Dict[str, Dict[str, float]] = {}

    # hand-written FSDP2: one unit per Linear layer, then the root
    torch.manual_seed(0)
    model = mlp(width, layers)
    for module in model:
        if isinstance(module, torch.nn.Linear):
            fully_shard(module)
    fully_shard(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    results["FSDP2"] = dict(accounting(model, optimizer), rss=peak_rss_mb())
    del model, optimizer
    gc.collect()

    # fe: build(sharding=...) and one training step through Estimator.fit
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_torch.network import TorchNetwork  # pylint: disable=import-outside-toplevel
    from fe_torch.sharding import FSDP  # pylint: disable=import-outside-toplevel
    model = build(model_fn=lambda: mlp(width, layers), optimizer_fn=lambda p: torch.optim.Adam(p, lr=1e-4),
                  model_name="fe_big", sharding=FSDP(min_params=width * width))
    pipeline = Pipeline(train_data=NumpyDataset({"x": x.numpy().repeat(world, 0), "y": y.numpy().repeat(world)}),
                        batch_size=8 * world)
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="logits"),
                                CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None).fit(warmup=False)
    results["fe sharded"] = dict(accounting(model, model.current_optimizer, grads_as_params=True), rss=peak_rss_mb())
    del model, network, pipeline
    gc.collect()

    # DDP: every process holds the whole model, its gradients (and their buckets) and the whole Adam state
    torch.manual_seed(0)
    model = mlp(width, layers)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    F.cross_entropy(ddp(x), y).backward()
    optimizer.step()
    results["DDP"] = dict(accounting(model, optimizer, ddp=ddp), rss=peak_rss_mb())
    del ddp, model, optimizer
    gc.collect()
    return results


def step_time(width: int, epochs: int, steps: int, rank: int, world: int) -> Dict[str, list]:
    from torch.distributed.fsdp import fully_shard  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_torch.network import TorchNetwork  # pylint: disable=import-outside-toplevel
    from fe_torch.sharding import FSDP  # pylint: disable=import-outside-toplevel
    from pairing import PairedEpochs  # pylint: disable=import-outside-toplevel

    global_batch = 64
    samples = steps * global_batch
    rng = np.random.RandomState(0)
    x = rng.normal(size=(samples, width)).astype(np.float32)
    y = rng.randint(0, CLASSES, size=samples).astype(np.int64)
    model = build(model_fn=lambda: mlp(width, 4), optimizer_fn=lambda p: torch.optim.Adam(p, lr=1e-3),
                  model_name="fe_mlp", sharding=FSDP(min_params=width * width))
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=global_batch)
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="logits"),
                                CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])

    torch.manual_seed(0)
    hand = mlp(width, 4)
    for module in hand:
        if isinstance(module, torch.nn.Linear) and module.weight.numel() >= width * width:
            fully_shard(module)
    fully_shard(hand)
    optimizer = torch.optim.Adam(hand.parameters(), lr=1e-3)
    hand_epoch = hand_written_epochs(hand, optimizer, torch.from_numpy(x), torch.from_numpy(y), global_batch, rank,
                                     world)

    paired = PairedEpochs(hand_epoch, lambda: None)
    Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[paired], log_steps=None).fit(warmup=False)
    return {"pairs": paired.pairs[1:]}


def benchmark(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    from fe_torch import distributed  # pylint: disable=import-outside-toplevel
    distributed.setup()
    rank, world = dist.get_rank(), dist.get_world_size()
    mem = memory(args.width, args.layers, rank, world)
    timing = step_time(args.time_width, args.epochs, args.steps, rank, world)
    gathered = [None] * world
    dist.all_gather_object(gathered, mem)
    if rank != 0:
        return
    count = sum(p.numel() for p in mlp(args.width, args.layers).parameters())
    print(f"bench_fsdp: {world} processes (gloo, cpu), torch {torch.__version__}")
    print(f"memory: MLP {args.layers} x Linear({args.width}, {args.width}) ({count / 1e6:.1f}M parameters), Adam, "
          f"one step of batch 8; MB per process (rank 0 | rank 1 ...)")
    print("| engine | params | grads | optimizer | params + grads + optimizer | peak RSS |")
    print("|---|---|---|---|---|---|")
    for engine in ("DDP", "FSDP2", "fe sharded"):
        cells = [" / ".join(f"{part[engine][key] / 2 ** 20:,.0f}" for part in gathered)
                 for key in ("params", "grads", "optimizer")]
        total = " / ".join(f"{sum(part[engine][key] for key in ('params', 'grads', 'optimizer')) / 2 ** 20:,.0f}"
                           for part in gathered)
        rss = " / ".join(f"{part[engine]['rss']:,.0f}" for part in gathered)
        print(f"| {engine} | {' | '.join(cells)} | {total} | {rss} |")
    ddp_total = sum(gathered[0]["DDP"][key] for key in ("params", "grads", "optimizer"))
    fe_total = sum(gathered[0]["fe sharded"][key] for key in ("params", "grads", "optimizer"))
    print(f"  fe sharded / DDP (params + grads + optimizer, rank 0): {fe_total / ddp_total:.3f}x")
    pairs = timing["pairs"]
    print(f"step time: MLP 4 x Linear({args.time_width}), global batch 64, {args.steps} steps/epoch, "
          f"{len(pairs)} paired epochs")
    print_paired_rates("fe (build(sharding=FSDP(...)))", "hand-written FSDP2 loop", pairs, digits=2, ratio_unit="x")


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--width", type=int, default=4096, help="memory model: width of its Linear layers")
    parser.add_argument("--layers", type=int, default=7,
                        help="memory model: number of Linear layers (the last one has 10 outputs)")
    parser.add_argument("--time_width", type=int, default=512, help="step-time model: width of its 4 Linear layers")
    parser.add_argument("--steps", type=int, default=16, help="step-time model: steps per epoch")
    parser.add_argument("--epochs", type=int, default=7, help="paired epochs (the first pair is warmup)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test, not figures to report")
    args = parser.parse_args()
    if args.quick:
        args.width, args.layers, args.time_width, args.steps, args.epochs = 64, 3, 32, 4, 3
    if not under_torchrun():
        return launch(args)
    benchmark(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
