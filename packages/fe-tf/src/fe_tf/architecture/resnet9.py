"""`ResNet9`: a 9-layer residual network for small images (FastEstimator's TensorFlow ResNet9, after the
cifar10-fast architecture)."""
from __future__ import annotations

from typing import Tuple

from fe_core.export import fe_export
from fe_tf._keras import KERAS2, keras, layers

__all__ = ["ResNet9", "residual"]


def _conv_block(x: keras.KerasTensor, channels: int, pool: bool = False) -> keras.KerasTensor:
    x = layers.Conv2D(channels, 3, padding="same")(x)
    if pool:
        x = layers.MaxPool2D()(x)
    x = layers.BatchNormalization(momentum=0.8)(x)
    return layers.LeakyReLU(**{"alpha" if KERAS2 else "negative_slope": 0.1})(x)  # Keras 2 names it alpha


@fe_export("fe.architecture.tensorflow.resnet9.residual")
def residual(x: keras.KerasTensor, num_channel: int) -> keras.KerasTensor:
    """The residual branch of a ResNet9 unit: two conv-batchnorm-leaky-ReLU blocks (as FastEstimator's `residual`,
    the caller adds the branch to its input: `layers.Add()([x, residual(x, channels)])`).

    Args:
        x: Input Keras tensor.
        num_channel: The number of channels of the convolutions (and of `x`).

    Returns:
        Output Keras tensor (the branch, without the shortcut).
    """
    x = _conv_block(x, num_channel)
    return _conv_block(x, num_channel)


@fe_export("fe.architecture.tensorflow.resnet9.ResNet9", "fe.architecture.tensorflow.ResNet9")
def ResNet9(input_size: Tuple[int, int, int] = (32, 32, 3), classes: int = 10) -> keras.Model:  # noqa: N802
    """A small 9-layer ResNet for image classification, ending in a (float32) softmax.

    prep conv64 -> conv128+pool+residual(128) -> conv256+pool -> conv512+pool+residual(512) -> global max pool ->
    dense(classes); batch normalization (momentum 0.8) and leaky ReLU (slope 0.1) after every convolution.

    Args:
        input_size: (height, width, channels); height and width must be at least 16.
        classes: The number of classes.

    Returns:
        An uncompiled Keras model.

    Raises:
        ValueError: If `input_size` is not 3-dimensional or too small.
    """
    if len(input_size) != 3:
        raise ValueError(f"ResNet9 input_size must be (height, width, channels), got {input_size}")
    if input_size[0] < 16 or input_size[1] < 16:
        raise ValueError(f"ResNet9 needs images of at least 16x16, got input_size {input_size}")
    inputs = keras.Input(shape=input_size)
    x = _conv_block(inputs, 64)
    x = _conv_block(x, 128, pool=True)
    x = layers.Add()([x, residual(x, 128)])
    x = _conv_block(x, 256, pool=True)
    x = _conv_block(x, 512, pool=True)
    x = layers.Add()([x, residual(x, 512)])
    x = layers.GlobalMaxPool2D()(x)
    x = layers.Flatten()(x)
    x = layers.Dense(classes)(x)
    outputs = layers.Activation("softmax", dtype="float32")(x)
    return keras.Model(inputs=inputs, outputs=outputs)
