"""`WideResidualNetwork` (https://arxiv.org/abs/1605.07146) as a Keras 3 model."""
from __future__ import annotations

from typing import Optional, Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers

__all__ = ["WideResidualNetwork"]


def _conv_block(inputs: keras.KerasTensor, filters: int) -> keras.KerasTensor:
    """The stem: a 3x3 convolution (no bias), batch normalization (momentum 0.9) and ReLU."""
    x = layers.Conv2D(filters, (3, 3), padding="same", kernel_initializer="he_normal", use_bias=False)(inputs)
    x = layers.BatchNormalization(momentum=0.9)(x)
    return layers.Activation("relu")(x)


def _basic_block(inputs: keras.KerasTensor, filters: int, dropout: float) -> keras.KerasTensor:
    """conv3x3-BN-ReLU-(dropout)-conv3x3-BN-ReLU added to the input; the input passes a 1x1 convolution first when
    its channel count differs from `filters`."""
    shortcut = inputs
    if inputs.shape[-1] != filters:
        shortcut = layers.Conv2D(filters, (1, 1), activation="linear", padding="same", kernel_initializer="he_normal",
                                 use_bias=False)(inputs)
    x = layers.Conv2D(filters, (3, 3), padding="same", kernel_initializer="he_normal", use_bias=False)(inputs)
    x = layers.BatchNormalization(momentum=0.9)(x)
    x = layers.Activation("relu")(x)
    if dropout > 0.0:
        x = layers.Dropout(dropout)(x)
    x = layers.Conv2D(filters, (3, 3), padding="same", kernel_initializer="he_normal", use_bias=False)(x)
    x = layers.BatchNormalization(momentum=0.9)(x)
    x = layers.Activation("relu")(x)
    return layers.Add()([shortcut, x])


@fe_export("fe.architecture.tensorflow.wideresnet.WideResidualNetwork",
           "fe.architecture.tensorflow.WideResidualNetwork")
def WideResidualNetwork(input_shape: Tuple[int, int, int],  # noqa: N802
                        depth: int = 28,
                        widen_factor: int = 10,
                        dropout: float = 0.0,
                        classes: int = 10,
                        activation: Optional[str] = "softmax") -> keras.Model:
    """A Wide Residual Network WRN-depth-widen_factor, layer for layer as FastEstimator's.

    A stem (3x3 conv with 16 filters, batch normalization, ReLU), then three stages of (depth - 4) / 6 blocks with
    16, 32 and 64 times `widen_factor` filters, a 2x2 max pooling after the first two stages, global average pooling
    and a dense layer. Each block is conv-BN-ReLU-(dropout)-conv-BN-ReLU added to its input (through a 1x1
    convolution where the channel count changes).

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
    x = _conv_block(inputs, 16)
    for stage, width in enumerate((16 * widen_factor, 32 * widen_factor, 64 * widen_factor)):
        if stage:
            x = layers.MaxPooling2D((2, 2))(x)
        for _ in range(blocks):
            x = _basic_block(x, width, dropout)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(classes, activation=activation, dtype="float32")(x)
    return keras.Model(inputs=inputs, outputs=outputs)
