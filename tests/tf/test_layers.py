"""fe_tf.layers: HadamardCode, InstanceNormalization, ReflectionPadding2D (FastEstimator's fe.layers.tensorflow)."""
from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_tf.layers import HadamardCode, InstanceNormalization, ReflectionPadding2D


def test_reflection_padding_matches_the_documented_examples() -> None:
    x = tf.reshape(tf.range(9), (1, 3, 3, 1))
    assert ReflectionPadding2D((1, 1))(x)[0, :, :, 0].numpy().tolist() == [
        [4, 3, 4, 5, 4], [1, 0, 1, 2, 1], [4, 3, 4, 5, 4], [7, 6, 7, 8, 7], [4, 3, 4, 5, 4]]
    assert ReflectionPadding2D((1, 0))(x)[0, :, :, 0].numpy().tolist() == [
        [1, 0, 1, 2, 1], [4, 3, 4, 5, 4], [7, 6, 7, 8, 7]]
    layer = ReflectionPadding2D((2, 1))
    assert layer.compute_output_shape((None, 5, 6, 3)) == (None, 7, 10, 3)
    assert ReflectionPadding2D.from_config(layer.get_config()).padding == (2, 1)
    with pytest.raises(ValueError, match="padding"):
        ReflectionPadding2D((1, -1))


def test_instance_normalization_normalizes_each_sample_and_channel() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(10, 2, (2, 16, 16, 1)), rng.normal(-3, 5, (2, 16, 16, 1))], axis=-1)
    layer = InstanceNormalization()
    y = layer(x.astype(np.float32)).numpy()
    scale = layer.scale.numpy()
    np.testing.assert_allclose(y.mean(axis=(1, 2)), 0.0, atol=1e-4)
    np.testing.assert_allclose(y.std(axis=(1, 2)), np.broadcast_to(np.abs(scale), (2, 2)), rtol=1e-3)
    assert len(layer.trainable_variables) == 2
    assert InstanceNormalization.from_config(layer.get_config()).epsilon == pytest.approx(1e-5)


def test_hadamard_code_combines_heads_into_probabilities_inside_a_model() -> None:
    inputs = keras.Input((12, ))
    heads = [keras.layers.Dense(6)(inputs) for _ in range(3)]
    model = keras.Model(inputs, HadamardCode(10)(heads))
    x = np.random.default_rng(1).normal(size=(4, 12)).astype(np.float32)
    out = model(x).numpy()
    assert out.shape == (4, 10)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)

    @tf.function
    def step(data: tf.Tensor) -> list:
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(tf.math.log(model(data)[:, 3]))
        return tape.gradient(loss, model.trainable_variables)

    assert all(gradient is not None for gradient in step(tf.constant(x)))


def test_hadamard_code_as_a_softmax_replacement_and_its_config() -> None:
    model = keras.Sequential([keras.Input((8, )), HadamardCode(4, code_length=8, max_prob=0.9, power=2.0)])
    assert model(np.zeros((2, 8), np.float32)).shape == (2, 4)
    layer = model.layers[-1]
    config = layer.get_config()
    assert (config["n_classes"], config["code_length"], config["max_prob"], config["power"]) == (4, 8, 0.9, 2.0)
    with pytest.raises(ValueError, match="max_prob"):
        HadamardCode(4, max_prob=0.0)
    with pytest.raises(ValueError, match="power of 2"):
        HadamardCode(4, code_length=12)


def test_models_with_fe_layers_save_and_load_whole(tmp_path: object) -> None:
    inputs = keras.Input((6, 6, 2))
    x = InstanceNormalization()(ReflectionPadding2D((1, 1))(inputs))
    outputs = HadamardCode(4, code_length=8)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    path = str(tmp_path) + "/model.keras"  # type: ignore[operator]
    model.save(path)
    loaded = keras.models.load_model(path)
    data = np.random.default_rng(0).normal(size=(2, 6, 6, 2)).astype(np.float32)
    np.testing.assert_allclose(loaded(data).numpy(), model(data).numpy(), rtol=1e-5, atol=1e-6)
