"""`WideResidualNetwork` (https://arxiv.org/abs/1605.07146) as a Keras 3 model."""
from __future__ import annotations

from typing import Optional, Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers

__all__ = ["WideResidualNetwork"]


def _basic_block(x: keras.KerasTensor, filters: int, stride: int, dropout: float) -> keras.KerasTensor:
    """A pre-activation residual block; the shortcut is a strided 1x1 convolution when the width changes."""
    activated = layers.Activation("relu")(layers.BatchNormalization()(x))
    out = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False,
                        kernel_initializer="he_normal")(activated)
    out = layers.Activation("relu")(layers.BatchNormalization()(out))
    if dropout > 0:
        out = layers.Dropout(dropout)(out)
    out = layers.Conv2D(filters, 3, padding="same", use_bias=False, kernel_initializer="he_normal")(out)
    if x.shape[-1] != filters or stride != 1:
        x = layers.Conv2D(filters, 1, strides=stride, padding="same", use_bias=False,
                          kernel_initializer="he_normal")(activated)
    return layers.Add()([x, out])


@fe_export("fe.architecture.tensorflow.wideresnet.WideResidualNetwork",
           "fe.architecture.tensorflow.WideResidualNetwork")
def WideResidualNetwork(input_shape: Tuple[int, int, int],  # noqa: N802
                        depth: int = 28,
                        widen_factor: int = 10,
                        dropout: float = 0.0,
                        classes: int = 10,
                        activation: Optional[str] = "softmax") -> keras.Model:
    """A Wide Residual Network WRN-depth-widen_factor.

    Args:
        input_shape: (height, width, channels) of the images.
        depth: Depth; (depth - 4) must be divisible by 6, giving (depth - 4) / 6 blocks per stage (16 -> 2, 28 -> 4).
        widen_factor: Channel multiplier of the three stages (16, 32, 64 times it).
        dropout: Dropout rate inside the blocks (none when 0).
        classes: The number of outputs.
        activation: Activation of the last dense layer (computed in float32); None outputs logits.

    Returns:
        An uncompiled Keras model.

    Raises:
        ValueError: If (depth - 4) is not divisible by 6.
    """
    if (depth - 4) % 6:
        raise ValueError(f"WideResidualNetwork depth - 4 must be divisible by 6, got depth={depth}")
    blocks = (depth - 4) // 6
    inputs = keras.Input(shape=tuple(input_shape))
    x = layers.Conv2D(16, 3, padding="same", use_bias=False, kernel_initializer="he_normal")(inputs)
    for stage, stride in ((16, 1), (32, 2), (64, 2)):
        for index in range(blocks):
            x = _basic_block(x, stage * widen_factor, stride if index == 0 else 1, dropout)
    x = layers.Activation("relu")(layers.BatchNormalization()(x))
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(classes, activation=activation, dtype="float32")(x)
    return keras.Model(inputs=inputs, outputs=outputs)
