"""Randomness every process of one data-parallel launch draws alike, for building datasets.

A FastEstimator script builds its datasets before training, often with unseeded randomness
(`test_data = eval_data.split(0.5)`). Under `torchrun` or a multi-worker `TF_CONFIG` every process runs the script,
and each process's numpy generator starts from its own entropy, so each would build different datasets: eval and test
sets that differ per process and overlap another process's training data. fe's own unseeded draws while building
datasets therefore come from `unseeded_random_state()`: numpy's global generator in a single process (as in
FastEstimator), and in a launch of several processes a generator seeded from what every process of the launch shares
(the launcher's rendezvous address, port and run id, or the TF_CONFIG cluster; the seed of `enable_deterministic` when
one was given), advanced by how many such draws the process made before, so the n-th draw is the same in every
process.

Example:
    >>> launch_key({}) is None  # a single process
    True
    >>> launch_key({"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"})
    'torchrun|2|10.0.0.1|29500|'
    >>> unseeded_random_state({}) is np.random
    True
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
from typing import Any, Mapping, Optional

import numpy as np

from fe_core.determinism import deterministic_seed
from fe_core.distributed.communicator import launcher_env

__all__ = ["launch_key", "unseeded_random_state"]

_counter = itertools.count()
_lock = threading.Lock()


def _tf_cluster(environ: Mapping[str, str]) -> Optional[str]:
    raw = environ.get("TF_CONFIG")
    if not raw:
        return None
    try:
        cluster = (json.loads(raw) or {}).get("cluster", {}) or {}
    except (ValueError, AttributeError):
        return None
    if len(cluster.get("chief", []) or []) + len(cluster.get("worker", []) or []) < 2:
        return None
    return json.dumps(cluster, sort_keys=True)


def launch_key(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """What every process of this data-parallel launch has in common, or None when this is a single process.

    Args:
        environ: The environment to read (default: `os.environ`).

    Returns:
        A string that is the same in every process of the launch (it never contains the process's rank).
    """
    env = os.environ if environ is None else environ
    key = None
    try:
        torch_launch = launcher_env(dict(env))
    except ValueError:
        torch_launch = None
    if torch_launch is not None:
        key = "|".join(["torchrun", str(torch_launch["world_size"]), str(torch_launch["master_addr"]),
                        str(torch_launch["master_port"]), env.get("TORCHELASTIC_RUN_ID", "")])
    else:
        cluster = _tf_cluster(env)
        if cluster is not None:
            key = "tf|" + cluster
    if key is not None and deterministic_seed() is not None:
        key = f"seed|{deterministic_seed()}"  # repeatable from launch to launch, like a single deterministic process
    return key


def unseeded_random_state(environ: Optional[Mapping[str, str]] = None) -> Any:
    """The generator for a random choice a dataset makes without a seed (a split, a loader's shuffle).

    Returns:
        `numpy.random` itself (the global generator) in a single process; in a data-parallel launch a fresh
        `numpy.random.RandomState` that is the same in every process for the same (n-th) call.
    """
    key = launch_key(environ)
    if key is None:
        return np.random
    with _lock:
        count = next(_counter)
    digest = hashlib.sha256(f"{key}|{count}".encode()).digest()
    return np.random.RandomState(int.from_bytes(digest[:4], "little"))
