"""Shapes and indexing: `get_shape`, `get_image_dims`, `reshape`, `expand_dims`, `squeeze`, `permute`, `transpose`,
`flip`, `roll`, `concat`, `gather`, `gather_from_batch`, `resize_3d`, on numpy arrays, torch and TensorFlow tensors.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from fe_core.config_error import ConfigurationError
from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["get_shape", "get_image_dims", "reshape", "expand_dims", "squeeze", "permute", "transpose", "flip", "roll",
           "concat", "gather", "gather_from_batch", "resize_3d", "nearest_indices"]

Tensor = TypeVar("Tensor")

_dispatch = Dispatch("shapes")


@fe_export("fe.backend.get_shape", "fe.backend._get_shape.get_shape")
def get_shape(tensor: Tensor) -> Tuple[int, ...]:
    """Find shape of a given `tensor`.

    Args:
        tensor: The tensor to find shape of.

    Returns:
        Shape of the given 'tensor', as a tuple of ints. Inside `tf.function`, a dimension the trace does not know is
        given as a scalar tensor holding its size.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> get_shape(np.zeros((3, 2, 2)))
        (3, 2, 2)
    """
    backend = _dispatch(tensor, "get_shape")
    return tuple(np.shape(tensor)) if backend is None else backend.get_shape(tensor)


@fe_export("fe.backend.get_image_dims", "fe.backend._get_image_dims.get_image_dims")
def get_image_dims(tensor: Tensor) -> Tuple[int, int, int]:
    """Get the `tensor` channels, height, and width.

    Images are (..., H, W, C) in numpy and TensorFlow and (..., C, H, W) in torch.

    Args:
        tensor: The input tensor (an image or a batch of images).

    Returns:
        Channels, height and width of the `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type or has fewer than 3 dimensions.

    Example:
        >>> get_image_dims(np.zeros((2, 12, 12, 3)))
        (3, 12, 12)
    """
    shape = get_shape(tensor)
    if len(shape) < 3:
        raise ValueError(f"fe.backend.get_image_dims needs an image with at least 3 dimensions, got shape {shape}")
    backend = _dispatch(tensor, "get_image_dims")
    if backend is not None and backend.CHANNELS_FIRST:
        return shape[-3], shape[-2], shape[-1]
    return shape[-1], shape[-3], shape[-2]


@fe_export("fe.backend.reshape", "fe.backend._reshape.reshape")
def reshape(tensor: Tensor, shape: List[int]) -> Tensor:
    """Reshape a `tensor` to conform to a given shape.

    Args:
        tensor: The input value.
        shape: The new shape of the tensor. At most one value may be -1 which indicates that whatever values are left
            should be packed into that axis.

    Returns:
        The reshaped `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> reshape(np.arange(8), shape=[2, 4]).tolist()
        [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    backend = _dispatch(tensor, "reshape")
    return np.reshape(tensor, shape) if backend is None else backend.reshape(tensor, list(shape))


@fe_export("fe.backend.expand_dims", "fe.backend._expand_dims.expand_dims")
def expand_dims(tensor: Tensor, axis: int = 1) -> Tensor:
    """Create a new dimension in `tensor` along a given `axis`.

    Args:
        tensor: The input to be modified, having n dimensions.
        axis: Which axis should the new axis be inserted along. Must be in the range [-n-1, n].

    Returns:
        The `tensor` with one more dimension (of size 1) at `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> expand_dims(np.array([2, 7, 5]), axis=0).tolist(), expand_dims(np.array([2, 7, 5]), axis=1).tolist()
        ([[2, 7, 5]], [[2], [7], [5]])
    """
    backend = _dispatch(tensor, "expand_dims")
    return np.expand_dims(tensor, axis) if backend is None else backend.expand_dims(tensor, axis)


@fe_export("fe.backend.squeeze", "fe.backend._squeeze.squeeze")
def squeeze(tensor: Tensor, axis: Optional[int] = None) -> Tensor:
    """Remove an `axis` from a `tensor` if that axis has length 1.

    Args:
        tensor: The input value.
        axis: Which axis to squeeze along, which must have length==1 (or pass None to squeeze all length 1 axes).

    Returns:
        The reshaped `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> squeeze(np.zeros((3, 1, 2, 1))).shape, squeeze(np.zeros((3, 1, 2, 1)), axis=1).shape
        ((3, 2), (3, 2, 1))
    """
    backend = _dispatch(tensor, "squeeze")
    return np.squeeze(tensor, axis) if backend is None else backend.squeeze(tensor, axis)


@fe_export("fe.backend.permute", "fe.backend._permute.permute")
def permute(tensor: Tensor, permutation: List[int]) -> Tensor:
    """Perform the specified `permutation` on the axes of a given `tensor`.

    Args:
        tensor: The tensor to permute.
        permutation: The new axis order to be used. Should be a list containing all integers in range [0, tensor.ndim).

    Returns:
        The `tensor` with axes swapped according to the `permutation`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> permute(np.zeros((3, 2, 4)), [2, 0, 1]).shape
        (4, 3, 2)
    """
    backend = _dispatch(tensor, "permute")
    return np.transpose(tensor, permutation) if backend is None else backend.permute(tensor, list(permutation))


@fe_export("fe.backend.transpose", "fe.backend._transpose.transpose")
def transpose(tensor: Tensor) -> Tensor:
    """Transpose the `tensor` (reverse the order of all its axes).

    Args:
        tensor: The input value.

    Returns:
        The transposed `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> transpose(np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8]])).tolist()
        [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    """
    backend = _dispatch(tensor, "transpose")
    return np.transpose(tensor) if backend is None else backend.transpose(tensor)


@fe_export("fe.backend.flip", "fe.backend._flip.flip")
def flip(tensor: Tensor, axis: List[int]) -> Tensor:
    """Reverse the order of a given `tensor` elements along the given axes.

    Args:
        tensor: The tensor to flip.
        axis: The axis or axes to reverse.

    Returns:
        The `tensor` with its elements reversed along `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> flip(np.array([[0, 1], [2, 3]]), axis=[0, 1]).tolist()
        [[3, 2], [1, 0]]
    """
    axes = [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]
    backend = _dispatch(tensor, "flip")
    return np.flip(tensor, tuple(axes)) if backend is None else backend.flip(tensor, axes)


@fe_export("fe.backend.roll", "fe.backend._roll.roll")
def roll(tensor: Tensor, shift: Union[int, List[int]], axis: Union[int, List[int]]) -> Tensor:
    """Roll a `tensor` elements along a given axis.

    The elements are shifted forward or reverse direction by the offset of `shift`. Overflown elements beyond the last
    position will be re-introduced at the first position.

    Args:
        tensor: The input value.
        shift: The number of places by which the elements need to be shifted. If shift is a list, axis must be a list of
            same size.
        axis: axis along which elements will be rolled.

    Returns:
        The rolled `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type, or `shift` and `axis` differ in length.

    Example:
        >>> roll(np.array([[1, 2, 3], [5, 6, 7]]), shift=[-1, -1], axis=[0, 1]).tolist()
        [[6, 7, 5], [2, 3, 1]]
    """
    if isinstance(shift, (list, tuple)) != isinstance(axis, (list, tuple)) or (
            isinstance(shift, (list, tuple)) and len(shift) != len(axis)):
        raise ValueError(f"fe.backend.roll: shift and axis must both be ints or lists of one length, got shift={shift}"
                         f" and axis={axis}")
    backend = _dispatch(tensor, "roll")
    if backend is None:
        return np.roll(tensor, shift, axis)
    return backend.roll(tensor, list(shift) if isinstance(shift, tuple) else shift,
                        list(axis) if isinstance(axis, tuple) else axis)


@fe_export("fe.backend.concat", "fe.backend._concat.concat")
def concat(tensors: List[Tensor], axis: int = 0) -> Optional[Tensor]:
    """Concatenate a list of `tensors` along a given `axis`.

    Args:
        tensors: A list of tensors (of one kind) to be concatenated.
        axis: The axis along which to concatenate the input.

    Returns:
        A concatenated representation of the `tensors`, or None if the list of `tensors` was empty.

    Raises:
        ValueError: If `tensors` is an unacceptable data type.

    Example:
        >>> concat([np.array([[0, 1]]), np.array([[2, 3]])], axis=1).tolist()
        [[0, 1, 2, 3]]
    """
    tensors = list(tensors)
    if not tensors:
        return None
    backend = _dispatch(tensors[0], "concat")
    return np.concatenate(tensors, axis=axis) if backend is None else backend.concat(tensors, axis)


@fe_export("fe.backend.gather", "fe.backend._gather.gather")
def gather(tensor: Tensor, indices: Tensor) -> Tensor:
    """Gather specific indices from a tensor (along axis 0).

    The `indices` are converted to the kind of `tensor` (numpy, torch, tf) automatically, and their axes of length 1
    are squeezed away (so (batch, 1) indices act like (batch,) ones), as in FastEstimator.

    Args:
        tensor: A tensor to gather values from.
        indices: A tensor indicating which indices should be selected. These represent locations along the 0 axis.

    Returns:
        A tensor containing the elements from `tensor` at the given `indices`, of shape
        `squeezed indices.shape + tensor.shape[1:]`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> gather(np.array([[0, 1], [2, 3], [4, 5]]), np.array([1, 0, 1])).tolist()
        [[2, 3], [0, 1], [2, 3]]
    """
    backend = _dispatch(tensor, "gather")
    if backend is None:
        return np.take(tensor, np.squeeze(_numpy_indices(indices)).astype(np.int64), axis=0)
    return backend.gather(tensor, indices)


def _numpy_indices(indices: Any) -> np.ndarray:
    if isinstance(indices, np.ndarray):
        return indices
    backend = _dispatch(indices, "gather")
    return np.asarray(indices) if backend is None else backend.to_numpy(indices)


@fe_export("fe.backend.gather_from_batch", "fe.backend._gather_from_batch.gather_from_batch")
def gather_from_batch(tensor: Tensor, indices: Tensor) -> Tensor:
    """Gather specific indices from a batch of data: sample `b` contributes `tensor[b, indices[b]]`.

    This method can be useful if you need to compute gradients based on a specific subset of a tensor's output values.
    The `indices` are converted to the kind of `tensor` (numpy, torch, tf) automatically.

    Args:
        tensor: A tensor of shape (batch, d1, ..., dn).
        indices: A tensor of shape (batch, ) or (batch, 1) indicating which indices should be selected.

    Returns:
        A tensor of shape (batch, d2, ..., dn) containing the elements from `tensor` at the given `indices`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> gather_from_batch(np.array([[0, 1], [2, 3], [4, 5]]), np.array([1, 0, 1])).tolist()
        [1, 2, 5]
    """
    backend = _dispatch(tensor, "gather_from_batch")
    if backend is None:
        index = _numpy_indices(indices).reshape(-1)
        return np.asarray(tensor)[np.arange(index.shape[0]), index]
    return backend.gather_from_batch(tensor, indices)


def nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """The source index of each output position of a nearest-neighbour resize (torch's 'nearest' rule)."""
    return np.minimum((np.arange(out_size) * (in_size / out_size)).astype(np.int64), in_size - 1)


@fe_export("fe.backend.resize_3d", "fe.backend._resize3d.resize_3d")
def resize_3d(tensor: Tensor, output_shape: Sequence[int], resize_mode: str = "nearest") -> Tensor:
    """Resize the 3 spatial axes of a batch of volumes to `output_shape`.

    Volumes are (batch, D, H, W, C) in numpy and TensorFlow and (batch, C, D, H, W) in torch.

    Args:
        tensor: The input value.
        output_shape: The new (D, H, W) size of the tensor.
        resize_mode: mode to apply for resizing: 'nearest' (every backend); torch also takes its other
            `interpolate` modes ('trilinear', 'area'), TensorFlow its `tf.image.resize` methods ('bilinear', 'area',
            ...), applied over (H, W) and then D.

    Returns:
        The resized `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type, `output_shape` does not have 3 sizes, or the mode is
            not available for numpy.

    Example:
        >>> resize_3d(np.zeros((1, 2, 2, 2, 1)), output_shape=[4, 4, 4]).shape
        (1, 4, 4, 4, 1)
    """
    output_shape = [int(size) for size in output_shape]
    if len(output_shape) != 3:
        raise ValueError(f"fe.backend.resize_3d: output_shape must hold 3 sizes (D, H, W), got {output_shape}")
    backend = _dispatch(tensor, "resize_3d")
    if backend is not None:
        return backend.resize_3d(tensor, output_shape, resize_mode)
    if resize_mode != "nearest":
        raise ConfigurationError(f"fe.backend.resize_3d: numpy arrays can only be resized with 'nearest', got "
                                 f"{resize_mode!r}")
    array = np.asarray(tensor)
    d, h, w = (nearest_indices(size, out) for size, out in zip(array.shape[1:4], output_shape))
    return array[:, d][:, :, h][:, :, :, w]
