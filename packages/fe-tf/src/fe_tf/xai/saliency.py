"""Input gradients of a Keras model's class scores, for `fe_core.xai.saliency.SaliencyNet`."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

__all__ = ["CHANNEL_AXIS", "class_score_gradients"]

#: Where image channels are in this framework's batches (N, H, W, C).
CHANNEL_AXIS = -1


def class_score_gradients(model: tf.keras.Model, inputs: Sequence[np.ndarray], classes: Optional[np.ndarray] = None
                          ) -> Tuple[np.ndarray, np.ndarray, List[np.ndarray]]:
    """Gradients of each sample's class score with respect to the model inputs (called with `training=False`).

    Args:
        model: The model (called with one input, or a list of them; with several outputs the first holds the class
            scores).
        inputs: The model inputs, numpy arrays with a batch axis.
        classes: The class of each sample to explain; None: the predicted (argmax) class.

    Returns:
        (the predicted classes (N,), the explained classes (N,), one gradient array per input (same shapes)).
    """
    tensors = [tf.convert_to_tensor(np.asarray(value, dtype=np.float32)) for value in inputs]
    with tf.GradientTape() as tape:
        for tensor in tensors:
            tape.watch(tensor)
        scores = model(tensors[0] if len(tensors) == 1 else tensors, training=False)
        if isinstance(scores, (list, tuple)):
            scores = scores[0]
        scores = tf.reshape(tf.cast(scores, tf.float32), (tf.shape(scores)[0], -1))
        predicted = tf.argmax(scores, axis=1, output_type=tf.int32)
        chosen = predicted if classes is None else tf.reshape(tf.constant(np.asarray(classes), tf.int32), (-1,))
        target = tf.reduce_sum(tf.gather(scores, chosen, axis=1, batch_dims=1))
    grads = tape.gradient(target, tensors)
    out = [np.zeros(np.shape(value), np.float32) if grad is None else grad.numpy()
           for value, grad in zip(inputs, grads)]
    return predicted.numpy(), chosen.numpy(), out
