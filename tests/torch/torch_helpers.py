"""Helpers for fe-torch's tests: tiny synthetic data, parameter snapshots, the GPU marker and torchrun."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pytest
import torch

from process_helpers import launch, run_processes

HAS_CUDA = torch.cuda.is_available()
#: Tests that need a GPU: marked `gpu` (deselected by default) and skipped on machines without CUDA.
requires_gpu = [pytest.mark.gpu,
                pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU; this machine has none")]


def image_task(n: int, seed: int, classes: int = 10, noise: float = 1.2) -> Tuple[np.ndarray, np.ndarray]:
    """A synthetic image classification task: each class is a fixed random 28x28 pattern, shown with a random
    brightness and lots of Gaussian noise (learnable, not trivial: single pixels are useless, and a freshly
    initialised LeNet is at chance).

    Returns:
        x of shape (n, 1, 28, 28) float32 and y of shape (n,) int64.
    """
    patterns = np.random.default_rng(1234).normal(0.0, 1.0, (classes, 1, 28, 28)).astype(np.float32)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    brightness = rng.uniform(0.5, 1.5, (n, 1, 1, 1)).astype(np.float32)
    x = patterns[y] * brightness + rng.normal(0.0, noise, (n, 1, 28, 28)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.int64)


def batches(arrays: Dict[str, np.ndarray], batch_size: int) -> List[Dict[str, Any]]:
    """Cut equally long arrays into a list of batch dicts."""
    n = len(next(iter(arrays.values())))
    return [{key: value[i:i + batch_size] for key, value in arrays.items()} for i in range(0, n, batch_size)]


def parameters_of(model: torch.nn.Module) -> List[torch.Tensor]:
    """Copies of a model's parameters."""
    return [p.detach().clone() for p in model.parameters()]


def assert_same_tensors(left: List[torch.Tensor], right: List[torch.Tensor]) -> None:
    assert len(left) == len(right)
    for a, b in zip(left, right):
        assert torch.equal(a.cpu(), b.cpu())


def optimizer_state_tensors(optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """Every tensor (and number, as a tensor) of an optimizer's state, in a fixed order."""
    values: List[torch.Tensor] = []
    state = optimizer.state_dict()["state"]
    for index in sorted(state):
        for key in sorted(state[index]):
            value = state[index][key]
            values.append(value.detach().clone().cpu() if isinstance(value, torch.Tensor) else torch.tensor(value))
    return values


#: Whether this torch has FSDP2 (`fully_shard`, torch >= 2.6), which fe's sharding needs (older: refused in one line).
HAS_FSDP2 = tuple(int("".join(c for c in part if c.isdigit()) or 0)
                  for part in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 6)
NO_FSDP2 = f"sharding needs torch >= 2.6 (FSDP2); this is torch {torch.__version__}, where fe refuses it"

TORCHRUN = Path(sys.executable).with_name("torchrun")
#: Variables a surrounding launcher may have set; a test's torchrun sets its own.
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def torchrun(out: Path, script: Union[Path, Sequence[str]], nproc: int = 2, timeout: float = 240,
             cwd: Optional[Path] = None, **env: str) -> Tuple[int, str]:
    """Run `script` (a path, or torchrun's arguments after the options, e.g. ["-m", "fe.cli", ...]) under torchrun
    on 127.0.0.1 with `nproc` processes, writing into `out` (FE_T_OUT, its own history database).

    Bounded: the whole process group is killed (and the test fails) after `timeout` s. Launched once more on a new
    port when the rendezvous port was taken between picking and binding it (pytest-xdist runs other tests meanwhile).

    Returns:
        (exit code, output).
    """
    out.mkdir(parents=True, exist_ok=True)
    environ = dict(os.environ, OMP_NUM_THREADS="1", FE_T_OUT=str(out), FE_HISTORY_DB=str(out / "history.db"), **env)
    for name in LAUNCHER_VARIABLES:
        environ.pop(name, None)
    target = [str(script)] if isinstance(script, Path) else list(script)

    def start(ports: List[int]) -> Tuple[List[int], List[str]]:
        command = [str(TORCHRUN), "--nproc_per_node", str(nproc), "--master_addr", "127.0.0.1", "--master_port",
                   str(ports[0])] + target
        return run_processes([command], [environ], timeout, cwd=None if cwd is None else str(cwd), what="torchrun")

    codes, outputs = launch(start)
    return codes[0], outputs[0]
