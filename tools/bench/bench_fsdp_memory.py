#!/usr/bin/env python3
"""A model of more than 2 GB of float32 weights on 2 gloo processes on the CPU: what each process holds while fe
builds and trains it sharded (with and without activation checkpointing) and replicated (DDP), and how long a
checkpoint of it takes to save and to restore.

    .venvs/torch/bin/python tools/bench/bench_fsdp_memory.py [--width 8192] [--blocks 8] [--steps 2] [--quick]

The model: `--blocks` blocks of Linear(width, width) + ReLU, then Linear(width, 10); 8 x 8192 x 8192 is 537M
parameters, 2.15 GB. Trained through fe (`fe.build` -> ModelOp -> CrossEntropy -> UpdateOp, `Estimator.fit`) with
plain SGD (no optimizer state, so the figures are weights and gradients), global batch 4, `--steps` steps.

Each configuration runs in its own `torchrun --nproc_per_node 2` (peak memory is per process): `sharded`
(`build(sharding=FSDP(min_params=width*width))`: a unit per block), `sharded + AC` (the same with
`FSDP(activation_checkpointing=[Block])`, when this fe's FSDP has that option) and `DDP` (`build` without sharding;
fe wraps it in DistributedDataParallel). Per process, from /proc/self/status: the resident memory after importing
and joining the process group (the baseline), the peak above it while `build` runs, and the peak above it while
`fit` trains (the peak is reset in between: `echo 5 > /proc/self/clear_refs`). Then `System.save_state` (a
RestoreWizard checkpoint: a sharded model's slices written by each process, a DDP model's single files by rank 0)
and `System.load_state` of it are timed, and the checkpoint's size on disk reported. Not run by CI (minutes, and
about 6.5 GB per DDP process).
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_parallel import free_port, under_torchrun  # noqa: E402

CONFIGS = ("sharded", "sharded + AC", "DDP")
CLASSES = 10


def _status(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in bytes."""
    with open("/proc/self/status", encoding="ascii") as file:
        for line in file:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_peak() -> None:
    """Make VmHWM (the peak resident memory) start again from the current resident memory (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as file:
        file.write("5")


def _tree_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def worker(args: argparse.Namespace) -> None:
    """One configuration, in each torchrun process: build, train, save and restore; rank 0 writes the figures."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_torch import distributed  # pylint: disable=import-outside-toplevel
    from fe_torch.network import TorchNetwork  # pylint: disable=import-outside-toplevel
    from fe_torch.sharding import FSDP  # pylint: disable=import-outside-toplevel

    torch.set_num_threads(1)

    class Block(torch.nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(width, width)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.linear(x))

    def model_fn() -> torch.nn.Module:
        return torch.nn.Sequential(*[Block(args.width) for _ in range(args.blocks)],
                                   torch.nn.Linear(args.width, CLASSES))

    distributed.setup()
    rank, world = dist.get_rank(), dist.get_world_size()
    sharding = None
    if args.config != "DDP":
        options = {"min_params": args.width * args.width}
        if args.config == "sharded + AC":
            if "activation_checkpointing" not in inspect.signature(FSDP).parameters:
                if rank == 0:
                    Path(args.out).write_text(json.dumps({"skipped": "this fe's FSDP has no activation_checkpointing "
                                                                     "option"}))
                return
            options["activation_checkpointing"] = [Block]
        sharding = FSDP(**options)
    # a tiny model first, so that what building imports is in the baseline
    build(model_fn=lambda: torch.nn.Linear(4, 4), optimizer_fn="sgd", model_name="warm", sharding=sharding)
    baseline = _status("VmRSS")
    _reset_peak()
    began = time.perf_counter()
    model = build(model_fn=model_fn, optimizer_fn=lambda params: torch.optim.SGD(params, lr=1e-3),
                  model_name="big", sharding=sharding)
    build_seconds = time.perf_counter() - began
    build_peak = _status("VmHWM") - baseline
    rng = np.random.RandomState(0)
    samples = 4 * args.steps
    data = NumpyDataset({"x": rng.normal(size=(samples, args.width)).astype(np.float32),
                         "y": rng.randint(0, CLASSES, size=samples).astype(np.int64)})
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="logits"),
                                CrossEntropy(inputs=("logits", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    estimator = Estimator(pipeline=Pipeline(train_data=data, batch_size=4), network=network, epochs=1,
                          log_steps=None)
    held = _status("VmRSS") - baseline
    _reset_peak()
    began = time.perf_counter()
    estimator.fit()
    train_seconds = time.perf_counter() - began
    train_peak = _status("VmHWM") - baseline
    directory = args.checkpoint
    dist.barrier()
    began = time.perf_counter()
    estimator.system.save_state(directory)
    dist.barrier()
    save_seconds = time.perf_counter() - began
    size = _tree_bytes(directory) if rank == 0 else 0
    began = time.perf_counter()
    estimator.system.load_state(directory)
    dist.barrier()
    load_seconds = time.perf_counter() - began
    figures = {"baseline": baseline, "build_peak": build_peak, "held": held, "train_peak": train_peak,
               "build_s": build_seconds, "train_s": train_seconds, "save_s": save_seconds, "load_s": load_seconds,
               "size": size}
    gathered: List[Dict[str, float]] = [{} for _ in range(world)]
    dist.all_gather_object(gathered, figures)
    if rank == 0:
        count = sum(p.numel() for p in model_fn().parameters())
        Path(args.out).write_text(json.dumps({"ranks": gathered, "parameters": count, "world": world}))


def run_config(config: str, args: argparse.Namespace, work: str) -> Dict:
    os.makedirs(work)
    out = os.path.join(work, "figures.json")
    checkpoint = os.path.join(work, "checkpoint")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(free_port()), __file__, "--config", config, "--out", out, "--checkpoint",
               checkpoint, "--width", str(args.width), "--blocks", str(args.blocks), "--steps", str(args.steps)]
    print(f"$ {' '.join(command)}", flush=True)
    done = subprocess.run(command, check=False, timeout=3600, env=dict(os.environ, FE_HISTORY_DB="off"))
    if done.returncode != 0:
        raise SystemExit(f"bench_fsdp_memory: {config} failed (exit {done.returncode})")
    result = json.loads(Path(out).read_text())
    shutil.rmtree(work, ignore_errors=True)
    return result


def report(results: Dict[str, Dict]) -> None:
    gb = 1e9
    first = next(result for result in results.values() if "ranks" in result)
    model_bytes = first["parameters"] * 4
    print(f"bench_fsdp_memory: {first['world']} processes (gloo, CPU); model {first['parameters'] / 1e6:.0f}M "
          f"parameters = {model_bytes / gb:.2f} GB float32; SGD, global batch 4")
    print("per process (rank 0 / rank 1), GB above the baseline (resident memory after imports and joining the "
          "group):")
    print("| configuration | build peak | held after build | training peak | build peak / model | training peak / "
          "DDP's | build s | train s |")
    print("|---|---|---|---|---|---|---|---|")
    ddp = results.get("DDP", {}).get("ranks")
    for config, result in results.items():
        if "ranks" not in result:
            print(f"| {config} | {result['skipped']} | | | | | | |")
            continue
        ranks = result["ranks"]

        def both(key: str, scale: float = gb, digits: int = 2) -> str:
            return " / ".join(f"{rank[key] / scale:.{digits}f}" for rank in ranks)

        of_model = " / ".join(f"{rank['build_peak'] / model_bytes:.2f}x" for rank in ranks)
        versus_ddp = " / ".join(f"{rank['train_peak'] / other['train_peak']:.2f}x" for rank, other in zip(ranks, ddp)) \
            if ddp else "-"
        print(f"| {config} | {both('build_peak')} | {both('held')} | {both('train_peak')} | "
              f"{of_model} | "
              f"{versus_ddp} | {both('build_s', 1, 1)} | {both('train_s', 1, 1)} |")
    print("checkpoint (System.save_state / load_state, every process):")
    print("| configuration | size on disk GB | save s | restore s | save GB/s | restore GB/s |")
    print("|---|---|---|---|---|---|")
    for config, result in results.items():
        if "ranks" not in result:
            continue
        rank0 = result["ranks"][0]
        print(f"| {config} | {rank0['size'] / gb:.2f} | {rank0['save_s']:.1f} | {rank0['load_s']:.1f} | "
              f"{rank0['size'] / gb / rank0['save_s']:.2f} | {rank0['size'] / gb / rank0['load_s']:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=8192, help="width of the blocks' Linear layers")
    parser.add_argument("--blocks", type=int, default=8, help="number of Linear(width, width) blocks")
    parser.add_argument("--steps", type=int, default=2, help="training steps")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"which of {', '.join(CONFIGS)} (comma-separated)")
    parser.add_argument("--quick", action="store_true", help="a tiny model: a smoke test, not figures to report")
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--checkpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.width, args.blocks = 256, 3
    if under_torchrun():
        worker(args)
        return 0
    results = {}
    root = tempfile.mkdtemp(prefix="bench_fsdp_memory-")
    try:
        for config in [name.strip() for name in args.configs.split(",")]:
            if config not in CONFIGS:
                raise SystemExit(f"bench_fsdp_memory: unknown configuration {config!r} (one of {CONFIGS})")
            results[config] = run_config(config, args, os.path.join(root, config.replace(" ", "_")))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
