"""`HadamardCode`: an error-correcting output layer for Keras (drop-in replacement for a final softmax layer)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.tensorop.hadamard import check_code_length, distance_offset, code_book
from fe_tf._keras import keras, layers, ops

__all__ = ["HadamardCode"]


def _head_shapes(input_shape: Any) -> List[Any]:
    """The input shape(s) as a list: one shape per head."""
    # one head: (batch, features) (a list after a JSON round trip); several: a list of such shapes
    several = isinstance(input_shape, (list, tuple)) and len(input_shape) > 0 and not isinstance(
        input_shape[0], (int, type(None)))
    return list(input_shape) if several else [input_shape]


@fe_export("fe.layers.tensorflow.hadamard.HadamardCode", "fe.layers.tensorflow.HadamardCode")
@keras.saving.register_keras_serializable(package="fe")
class HadamardCode(layers.Layer):
    """Map features onto Hadamard code words and return class probabilities.

    Each input head (one tensor of shape (batch, features), or a list of them) gets a dense layer producing its share
    of the `code_length` code bits; the bits are squashed with tanh into [-1, 1], their (half) L1 distance to each
    class's code word is computed, and the distances become probabilities by inverse distance weighting (a prediction
    exactly on a code word gets `max_prob`). The output is float32, also under mixed precision.

    Args:
        n_classes: How many classes to map onto (at least 2).
        code_length: Code length, a power of 2 >= n_classes; default: the smallest such power, at least 16.
        max_prob: The largest probability a class can get, in (0, 1).
        power: The inverse-distance-weighting power (> 0).

    Raises:
        ValueError: If `code_length`, `max_prob`, `power` or `n_classes` are invalid.

    Example:
        >>> # inputs = keras.Input((32,)); heads = [keras.layers.Dense(8)(inputs) for _ in range(4)]
        >>> # model = keras.Model(inputs, HadamardCode(10)(heads))  # doctest: +SKIP
    """

    def __init__(self, n_classes: int, code_length: Optional[int] = None, max_prob: float = 0.95,
                 power: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.code_length = check_code_length(n_classes, code_length, "HadamardCode")
        if not 0.0 < max_prob < 1.0:
            raise ValueError(f"HadamardCode max_prob must be in (0, 1), got {max_prob}")
        if power <= 0:
            raise ValueError(f"HadamardCode power must be greater than 0, got {power}")
        self.n_classes = int(n_classes)
        self.max_prob = float(max_prob)
        self.power = float(power)
        self.offset = distance_offset(self.n_classes, self.code_length, self.max_prob, self.power)
        self._codes = np.ascontiguousarray(code_book(self.n_classes, self.code_length).T)  # (L, n_classes)
        self.heads: List[layers.Dense] = []

    def get_config(self) -> Dict[str, Any]:
        config = super().get_config()
        config.update({"n_classes": self.n_classes, "code_length": self.code_length, "max_prob": self.max_prob,
                       "power": self.power})
        return config

    def build(self, input_shape: Union[Tuple[int, int], List[Tuple[int, int]]]) -> None:
        shapes = _head_shapes(input_shape)
        if len(shapes) > self.code_length:
            raise ValueError(f"HadamardCode got {len(shapes)} heads, more than its code_length {self.code_length}")
        count = len(shapes)
        for index, shape in enumerate(shapes):
            size = self.code_length // count + (1 if index < self.code_length % count else 0)
            head = layers.Dense(size, name=f"head_{index}", dtype=self.dtype_policy)
            head.build(tuple(shape))
            self.heads.append(head)
        super().build(input_shape)

    def call(self, x: Union[Any, Sequence[Any]], **kwargs: Any) -> Any:
        inputs = list(x) if isinstance(x, (list, tuple)) else [x]
        bits = [head(value) for head, value in zip(self.heads, inputs)]
        bits = ops.tanh(ops.cast(bits[0] if len(bits) == 1 else ops.concatenate(bits, axis=-1), "float32"))
        # with code entries of +-1 and bits in [-1, 1], |bit - code| = 1 - bit * code: the L1 distance is a matmul
        distance = (self.code_length - ops.matmul(bits, ops.convert_to_tensor(self._codes))) / 2.0 + self.offset
        weights = ops.power(distance, -self.power)
        return weights / ops.sum(weights, axis=-1, keepdims=True)

    def compute_output_shape(self, input_shape: Any) -> Tuple[Any, int]:
        return (_head_shapes(input_shape)[0][0], self.n_classes)
