"""TensorFlow conversions behind `fe_core.backend.conversion`."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
import tensorflow as tf

from fe_tf._keras import compute_dtype, variable_types

__all__ = ["to_tensor", "to_numpy", "cast", "convert_tensor_precision"]


def to_tensor(value: Any, shared_memory: bool) -> Any:
    """`value` as a tf tensor (torch tensors via numpy; None and strings unchanged)."""
    if isinstance(value, tf.Tensor):
        return value
    if isinstance(value, variable_types()):
        return tf.convert_to_tensor(value)
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        return tf.convert_to_tensor(value)
    torch_module = sys.modules.get("torch")
    if torch_module is not None and isinstance(value, torch_module.Tensor):
        return tf.convert_to_tensor(value.detach().cpu().numpy())
    return value


def to_numpy(value: Any) -> np.ndarray:
    """`value` as a numpy array (detached, on the host)."""
    return np.asarray(value.numpy())


def cast(value: Any, name: str) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.cast`."""
    return tf.cast(value, name)


def convert_tensor_precision(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.convert_tensor_precision`."""
    return tf.cast(tensor, compute_dtype())
