"""TensorFlow devices for `fe.util`: GPU count and names, and the CPU thread cap of `cpu_count(limit)`."""
from __future__ import annotations

from typing import List

import tensorflow as tf

__all__ = ["get_num_gpus", "get_gpu_info", "set_cpu_threads"]


def get_num_gpus() -> int:
    """How many GPUs TensorFlow can see."""
    return len(tf.config.list_physical_devices("GPU"))


def get_gpu_info() -> List[str]:
    """One 'GPU i: name' line per GPU TensorFlow can see."""
    lines = []
    for index, device in enumerate(tf.config.list_physical_devices("GPU")):
        details = tf.config.experimental.get_device_details(device)
        lines.append(f"GPU {index}: {details.get('device_name', device.name)}")
    return lines


def set_cpu_threads(threads: int) -> None:
    """Cap TensorFlow's intra- and inter-op thread pools (possible only before TensorFlow runs its first op)."""
    for setter in (tf.config.threading.set_intra_op_parallelism_threads,
                   tf.config.threading.set_inter_op_parallelism_threads):
        try:
            setter(threads)
        except RuntimeError:  # the runtime is already initialised: the pools can no longer change
            pass
