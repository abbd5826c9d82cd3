"""`AttentionUNet`: a UNet whose skip connections pass through attention gates (Keras 3, sigmoid output)."""
from __future__ import annotations

from typing import Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers
from fe_tf.architecture.unet import check_unet_input_size, conv_pair, unet_encoder, up_conv

__all__ = ["AttentionUNet", "attention_block"]


@fe_export("fe.architecture.tensorflow.attention_unet.attention_block")
def attention_block(n_filters: int, decoder_input: keras.KerasTensor,
                    encoder_input: keras.KerasTensor) -> keras.KerasTensor:
    """An attention gate: weighs `encoder_input` by a sigmoid map computed from it and `decoder_input`.

    Args:
        n_filters: Filters of the 1x1 projections of both inputs.
        decoder_input: Input tensor from the decoder.
        encoder_input: Input tensor from the encoder (same height and width).

    Returns:
        Output Keras tensor (`encoder_input` times the attention map).
    """
    decoded = layers.BatchNormalization()(layers.Conv2D(n_filters, kernel_size=1)(decoder_input))
    encoded = layers.BatchNormalization()(layers.Conv2D(n_filters, kernel_size=1)(encoder_input))
    gate = layers.ReLU()(layers.Add()([encoded, decoded]))
    gate = layers.BatchNormalization()(layers.Conv2D(1, kernel_size=1)(gate))
    gate = layers.Activation("sigmoid")(gate)
    return layers.Multiply()([encoder_input, gate])


@fe_export("fe.architecture.tensorflow.attention_unet.AttentionUNet", "fe.architecture.tensorflow.AttentionUNet")
def AttentionUNet(input_size: Tuple[int, int, int] = (128, 128, 1)) -> keras.Model:  # noqa: N802
    """UNet with attention-gated skip connections (https://arxiv.org/abs/1804.03999); one sigmoid output channel.

    Layer for layer as FastEstimator's: the UNet encoder (with its two Dropout(0.5) layers), then per decoder stage
    an upsampling convolution, an attention gate on the skip connection, the concatenation and two convolutions.

    Args:
        input_size: (height, width, channels); height and width must be multiples of 16.

    Returns:
        An uncompiled Keras model mapping (batch, h, w, c) to (batch, h, w, 1).

    Raises:
        ValueError: If `input_size` does not have length 3, or height / width are not multiples of 16.
    """
    check_unet_input_size(input_size, "AttentionUNet")
    inputs = keras.Input(shape=tuple(input_size))
    skips, x = unet_encoder(inputs)
    for filters, skip in zip((512, 256, 128, 64), reversed(skips)):
        x = up_conv(x, filters)
        x = layers.Concatenate(axis=-1)([attention_block(filters, x, skip), x])
        x = conv_pair(x, filters)
    outputs = layers.Conv2D(1, 1, activation="sigmoid", dtype="float32")(x)
    return keras.Model(inputs=inputs, outputs=outputs)
