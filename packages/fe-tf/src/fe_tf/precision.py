"""Mixed precision for Keras models: the `mixed_float16` policy while models are built, and loss scaling.

`build(..., mixed_precision=True)` builds models under the `mixed_float16` dtype policy (layers compute in float16 and
keep float32 variables) and wraps their optimizers in `keras.mixed_precision.LossScaleOptimizer`, which scales the loss
before differentiation, unscales the gradients, skips steps with non-finite gradients and adapts the scale. Keras 3
and tf-keras (Keras 2) name these differently (`scale_loss` / `get_scaled_loss`, `dynamic_scale` / `loss_scale`, and
Keras 2's `apply_gradients` expects unscaled gradients); the functions here hide the difference.

Example:
    >>> # with precision_policy(mixed_precision=True):
    >>> #     model = LeNet()              # layers compute in float16
    >>> # optimizer = wrap_loss_scaling(keras.optimizers.Adam())  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import tensorflow as tf

from fe_tf._keras import KERAS2, dtype_policy, keras, set_dtype_policy

__all__ = ["MIXED_POLICY", "FULL_POLICY", "precision_policy", "wrap_loss_scaling", "is_loss_scaled", "loss_scale",
           "scale_loss", "apply_gradients", "to_full_precision"]

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
    previous = dtype_policy()
    set_dtype_policy(MIXED_POLICY if mixed_precision else FULL_POLICY)
    try:
        yield
    finally:
        set_dtype_policy(previous)


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
    if KERAS2:
        return tf.cast(optimizer.loss_scale, tf.float32)
    return tf.cast(optimizer.dynamic_scale, tf.float32) if optimizer.built else tf.constant(
        float(optimizer.initial_scale))


def scale_loss(optimizer: Any, loss: Any) -> Any:
    """The loss to differentiate: multiplied by the loss scale for a `LossScaleOptimizer`, else unchanged."""
    if is_loss_scaled(optimizer):
        return optimizer.get_scaled_loss(loss) if KERAS2 else optimizer.scale_loss(loss)
    return loss


def apply_gradients(optimizer: Any, gradients: Any, variables: Any) -> None:
    """Update `variables` with `gradients`, which for a `LossScaleOptimizer` are scaled by its loss scale (as they
    come out of differentiating `scale_loss`): it unscales them, skips the step when one is not finite and adapts the
    scale (Keras 3 unscales inside `apply_gradients`; tf-keras is given the unscaled gradients)."""
    gradients = list(gradients)
    if KERAS2 and is_loss_scaled(optimizer):
        gradients = optimizer.get_unscaled_gradients(gradients)
    optimizer.apply_gradients(zip(gradients, variables))


def to_full_precision(value: Any) -> Any:
    """Cast a float16/bfloat16 tensor to float32 (other values are returned unchanged)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype in (tf.float16, tf.bfloat16):
        return tf.cast(value, tf.float32)
    return value
