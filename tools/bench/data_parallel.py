"""What the data-parallel benchmarks share (bench_ddp, bench_ddp_input, bench_fsdp): starting the script again under
torchrun, the hand-written data-parallel training epoch fe is compared with, and the lines reporting the pairs.

A script run plainly (no RANK in its environment) calls `relaunch` with its own arguments; torchrun then starts
`nproc` copies of it on 127.0.0.1 (gloo where there is no GPU), each of which finds RANK set and benchmarks.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from typing import Any, Callable, Dict, Optional, Sequence, Tuple


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def argument_parser(doc: Optional[str]) -> argparse.ArgumentParser:
    """The command line of a data-parallel benchmark: its docstring as help, and --nproc."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nproc", type=int, default=2, help="processes (torchrun --nproc_per_node)")
    return parser


def under_torchrun() -> bool:
    """Whether this process is one of torchrun's (its launcher set RANK)."""
    return "RANK" in os.environ


def relaunch(script: str, nproc: int, arguments: Sequence[str], timeout: float,
             env: Optional[Dict[str, str]] = None) -> int:
    """Run `script` with `arguments` under torchrun (`python -m torch.distributed.run`, so the torchrun of this
    interpreter) with `nproc` processes and a free local port; print the command first. Returns its exit code."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc), "--master_addr",
               "127.0.0.1", "--master_port", str(free_port()), script, *arguments]
    print("$ " + " ".join(command), flush=True)
    return subprocess.run(command, check=False, timeout=timeout, env=env).returncode


def hand_written_epochs(model: Any, optimizer: Any, x: Any, y: Any, global_batch: int, rank: int, world: int,
                        device: Any = None) -> Callable[[], float]:
    """A function running one epoch of the hand-written data-parallel loop over the tensors `x`, `y` (all samples,
    on `device`) and returning its steps/sec: each epoch's order is a permutation seeded by the epoch's number (the
    same on every rank), each rank trains on its slice of every global batch (cross entropy, `optimizer.step()`)."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch.nn.functional as F  # pylint: disable=import-outside-toplevel
    samples = len(x)
    generator = torch.Generator()
    per_rank = global_batch // world
    count = [0]
    cuda = device is not None and torch.device(device).type == "cuda"

    def epoch() -> float:
        count[0] += 1
        generator.manual_seed(count[0])  # the same order on every rank
        start = time.perf_counter()
        order = torch.randperm(samples, generator=generator)
        steps = 0
        for begin in range(0, samples, global_batch):
            local = order[begin + rank * per_rank:begin + (rank + 1) * per_rank]
            if device is not None:
                local = local.to(device)
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[local]), y[local]).backward()
            optimizer.step()
            steps += 1
        if cuda:
            torch.cuda.synchronize()
        return steps / (time.perf_counter() - start)

    return epoch


def print_paired_rates(fe_label: str, hand_label: str, pairs: Sequence[Tuple[float, float]], digits: int = 1,
                       ratio_unit: str = "") -> None:
    """Print fe's and the hand-written loop's steps/sec (median and best over the (fe, hand) `pairs`) and the ratios:
    the median of the per-pair ratios and best/best."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    fe_rates, hand_rates = [fe for fe, _ in pairs], [hand for _, hand in pairs]
    ratios = [fe / hand for fe, hand in pairs]
    width = max(len(fe_label), len(hand_label)) + 2
    for label, rates in ((fe_label, fe_rates), (hand_label, hand_rates)):
        print(f"  {label + ':':<{width}} median {np.median(rates):8.{digits}f} steps/s   best "
              f"{max(rates):8.{digits}f}")
    print(f"  fe / hand-written: median of per-pair ratios {np.median(ratios):.3f}{ratio_unit}   "
          f"best/best {max(fe_rates) / max(hand_rates):.3f}{ratio_unit}")
