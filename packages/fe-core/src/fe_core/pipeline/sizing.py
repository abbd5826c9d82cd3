"""How many worker processes a Pipeline starts, with which start method, and for which epochs."""
from __future__ import annotations

import json
import os
import sys
from typing import Optional

__all__ = ["MIN_WORKER_SAMPLES", "processes_on_this_node", "resolve_num_process", "start_method",
           "min_worker_samples"]

MIN_WORKER_SAMPLES = 1024  # epochs with fewer samples run in the trainer (FE_PIPELINE_MIN_WORKER_SAMPLES overrides)


def processes_on_this_node() -> int:
    """How many processes of a data-parallel run share this node: torchrun's LOCAL_WORLD_SIZE, else the TF_CONFIG
    tasks on this task's host (TensorFlow MultiWorker), else 1."""
    try:
        return max(1, int(os.environ["LOCAL_WORLD_SIZE"]))
    except (KeyError, ValueError):
        pass
    try:
        config = json.loads(os.environ.get("TF_CONFIG") or "{}")
        cluster, task = config.get("cluster") or {}, config.get("task") or {}
        host = str(cluster[task["type"]][int(task["index"])]).rsplit(":", 1)[0]
        return max(1, sum(str(address).rsplit(":", 1)[0] == host for addresses in cluster.values()
                          for address in addresses))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return 1


def resolve_num_process(num_process: Optional[int]) -> int:
    """Worker processes for `num_process` as FastEstimator documents it: None -> min(CPUs, max(32, 32 x GPUs)),
    where CPUs is this process's share of the node in a data-parallel run (the node's CPUs / the processes on it,
    `processes_on_this_node`), so the ranks' pools never oversubscribe the node."""
    if num_process is not None:
        return num_process
    from fe_core.util.devices import cpu_count, get_num_gpus  # pylint: disable=import-outside-toplevel
    try:
        gpus = get_num_gpus()
    except Exception:  # pylint: disable=broad-except  # no driver answer: count the CPUs only
        gpus = 0
    local_processes = processes_on_this_node()
    gpus = -(-gpus // local_processes)  # the GPUs this process drives
    return min(max(1, cpu_count() // local_processes), max(32, 32 * gpus))


def start_method() -> str:
    """'fork' on Linux, 'spawn' elsewhere; FE_PIPELINE_START_METHOD overrides."""
    chosen = os.environ.get("FE_PIPELINE_START_METHOD")
    if chosen:
        return chosen
    return "fork" if sys.platform.startswith("linux") else "spawn"


def min_worker_samples() -> int:
    """Epochs with fewer samples than this run in the trainer (starting processes would cost more than it saves)."""
    value = os.environ.get("FE_PIPELINE_MIN_WORKER_SAMPLES")
    return int(value) if value else MIN_WORKER_SAMPLES
