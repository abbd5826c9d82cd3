"""TensorFlow losses behind `fe_core.backend.losses` (float32 under mixed precision; channel axis last)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import tensorflow as tf

from fe_tf.backend._tensors import cast_to, full_precision

__all__ = ["matched_pair", "mean_squared_error", "l1_loss", "smooth_l1_loss", "huber", "hinge", "focal_elements",
           "float_like", "at_least_one", "dice_inputs", "channel_axis", "cast_like", "nan_where"]


def matched_pair(y_true: Any, y_pred: Any) -> Tuple[tf.Tensor, tf.Tensor]:
    """(labels, prediction) as float tensors of the prediction's shape (half precision promoted to float32)."""
    pred = full_precision(y_pred)
    if not pred.dtype.is_floating:
        pred = tf.cast(pred, tf.float32)
    true = cast_to(y_true, pred.dtype)
    if true.shape == pred.shape:
        return true, pred
    if true.shape.rank != pred.shape.rank or (true.shape.is_fully_defined() and pred.shape.is_fully_defined()
                                              and true.shape.num_elements() == pred.shape.num_elements()):
        true = tf.reshape(true, tf.shape(pred))
    return true, pred


def mean_squared_error(y_true: Any, y_pred: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.mean_squared_error`."""
    true, pred = matched_pair(y_true, y_pred)
    return tf.reduce_mean(tf.math.squared_difference(pred, true), axis=-1)


def l1_loss(y_true: Any, y_pred: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.l1_loss`."""
    true, pred = matched_pair(y_true, y_pred)
    return tf.reduce_mean(tf.abs(pred - true), axis=-1)


def smooth_l1_loss(y_true: Any, y_pred: Any, beta: float) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.smooth_l1_loss`."""
    true, pred = matched_pair(y_true, y_pred)
    error = tf.abs(pred - true)
    return tf.reduce_mean(tf.where(error < beta, 0.5 * tf.square(error) / beta, error - 0.5 * beta), axis=-1)


def huber(y_true: Any, y_pred: Any, beta: float) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.huber`."""
    true, pred = matched_pair(y_true, y_pred)
    error = tf.abs(pred - true)
    return tf.reduce_mean(tf.where(error <= beta, 0.5 * tf.square(error), beta * (error - 0.5 * beta)), axis=-1)


def hinge(y_true: Any, y_pred: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.hinge`."""
    true, pred = matched_pair(y_true, y_pred)
    return tf.reduce_mean(tf.maximum(1.0 - true * pred, 0.0), axis=-1)


def focal_elements(y_true: Any, y_pred: Any, gamma: float, alpha: Optional[float], from_logits: bool,
                   label_smoothing: float) -> tf.Tensor:
    """The element-wise focal loss (same shape as `y_pred`)."""
    true, pred = matched_pair(y_true, y_pred)
    if label_smoothing:
        true = true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        probability = tf.sigmoid(pred)
        cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(labels=true, logits=pred)
    else:
        probability = tf.clip_by_value(pred, 1e-7, 1.0 - 1e-7)
        cross_entropy = -(true * tf.math.log(probability) + (1.0 - true) * tf.math.log1p(-probability))
    loss = cross_entropy
    if gamma:
        p_t = probability * true + (1.0 - probability) * (1.0 - true)
        loss = loss * tf.pow(1.0 - p_t, gamma)
    if alpha is not None:
        loss = (alpha * true + (1.0 - alpha) * (1.0 - true)) * loss
    return loss


def float_like(value: Any, like: tf.Tensor) -> tf.Tensor:
    """`value` cast to `like`'s dtype and shaped like it."""
    value = tf.cast(value, like.dtype)
    return tf.reshape(value, tf.shape(like)) if value.shape.rank != like.shape.rank else value


def at_least_one(value: tf.Tensor) -> tf.Tensor:
    """`value` with every element below 1 raised to 1."""
    return tf.maximum(value, tf.cast(1.0, value.dtype))


def dice_inputs(y_pred: Any, y_true: Any) -> Tuple[tf.Tensor, tf.Tensor]:
    """(prediction, labels) for `dice_score`: float32 for half-precision or integer predictions."""
    pred = full_precision(y_pred)
    if not pred.dtype.is_floating:
        pred = tf.cast(pred, tf.float32)
    return pred, tf.cast(y_true, pred.dtype)


def channel_axis(tensor: tf.Tensor) -> int:
    """The channel axis of `tensor` for `dice_score`."""
    return tensor.shape.rank - 1


def cast_like(value: Any, like: tf.Tensor) -> tf.Tensor:
    """`value` (a tensor or a boolean mask) cast to `like`'s dtype."""
    return tf.cast(value, like.dtype)


def nan_where(condition: tf.Tensor, value: tf.Tensor) -> tf.Tensor:
    """`value` with NaN where `condition` holds."""
    return tf.where(condition, tf.fill(tf.shape(value), tf.constant(float("nan"), value.dtype)), value)
