"""Cheap tensor checks and conversions shared by the fe_tf.backend modules.

`tf.is_tensor` costs tens of microseconds on values that are not tensors (a runtime Protocol check) and `tf.cast` /
`tf.convert_to_tensor` cost microseconds even when nothing changes, so the per-call paths use these instead.
"""
from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = ["is_tf_tensor", "as_tensor", "cast_to", "full_precision"]

_TENSOR_TYPES = (tf.Tensor, tf.Variable)


def is_tf_tensor(value: Any) -> bool:
    """Whether `value` is a tf tensor or variable (eager or symbolic)."""
    return isinstance(value, _TENSOR_TYPES)


def as_tensor(value: Any) -> Any:
    """`value` itself when it is a tf tensor or variable, else converted to a tensor."""
    return value if isinstance(value, _TENSOR_TYPES) else tf.convert_to_tensor(value)


def cast_to(value: Any, dtype: tf.DType) -> Any:
    """`value` as a tensor of `dtype` (no cast op when it already is one)."""
    if isinstance(value, _TENSOR_TYPES) and value.dtype == dtype:
        return value
    return tf.cast(value, dtype)


def full_precision(value: Any) -> Any:
    """`value` as a tensor, float16/bfloat16 cast to float32."""
    value = as_tensor(value)
    return tf.cast(value, tf.float32) if value.dtype in (tf.float16, tf.bfloat16) else value
