"""TensorFlow kernels of fe-core's UnHadamard and Resize3D (eager or inside the Network's tf.function); Resize3D resizes
axis by axis with the same index rules as torch, so both frameworks give the same values."""
from __future__ import annotations

import math
from typing import Any, Dict, List

import numpy as np
import tensorflow as tf

from fe_core.op.tensorop.hadamard import code_book

__all__ = ["KERNELS", "resize_matrix"]


def _floating(tensor: Any) -> tf.Tensor:
    tensor = tf.convert_to_tensor(tensor)
    return tensor if tensor.dtype.is_floating else tf.cast(tensor, tf.float32)


def un_hadamard_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[tf.Tensor]:
    """Class probabilities from the L1 distances to the code words (inverse distance weighting)."""
    codes = code_book(op.n_classes, op.code_length)
    results = []
    for tensor in data:
        tensor = _floating(tensor)
        distance = tf.reduce_sum(tf.abs(tensor[:, tf.newaxis, :] - tf.constant(codes, tensor.dtype)), axis=-1)
        weights = 1.0 / (distance + op.offset)
        results.append(weights / tf.reduce_sum(weights, axis=-1, keepdims=True))
    return results


def resize_matrix(size_in: int, size_out: int, mode: str) -> np.ndarray:
    """The (size_out, size_in) matrix resizing one axis: nearest picks floor(i * in / out); area averages the input
    cells [floor(i * in / out), ceil((i + 1) * in / out)) (adaptive average pooling, as torch computes them)."""
    matrix = np.zeros((size_out, size_in), dtype=np.float32)
    for index in range(size_out):
        if mode == "nearest":
            matrix[index, min(size_in - 1, (index * size_in) // size_out)] = 1.0
        else:
            start = (index * size_in) // size_out
            end = max(start + 1, math.ceil((index + 1) * size_in / size_out))
            matrix[index, start:end] = 1.0 / (end - start)
    return matrix


def resize3d_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[tf.Tensor]:
    """Resize (batch, H, W, D, channels) volumes axis by axis ('nearest' or 'area'), like torch does."""
    results = []
    for tensor in data:
        tensor = tf.convert_to_tensor(tensor)
        dtype = tensor.dtype
        value = _floating(tensor)
        for axis, size_out in zip((1, 2, 3), op.output_shape):
            size_in = value.shape[axis]
            if size_in == size_out:
                continue
            matrix = tf.constant(resize_matrix(size_in, size_out, op.resize_mode), value.dtype)
            value = tf.experimental.numpy.moveaxis(tf.tensordot(value, matrix, axes=[[axis], [1]]), -1, axis)
        results.append(value if value.dtype == dtype else tf.cast(value, dtype))
    return results


KERNELS = {
    "un_hadamard": un_hadamard_kernel,
    "resize3d": resize3d_kernel,
}
