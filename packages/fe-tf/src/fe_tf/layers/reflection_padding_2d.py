"""`ReflectionPadding2D`: mirror-pad the height and width of (batch, height, width, channels) tensors."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import tensorflow as tf

from fe_core.export import fe_export
from fe_tf._keras import keras, layers

__all__ = ["ReflectionPadding2D"]


@fe_export("fe.layers.tensorflow.reflection_padding_2d.ReflectionPadding2D",
           "fe.layers.tensorflow.ReflectionPadding2D")
@keras.saving.register_keras_serializable(package="fe")
class ReflectionPadding2D(layers.Layer):
    """Reflection padding (the edge row/column is not repeated) of channels-last images.

    Args:
        padding: (width, height) padding on each side; each must be smaller than the input's size along that axis.

    Raises:
        ValueError: If `padding` is not two non-negative ints.

    Example:
        >>> # x ~ [[0, 1, 2], [3, 4, 5], [6, 7, 8]] as (1, 3, 3, 1)
        >>> # ReflectionPadding2D((1, 0))(x) ~ [[1, 0, 1, 2, 1], [4, 3, 4, 5, 4], [7, 6, 7, 8, 7]]
    """

    def __init__(self, padding: Tuple[int, int] = (1, 1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(padding) != 2 or any(isinstance(p, bool) or int(p) != p or p < 0 for p in padding):
            raise ValueError(f"ReflectionPadding2D padding must be (width, height) non-negative ints, got {padding!r}")
        self.padding = (int(padding[0]), int(padding[1]))

    def get_config(self) -> Dict[str, Any]:
        config = super().get_config()
        config.update({"padding": self.padding})
        return config

    def compute_output_shape(self, s: Tuple[Optional[int], ...]) -> Tuple[Optional[int], ...]:
        """The padded shape (channels-last): (batch, height + 2 * pad_h, width + 2 * pad_w, channels)."""
        width, height = self.padding
        return (s[0], None if s[1] is None else s[1] + 2 * height, None if s[2] is None else s[2] + 2 * width, s[3])

    def call(self, x: Any) -> Any:
        width, height = self.padding
        return tf.pad(x, [[0, 0], [height, height], [width, width], [0, 0]], mode="REFLECT")
