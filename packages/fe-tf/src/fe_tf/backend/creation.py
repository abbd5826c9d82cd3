"""TensorFlow tensors shaped like others, behind `fe_core.backend.creation`."""
from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = ["zeros_like", "ones_like", "random_normal_like", "random_uniform_like"]


def zeros_like(tensor: Any, dtype: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.zeros_like`."""
    return tf.zeros_like(tensor, dtype=dtype)


def ones_like(tensor: Any, dtype: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.ones_like`."""
    return tf.ones_like(tensor, dtype=dtype)


def random_normal_like(tensor: Any, mean: float, std: float, dtype: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.random_normal_like`."""
    return tf.random.normal(tf.shape(tensor), mean=mean, stddev=std, dtype=dtype)


def random_uniform_like(tensor: Any, minval: float, maxval: float, dtype: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.random_uniform_like`."""
    return tf.random.uniform(tf.shape(tensor), minval=minval, maxval=maxval, dtype=dtype)
