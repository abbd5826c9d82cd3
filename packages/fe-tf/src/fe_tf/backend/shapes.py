"""TensorFlow shapes and indexing behind `fe_core.backend.shapes` (images and volumes are channels last)."""
from __future__ import annotations

import sys
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from fe_core.backend.shapes import nearest_indices

__all__ = ["CHANNELS_FIRST", "get_shape", "reshape", "expand_dims", "squeeze", "permute", "transpose", "flip", "roll",
           "concat", "gather", "gather_from_batch", "resize_3d", "to_numpy"]

CHANNELS_FIRST = False


def get_shape(tensor: Any) -> Tuple[Any, ...]:
    """The TensorFlow case of `fe.backend.get_shape`."""
    static = tensor.shape
    if static.is_fully_defined():
        return tuple(static.as_list())
    dynamic = tf.shape(tensor)
    return tuple(size if size is not None else dynamic[index] for index, size in enumerate(static.as_list()))


def reshape(tensor: Any, shape: List[int]) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.reshape`."""
    return tf.reshape(tensor, shape)


def expand_dims(tensor: Any, axis: int) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.expand_dims`."""
    return tf.expand_dims(tensor, axis)


def squeeze(tensor: Any, axis: Optional[int]) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.squeeze`."""
    return tf.squeeze(tensor, axis)


def permute(tensor: Any, permutation: List[int]) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.permute`."""
    return tf.transpose(tensor, permutation)


def transpose(tensor: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.transpose`."""
    return tf.transpose(tensor)


def flip(tensor: Any, axes: List[int]) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.flip`."""
    return tf.reverse(tensor, axes)


def roll(tensor: Any, shift: Union[int, List[int]], axis: Union[int, List[int]]) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.roll`."""
    return tf.roll(tensor, shift, axis)


def concat(tensors: Sequence[Any], axis: int) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.concat`."""
    return tf.concat(list(tensors), axis=axis)


def _indices(indices: Any) -> Any:
    torch_module = sys.modules.get("torch")
    if torch_module is not None and isinstance(indices, torch_module.Tensor):
        indices = indices.detach().cpu().numpy()
    return indices


def gather(tensor: Any, indices: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.gather`."""
    return tf.gather(tensor, tf.squeeze(_indices(indices)))


def gather_from_batch(tensor: Any, indices: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.gather_from_batch`."""
    return tf.gather(tensor, tf.reshape(_indices(indices), [-1]), batch_dims=1)


def resize_3d(tensor: Any, output_shape: List[int], resize_mode: str) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.resize_3d`."""
    tensor = tf.convert_to_tensor(tensor)
    if resize_mode == "nearest":  # exact source indices (torch's rule), one gather per axis
        for axis, out_size in zip((1, 2, 3), output_shape):
            tensor = tf.gather(tensor, nearest_indices(int(tensor.shape[axis]), out_size), axis=axis)
        return tensor
    depth, height, width = output_shape
    shape = tf.shape(tensor)
    batch, channels = shape[0], shape[4]
    planes = tf.reshape(tensor, tf.stack([batch * shape[1], shape[2], shape[3], channels]))
    planes = tf.image.resize(planes, (height, width), method=resize_mode)  # (B*D, H', W', C)
    volume = tf.transpose(tf.reshape(planes, tf.stack([batch, shape[1], height, width, channels])), [0, 2, 1, 3, 4])
    columns = tf.reshape(volume, tf.stack([batch * height, shape[1], width, channels]))
    columns = tf.image.resize(columns, (depth, width), method=resize_mode)  # (B*H', D', W', C)
    volume = tf.reshape(columns, tf.stack([batch, height, depth, width, channels]))
    return tf.cast(tf.transpose(volume, [0, 2, 1, 3, 4]), tensor.dtype)


def to_numpy(tensor: Any) -> np.ndarray:
    """`value` as a numpy array (detached, on the host)."""
    return np.asarray(tensor.numpy())
