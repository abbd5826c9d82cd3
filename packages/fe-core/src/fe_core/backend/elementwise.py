"""Element-wise math: `abs`, `exp`, `sign`, `pow`, `tensor_pow`, `tensor_sqrt`, `tensor_round`, `clip_by_value`,
`maximum`, `where`, `matmul`, `lambertw`, on numpy arrays, torch tensors and TensorFlow tensors.

Results keep the input's kind (and, where the framework does, its dtype); gradients flow through the torch and
TensorFlow versions.
"""
from __future__ import annotations

import math
from typing import Any, TypeVar, Union

import numpy as np

from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["abs", "exp", "sign", "pow", "tensor_pow", "tensor_sqrt", "tensor_round", "clip_by_value", "maximum",
           "where", "matmul", "lambertw", "lambertw_halley"]

Tensor = TypeVar("Tensor")
Number = Union[int, float]

_dispatch = Dispatch("elementwise")


@fe_export("fe.backend.abs", "fe.backend._abs.abs")
def abs(tensor: Tensor) -> Tensor:  # pylint: disable=redefined-builtin  (FastEstimator's name)
    """Compute the absolute value of a tensor.

    Args:
        tensor: The input value.

    Returns:
        The absolute value of `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> abs(np.array([-2, 7, -19])).tolist()
        [2, 7, 19]
    """
    backend = _dispatch(tensor, "abs")
    return np.abs(tensor) if backend is None else backend.abs(tensor)


@fe_export("fe.backend.exp", "fe.backend._exp.exp")
def exp(tensor: Tensor) -> Tensor:
    """Compute e^Tensor.

    Args:
        tensor: The input value (integer tensors give float32 on torch and TensorFlow).

    Returns:
        The exponentiated `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> np.round(exp(np.array([-2.0, 2, 1])), 4).tolist()
        [0.1353, 7.3891, 2.7183]
    """
    backend = _dispatch(tensor, "exp")
    return np.exp(tensor) if backend is None else backend.exp(tensor)


@fe_export("fe.backend.sign", "fe.backend._sign.sign")
def sign(tensor: Tensor) -> Tensor:
    """Compute the sign of a tensor (-1, 0 or 1 per element).

    Args:
        tensor: The input value.

    Returns:
        The sign of each value of the `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> sign(np.array([-2, 7, -19])).tolist()
        [-1, 1, -1]
    """
    backend = _dispatch(tensor, "sign")
    return np.sign(tensor) if backend is None else backend.sign(tensor)


@fe_export("fe.backend.pow", "fe.backend._pow.pow")
def pow(tensor: Tensor, power: Union[int, float, Tensor]) -> Tensor:  # pylint: disable=redefined-builtin
    """Raise a `tensor` to a given `power`.

    Args:
        tensor: The input value.
        power: The exponent to raise `tensor` by (a number or a tensor of the same kind).

    Returns:
        The exponentiated `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> pow(np.array([-2, 7, -19]), 2).tolist()
        [4, 49, 361]
    """
    backend = _dispatch(tensor, "pow")
    return np.power(tensor, power) if backend is None else backend.power(tensor, power)


@fe_export("fe.backend.tensor_pow", "fe.backend._tensor_pow.tensor_pow")
def tensor_pow(tensor: Tensor, power: Union[int, float]) -> Tensor:
    """Computes x^power element-wise along `tensor`.

    Args:
        tensor: The input tensor.
        power: The power to which to raise the elements in the `tensor`.

    Returns:
        The `tensor` raised element-wise to the given `power`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> np.round(tensor_pow(np.array([[1, 4, 6], [2.3, 0.5, 0]]), 3.2), 3).tolist()
        [[1.0, 84.449, 309.089], [14.372, 0.109, 0.0]]
    """
    backend = _dispatch(tensor, "tensor_pow")
    return np.power(tensor, power) if backend is None else backend.power(tensor, power)


@fe_export("fe.backend.tensor_sqrt", "fe.backend._tensor_sqrt.tensor_sqrt")
def tensor_sqrt(tensor: Tensor) -> Tensor:
    """Computes element-wise square root of tensor elements.

    Args:
        tensor: The input tensor (integer tensors give float32 on torch and TensorFlow).

    Returns:
        The `tensor` that contains square root of input values.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> tensor_sqrt(np.array([[1, 4], [9, 16]])).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """
    backend = _dispatch(tensor, "tensor_sqrt")
    return np.sqrt(tensor) if backend is None else backend.tensor_sqrt(tensor)


@fe_export("fe.backend.tensor_round", "fe.backend._tensor_round.tensor_round")
def tensor_round(tensor: Tensor) -> Tensor:
    """Element-wise rounds the values of the `tensor` to nearest integer (halves to even, as every backend does).

    Args:
        tensor: The input tensor.

    Returns:
        The rounded `tensor` (same dtype).

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> tensor_round(np.array([[1.25, 4.5, 6], [4, 9.11, 16]])).tolist()
        [[1.0, 4.0, 6.0], [4.0, 9.0, 16.0]]
    """
    backend = _dispatch(tensor, "tensor_round")
    return np.round(tensor) if backend is None else backend.tensor_round(tensor)


@fe_export("fe.backend.clip_by_value", "fe.backend._clip_by_value.clip_by_value")
def clip_by_value(tensor: Tensor,
                  min_value: Union[int, float, Tensor, None] = None,
                  max_value: Union[int, float, Tensor, None] = None) -> Tensor:
    """Clip a tensor such that `min_value` <= tensor <= `max_value`.

    If `min_value` or `max_value` is not provided then clipping is not performed on lower or upper interval edge
    respectively.

    Args:
        tensor: The input value.
        min_value: The minimum value to clip to.
        max_value: The maximum value to clip to.

    Returns:
        The `tensor`, with its values clipped.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([-5, 4, 2, 0, 9, -2])
        >>> clip_by_value(n, min_value=-2, max_value=3).tolist(), clip_by_value(n, min_value=-2).tolist()
        ([-2, 3, 2, 0, 3, -2], [-2, 4, 2, 0, 9, -2])
    """
    backend = _dispatch(tensor, "clip_by_value")
    if backend is None:
        return tensor if min_value is None and max_value is None else np.clip(tensor, min_value, max_value)
    return backend.clip_by_value(tensor, min_value, max_value)


@fe_export("fe.backend.maximum", "fe.backend._maximum.maximum")
def maximum(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """Get the element-wise maximum of the given `tensors`.

    Args:
        tensor1: First tensor.
        tensor2: Second tensor (or a number).

    Returns:
        The maximum of two `tensors`.

    Raises:
        ValueError: If `tensor1` is an unacceptable data type.

    Example:
        >>> maximum(np.array([[2, 7, 6]]), np.array([[2, 7, 5]])).tolist()
        [[2, 7, 6]]
    """
    backend = _dispatch(tensor1, "maximum")
    return np.maximum(tensor1, tensor2) if backend is None else backend.maximum(tensor1, tensor2)


@fe_export("fe.backend.where", "fe.backend._where.where")
def where(condition: Tensor, yes: Union[Tensor, int, float], no: Union[Tensor, int, float]) -> Tensor:
    """Compute a tensor based on boolean conditions.

    Numbers among `yes` / `no` take the dtype of the tensor given for the other (TensorFlow needs one dtype).

    Args:
        condition: A tensor of boolean conditions.
        yes: The value to insert if the condition is True.
        no: The value to insert if the condition is False.

    Returns:
        A tensor composed of `yes` and `no` values according to the `conditions`.

    Raises:
        ValueError: If `condition` is an unacceptable data type.

    Example:
        >>> n = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
        >>> where(n > 4, n, -1).tolist()
        [[-1, -1, -1], [-1, -1, 5], [6, 7, 8]]
    """
    backend = _dispatch(condition, "where")
    return np.where(condition, yes, no) if backend is None else backend.where(condition, yes, no)


@fe_export("fe.backend.matmul", "fe.backend._matmul.matmul")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Perform matrix multiplication on `a` and `b`.

    Args:
        a: The first matrix.
        b: The second matrix (of the same kind as `a`).

    Returns:
        The matrix multiplication result of a * b.

    Raises:
        ValueError: If either `a` or `b` are unacceptable or non-matching data types.

    Example:
        >>> matmul(np.array([[0, 1, 2], [3, 4, 5]]), np.array([[1], [2], [3]])).tolist()
        [[8], [26]]
    """
    backend = _dispatch(a, "matmul")
    if backend is not _dispatch(b, "matmul"):
        raise ValueError(f"fe.backend.matmul needs two values of the same kind, got {type(a).__name__} and "
                         f"{type(b).__name__}")
    return np.matmul(a, b) if backend is None else backend.matmul(a, b)


def lambertw_halley(x: Any, ops: Any, iterations: int = 8) -> Any:
    """The principal branch W0 of Lambert's W at `x` (>= -1/e), by Halley's method from a branch-aware first guess.

    Written once for every backend: `ops` supplies `exp`, `log1p`, `log`, `sqrt`, `where`, `maximum` (numpy's
    module, or the torch / TensorFlow backend's namespace), and `x` is a floating tensor.

    Args:
        x: The input, floating point.
        ops: The element-wise functions of `x`'s framework.
        iterations: Halley steps (each about triples the correct digits; 8 reaches float64 precision).

    Returns:
        W0(x), same shape and dtype as `x`.
    """
    # first guess: series at the branch point -1/e for x < -0.25; log1p(x) up to e; asymptotic log(x) - log(log(x)).
    p = ops.sqrt(ops.maximum(2.0 * (math.e * x + 1.0), 0.0 * x))
    near_branch = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    large = ops.maximum(x, 0.0 * x + math.e)
    guess = ops.where(x < -0.25, near_branch, ops.where(x < math.e, ops.log1p(ops.maximum(x, 0.0 * x - 0.25)),
                                                        ops.log(large) - ops.log(ops.log(large))))
    w = guess
    for _ in range(iterations):
        ew = ops.exp(w)
        f = w * ew - x
        w1 = w + 1.0
        safe = ops.where(w1 * w1 > 1e-12, w1, 0.0 * w1 + 1.0)  # at the branch point W = -1 exactly: stop moving
        step = f / (ew * safe - (w + 2.0) * f / (2.0 * safe))
        w = ops.where(w1 * w1 > 1e-12, w - step, w)
    return w


@fe_export("fe.backend.lambertw", "fe.backend._lambertw.lambertw")
def lambertw(tensor: Tensor) -> Tensor:
    """Compute the k=0 branch of the Lambert W function.

    See https://en.wikipedia.org/wiki/Lambert_W_function for details. Only valid for inputs >= -1/e (approx -0.368).
    This is not checked, for the sake of speed; out of domain the result may be NaN or meaningless.

    Args:
        tensor: The input value (integers are computed in float32, numpy floats in their own precision).

    Returns:
        The lambertw function evaluated at `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> np.round(lambertw(np.array([-1.0 / math.e, 0, math.e, 5, 100])), 3).tolist()
        [-1.0, 0.0, 1.0, 1.327, 3.386]
    """
    backend = _dispatch(tensor, "lambertw")
    if backend is not None:
        return backend.lambertw(tensor)
    array = np.asarray(tensor)
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float32)
    return lambertw_halley(array, np).astype(array.dtype)

