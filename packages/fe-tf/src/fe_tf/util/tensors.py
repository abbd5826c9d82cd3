"""TensorFlow tensors for `fe.util`: to numpy (`to_number`), to a device (`move_to_device`), out of the gradient
tape (`detach`).

Called by fe_core.util (inspection.to_number, tensors.move_tensors_to_device / detach_tensors) for tf values.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["to_number", "move_to_device", "detach"]


def to_number(data: Any) -> np.ndarray:
    """A tf tensor's (or variable's) values as a numpy array (bfloat16 becomes float32).

    Raises:
        ValueError: For a symbolic tensor (inside `tf.function`), which has no value yet.
    """
    if not hasattr(data, "numpy"):
        raise ValueError(f"to_number needs a tensor with a value, got the symbolic {data!r} (inside tf.function); "
                         "convert it outside the function, or use tf ops / tf.py_function there")
    if data.dtype == tf.bfloat16:
        data = tf.cast(data, tf.float32)
    value = data.numpy()
    return value if isinstance(value, np.ndarray) else np.array(value)


def move_to_device(data: Any, device: str) -> tf.Tensor:
    """A copy of `data` placed on `device` (a TensorFlow device string such as '/CPU:0' or '/GPU:0'; torch-style
    'cpu' and 'cuda:N' are accepted too)."""
    name = str(device)
    if name.lower() == "cpu":
        name = "/CPU:0"
    elif name.lower().startswith("cuda"):
        name = "/GPU:" + (name.split(":")[1] if ":" in name else "0")
    with tf.device(name):
        return tf.identity(data)


def detach(data: Any) -> tf.Tensor:
    """`data` with its gradient stopped (`tf.stop_gradient`)."""
    return tf.stop_gradient(data)
