"""Losses besides cross entropy: `mean_squared_error`, `l1_loss`, `smooth_l1_loss`, `huber`, `hinge`, `focal_loss`,
`dice_score`, on numpy arrays, torch tensors and TensorFlow tensors.

The regression losses and `hinge` average over the last axis (one value per sample for (batch, n) inputs), like
FastEstimator's. Labels are cast to the prediction's type (float32 for float16/bfloat16 predictions, so mixed
precision computes losses in float32), and labels with as many elements as the prediction but another shape ((batch,)
vs (batch, 1)) are reshaped to it. `focal_loss` and `dice_score` are written once here from the element-wise part
(per backend) and the dispatching reductions.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple, TypeVar

import numpy as np

from fe_core.backend.dispatch import Dispatch
from fe_core.backend.reductions import reduce_max, reduce_mean, reduce_sum
from fe_core.export import fe_export

__all__ = ["mean_squared_error", "l1_loss", "smooth_l1_loss", "huber", "hinge", "focal_loss", "dice_score"]

Tensor = TypeVar("Tensor")

_dispatch = Dispatch("losses")
_REDUCTIONS = ("none", "mean", "sum")


def _np_pair(y_true: Any, y_pred: Any) -> Tuple[np.ndarray, np.ndarray]:
    pred = np.asarray(y_pred)
    if pred.dtype not in (np.float32, np.float64):
        pred = pred.astype(np.float32)
    true = np.asarray(y_true).astype(pred.dtype)
    if true.shape != pred.shape and true.size == pred.size:
        true = true.reshape(pred.shape)
    return true, pred


def _check_beta(beta: float, function: str) -> None:
    if not beta > 0:
        raise ValueError(f"fe.backend.{function} needs a positive beta, got {beta!r}")


@fe_export("fe.backend.mean_squared_error", "fe.backend._mean_squared_error.mean_squared_error")
def mean_squared_error(y_true: Tensor, y_pred: Tensor) -> Tensor:
    """Calculate mean squared error between two tensors (averaged over the last axis).

    Args:
        y_true: Ground truth class labels with a shape like (batch) or (batch, n_classes). dtype: int, float16, float32.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.

    Returns:
        The MSE between `y_true` and `y_pred`: one value per sample for (batch, n) inputs.

    Raises:
        ValueError: If `y_pred` is an unacceptable data type.

    Example:
        >>> mean_squared_error(np.array([[1], [3], [2], [0]]), np.array([[2.0], [0.0], [2.0], [1.0]])).tolist()
        [1.0, 9.0, 0.0, 1.0]
    """
    backend = _dispatch(y_pred, "mean_squared_error")
    if backend is None:
        true, pred = _np_pair(y_true, y_pred)
        return np.mean(np.square(pred - true), axis=-1)
    return backend.mean_squared_error(y_true, y_pred)


@fe_export("fe.backend.l1_loss", "fe.backend._l1_loss.l1_loss")
def l1_loss(y_true: Tensor, y_pred: Tensor) -> Tensor:
    """Calculate Mean Absolute Error between two tensors (averaged over the last axis).

    Args:
        y_true: Ground truth class labels with a shape like (batch) or (batch, n_classes). dtype: int, float16, float32.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.

    Returns:
        The L1 loss between `y_true` and `y_pred`.

    Raises:
        ValueError: If `y_pred` is an unacceptable data type.

    Example:
        >>> l1_loss(np.array([[1], [3], [2], [0]]), np.array([[2.0], [0.0], [2.0], [1.0]])).tolist()
        [1.0, 3.0, 0.0, 1.0]
    """
    backend = _dispatch(y_pred, "l1_loss")
    if backend is None:
        true, pred = _np_pair(y_true, y_pred)
        return np.mean(np.abs(pred - true), axis=-1)
    return backend.l1_loss(y_true, y_pred)


@fe_export("fe.backend.smooth_l1_loss", "fe.backend._smooth_l1_loss.smooth_l1_loss")
def smooth_l1_loss(y_true: Tensor, y_pred: Tensor, beta: float = 1.0) -> Tensor:
    """Calculate Smooth L1 Loss between two tensors (averaged over the last axis).

    Per element: `0.5 * e**2 / beta` where the absolute error `e < beta`, else `e - 0.5 * beta`.

    Args:
        y_true: Ground truth class labels with a shape like (batch) or (batch, n_classes). dtype: int, float16, float32.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.
        beta: Threshold factor. Needs to be a positive number.

    Returns:
        Smooth L1 between `y_true` and `y_pred` wrt beta.

    Raises:
        ValueError: If `y_pred` is an unacceptable data type, or `beta` is not positive.

    Example:
        >>> np.round(smooth_l1_loss(np.array([[1], [3]]), np.array([[2.0], [0.0]]), beta=0.65), 4).tolist()
        [0.675, 2.675]
    """
    _check_beta(beta, "smooth_l1_loss")
    backend = _dispatch(y_pred, "smooth_l1_loss")
    if backend is None:
        true, pred = _np_pair(y_true, y_pred)
        error = np.abs(pred - true)
        return np.mean(np.where(error < beta, 0.5 * error**2 / beta, error - 0.5 * beta), axis=-1)
    return backend.smooth_l1_loss(y_true, y_pred, beta)


@fe_export("fe.backend.huber", "fe.backend._huber.huber")
def huber(y_true: Tensor, y_pred: Tensor, beta: float = 1.0) -> Tensor:
    """Calculate Huber Loss between two tensors (averaged over the last axis).

    Per element: `0.5 * e**2` where the absolute error `e <= beta`, else `beta * (e - 0.5 * beta)`.

    Args:
        y_true: Ground truth class labels with a shape like (batch) or (batch, n_classes). dtype: int, float16, float32.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.
        beta: Threshold factor. Needs to be a positive number.

    Returns:
        The Huber loss between `y_true` and `y_pred` wrt beta.

    Raises:
        ValueError: If `y_pred` is an unacceptable data type, or `beta` is not positive.

    Example:
        >>> np.round(huber(np.array([[1], [3], [2]]), np.array([[2.0], [0.0], [2.0]]), beta=0.65), 5).tolist()
        [0.43875, 1.73875, 0.0]
    """
    _check_beta(beta, "huber")
    backend = _dispatch(y_pred, "huber")
    if backend is None:
        true, pred = _np_pair(y_true, y_pred)
        error = np.abs(pred - true)
        return np.mean(np.where(error <= beta, 0.5 * error**2, beta * (error - 0.5 * beta)), axis=-1)
    return backend.huber(y_true, y_pred, beta)


@fe_export("fe.backend.hinge", "fe.backend._hinge.hinge")
def hinge(y_true: Tensor, y_pred: Tensor) -> Tensor:
    """Calculate the hinge loss between two tensors: the mean over the last axis of `max(0, 1 - y_true * y_pred)`.

    Args:
        y_true: Ground truth class labels which should take values of 1 or -1.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.

    Returns:
        The hinge loss between `y_true` and `y_pred`.

    Raises:
        ValueError: If `y_pred` is an unacceptable data type.

    Example:
        >>> np.round(hinge(np.array([[-1, 1, 1, -1]]), np.array([[0.1, 0.9, 0.05, 0.05]])), 4).tolist()
        [0.8]
    """
    backend = _dispatch(y_pred, "hinge")
    if backend is None:
        true, pred = _np_pair(y_true, y_pred)
        return np.mean(np.maximum(1.0 - true * pred, 0.0), axis=-1)
    return backend.hinge(y_true, y_pred)


def _np_focal_elements(y_true: Any, y_pred: Any, gamma: float, alpha: Optional[float], from_logits: bool,
                       label_smoothing: float) -> np.ndarray:
    true, pred = _np_pair(y_true, y_pred)
    if label_smoothing:
        true = true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        probability = 1.0 / (1.0 + np.exp(-pred))
        cross_entropy = np.maximum(pred, 0) - pred * true + np.log1p(np.exp(-np.abs(pred)))
    else:
        probability = np.clip(pred, 1e-7, 1.0 - 1e-7)
        cross_entropy = -(true * np.log(probability) + (1.0 - true) * np.log(1.0 - probability))
    p_t = probability * true + (1.0 - probability) * (1.0 - true)
    loss = cross_entropy * (1.0 - p_t)**gamma if gamma else cross_entropy
    if alpha is not None:
        loss = (alpha * true + (1.0 - alpha) * (1.0 - true)) * loss
    return loss


@fe_export("fe.backend.focal_loss", "fe.backend._focal_loss.focal_loss", "fe.op.tensorop.loss.focal_loss.focal_loss")
def focal_loss(y_true: Tensor,
               y_pred: Tensor,
               gamma: float = 2.0,
               alpha: float = 0.25,
               from_logits: bool = False,
               normalize: bool = True,
               shape_reduction: str = "sum",
               sample_reduction: str = "mean",
               label_smoothing: float = 0.0) -> Tensor:
    """Calculate the (sigmoid) focal loss between two tensors, as used by RetinaNet (https://arxiv.org/abs/1708.02002).

    Per element: `alpha_t * (1 - p_t)**gamma * BCE(y_true, y_pred)` with `p_t` the probability given to the true
    label and `alpha_t = alpha` for positives, `1 - alpha` for negatives.

    Args:
        y_true: Ground truth class labels with shape([batch_size, d0, .. dN]), which should take values of 1 or 0.
        y_pred: Prediction score for each class, with a shape like y_true. dtype: float32 or float16.
        gamma: Exponent of the modulating factor (1 - p_t) to balance easy vs hard examples (None: 0, plain BCE).
        alpha: Weighting factor in range [0, 1] to balance positive vs negative examples, or -1/None to ignore.
        from_logits: Whether y_pred is logits (without sigmoid).
        normalize: Whether to divide each sample's loss by its number of positive labels (at least 1).
        shape_reduction: 'none' | 'mean' | 'sum' over the non-batch axes of each sample.
        sample_reduction: 'none' | 'mean' | 'sum' over the batch (after `shape_reduction`).
        label_smoothing: Float in [0, 1]; if > 0 the labels are squeezed towards 0.5 (`1 - 0.5 * label_smoothing`
            for the target class and `0.5 * label_smoothing` for the other).

    Returns:
        The focal loss between `y_true` and `y_pred`.

    Raises:
        ValueError: If `y_pred` or `y_true` is an unacceptable data type, `gamma` is negative, `alpha` is outside
            [0, 1] (and not -1/None), or a reduction is not one of 'none', 'mean', 'sum'.

    Example:
        >>> true = np.array([[1], [1], [1], [0], [0], [0]])
        >>> pred = np.array([[0.97], [0.91], [0.73], [0.27], [0.09], [0.03]])
        >>> round(float(focal_loss(true, pred, gamma=None, alpha=None)), 4), round(float(focal_loss(true, pred)), 5)
        (0.1465, 0.00396)
    """
    gamma = 0.0 if gamma is None else float(gamma)
    if gamma < 0:
        raise ValueError(f"fe.backend.focal_loss: gamma must be >= 0 (or None), got {gamma}")
    if alpha is not None and alpha != -1 and not 0 <= alpha <= 1:
        raise ValueError(f"fe.backend.focal_loss: alpha must be in [0, 1], or -1/None to ignore it, got {alpha}")
    alpha = None if alpha is None or alpha == -1 else float(alpha)
    for name, value in (("shape_reduction", shape_reduction), ("sample_reduction", sample_reduction)):
        if value not in _REDUCTIONS:
            raise ValueError(f"fe.backend.focal_loss: {name} must be one of {_REDUCTIONS}, got {value!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"fe.backend.focal_loss: label_smoothing must be in [0, 1], got {label_smoothing}")
    backend = _dispatch(y_pred, "focal_loss")
    _dispatch(y_true, "focal_loss")
    if backend is None:
        loss = _np_focal_elements(y_true, y_pred, gamma, alpha, from_logits, label_smoothing)
    else:
        loss = backend.focal_elements(y_true, y_pred, gamma, alpha, from_logits, label_smoothing)
    sample_axes = list(range(1, len(loss.shape)))
    if normalize and sample_axes:
        positives = reduce_sum(_as_float_like(y_true, loss, backend), axis=sample_axes, keepdims=True)
        loss = loss / _at_least_one(positives, backend)
    if shape_reduction != "none" and sample_axes:
        loss = (reduce_sum if shape_reduction == "sum" else reduce_mean)(loss, axis=sample_axes)
    if sample_reduction == "mean":
        loss = reduce_mean(loss)
    elif sample_reduction == "sum":
        loss = reduce_sum(loss)
    return loss


def _as_float_like(value: Any, like: Any, backend: Any) -> Any:
    if backend is None:
        return np.asarray(value).astype(like.dtype).reshape(like.shape)
    return backend.float_like(value, like)


def _at_least_one(value: Any, backend: Any) -> Any:
    return np.maximum(value, 1.0) if backend is None else backend.at_least_one(value)


@fe_export("fe.backend.dice_score", "fe.backend._dice_score.dice_score")
def dice_score(y_pred: Tensor,
               y_true: Tensor,
               soft_dice: bool = False,
               sample_average: bool = False,
               channel_average: bool = False,
               channel_weights: Optional[Tensor] = None,
               mask_overlap: bool = True,
               threshold: Optional[float] = None,
               empty_nan: bool = False,
               epsilon: float = 1e-6) -> Tensor:
    """Compute the Dice score `2 * |pred * true| / (|pred| + |true|)` per sample and channel.

    Args:
        y_pred: Prediction with a shape like (Batch, C, ...) for torch and (Batch, ..., C) for tensorflow or numpy.
        y_true: Ground truth class labels with a shape like `y_pred`.
        soft_dice: Whether to square elements in the denominator.
        sample_average: Whether to average the dice score along the batch dimension.
        channel_average: Whether to average the dice score along the channel dimension.
        channel_weights: A tensor of weights (size 1xN_Channels) to apply to each channel before reduction.
        mask_overlap: Whether an individual pixel can belong to only 1 class (False) or more than 1 class (True). If
            False, a threshold of 0.0 can be used to binarize by whatever the maximum predicted class is.
        threshold: The threshold for binarizing the prediction. Set this to 0.0 if you are using a background class.
            Set to None if continuous values are desired (ex. for a loss).
        empty_nan: If a target mask is totally empty (object is missing) and the prediction is also empty, should this
            function return 0.0 (False) or NaN (True) for that particular mask channel.
        epsilon: floating point value to avoid divide by zero error.

    Returns:
        The dice score between `y_pred` and `y_true`: (Batch, C), without the channel axis when `channel_average`,
        without the batch axis when `sample_average`. Computed in float32 for float16 predictions.

    Raises:
        AssertionError: If `y_true` or `y_pred` is something other than a numpy array, torch tensor or tf tensor.

    Example:
        >>> true = np.array([[[1, 0], [1, 1]]])   # one sample of 2 pixels with 2 channels (channels last)
        >>> pred = np.array([[[1.0, 0.0], [0.0, 1.0]]])
        >>> np.round(dice_score(pred, true), 4).tolist()
        [[0.6667, 1.0]]
    """
    try:
        backend = _dispatch(y_pred, "dice_score")
        _dispatch(y_true, "dice_score")
    except ValueError as error:
        raise AssertionError(str(error)) from None
    if backend is None:
        pred = np.asarray(y_pred)
        pred = pred.astype(np.float32) if pred.dtype not in (np.float32, np.float64) else pred
        true = np.asarray(y_true).astype(pred.dtype)
        channel_axis = pred.ndim - 1
    else:
        pred, true = backend.dice_inputs(y_pred, y_true)
        channel_axis = backend.channel_axis(pred)
    rank = len(pred.shape)
    spatial_axes = [axis for axis in range(1, rank) if axis != channel_axis]
    if not mask_overlap:
        top = reduce_max(pred, axis=channel_axis, keepdims=True)
        pred = pred * _cast_like(pred >= top, pred, backend)
    if threshold is not None:
        pred = _cast_like(pred > threshold, pred, backend)
    numerator = reduce_sum(pred * true, axis=spatial_axes)
    if soft_dice:
        denominator = reduce_sum(pred * pred, axis=spatial_axes) + reduce_sum(true * true, axis=spatial_axes)
    else:
        denominator = reduce_sum(pred, axis=spatial_axes) + reduce_sum(true, axis=spatial_axes)
    dice = 2.0 * numerator / (denominator + epsilon)  # (Batch, C)
    if channel_weights is not None:
        dice = dice * _cast_like(channel_weights, dice, backend)
    if empty_nan:
        empty = (reduce_max(true, axis=spatial_axes) + reduce_max(pred, axis=spatial_axes)) < 1e-4
        dice = np.where(empty, np.nan, dice).astype(dice.dtype) if backend is None else backend.nan_where(empty, dice)
    if channel_average:
        dice = reduce_mean(dice, axis=-1)
    if sample_average:
        dice = reduce_mean(dice, axis=0)
    return dice


def _cast_like(value: Any, like: Any, backend: Any) -> Any:
    if backend is None:
        return np.asarray(value).astype(like.dtype)
    return backend.cast_like(value, like)
