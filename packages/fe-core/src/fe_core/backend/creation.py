"""Tensors shaped like others: `zeros_like`, `ones_like`, `random_normal_like`, `random_uniform_like`.

Random values come from the generator of the tensor's framework (numpy's global generator for numpy arrays, torch's
for torch tensors, TensorFlow's global seed for tf tensors), which `fe.enable_deterministic` seeds and checkpoints
record; torch tensors are created on the device of the tensor they are shaped like.
"""
from __future__ import annotations

from typing import TypeVar, Union

import numpy as np

from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["zeros_like", "ones_like", "random_normal_like", "random_uniform_like"]

Tensor = TypeVar("Tensor")

_dispatch = Dispatch("creation")


@fe_export("fe.backend.zeros_like", "fe.backend._zeros_like.zeros_like")
def zeros_like(tensor: Tensor, dtype: Union[None, str] = None) -> Tensor:
    """Generate zeros shaped like `tensor` with a specified `dtype`.

    Args:
        tensor: The tensor whose shape will be copied.
        dtype: The data type to be used when generating the resulting tensor ('float32', 'int64', ...). If None then
            the `tensor` dtype is used.

    Returns:
        A tensor of zeros with the same shape as `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> zeros_like(np.array([[0, 1], [2, 3]]), dtype="float32").tolist()
        [[0.0, 0.0], [0.0, 0.0]]
    """
    backend = _dispatch(tensor, "zeros_like")
    return np.zeros_like(tensor, dtype=dtype) if backend is None else backend.zeros_like(tensor, dtype)


@fe_export("fe.backend.ones_like", "fe.backend._ones_like.ones_like")
def ones_like(tensor: Tensor, dtype: Union[None, str] = None) -> Tensor:
    """Generate ones shaped like `tensor` with a specified `dtype`.

    Args:
        tensor: The tensor whose shape will be copied.
        dtype: The data type to be used when generating the resulting tensor. If None then the `tensor` dtype is used.

    Returns:
        A tensor of ones with the same shape as `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> ones_like(np.array([[0, 1], [2, 3]])).tolist()
        [[1, 1], [1, 1]]
    """
    backend = _dispatch(tensor, "ones_like")
    return np.ones_like(tensor, dtype=dtype) if backend is None else backend.ones_like(tensor, dtype)


@fe_export("fe.backend.random_normal_like", "fe.backend._random_normal_like.random_normal_like")
def random_normal_like(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
                       dtype: Union[None, str] = "float32") -> Tensor:
    """Generate noise shaped like `tensor` from a random normal distribution with a given `mean` and `std`.

    Args:
        tensor: The tensor whose shape will be copied.
        mean: The mean of the normal distribution to be sampled.
        std: The standard deviation of the normal distribution to be sampled.
        dtype: The data type to be used when generating the resulting tensor. This should be one of the floating point
            types (None: float32).

    Returns:
        A tensor of random normal noise with the same shape as `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> random_normal_like(np.zeros((2, 2)), mean=5.0).shape
        (2, 2)
    """
    dtype = dtype or "float32"
    backend = _dispatch(tensor, "random_normal_like")
    if backend is None:
        return np.random.normal(mean, std, size=np.shape(tensor)).astype(dtype)
    return backend.random_normal_like(tensor, mean, std, dtype)


@fe_export("fe.backend.random_uniform_like", "fe.backend._random_uniform_like.random_uniform_like")
def random_uniform_like(tensor: Tensor, minval: float = 0.0, maxval: float = 1.0,
                        dtype: Union[None, str] = "float32") -> Tensor:
    """Generate noise shaped like `tensor` from a random uniform distribution over [`minval`, `maxval`).

    Args:
        tensor: The tensor whose shape will be copied.
        minval: The minimum bound of the uniform distribution.
        maxval: The maximum bound of the uniform distribution.
        dtype: The data type to be used when generating the resulting tensor. This should be one of the floating point
            types (None: float32).

    Returns:
        A tensor of random uniform noise with the same shape as `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> bool(np.all(random_uniform_like(np.zeros(100), minval=-5.0, maxval=-3) < -3))
        True
    """
    dtype = dtype or "float32"
    backend = _dispatch(tensor, "random_uniform_like")
    if backend is None:
        return np.random.uniform(minval, maxval, size=np.shape(tensor)).astype(dtype)
    return backend.random_uniform_like(tensor, minval, maxval, dtype)

