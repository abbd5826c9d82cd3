"""TensorFlow helpers of `fe_core.backend.normalization` (the functions themselves are written once in fe_core)."""
from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["is_floating", "constant_like"]


def is_floating(tensor: Any) -> bool:
    """Whether `tensor` has a floating dtype."""
    return tf.as_dtype(tensor.dtype).is_floating


def constant_like(values: np.ndarray, like: Any) -> tf.Tensor:
    """Per-channel constants of `like`'s dtype (and device)."""
    return tf.constant(values, dtype=like.dtype)
