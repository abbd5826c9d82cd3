"""Torch UNet, AttentionUNet, WideResidualNetwork (+ ResNet9's Residual): shapes, errors, one training step."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_torch.architecture import AttentionUNet, UNet, WideResidualNetwork
from fe_torch.architecture.attention_unet import AttentionBlock
from fe_torch.architecture.resnet9 import Residual
from fe_torch.architecture.unet import UNetDecoderBlock, UNetEncoderBlock
from fe_torch.architecture.wideresnet import BasicBlock, NetworkBlock


def _train_one_step(model_fn: Any, x: np.ndarray, y: np.ndarray, **ce_kwargs: Any) -> None:
    model = build(model_fn=model_fn, optimizer_fn="adam")
    before = [p.detach().clone() for p in model.parameters()]
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", **ce_kwargs),
                                UpdateOp(model=model, loss_name="ce")])
    with network(mode="train", epoch=1):
        result = network.run_step({"x": x, "y": y})
    assert np.isfinite(result["ce"])
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_unet_blocks_and_output_shape() -> None:
    skip, pooled = UNetEncoderBlock(3, 8)(torch.zeros(1, 3, 8, 8))
    assert skip.shape == (1, 8, 8, 8) and pooled.shape == (1, 8, 4, 4)
    assert UNetDecoderBlock(8, 4, 2)(torch.zeros(1, 8, 4, 4)).shape == (1, 2, 8, 8)
    out = UNet(input_size=(2, 16, 32), output_channel=3)(torch.randn(1, 2, 16, 32))
    assert out.shape == (1, 3, 16, 32)
    assert float(out.detach().min()) >= 0.0 and float(out.detach().max()) <= 1.0
    with pytest.raises(ValueError, match="multiples of 16"):
        UNet(input_size=(1, 24, 32))
    with pytest.raises(ValueError, match="length 3"):
        UNet(input_size=(16, 16))


@pytest.mark.slow
def test_unet_trains_one_step() -> None:
    x = np.random.default_rng(0).normal(size=(2, 1, 16, 16)).astype(np.float32)
    y = (x > 0).astype(np.float32)
    _train_one_step(lambda: UNet(input_size=(1, 16, 16)), x, y)


def test_attention_unet_block_and_output_shape() -> None:
    gated = AttentionBlock(4, 2)(torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8))
    assert gated.shape == (2, 4, 8, 8)
    assert AttentionUNet(input_size=(1, 16, 16))(torch.randn(2, 1, 16, 16)).shape == (2, 1, 16, 16)
    with pytest.raises(ValueError, match="multiples of 16"):
        AttentionUNet(input_size=(1, 16, 20))


@pytest.mark.slow
def test_attention_unet_trains_one_step() -> None:
    x = np.random.default_rng(0).normal(size=(2, 1, 16, 16)).astype(np.float32)
    _train_one_step(lambda: AttentionUNet(input_size=(1, 16, 16)), x, (x > 0).astype(np.float32))


def test_wide_residual_network_shapes_blocks_and_training_step() -> None:
    model = WideResidualNetwork(depth=10, classes=5, widen_factor=2, dropout=0.3)
    assert len(model.block1.layer) == 1 and model.fc.in_features == 128
    assert model(torch.randn(2, 3, 8, 8)).shape == (2, 5)
    assert BasicBlock(4, 8, 2)(torch.randn(1, 4, 8, 8)).shape == (1, 8, 4, 4)
    assert len(NetworkBlock(3, 4, 8, BasicBlock, 2).layer) == 3
    with pytest.raises(AssertionError):
        WideResidualNetwork(depth=12)
    rng = np.random.default_rng(0)
    _train_one_step(lambda: WideResidualNetwork(depth=10, classes=4, widen_factor=1),
                    rng.normal(size=(4, 3, 8, 8)).astype(np.float32), rng.integers(0, 4, 4), from_logits=True)


def test_resnet9_residual_keeps_shape() -> None:
    assert Residual(8)(torch.randn(2, 8, 4, 4)).shape == (2, 8, 4, 4)
