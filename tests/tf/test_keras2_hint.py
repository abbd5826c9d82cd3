"""Under Keras 3, an error Keras raises for Keras 2 model code gets one more line naming the tf-keras route."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_tf._keras import KERAS2_HINT

pytestmark = pytest.mark.keras3  # Keras 3's errors; the tf-keras2 suite runs these idioms (test_keras2_idioms.py)


def embedding_with_batch_input_shape() -> Any:
    return tf.keras.Sequential([tf.keras.layers.Embedding(20, 4, batch_input_shape=(2, 5)),
                                tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(2)])


def tf_reshape_of_a_symbolic_tensor() -> Any:
    inputs = tf.keras.Input((4, 4))
    flat = tf.reshape(inputs, (-1, 16))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(flat))


class GetShapeDense(tf.keras.layers.Layer):
    def build(self, input_shape: Any) -> None:
        self.kernel = self.add_weight(name="kernel", shape=(int(input_shape[-1]), 2))

    def call(self, x: Any) -> Any:
        return tf.matmul(x, tf.reshape(self.kernel, self.kernel.get_shape()))


def variable_get_shape() -> Any:
    return tf.keras.Sequential([tf.keras.Input((3,)), GetShapeDense()])


class IntShapeScale(tf.keras.layers.Layer):
    def build(self, input_shape: Any) -> None:
        self.scale = self.add_weight(name="scale", shape=int(input_shape[-1]), initializer="ones")

    def call(self, x: Any) -> Any:
        return x * self.scale


def add_weight_with_an_int_shape() -> Any:
    return tf.keras.Sequential([tf.keras.Input((4,)), IntShapeScale()])


class Passthrough(tf.keras.layers.Layer):
    def call(self, x: Any, training: Any = None) -> Any:
        return x


def positional_bool_to_call() -> Any:
    inputs = tf.keras.Input((4,))
    return tf.keras.Model(inputs, Passthrough()(inputs, True))


class TrainingBlock(tf.keras.layers.Layer):
    def call(self, x: Any, training: Any) -> Any:
        return x


def sequential_of_two_argument_layers() -> Any:
    return tf.keras.Sequential([tf.keras.Input((4,)), TrainingBlock()])


def dense() -> Any:
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])


@pytest.mark.parametrize("model_fn", [embedding_with_batch_input_shape, tf_reshape_of_a_symbolic_tensor,
                                      variable_get_shape, add_weight_with_an_int_shape, positional_bool_to_call,
                                      sequential_of_two_argument_layers])
def test_keras3_rejection_of_keras2_model_code_names_the_tf_keras_route(model_fn: Callable[[], Any]) -> None:
    with pytest.raises(Exception) as caught:
        build(model_fn=model_fn, optimizer_fn="adam")
    lines = str(caught.value).splitlines()
    assert lines[-1] == KERAS2_HINT
    assert len(lines) > 1 and lines[0]  # Keras' own message comes first, unchanged
    assert str(caught.value).count("TF_USE_LEGACY_KERAS=1") == 1 + ("TF_USE_LEGACY_KERAS" in lines[0])


def test_legacy_optimizer_under_keras3_names_the_route_once() -> None:
    with pytest.raises(ImportError) as caught:
        build(model_fn=dense, optimizer_fn=lambda: tf.keras.optimizers.legacy.Adam(0.01))
    assert str(caught.value).splitlines()[-1] == KERAS2_HINT
    assert str(caught.value).count(KERAS2_HINT) == 1


def test_other_errors_of_model_fn_are_unchanged() -> None:
    def broken() -> Any:
        raise ValueError("my own model_fn bug")

    with pytest.raises(ValueError) as caught:
        build(model_fn=broken, optimizer_fn="adam")
    assert str(caught.value) == "my own model_fn bug"


def test_keras3_model_code_still_builds() -> None:
    model = build(model_fn=dense, optimizer_fn="adam")
    assert model(np.zeros((1, 3), np.float32)).shape == (1, 2)


def test_legacy_keras_without_tf_keras_installed_names_the_extra() -> None:
    """TF_USE_LEGACY_KERAS=1 where tf-keras is missing: importing fe_tf says which extra to install."""
    import importlib.util
    import os
    import subprocess
    import sys

    assert importlib.util.find_spec("tf_keras") is None  # the Keras 3 suites do not install it
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", "import fe_tf"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: TF_USE_LEGACY_KERAS is set") and "fe-tf[keras2]" in last
