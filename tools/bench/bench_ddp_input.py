#!/usr/bin/env python3
"""The input pipeline of a data-parallel run: per-rank samples/s of fe's Pipeline (num_process 0 and N) against a
torch DataLoader with a DistributedSampler and as many workers per rank, all under 2 gloo processes on the CPU.

    .venvs/fe/bin/python tools/bench/bench_ddp_input.py [--nproc 2] [--samples 8192] [--repeats 3]
        [--processes 0 2] [--quick]

Run normally, the script starts itself under `torchrun --nproc_per_node N` (gloo, 127.0.0.1, a free port, CUDA
hidden); under torchrun every rank joins the process group the way `fit` does (`fe_torch.distributed.setup()`) and
iterates epochs of:

  fe:    FastEstimator's CIFAR-10 recipe (bench_pipeline_workers.py's Pipeline: Normalize, PadIfNeeded, RandomCrop,
         Sometimes(HorizontalFlip), CoarseDropout, ChannelTranspose, Onehot) on synthetic 32x32x3 images, global
         batch 128, inside `pipeline.workers()` and `with pipeline(mode="train", epoch=e) as loader`: each rank gets
         its part of every global batch (64 samples with 2 ranks), computed in this rank or in its worker processes.
  torch: a DataLoader over a Dataset making the same albumentations / numpy calls per sample, with a
         `DistributedSampler` (shuffled, `set_epoch` each epoch), batch 64 per rank, 0 or N persistent workers.

Configurations run round-robin after a warm-up epoch each, every epoch started on all ranks together (a barrier).
Rank 0 prints, per configuration and rank, the median and best samples/s the rank received and how many worker
processes computed for it (the child processes its first epoch started that used CPU time during the epoch), the
CPU time per sample of the rank and of those workers, and
says for each rank whether fe's workers actually ran: where fe's Pipeline runs data-parallel epochs in the training
process, fe with num_process=N shows 0 there. One thread per process (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["FE_PIPELINE_MIN_WORKER_SAMPLES"] = "0"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Set, Tuple  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data_parallel import argument_parser, relaunch, under_torchrun  # noqa: E402

GLOBAL_BATCH = 128


def launch(args: argparse.Namespace) -> int:
    """Start this script under torchrun with a free local port, CUDA hidden (gloo on the CPU)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONUNBUFFERED="1")
    return relaunch(__file__, args.nproc, ["--samples", str(args.samples), "--repeats", str(args.repeats),
                                           "--processes", *[str(value) for value in args.processes]],
                    timeout=1800, env=env)


def children() -> Set[int]:
    """This process's child processes (Linux: /proc/self/task/*/children; empty elsewhere)."""
    found: Set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as stream:
                found.update(int(pid) for pid in stream.read().split())
        except OSError:
            continue
    return found


def cpu_ticks(pids: Set[int]) -> Dict[int, int]:
    """User + system CPU clock ticks of each process (those gone are left out)."""
    ticks: Dict[int, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stream:
                fields = stream.read().rsplit(")", 1)[1].split()
            ticks[pid] = int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return ticks


class Configuration:
    """One epoch per call: (samples this rank received, seconds, worker processes that computed during the epoch,
    CPU seconds of this rank, CPU seconds of this configuration's worker processes).

    This configuration's worker processes are the child processes of this rank that appeared during its first epoch
    (the warm-up: fe's pool and the DataLoader's persistent workers start then); one counts as having computed when
    it used CPU time during the epoch.
    """

    def __init__(self, epoch: Callable[[int], Any]) -> None:
        self.epoch = epoch
        self.count = 0
        self.own: Set[int] = set()

    def __call__(self, barrier: Callable[[], None]) -> Tuple[int, float, int, float, float]:
        self.count += 1
        barrier()
        existing = children()
        before, own = cpu_ticks(self.own), time.process_time()
        received, start = 0, time.perf_counter()
        for size in self.epoch(self.count):
            received += size
        seconds = time.perf_counter() - start
        own = time.process_time() - own
        if self.count == 1:
            self.own = children() - existing
        after = cpu_ticks(self.own)
        used = {pid: ticks - before.get(pid, 0) for pid, ticks in after.items()}
        worked = sum(1 for ticks in used.values() if ticks > 0)
        workers_cpu = sum(used.values()) / os.sysconf("SC_CLK_TCK")
        return received, seconds, worked, own, workers_cpu


def benchmark(args: argparse.Namespace) -> None:
    import contextlib  # pylint: disable=import-outside-toplevel

    import numpy as np  # pylint: disable=import-outside-toplevel
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    import torch.utils.data  # pylint: disable=import-outside-toplevel
    from bench_pipeline_workers import cifar_pipeline, torch_datasets  # pylint: disable=import-outside-toplevel
    from fe_torch import distributed  # pylint: disable=import-outside-toplevel

    import cv2  # pylint: disable=import-outside-toplevel
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    communicator = distributed.setup()
    world, rank = dist.get_world_size(), dist.get_rank()
    assert communicator is not None and communicator.world_size == world
    per_rank = GLOBAL_BATCH // world
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(args.samples, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=args.samples).astype(np.int64)
    dataset = torch_datasets(x, y, np.array([], dtype=str))["cifar"]
    configurations: Dict[str, Configuration] = {}
    with contextlib.ExitStack() as stack:
        for num_process in args.processes:
            pipeline = cifar_pipeline(x, y, num_process, batch_size=GLOBAL_BATCH)
            stack.enter_context(pipeline.workers())

            def fe_epoch(epoch: int, pipeline: Any = pipeline) -> Any:
                with pipeline(mode="train", epoch=epoch) as loader:
                    for batch in loader:
                        yield len(batch["x"])
            configurations[f"fe num_process={num_process}"] = Configuration(fe_epoch)
        for workers in args.processes:
            sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
            loader = torch.utils.data.DataLoader(dataset, batch_size=per_rank, sampler=sampler, num_workers=workers,
                                                 persistent_workers=workers > 0,
                                                 prefetch_factor=2 if workers else None)

            def torch_epoch(epoch: int, loader: Any = loader, sampler: Any = sampler) -> Any:
                sampler.set_epoch(epoch)
                for batch in loader:
                    yield len(batch["x"])
            configurations[f"DistributedSampler + DataLoader workers={workers}"] = Configuration(torch_epoch)
        results: Dict[str, List[Tuple[int, float, int, float, float]]] = {name: [] for name in configurations}
        for name, run in configurations.items():  # warm-up: starts the workers
            run(dist.barrier)
        for _ in range(args.repeats):
            for name, run in configurations.items():
                results[name].append(run(dist.barrier))
        for name, run in configurations.items():
            if name.startswith("DistributedSampler"):
                iterator = getattr(run.epoch.__defaults__[0], "_iterator", None)  # type: ignore[index]
                if iterator is not None:
                    iterator._shutdown_workers()  # pylint: disable=protected-access
    gathered: List[Any] = [None] * world
    dist.all_gather_object(gathered, results)
    if rank == 0:
        print(f"bench_ddp_input: {world} processes (gloo, CPU), torch {torch.__version__}, CIFAR-10 recipe, "
              f"{args.samples} samples, global batch {GLOBAL_BATCH} ({per_rank} per rank), {args.repeats} timed "
              f"epochs per configuration (round-robin, after a warm-up epoch each)")
        header = ("configuration", "rank", "median samples/s", "best samples/s", "samples per epoch",
                  "workers that computed", "CPU us/sample: rank + workers")
        rows = [list(header)]
        medians: Dict[str, List[float]] = {}
        for rank_index, per_config in enumerate(gathered):
            for name, epochs in per_config.items():
                rates = [epoch[0] / epoch[1] for epoch in epochs]
                samples = sum(epoch[0] for epoch in epochs)
                own = 1e6 * sum(epoch[3] for epoch in epochs) / samples
                workers_cpu = 1e6 * sum(epoch[4] for epoch in epochs) / samples
                medians.setdefault(name, []).append(statistics.median(rates))
                rows.append([name, str(rank_index), f"{statistics.median(rates):,.0f}", f"{max(rates):,.0f}",
                             str(epochs[0][0]), str(max(epoch[2] for epoch in epochs)),
                             f"{own:,.0f} + {workers_cpu:,.0f}"])
        widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
        for index, row in enumerate(rows):
            print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths)))
            if index == 0:
                print("-+-".join("-" * width for width in widths))
        for workers in args.processes:
            fe_name, torch_name = f"fe num_process={workers}", f"DistributedSampler + DataLoader workers={workers}"
            ratio = statistics.median(medians[fe_name]) / statistics.median(medians[torch_name])
            print(f"  per rank, {fe_name} / {torch_name}: {ratio:.2f}x (median over ranks of the median epochs)")
        if len(args.processes) > 1:
            reference, largest = f"fe num_process={args.processes[0]}", f"fe num_process={max(args.processes)}"
            ratio = statistics.median(medians[largest]) / statistics.median(medians[reference])
            print(f"  per rank, {largest} / {reference}: {ratio:.2f}x")
        for rank_index, per_config in enumerate(gathered):
            for workers in args.processes:
                seen = max(epoch[2] for epoch in per_config[f"fe num_process={workers}"])
                if workers > 0:
                    print(f"  rank {rank_index}: fe num_process={workers} "
                          f"{'ran ' + str(seen) + ' worker processes' if seen else 'ran NO worker process'}")


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--samples", type=int, default=8192, help="images in the dataset (all ranks together)")
    parser.add_argument("--repeats", type=int, default=3, help="timed epochs per configuration")
    parser.add_argument("--processes", type=int, nargs="+", default=[0, 2],
                        help="fe num_process values and DataLoader workers per rank (default 0 2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 512 samples, one timed epoch")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.repeats = 512, 1
    if not under_torchrun():
        return launch(args)
    benchmark(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
