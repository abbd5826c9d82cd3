"""torch devices for `fe.util`: `get_device`, GPU count and names, and the CPU thread cap of `cpu_count(limit)`."""
from __future__ import annotations

from typing import List

import torch

from fe_core.export import fe_export

__all__ = ["get_device", "get_num_gpus", "get_gpu_info", "set_cpu_threads"]


@fe_export("fe.util.util.get_device", "fe.util.get_device")
def get_device() -> torch.device:
    """Get the torch device for the current hardware: the first CUDA GPU when there is one, else Apple's MPS when
    available, else the CPU.

    Example:
        >>> get_device().type in ("cuda", "mps", "cpu")
        True

    Returns:
        The torch device most appropriate for the current hardware.
    """
    if torch.cuda.is_available():
        return torch.device("cuda:0")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def get_num_gpus() -> int:
    """How many CUDA GPUs torch can see."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def get_gpu_info() -> List[str]:
    """One 'GPU i: name (memory)' line per CUDA GPU torch can see."""
    lines = []
    for index in range(get_num_gpus()):
        properties = torch.cuda.get_device_properties(index)
        lines.append(f"GPU {index}: {properties.name} ({properties.total_memory // 2**20}MiB)")
    return lines


def set_cpu_threads(threads: int) -> None:
    """Cap torch's intra-op threads (and inter-op threads, which torch lets a process set only once)."""
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(threads)
    except RuntimeError:  # inter-op threads can no longer be changed once parallel work has started
        pass
