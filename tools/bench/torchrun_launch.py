"""Start a data-parallel benchmark script again under torchrun (shared by bench_ddp, bench_ddp_input, bench_fsdp).

A script run plainly (no RANK in its environment) calls `relaunch` with its own arguments; torchrun then starts
`nproc` copies of it on 127.0.0.1 (gloo where there is no GPU), each of which finds RANK set and benchmarks.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Dict, Optional, Sequence


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
