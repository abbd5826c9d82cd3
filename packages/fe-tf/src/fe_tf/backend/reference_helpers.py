"""FastEstimator's TensorFlow-only helpers: `tf_focal_loss`, `resize_tensorflow_tensor`, `pickle_mirroredstrategy`.

fe's own functions (`fe.backend.focal_loss`, `resize_3d`) and checkpoints (fe_tf's MirroredStrategy reducer) do not
need them; they keep scripts that call them directly working.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence, Tuple

import tensorflow as tf

from fe_core.export import fe_export
from fe_tf._keras import keras

__all__ = ["tf_focal_loss", "resize_tensorflow_tensor", "pickle_mirroredstrategy"]


@fe_export("fe.backend.tf_focal_loss", "fe.backend._focal_loss.tf_focal_loss")
def tf_focal_loss(y_true: Any, y_pred: Any, alpha: float = 0.25, gamma: float = 2.0, from_logits: bool = False,
                  label_smoothing: float = 0.0) -> tf.Tensor:
    """Binary focal cross entropy with class balancing (Keras's), averaged over the last axis.

    Args:
        y_true: 0/1 targets.
        y_pred: Probabilities (or logits with `from_logits`), shaped like `y_true`.
        alpha: Weight of the positive class.
        gamma: Focusing exponent.
        from_logits: Whether `y_pred` holds logits.
        label_smoothing: Squeeze targets towards 0.5 by this amount.

    Returns:
        The loss per sample (the last axis averaged).
    """
    return keras.losses.binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=True, alpha=alpha,
                                                  gamma=gamma, from_logits=from_logits,
                                                  label_smoothing=label_smoothing)


@fe_export("fe.backend.resize_tensorflow_tensor", "fe.backend._resize3d.resize_tensorflow_tensor")
def resize_tensorflow_tensor(data: tf.Tensor, output_shape: Sequence[int], resize_mode: str) -> tf.Tensor:
    """Resize a batch of volumes (batch, D, H, W, C) to `output_shape` (D, H, W) with 'nearest' or 'area' resizing.

    Args:
        data: The volumes.
        output_shape: The new (D, H, W).
        resize_mode: 'nearest' or 'area'.

    Returns:
        The resized volumes.
    """
    from fe_core.backend.shapes import resize_3d  # pylint: disable=import-outside-toplevel
    return resize_3d(data, output_shape, resize_mode)


@fe_export("fe.backend.pickle_mirroredstrategy", "fe.backend._save_model.pickle_mirroredstrategy",
           "fe.summary.system.pickle_mirroredstrategy")
def pickle_mirroredstrategy(obj: tf.distribute.MirroredStrategy) -> Tuple[Callable[[], Any], Tuple[()]]:
    """A pickle reducer for a MirroredStrategy: rebuilt as the strategy active when it is loaded.

    fe's checkpoints do not pickle (they store a strategy through fe_tf's state reducer); this serves code that
    pickles objects holding a strategy itself, e.g. `copyreg.pickle(tf.distribute.MirroredStrategy,
    pickle_mirroredstrategy)`.

    Args:
        obj: The strategy.

    Returns:
        (tf.distribute.get_strategy, ()): a reduce tuple.
    """
    return tf.distribute.get_strategy, ()
