"""Normalizations: `zscore`, `normalize` (FastEstimator's `tensor_normalize`) and `iwd` (inverse weighted distance).

Each is written once from the dispatching functions (reductions, `maximum`, `pow`, `cast`), so they serve numpy,
torch and TensorFlow alike, with gradients, inside `tf.function` too. Integer input is computed in float32 (numpy:
in float64, as numpy's own mean does).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, TypeVar, Union

import numpy as np

from fe_core.backend.conversion import cast, convert_tensor_precision
from fe_core.backend.dispatch import Dispatch
from fe_core.backend.elementwise import maximum
from fe_core.backend.elementwise import pow as tensor_power
from fe_core.backend.reductions import reduce_mean, reduce_std, reduce_sum
from fe_core.export import fe_export

__all__ = ["zscore", "normalize", "iwd"]

Tensor = TypeVar("Tensor")

_dispatch = Dispatch("normalization")


def _floating(tensor: Any, function: str) -> Any:
    backend = _dispatch(tensor, function)
    if backend is None:
        array = np.asarray(tensor)
        return array if np.issubdtype(array.dtype, np.floating) else array.astype(np.float64)
    return tensor if backend.is_floating(tensor) else cast(tensor, "float32")


@fe_export("fe.backend.zscore", "fe.backend._zscore.zscore")
def zscore(data: Tensor, epsilon: float = 1e-7) -> Tensor:
    """Apply Zscore processing to a given tensor or array: `(data - mean) / max(std, epsilon)` over all elements.

    Args:
        data: The input tensor or array.
        epsilon: A numerical stability constant.

    Returns:
        Data after subtracting mean and divided by standard deviation.

    Raises:
        ValueError: If `data` is an unacceptable data type.

    Example:
        >>> np.round(zscore(np.array([[0, 1], [2, 3]])), 4).tolist()
        [[-1.3416, -0.4472], [0.4472, 1.3416]]
    """
    data = _floating(data, "zscore")
    mean = reduce_mean(data)
    std = reduce_std(data)
    return (data - mean) / maximum(std, epsilon)


def _channel_values(value: Union[float, Sequence[float]], scale: float, like: Any, backend: Any) -> Any:
    scaled = np.asarray(value, dtype=np.float64) * scale
    if backend is None:
        return scaled.astype(like.dtype)
    return backend.constant_like(scaled, like)


@fe_export("fe.backend.normalize", "fe.backend._tensor_normalize.normalize")
def normalize(tensor: Tensor,
              mean: Union[float, Sequence[float]] = (0.485, 0.456, 0.406),
              std: Union[float, Sequence[float]] = (0.229, 0.224, 0.225),
              max_pixel_value: float = 255.0,
              epsilon: float = 1e-7) -> Tensor:
    """Compute the normalized value of a `tensor`: `(tensor - mean * max_pixel_value) / (std * max_pixel_value +
    epsilon)`, in float32 (TensorFlow: the Keras policy's compute dtype).

    Per-channel `mean` / `std` apply along the channel axis of images: the last axis for numpy and TensorFlow
    (H, W, C), axis -3 for torch tensors of 3 or more dimensions ((C, H, W), as torchvision's `Normalize`).

    Args:
        tensor: The input 'tensor' value.
        mean: The mean which needs to applied (eg: 3.8, (0.485, 0.456, 0.406)).
        std: The standard deviation which needs to applied (eg: 3.8, (0.229, 0.224, 0.225)).
        max_pixel_value: The max value of the input data (eg: 255, 65025) to be multiplied with mean and std to get
            actual mean and std. To directly use the mean and std set max_pixel_value to 1.
        epsilon: Value added to std to avoid divide by zero error.

    Returns:
        The normalized values of `tensor`.

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> n = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
        >>> [[round(float(v), 3) for v in row] for row in normalize(n, (0.5, 0.625), (0.2795, 0.2795), 8.0)[0]]
        [[-1.342, -1.342], [-0.447, -0.447]]
    """
    tensor = convert_tensor_precision(tensor)
    backend = _dispatch(tensor, "normalize")
    shift = _channel_values(mean, max_pixel_value, tensor, backend)
    scale = _channel_values(std, max_pixel_value, tensor, backend)
    return (tensor - shift) / (scale + epsilon)


@fe_export("fe.backend.iwd", "fe.backend._iwd.iwd")
def iwd(tensor: Tensor,
        power: float = 1.0,
        max_prob: float = 0.95,
        pairwise_distance: float = 1.0,
        eps: Optional[Tensor] = None) -> Tensor:
    """Compute the Inverse Weighted Distance from the given input: probabilities proportional to
    `1 / max(distance, eps) ** power` along the last axis.

    This can be used as an activation function for the final layer of a neural network instead of softmax, for
    example `activation=lambda x: iwd(tf.nn.sigmoid(x))`.

    Args:
        tensor: The input value. Should be of shape (Batch, C) where every element in C corresponds to a (non-negative)
            distance to a target class.
        power: The power to raise the inverse distances to. 1.0 results in a fairly intuitive probability output.
            Larger powers can widen regions of certainty, whereas values between 0 and 1 can widen regions of
            uncertainty.
        max_prob: The maximum probability to assign to a class estimate when it is distance zero away from the target.
            For numerical stability this must be less than 1.0.
        pairwise_distance: The distance to any other class when the distance to a target class is zero. With a zero
            distance to one class and this distance to every other, that class gets exactly `max_prob`.
        eps: The numeric stability constant: distances below it count as `eps`. If None then it is computed from
            `max_prob` and `pairwise_distance`; if given, those two are ignored.

    Returns:
        A probability distribution of shape (Batch, C) where smaller distances from `tensor` correspond to larger
        probabilities.

    Raises:
        ValueError: If `tensor` is an unacceptable data type, or `max_prob` is not in (0, 1).

    Example:
        >>> np.round(iwd(np.array([[0.5] * 5, [0] + [1] * 4])), 4).tolist()
        [[0.2, 0.2, 0.2, 0.2, 0.2], [0.95, 0.0125, 0.0125, 0.0125, 0.0125]]
    """
    tensor = _floating(tensor, "iwd")
    if eps is None:
        if not 0.0 < max_prob < 1.0:
            raise ValueError(f"fe.backend.iwd: max_prob must be in (0, 1), got {max_prob}")
        others = max(int(tensor.shape[-1]) - 1, 1)
        # distances are floored at eps: a zero distance to one class and `pairwise_distance` to the C-1 others gives
        # weights eps^-p and d^-p, and eps^-p / (eps^-p + (C-1) d^-p) = max_prob exactly for this eps
        eps = pairwise_distance * ((1.0 - max_prob) / (max_prob * others))**(1.0 / power)
    weights = tensor_power(maximum(tensor, eps), -power)
    return weights / reduce_sum(weights, axis=-1, keepdims=True)
