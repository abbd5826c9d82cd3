"""`InstanceNormalization`: normalize each sample's channels over height and width (Keras layer)."""
from __future__ import annotations

from typing import Any, Dict, Tuple

from fe_core.export import fe_export
from fe_tf._keras import keras, layers, ops

__all__ = ["InstanceNormalization"]


@fe_export("fe.layers.tensorflow.instance_norm.InstanceNormalization", "fe.layers.tensorflow.InstanceNormalization")
@keras.saving.register_keras_serializable(package="fe")
class InstanceNormalization(layers.Layer):
    """Instance normalization (https://arxiv.org/abs/1607.08022) of (batch, height, width, channels) tensors.

    Each sample's channel is shifted to mean 0 and scaled to variance 1 over its height and width, then multiplied by a
    learned per-channel `scale` (initialised around 1) and shifted by a learned `offset` (initialised to 0).

    Args:
        epsilon: Added to the variance for numerical stability.

    Example:
        >>> # y = InstanceNormalization()(x)  # x: (batch, h, w, c); y has per-sample, per-channel mean ~0, std ~1
    """

    def __init__(self, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.epsilon = float(epsilon)

    def get_config(self) -> Dict[str, Any]:
        config = super().get_config()
        config.update({"epsilon": self.epsilon})
        return config

    def build(self, input_shape: Tuple[int, int, int, int]) -> None:
        channels = input_shape[-1]
        self.scale = self.add_weight(name="scale", shape=(channels, ),
                                     initializer=keras.initializers.RandomNormal(1.0, 0.02), trainable=True)
        self.offset = self.add_weight(name="offset", shape=(channels, ), initializer="zeros", trainable=True)
        super().build(input_shape)

    def call(self, x: Any) -> Any:
        mean, variance = ops.moments(x, axes=[1, 2], keepdims=True)
        normalized = (x - mean) * ops.rsqrt(variance + ops.cast(self.epsilon, variance.dtype))
        return ops.cast(self.scale, x.dtype) * normalized + ops.cast(self.offset, x.dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape
