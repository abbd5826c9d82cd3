#!/usr/bin/env python3
"""fe under torchrun (DistributedDataParallel) next to a hand-written DDP training loop, in the same processes.

    .venvs/torch/bin/python tools/bench/bench_ddp.py [--nproc 2] [--epochs 10] [--quick]

Run normally, the script starts itself under `torchrun --nproc_per_node N` (gloo on CPUs, NCCL on GPUs, 127.0.0.1 and
a free port); under torchrun it benchmarks. Both sides use the same processes, data and global batch:

  an MLP Linear(64, 256) - ReLU - Linear(256, 256) - ReLU - Linear(256, 10) logits, Adam(lr=1e-3), 4096 synthetic
  samples, global batch 128 (64 per process with 2 processes), 32 steps per epoch.

The hand-written loop is what a careful user writes: the data as tensors, one `torch.randperm` per epoch from a
generator seeded alike on every rank, each rank slicing its half of every global batch, the model wrapped in
`DistributedDataParallel`, forward, cross entropy, `zero_grad(set_to_none=True)`, `backward`, `step`. fe runs an
unchanged script: `Estimator.fit` with the data in a `NumpyDataset`, ModelOp -> CrossEntropy -> UpdateOp, no eval
data and `log_steps=None`; fe notices torchrun, wraps the model in DDP and splits each global batch itself.

Each fe epoch is paired with one hand-written epoch run right after it (or right before it, every other pair; see
pairing.py), on every rank in step; the first pair (warmup) is left out. Rank 0 prints the median epoch rates and
the median of the per-pair ratios fe / hand-written (1.0 = as fast). One thread per process (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_parallel import (argument_parser, hand_written_epochs, print_paired_rates, relaunch,  # noqa: E402
                           under_torchrun)

import numpy as np  # noqa: E402
import torch  # noqa: E402

SAMPLES, FEATURES, CLASSES, GLOBAL_BATCH = 4096, 64, 10, 128


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                               torch.nn.ReLU(), torch.nn.Linear(256, CLASSES))


def launch(args: argparse.Namespace) -> int:
    """Start this script under torchrun with a free local port."""
    return relaunch(__file__, args.nproc, ["--epochs", str(args.epochs)], timeout=1800)


def benchmark(epochs: int) -> None:
    torch.set_num_threads(1)
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.distributed import get_communicator  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_torch.network import TorchNetwork  # pylint: disable=import-outside-toplevel
    from pairing import PairedEpochs  # pylint: disable=import-outside-toplevel

    rng = np.random.RandomState(0)
    x = rng.normal(size=(SAMPLES, FEATURES)).astype(np.float32)
    y = rng.randint(0, CLASSES, size=SAMPLES).astype(np.int64)

    # ----- fe: an unchanged script (fe joins torchrun's process group in build)
    model = build(model_fn=mlp, optimizer_fn=lambda params: torch.optim.Adam(params, lr=1e-3), model_name="fe_mlp")
    comm = get_communicator()
    world, rank = comm.world_size, comm.rank
    device = next(model.parameters()).device
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=GLOBAL_BATCH)
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])

    # ----- hand-written DDP loop
    hand_model = mlp().to(device)
    hand_model.load_state_dict(model.state_dict())
    ddp = torch.nn.parallel.DistributedDataParallel(hand_model, device_ids=[device.index] if device.type == "cuda"
                                                    else None)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    hand_epoch = hand_written_epochs(ddp, optimizer, xt, yt, GLOBAL_BATCH, rank, world, device=device)

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    paired = PairedEpochs(hand_epoch, sync)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[paired], log_steps=None)
    estimator.fit(warmup=False)
    if rank == 0:
        pairs = paired.pairs[1:]
        print(f"bench_ddp: {world} processes ({'NCCL' if device.type == 'cuda' else 'gloo'}, {device.type}), "
              f"torch {torch.__version__}, MLP 64-256-256-10, global batch {GLOBAL_BATCH}, "
              f"{SAMPLES // GLOBAL_BATCH} steps/epoch, {len(pairs)} paired epochs")
        print_paired_rates("fe (torchrun, DDP inside)", "hand-written DDP loop", pairs)


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--epochs", type=int, default=11, help="epochs (the first pair is warmup)")
    parser.add_argument("--quick", action="store_true", help="5 epochs: a smoke test, not figures to report")
    args = parser.parse_args()
    if args.quick:
        args.epochs = 5
    if not under_torchrun():
        return launch(args)
    benchmark(args.epochs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
