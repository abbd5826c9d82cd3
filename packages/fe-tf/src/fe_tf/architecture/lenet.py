"""`LeNet`: a small convolutional classifier (FastEstimator's TensorFlow LeNet, layer for layer)."""
from __future__ import annotations

from typing import Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers

__all__ = ["LeNet"]


@fe_export("fe.architecture.tensorflow.lenet.LeNet", "fe.architecture.tensorflow.LeNet")
def LeNet(input_shape: Tuple[int, int, int] = (28, 28, 1), classes: int = 10) -> keras.Model:  # noqa: N802
    """A LeNet with 3 convolutional and 2 dense layers, ending in a softmax.

    A `Sequential` model of 8 layers, in FastEstimator's order: conv32-pool-conv64-pool-conv64-flatten-dense64-
    dense(classes, softmax). The softmax is the last Dense layer's activation (no separate layer), so recipes that
    index layers keep working: `model.layers[-3]` is the Flatten (576 features for 28x28 inputs, 1024 for 32x32) and
    `model.layers[-2]` the 64-unit Dense. The last Dense computes in float32, so mixed precision models still output
    float32 probabilities.

    Args:
        input_shape: (height, width, channels) of the images; height and width must be at least 18.
        classes: The number of classes.

    Returns:
        An uncompiled Keras model; pass it to `fe.build` (as `model_fn=LeNet`).

    Raises:
        ValueError: If `input_shape` is not 3-dimensional or too small.

    Example:
        >>> # model = fe.build(model_fn=lambda: LeNet(input_shape=(32, 32, 3)), optimizer_fn="adam")  # doctest: +SKIP
        >>> # features = keras.Model(model.inputs, model.layers[-3].output)  # the 1024 flattened features
    """
    if len(input_shape) != 3:
        raise ValueError(f"LeNet input_shape must be (height, width, channels), got {input_shape}")
    if input_shape[0] < 18 or input_shape[1] < 18:
        raise ValueError(f"LeNet needs images of at least 18x18, got input_shape {input_shape}")
    return keras.Sequential([
        keras.Input(shape=tuple(input_shape)),
        layers.Conv2D(32, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(classes, activation="softmax", dtype="float32"),
    ])
