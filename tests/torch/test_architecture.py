"""The torch architectures: LeNet and ResNet9 (FastEstimator's, with softmax outputs)."""
from __future__ import annotations

import pytest
import torch

from fe_torch import LeNet, ResNet9


def test_lenet_outputs_class_probabilities() -> None:
    out = LeNet()(torch.randn(4, 1, 28, 28))
    assert out.shape == (4, 10)
    torch.testing.assert_close(out.sum(dim=-1), torch.ones(4))
    assert (out >= 0).all()


def test_lenet_adapts_to_other_input_shapes_and_classes() -> None:
    model = LeNet(input_shape=(3, 32, 32), classes=4)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 4)
    assert [name for name, _ in model.named_children()] == ["conv1", "conv2", "conv3", "fc1", "fc2"]
    assert model.fc1.in_features == 4 * 4 * 64
    with pytest.raises(ValueError, match="too small"):
        LeNet(input_shape=(1, 12, 12))
    with pytest.raises(ValueError, match="channels, height, width"):
        LeNet(input_shape=(28, 28))


def test_resnet9_outputs_class_probabilities() -> None:
    model = ResNet9(classes=5).eval()
    out = model(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, 5)
    torch.testing.assert_close(out.sum(dim=-1), torch.ones(2))
    assert model(torch.randn(1, 3, 16, 20)).shape == (1, 5)
    with pytest.raises(ValueError, match="at least 16"):
        ResNet9(input_size=(3, 8, 32))
