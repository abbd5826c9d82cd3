"""Hardware: how many GPUs (`get_num_gpus`, `get_num_devices`), what they are (`get_gpu_info`), and how many CPUs
this process may use (`cpu_count`, which can also cap the frameworks' thread pools).

None of these imports a framework. When torch or TensorFlow is already loaded, GPUs are counted the way that framework
sees them (it honours CUDA_VISIBLE_DEVICES and its own device settings); otherwise the NVIDIA driver is asked
(`nvidia-smi`, then /proc/driver/nvidia/gpus), restricted by CUDA_VISIBLE_DEVICES.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import List, Optional

from fe_core.export import fe_export
from fe_core.util._framework_util import loaded_util_modules

__all__ = ["get_num_gpus", "get_num_devices", "get_gpu_info", "cpu_count"]

_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")
_cpu_limit: Optional[int] = None


def _nvidia_smi(*query: str) -> Optional[List[str]]:
    executable = shutil.which("nvidia-smi")
    if executable is None:
        return None
    try:
        result = subprocess.run([executable, *query], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def _visible(indices: List[int]) -> List[int]:
    """The physical GPU indices CUDA_VISIBLE_DEVICES leaves visible (all when it is unset)."""
    setting = os.environ.get("CUDA_VISIBLE_DEVICES")
    if setting is None:
        return indices
    visible = []
    for token in setting.split(","):
        token = token.strip()
        if not token.isdigit():  # '-1', '' or a UUID list we cannot map: CUDA stops at the first invalid entry
            break
        if int(token) in indices and int(token) not in visible:
            visible.append(int(token))
    return visible


def _driver_gpu_indices() -> List[int]:
    lines = _nvidia_smi("--query-gpu=index", "--format=csv,noheader")
    if lines is not None:
        return [int(line) for line in lines if line.isdigit()]
    try:
        return list(range(len(os.listdir("/proc/driver/nvidia/gpus"))))
    except OSError:
        return []


@fe_export("fe.util.util.get_num_gpus", "fe.util.get_num_gpus")
def get_num_gpus() -> int:
    """Get the number of GPUs available.

    Returns:
        The number of GPUs available (0 on a machine without any).
    """
    for backend in loaded_util_modules("devices"):
        return backend.get_num_gpus()
    return len(_visible(_driver_gpu_indices()))


@fe_export("fe.util.util.get_num_devices", "fe.util.get_num_devices")
def get_num_devices() -> int:
    """Determine the number of available devices to train on.

    Returns:
        The number of available GPUs, or 1 if none are found (the CPU).
    """
    return max(get_num_gpus(), 1)


@fe_export("fe.util.util.get_gpu_info")
def get_gpu_info() -> List[str]:
    """Get summaries of all of the GPUs accessible on this machine.

    Example:
        >>> get_gpu_info()  # doctest: +SKIP
        ['GPU 0: NVIDIA H100 80GB HBM3 (81559 MiB)']

    Returns:
        A formatted summary of the GPUs available on the machine (one list entry per GPU; empty without GPUs).
    """
    lines = _nvidia_smi("--query-gpu=index,name,memory.total", "--format=csv,noheader")
    if lines is not None:
        visible = set(_visible([int(line.split(",")[0]) for line in lines if line.split(",")[0].isdigit()]))
        summaries = []
        for line in lines:
            index, name, memory = (part.strip() for part in (line.split(",") + ["", ""])[:3])
            if index.isdigit() and int(index) in visible:
                summaries.append(f"GPU {index}: {name} ({memory.replace(' ', '')})")
        return summaries
    for backend in loaded_util_modules("devices"):
        return backend.get_gpu_info()
    return []


def _cgroup_cpus() -> Optional[float]:
    """The CPU quota of this container (cgroup v2 cpu.max, or v1 cfs quota/period), or None when unlimited."""
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as stream:
            quota, period = stream.read().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", encoding="ascii") as stream:
            quota_us = int(stream.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us", encoding="ascii") as stream:
            period_us = int(stream.read())
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    except (OSError, ValueError):
        return None


def _available_cpus() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        cores = min(cores, max(1, int(quota)))
    return max(1, cores)


@fe_export("fe.util.util.cpu_count", "fe.util.cpu_count")
def cpu_count(limit: Optional[int] = None) -> int:
    """Determine the number of available CPUs (correcting for CPU affinity and docker container limits).

    With a `limit`, torch and TensorFlow are told to use at most that many threads: the frameworks already loaded at
    once, the others through the environment variables they read at import (OMP_NUM_THREADS, MKL_NUM_THREADS,
    OPENBLAS_NUM_THREADS, TF_NUM_INTRAOP_THREADS). A limit is enforced once per process; later calls without a limit
    return it.

    Example:
        >>> cpu_count() >= 1
        True

    Args:
        limit: If provided, the TF and Torch backends will be told to use `limit` number of threads, or the available
            number of cpus if the latter is lower (`limit` cannot raise the number of threads).

    Returns:
        The number of available CPUs (correcting for docker container limits), or the enforced limit.

    Raises:
        ValueError: If a `limit` is provided which doesn't match previously enforced limits, or is not positive.
    """
    global _cpu_limit  # pylint: disable=global-statement
    cores = _available_cpus()
    if limit is None:
        return _cpu_limit if _cpu_limit is not None else cores
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"cpu_count: limit must be a positive int, got {limit!r}")
    threads = min(limit, cores)
    if _cpu_limit is not None:
        if threads != _cpu_limit:
            raise ValueError(f"cpu_count: a limit of {_cpu_limit} thread(s) is already enforced in this process; "
                             f"it cannot be changed to {threads} (limit={limit})")
        return _cpu_limit
    for name in _THREAD_ENV:
        os.environ[name] = str(threads)
    os.environ["TF_NUM_INTEROP_THREADS"] = str(threads)
    for backend in loaded_util_modules("devices"):
        backend.set_cpu_threads(threads)
    _cpu_limit = threads
    return threads
