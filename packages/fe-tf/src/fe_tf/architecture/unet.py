"""`UNet`: the standard U-shaped encoder-decoder segmentation network (Keras 3, channels last, sigmoid output)."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers

__all__ = ["UNet", "check_unet_input_size", "conv_pair", "up_conv", "unet_encoder"]


def check_unet_input_size(input_size: Sequence[int], owner: str) -> None:
    """Raise ValueError unless `input_size` is (height, width, channels) with height and width multiples of 16."""
    if len(input_size) != 3:
        raise ValueError(f"{owner} input_size must have length 3 (height, width, channels), got {tuple(input_size)}")
    height, width, _ = input_size
    if height < 16 or width < 16 or height % 16 or width % 16:
        raise ValueError(f"{owner} needs height and width that are multiples of 16 (16, 32, 48, ...), got input_size "
                         f"{tuple(input_size)}")


def conv_pair(x: keras.KerasTensor, filters: int) -> keras.KerasTensor:
    """Two 3x3 'same' conv-ReLU layers (He-normal initialised)."""
    for _ in range(2):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu", kernel_initializer="he_normal")(x)
    return x


def up_conv(x: keras.KerasTensor, filters: int) -> keras.KerasTensor:
    """A 2x bilinear upsampling followed by a 3x3 conv-ReLU."""
    x = layers.UpSampling2D(size=(2, 2), interpolation="bilinear")(x)
    return layers.Conv2D(filters, 3, padding="same", activation="relu", kernel_initializer="he_normal")(x)


def unet_encoder(inputs: keras.KerasTensor) -> Tuple[List[keras.KerasTensor], keras.KerasTensor]:
    """The UNet encoder as FastEstimator builds it: four stages of two convolutions and a 2x2 max pooling (64-512
    filters; the 512 stage's output passes a Dropout(0.5) before its pooling) and a 1024-filter bottleneck followed by
    Dropout(0.5).

    Returns:
        (the four skip connections, from the 64-filter stage to the dropped-out 512-filter one; the bottleneck).
    """
    skips = []
    x = inputs
    for filters in (64, 128, 256, 512):
        x = conv_pair(x, filters)
        if filters == 512:
            x = layers.Dropout(0.5)(x)
        skips.append(x)
        x = layers.MaxPooling2D(pool_size=(2, 2))(x)
    x = conv_pair(x, 1024)
    return skips, layers.Dropout(0.5)(x)


@fe_export("fe.architecture.tensorflow.unet.UNet", "fe.architecture.tensorflow.UNet")
def UNet(input_size: Tuple[int, int, int] = (128, 128, 1), output_channel: int = 1) -> keras.Model:  # noqa: N802
    """A standard UNet, layer for layer as FastEstimator's: four encoder stages (64-512 filters, max pooling, a
    Dropout(0.5) after the 512-filter stage), a 1024-filter bottleneck with Dropout(0.5), four decoder stages
    (bilinear upsampling and a convolution, concatenation with the encoder's skip connection, two convolutions), and
    a 1x1 convolution with a (float32) sigmoid.

    Args:
        input_size: (height, width, channels); height and width must be multiples of 16.
        output_channel: The number of output channels.

    Returns:
        An uncompiled Keras model mapping (batch, h, w, c) to (batch, h, w, output_channel).

    Raises:
        ValueError: If `input_size` does not have length 3, or height / width are not multiples of 16.
    """
    check_unet_input_size(input_size, "UNet")
    inputs = keras.Input(shape=tuple(input_size))
    skips, x = unet_encoder(inputs)
    for filters, skip in zip((512, 256, 128, 64), reversed(skips)):
        x = layers.Concatenate(axis=-1)([skip, up_conv(x, filters)])
        x = conv_pair(x, filters)
    outputs = layers.Conv2D(output_channel, 1, activation="sigmoid", dtype="float32")(x)
    return keras.Model(inputs=inputs, outputs=outputs)
