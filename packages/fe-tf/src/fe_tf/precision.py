"""Mixed precision for Keras 3 models: the `mixed_float16` policy while models are built, and loss scaling.

`build(..., mixed_precision=True)` builds models under the `mixed_float16` dtype policy (layers compute in float16 and
keep float32 variables) and wraps their optimizers in `keras.mixed_precision.LossScaleOptimizer`, which scales the loss
before differentiation, unscales the gradients, skips steps with non-finite gradients and adapts the scale.

Example:
    >>> # with precision_policy(mixed_precision=True):
    >>> #     model = LeNet()              # layers compute in float16
    >>> # optimizer = wrap_loss_scaling(keras.optimizers.Adam())  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import keras
import tensorflow as tf

__all__ = ["MIXED_POLICY", "FULL_POLICY", "precision_policy", "wrap_loss_scaling", "is_loss_scaled", "loss_scale",
           "scale_loss", "to_full_precision"]

MIXED_POLICY = "mixed_float16"
FULL_POLICY = "float32"


@contextlib.contextmanager
def precision_policy(mixed_precision: bool) -> Iterator[None]:
    """Build models under `mixed_float16` (or `float32`) and restore the previous global policy afterwards.

    As in FastEstimator, the flag decides the precision of the models built inside: `mixed_precision=False` builds
    float32 models even if the user set another global policy.

    Args:
        mixed_precision: Whether models built inside compute in float16.
    """
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(MIXED_POLICY if mixed_precision else FULL_POLICY)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def wrap_loss_scaling(optimizer: Any) -> Any:
    """Wrap a Keras optimizer in a dynamic `LossScaleOptimizer` (an already wrapped one is returned as is)."""
    if is_loss_scaled(optimizer):
        return optimizer
    return keras.mixed_precision.LossScaleOptimizer(optimizer)


def is_loss_scaled(optimizer: Any) -> bool:
    """Whether `optimizer` is a Keras `LossScaleOptimizer`."""
    return isinstance(optimizer, keras.mixed_precision.LossScaleOptimizer)


def loss_scale(optimizer: Any) -> Any:
    """The current loss scale of a `LossScaleOptimizer` (a float32 scalar; always a power of two)."""
    return tf.cast(optimizer.dynamic_scale, tf.float32) if optimizer.built else tf.constant(
        float(optimizer.initial_scale))


def scale_loss(optimizer: Any, loss: Any) -> Any:
    """The loss to differentiate: multiplied by the loss scale for a `LossScaleOptimizer`, else unchanged."""
    if is_loss_scaled(optimizer):
        return optimizer.scale_loss(loss)
    return loss


def to_full_precision(value: Any) -> Any:
    """Cast a float16/bfloat16 tensor to float32 (other values are returned unchanged)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype in (tf.float16, tf.bfloat16):
        return tf.cast(value, tf.float32)
    return value
