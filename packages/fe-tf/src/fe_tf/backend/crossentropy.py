"""TensorFlow cross entropies behind `fe_core.backend.crossentropy` (class axis last, float32 under mixed precision).

Written with TensorFlow ops (no Keras wrappers) so they cost little eagerly and trace cleanly inside `tf.function`.
Class weights may be a dict or a `tf.lookup.StaticHashTable` (FastEstimator's TensorFlow form).
"""
from __future__ import annotations

from typing import Any, Optional

import tensorflow as tf

from fe_core.backend.crossentropy import EPSILON, weight_table

from fe_tf.backend._tensors import as_tensor, cast_to, full_precision

__all__ = ["binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "sparse_labels"]


def _weights_of(labels: tf.Tensor, class_weights: Any, num_classes: int) -> tf.Tensor:
    if isinstance(class_weights, dict):
        return tf.gather(tf.constant(weight_table(class_weights, num_classes)), tf.cast(labels, tf.int32))
    return tf.cast(class_weights.lookup(tf.cast(labels, class_weights.key_dtype)), tf.float32)


def _weighted(loss: tf.Tensor, labels: tf.Tensor, class_weights: Any, num_classes: int) -> tf.Tensor:
    return loss * tf.cast(_weights_of(labels, class_weights, num_classes), loss.dtype)


def _finish(loss: tf.Tensor, average_loss: bool) -> tf.Tensor:
    return tf.reduce_mean(loss) if average_loss else loss


def binary_crossentropy(y_pred: Any, y_true: Any, from_logits: bool, average_loss: bool,
                        class_weights: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.binary_crossentropy`."""
    pred = full_precision(y_pred)
    target = cast_to(y_true, pred.dtype)
    if target.shape.rank != pred.shape.rank:
        target = tf.reshape(target, tf.shape(pred))
    if from_logits:
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=pred)
    else:
        # As Keras 2's binary cross entropy (FastEstimator's): clipped, and epsilon inside both logarithms
        probability = tf.clip_by_value(pred, EPSILON, 1.0 - EPSILON)
        loss = -(target * tf.math.log(probability + EPSILON)
                 + (1.0 - target) * tf.math.log(1.0 - probability + EPSILON))
    if class_weights is not None and (not isinstance(class_weights, dict) or class_weights):
        loss = _weighted(loss, tf.round(target), class_weights, 2)
    if loss.shape.rank is None or loss.shape.rank > 1:
        loss = tf.reduce_mean(tf.reshape(loss, tf.stack([tf.shape(loss)[0], -1])), axis=1)
    return _finish(loss, average_loss)


def _log_probabilities(pred: tf.Tensor, from_logits: bool) -> tf.Tensor:
    if from_logits:
        return tf.nn.log_softmax(pred, axis=-1)
    pred = pred / tf.reduce_sum(pred, axis=-1, keepdims=True)
    return tf.math.log(tf.clip_by_value(pred, EPSILON, 1.0 - EPSILON))


def categorical_crossentropy(y_pred: Any, y_true: Any, from_logits: bool, average_loss: bool,
                             class_weights: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.categorical_crossentropy`."""
    pred = full_precision(y_pred)
    target = cast_to(y_true, pred.dtype)
    if from_logits:
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=pred, axis=-1)
    else:
        loss = -tf.reduce_sum(target * _log_probabilities(pred, False), axis=-1)
    if class_weights is not None and (not isinstance(class_weights, dict) or class_weights):
        loss = _weighted(loss, tf.argmax(target, axis=-1), class_weights, int(pred.shape[-1]))
    return _finish(loss, average_loss)


def sparse_labels(y_true: Any, pred_rank: Optional[int]) -> tf.Tensor:
    """Labels without a trailing axis of 1 (when they have as many axes as the prediction)."""
    labels = as_tensor(y_true)
    if labels.shape.rank == pred_rank:
        labels = tf.squeeze(labels, axis=-1)
    return labels


def sparse_categorical_crossentropy(y_pred: Any, y_true: Any, from_logits: bool, average_loss: bool,
                                    class_weights: Any) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.sparse_categorical_crossentropy`."""
    pred = full_precision(y_pred)
    labels = sparse_labels(y_true, pred.shape.rank)
    int_labels = tf.cast(labels, tf.int64) if labels.dtype not in (tf.int32, tf.int64) else labels
    if from_logits:
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=int_labels, logits=pred)
    else:
        log_p = _log_probabilities(pred, False)
        loss = -tf.gather(log_p, int_labels, axis=-1, batch_dims=log_p.shape.rank - 1)
    if class_weights is not None and (not isinstance(class_weights, dict) or class_weights):
        loss = _weighted(loss, int_labels, class_weights, int(pred.shape[-1]))
    return _finish(loss, average_loss)
