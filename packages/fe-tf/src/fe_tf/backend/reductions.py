"""TensorFlow reductions behind `fe_core.backend.reductions` (axis: None, an int or a tuple of ints)."""
from __future__ import annotations

from typing import List, Sequence, Tuple, Union

import tensorflow as tf

__all__ = ["reduce_sum", "reduce_mean", "reduce_min", "reduce_max", "reduce_std", "argmax", "percentile", "check_nan"]

Axis = Union[None, int, Tuple[int, ...]]


def _axis(axis: Axis) -> Union[None, int, List[int]]:
    return list(axis) if isinstance(axis, tuple) else axis


def reduce_sum(tensor: tf.Tensor, axis: Axis, keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reduce_sum`."""
    return tf.reduce_sum(tensor, axis=_axis(axis), keepdims=keepdims)


def reduce_mean(tensor: tf.Tensor, axis: Axis, keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reduce_mean`."""
    return tf.reduce_mean(tensor, axis=_axis(axis), keepdims=keepdims)


def reduce_min(tensor: tf.Tensor, axis: Axis, keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reduce_min`."""
    return tf.reduce_min(tensor, axis=_axis(axis), keepdims=keepdims)


def reduce_max(tensor: tf.Tensor, axis: Axis, keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reduce_max`."""
    return tf.reduce_max(tensor, axis=_axis(axis), keepdims=keepdims)


def reduce_std(tensor: tf.Tensor, axis: Axis, keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reduce_std`."""
    return tf.math.reduce_std(tensor, axis=_axis(axis), keepdims=keepdims)


def argmax(tensor: tf.Tensor, axis: int) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.argmax`."""
    return tf.argmax(tensor, axis=axis)


def percentile(tensor: tf.Tensor, percentiles: Union[int, float, Sequence[Union[int, float]]], axis: Axis,
               keepdims: bool) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.percentile`."""
    tensor = tf.convert_to_tensor(tensor)
    single = not isinstance(percentiles, (list, tuple))
    values = [percentiles] if single else list(percentiles)
    ndim = tensor.shape.rank
    axes = list(range(ndim)) if axis is None else sorted({a % ndim for a in ((axis,) if isinstance(axis, int)
                                                                            else axis)})
    kept = [d for d in range(ndim) if d not in axes]
    shape = tf.shape(tensor)
    kept_sizes = tf.gather(shape, tf.constant(kept, dtype=tf.int32))
    flat = tf.reshape(tf.transpose(tensor, kept + axes), tf.concat([kept_sizes, [-1]], axis=0))
    size = tf.shape(flat, out_type=tf.int64)[-1]
    ordered = tf.sort(flat, axis=-1)
    fractions = tf.constant([float(p) / 100.0 for p in values], dtype=tf.float64)
    indices = tf.cast(tf.floor(fractions * tf.cast(size - 1, tf.float64)), tf.int64)
    indices = tf.clip_by_value(indices, 0, tf.maximum(size - 1, 0))
    picked = tf.gather(ordered, indices, axis=-1)  # (*kept, len(values))
    picked = tf.transpose(picked, [len(kept)] + list(range(len(kept))))
    if keepdims:
        target = [1 if d in axes else shape[d] for d in range(ndim)]
        picked = tf.reshape(picked, tf.stack([len(values)] + target))
    return picked[0] if single else picked


def check_nan(val: tf.Tensor) -> Union[bool, tf.Tensor]:
    """The TensorFlow case of `fe.backend.check_nan`."""
    if not (val.dtype.is_floating or val.dtype.is_complex):
        return False
    found = tf.reduce_any(tf.math.is_nan(val))
    return bool(found) if tf.executing_eagerly() else found
