"""TensorFlow element-wise math behind `fe_core.backend.elementwise` (numbers take the tensor's dtype)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import tensorflow as tf

from fe_core.backend.elementwise import lambertw_halley

from fe_tf.backend._tensors import as_tensor, is_tf_tensor

__all__ = ["abs", "exp", "sign", "power", "tensor_sqrt", "tensor_round", "clip_by_value", "maximum", "where", "matmul",
           "lambertw"]

_MATH = SimpleNamespace(exp=tf.exp, log1p=tf.math.log1p, log=tf.math.log, sqrt=tf.sqrt, where=tf.where,
                        maximum=tf.maximum)


def _floating(tensor: Any) -> tf.Tensor:
    tensor = as_tensor(tensor)
    return tensor if tensor.dtype.is_floating else tf.cast(tensor, tf.float32)


def _like(value: Any, tensor: Any) -> Any:
    """A value as a tensor of `tensor`'s dtype (tensors, and python numbers the op converts itself, are left alone)."""
    if isinstance(value, int) or (isinstance(value, float) and tensor.dtype.is_floating):
        return value  # the op converts python numbers to the tensor's dtype itself
    if is_tf_tensor(value):
        return value
    return tf.constant(value, dtype=tensor.dtype)


def abs(tensor: Any) -> tf.Tensor:  # pylint: disable=redefined-builtin
    """The TensorFlow case of `fe.backend.abs`."""
    return tf.abs(tensor)


def exp(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.exp`."""
    return tf.exp(_floating(tensor))


def sign(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.sign`."""
    return tf.sign(tensor)


def power(tensor: Any, power_: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.pow` and `fe.backend.tensor_pow`."""
    tensor = as_tensor(tensor)
    if isinstance(power_, float) and not tensor.dtype.is_floating:
        tensor = tf.cast(tensor, tf.float32)  # an integer tensor to a fractional power
    return tf.pow(tensor, _like(power_, tensor))


def tensor_sqrt(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.tensor_sqrt`."""
    return tf.sqrt(_floating(tensor))


def tensor_round(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.tensor_round`."""
    return tf.round(tensor)


def _bound(value: Any, tensor: Any) -> Any:
    """A clipping bound (a python number or a tensor of any dtype) as a tensor of `tensor`'s dtype."""
    if value is None:
        return None
    if is_tf_tensor(value) and value.dtype != tensor.dtype:
        return tf.cast(value, tensor.dtype)
    if isinstance(value, float) and not tensor.dtype.is_floating:
        return tf.cast(tf.constant(value), tensor.dtype)
    return _like(value, tensor)


def clip_by_value(tensor: Any, min_value: Any, max_value: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.clip_by_value` (bounds may mix python numbers and tensors of any dtype)."""
    tensor = tf.convert_to_tensor(tensor)
    min_value, max_value = _bound(min_value, tensor), _bound(max_value, tensor)
    if min_value is not None and max_value is not None:
        return tf.clip_by_value(tensor, _like(min_value, tensor), _like(max_value, tensor))
    if min_value is not None:
        tensor = tf.maximum(tensor, _like(min_value, tensor))
    if max_value is not None:
        tensor = tf.minimum(tensor, _like(max_value, tensor))
    return tensor


def maximum(tensor1: Any, tensor2: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.maximum`."""
    return tf.maximum(tensor1, _like(tensor2, tensor1))


def where(condition: Any, yes: Any, no: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.where`."""
    if isinstance(yes, (int, float)):
        if not isinstance(no, (int, float)):
            no = as_tensor(no)
            yes = _like(yes, no)
    elif isinstance(no, (int, float)):
        yes = as_tensor(yes)
        no = _like(no, yes)
    return tf.where(condition, yes, no)


def matmul(a: Any, b: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.matmul`."""
    return tf.linalg.matmul(a, b)


def lambertw(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.lambertw`."""
    return lambertw_halley(_floating(tensor), _MATH)
