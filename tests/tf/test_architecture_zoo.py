"""TF UNet, AttentionUNet, WideResidualNetwork (+ ResNet9's residual): shapes, errors, one traced training step."""
from __future__ import annotations

from typing import Any

import keras
import numpy as np
import pytest

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_tf.architecture import AttentionUNet, UNet, WideResidualNetwork
from fe_tf.architecture.attention_unet import attention_block
from fe_tf.architecture.resnet9 import residual


def _train_one_step(model_fn: Any, x: np.ndarray, y: np.ndarray, **ce_kwargs: Any) -> None:
    model = build(model_fn=model_fn, optimizer_fn="adam")
    before = [np.array(v.numpy()) for v in model.trainable_variables]
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", **ce_kwargs),
                                UpdateOp(model=model, loss_name="ce")])
    with network(mode="train", epoch=1):  # traced (tf.function)
        result = network.run_step({"x": x, "y": y})
    assert np.isfinite(result["ce"])
    assert any(not np.array_equal(a, v.numpy()) for a, v in zip(before, model.trainable_variables))


def test_unet_output_shape_and_errors() -> None:
    model = UNet(input_size=(16, 32, 2), output_channel=3)
    out = model(np.random.default_rng(0).normal(size=(1, 16, 32, 2)).astype(np.float32)).numpy()
    assert out.shape == (1, 16, 32, 3)
    assert out.min() >= 0.0 and out.max() <= 1.0
    with pytest.raises(ValueError, match="multiples of 16"):
        UNet(input_size=(24, 32, 1))
    with pytest.raises(ValueError, match="length 3"):
        UNet(input_size=(16, 16))


@pytest.mark.slow
def test_unet_trains_one_step() -> None:
    x = np.random.default_rng(0).normal(size=(2, 16, 16, 1)).astype(np.float32)
    _train_one_step(lambda: UNet(input_size=(16, 16, 1)), x, (x > 0).astype(np.float32))


def test_attention_unet_and_attention_block() -> None:
    decoder, encoder = keras.Input((8, 8, 4)), keras.Input((8, 8, 4))
    gate = keras.Model([decoder, encoder], attention_block(2, decoder, encoder))
    assert gate([np.ones((1, 8, 8, 4), np.float32)] * 2).shape == (1, 8, 8, 4)
    assert AttentionUNet(input_size=(16, 16, 1)).output_shape == (None, 16, 16, 1)
    with pytest.raises(ValueError, match="multiples of 16"):
        AttentionUNet(input_size=(16, 20, 1))


@pytest.mark.slow
def test_attention_unet_trains_one_step() -> None:
    x = np.random.default_rng(0).normal(size=(2, 16, 16, 1)).astype(np.float32)
    _train_one_step(lambda: AttentionUNet(input_size=(16, 16, 1)), x, (x > 0).astype(np.float32))


def test_wide_residual_network_shapes_activation_and_training_step() -> None:
    model = WideResidualNetwork(input_shape=(8, 8, 3), depth=10, widen_factor=2, dropout=0.2, classes=5)
    out = model(np.zeros((2, 8, 8, 3), np.float32)).numpy()
    assert out.shape == (2, 5)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)
    logits = WideResidualNetwork(input_shape=(8, 8, 3), depth=10, widen_factor=1, activation=None)
    assert logits.layers[-1].activation.__name__ == "linear"
    with pytest.raises(ValueError, match="divisible by 6"):
        WideResidualNetwork(input_shape=(8, 8, 3), depth=12)
    rng = np.random.default_rng(0)
    _train_one_step(lambda: WideResidualNetwork(input_shape=(8, 8, 3), depth=10, widen_factor=1, classes=4),
                    rng.normal(size=(4, 8, 8, 3)).astype(np.float32), rng.integers(0, 4, 4))


def test_resnet9_residual_unit_keeps_shape() -> None:
    inputs = keras.Input((4, 4, 8))
    assert keras.Model(inputs, residual(inputs, 8)).output_shape == (None, 4, 4, 8)
