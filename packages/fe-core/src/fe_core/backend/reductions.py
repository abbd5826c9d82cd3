"""Reductions: `reduce_sum`, `reduce_mean`, `reduce_min`, `reduce_max`, `reduce_std`, `argmax`, `percentile`,
`check_nan`, on numpy arrays, torch tensors and TensorFlow tensors.

`axis` may be None (every axis), an int or a sequence of ints, as in FastEstimator. Torch and TensorFlow tensors are
computed by `fe_torch.backend.reductions` / `fe_tf.backend.reductions` (gradients flow through them).
"""
from __future__ import annotations

import math
from typing import List, Sequence, Tuple, TypeVar, Union

import numpy as np

from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["reduce_sum", "reduce_mean", "reduce_min", "reduce_max", "reduce_std", "argmax", "percentile", "check_nan",
           "normalize_axis", "percentile_index"]

Tensor = TypeVar("Tensor")
Axis = Union[None, int, Sequence[int]]

_dispatch = Dispatch("reductions")


def normalize_axis(axis: Axis) -> Union[None, int, Tuple[int, ...]]:
    """`axis` as numpy and the backends take it: None, an int, or a tuple of ints (a list becomes a tuple)."""
    if axis is None or type(axis) is int:  # pylint: disable=unidiomatic-typecheck  (the fast, common case)
        return axis
    if isinstance(axis, (int, np.integer)):
        return int(axis)
    return tuple(map(int, axis))


def percentile_index(percentile: float, size: int) -> int:
    """The position, in a sorted run of `size` values, of the lower value at `percentile` (numpy's 'lower' method)."""
    return min(size - 1, max(0, int(math.floor(float(np.float64(percentile) / 100.0 * (size - 1))))))


@fe_export("fe.backend.reduce_sum", "fe.backend._reduce_sum.reduce_sum")
def reduce_sum(tensor: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Compute the sum along a given `axis` of a `tensor`.

    Args:
        tensor: The input value (numpy array, torch tensor or tf tensor).
        axis: Which axis or collection of axes to compute the sum along (None: all of them).
        keepdims: Whether to preserve the number of dimensions during the reduction.

    Returns:
        The sum of `tensor` along `axis`, of the same kind as `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
        >>> reduce_sum(n, axis=[0, 2]).tolist()
        [14.0, 22.0]
    """
    backend = _dispatch(tensor, "reduce_sum")
    if axis is not None and type(axis) is not int:  # pylint: disable=unidiomatic-typecheck
        axis = normalize_axis(axis)
    if backend is None:
        return np.sum(tensor, axis=axis, keepdims=keepdims)
    return backend.reduce_sum(tensor, axis, keepdims)


@fe_export("fe.backend.reduce_mean", "fe.backend._reduce_mean.reduce_mean")
def reduce_mean(tensor: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Compute the mean value along a given `axis` of a `tensor`.

    Args:
        tensor: The input value.
        axis: Which axis or collection of axes to compute the mean along (None: all of them).
        keepdims: Whether to preserve the number of dimensions during the reduction.

    Returns:
        The mean values of `tensor` along `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
        >>> float(reduce_mean(n)), reduce_mean(n, axis=[0, 2]).tolist()
        (4.5, [3.5, 5.5])
    """
    backend = _dispatch(tensor, "reduce_mean")
    if axis is not None and type(axis) is not int:  # pylint: disable=unidiomatic-typecheck
        axis = normalize_axis(axis)
    if backend is None:
        return np.mean(tensor, axis=axis, keepdims=keepdims)
    return backend.reduce_mean(tensor, axis, keepdims)


@fe_export("fe.backend.reduce_min", "fe.backend._reduce_min.reduce_min")
def reduce_min(tensor: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Compute the min value along a given `axis` of a `tensor`.

    Args:
        tensor: The input value.
        axis: Which axis or collection of axes to compute the min along (None: all of them).
        keepdims: Whether to preserve the number of dimensions during the reduction.

    Returns:
        The min values of `tensor` along `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> reduce_min(np.array([[1, 5], [3, 2]]), axis=1).tolist()
        [1, 2]
    """
    backend = _dispatch(tensor, "reduce_min")
    if axis is not None and type(axis) is not int:  # pylint: disable=unidiomatic-typecheck
        axis = normalize_axis(axis)
    if backend is None:
        return np.min(tensor, axis=axis, keepdims=keepdims)
    return backend.reduce_min(tensor, axis, keepdims)


@fe_export("fe.backend.reduce_max", "fe.backend._reduce_max.reduce_max")
def reduce_max(tensor: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Compute the maximum value along a given `axis` of a `tensor`.

    Args:
        tensor: The input value.
        axis: Which axis or collection of axes to compute the maximum along (None: all of them).
        keepdims: Whether to preserve the number of dimensions during the reduction.

    Returns:
        The maximum values of `tensor` along `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> reduce_max(np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), axis=[0, 2]).tolist()
        [6, 8]
    """
    backend = _dispatch(tensor, "reduce_max")
    if axis is not None and type(axis) is not int:  # pylint: disable=unidiomatic-typecheck
        axis = normalize_axis(axis)
    if backend is None:
        return np.max(tensor, axis=axis, keepdims=keepdims)
    return backend.reduce_max(tensor, axis, keepdims)


@fe_export("fe.backend.reduce_std", "fe.backend._reduce_std.reduce_std")
def reduce_std(tensor: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Compute the (population) standard deviation along a given `axis` of a `tensor`.

    Args:
        tensor: The input value.
        axis: Which axis or collection of axes to compute the std along (None: all of them).
        keepdims: Whether to preserve the number of dimensions during the reduction.

    Returns:
        The std values of `tensor` along `axis` (divided by N, not N - 1).

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> round(float(reduce_std(np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]))), 4)
        2.2913
    """
    backend = _dispatch(tensor, "reduce_std")
    if axis is not None and type(axis) is not int:  # pylint: disable=unidiomatic-typecheck
        axis = normalize_axis(axis)
    if backend is None:
        return np.std(tensor, axis=axis, keepdims=keepdims)
    return backend.reduce_std(tensor, axis, keepdims)


@fe_export("fe.backend.argmax", "fe.backend._argmax.argmax")
def argmax(tensor: Tensor, axis: int = 0) -> Tensor:
    """Compute the index of the maximum value along a given axis of a tensor.

    Args:
        tensor: The input value.
        axis: Which axis to compute the index along.

    Returns:
        The indices (int64) of the maximum values within `tensor` along `axis`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([[2, 7, 5], [9, 1, 3], [4, 8, 2]])
        >>> argmax(n, axis=0).tolist(), argmax(n, axis=1).tolist()
        ([1, 2, 0], [1, 0, 1])
    """
    backend = _dispatch(tensor, "argmax")
    if backend is None:
        return np.argmax(tensor, axis=axis)
    return backend.argmax(tensor, axis)


@fe_export("fe.backend.percentile", "fe.backend._percentile.percentile")
def percentile(tensor: Tensor, percentiles: Union[int, List[int]], axis: Axis = None, keepdims: bool = True) -> Tensor:
    """Compute the `percentiles` of a `tensor`.

    The n-th percentile of `tensor` is the value n/100 of the way from the minimum to the maximum in a sorted copy of
    `tensor`. If the percentile falls in between two values, the lower of the two values is used.

    Args:
        tensor: The tensor from which to extract percentiles.
        percentiles: One or more percentile values to be computed. A list puts a leading axis of that length in front
            of the result; a single number does not.
        axis: Along which axes to compute the percentile (None to compute over all axes).
        keepdims: Whether to maintain the number of dimensions from `tensor`.

    Returns:
        The `percentiles` of the given `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
        >>> percentile(n, percentiles=[66]).tolist(), percentile(n, percentiles=[66], axis=1).tolist()
        ([[[6]]], [[[2], [5], [8]]])
    """
    backend = _dispatch(tensor, "percentile")
    if backend is None:
        return np.percentile(tensor, percentiles, axis=normalize_axis(axis), keepdims=keepdims, method="lower")
    return backend.percentile(tensor, percentiles, normalize_axis(axis), keepdims)


@fe_export("fe.backend.check_nan", "fe.backend._check_nan.check_nan")
def check_nan(val: Union[int, float, Tensor]) -> Union[bool, Tensor]:
    """Checks if the input contains NaN values.

    Args:
        val: The input value: a number, a numpy array, a torch tensor or a tf tensor.

    Returns:
        True iff `val` contains NaN (inside `tf.function`, a boolean tensor saying the same).

    Raises:
        ValueError: If `val` is an unacceptable data type.

    Example:
        >>> check_nan(np.array([1.0, np.nan])), check_nan(3)
        (True, False)
    """
    backend = _dispatch(val, "check_nan")
    if backend is None:
        return bool(np.isnan(val).any()) if np.issubdtype(np.asarray(val).dtype, np.inexact) else False
    return backend.check_nan(val)

