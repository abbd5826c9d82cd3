"""The TensorFlow side shared by bench_tf.py, bench_tf_fit.py and bench_first_step.py: the MLP, the synthetic data,
a model with given weights, and the hand-written `tf.function` training step they are measured against.

Import it after TensorFlow's thread settings are made (the scripts set them before importing anything else).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import keras
import numpy as np
import tensorflow as tf

__all__ = ["mlp", "make_data", "model_with", "hand_written_step"]


def mlp() -> keras.Model:
    """Dense(32, relu) - Dense(10) logits on 64 features."""
    return keras.Sequential([keras.Input(shape=(64,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(10)])


def make_data(shape: Tuple[int, ...], samples: int, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Standard-normal float32 features of `shape` per sample and int64 labels in [0, 10)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, *shape)).astype(np.float32)
    y = rng.integers(0, 10, size=samples).astype(np.int64)
    return x, y


def model_with(workload: Dict[str, Any], weights: List[np.ndarray]) -> keras.Model:
    """A fresh model of `workload` holding `weights` (every side starts from the same ones)."""
    model = workload["model"]()
    model.set_weights(weights)
    return model


def hand_written_step(model: keras.Model, optimizer: Any, from_logits: bool) -> Callable[[Any, Any], tf.Tensor]:
    """The hand-written training step: GradientTape, the model, Keras sparse categorical cross entropy,
    `apply_gradients`, as one `tf.function` (traced on its first call)."""

    @tf.function
    def train_step(features: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            prediction = model(features, training=True)
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, prediction,
                                                                              from_logits=from_logits))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    return train_step
