"""`ResNet9`: FastEstimator's 9-layer residual network for CIFAR-sized images (softmax output)."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from fe_core.export import fe_export

__all__ = ["ResNet9", "Residual"]

_SLOPE = 0.1  # leaky ReLU slope


@fe_export("fe.architecture.pytorch.resnet9.Residual")
class Residual(nn.Module):
    """Two conv-batchnorm-leaky-ReLU layers keeping the channel count (the residual branch of ResNet9).

    Args:
        channels: Number of input (and output) channels.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1_bn = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2_bn = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.leaky_relu(self.conv1_bn(self.conv1(x)), _SLOPE)
        return F.leaky_relu(self.conv2_bn(self.conv2(x)), _SLOPE)


@fe_export("fe.architecture.pytorch.resnet9.ResNet9", "fe.architecture.pytorch.ResNet9")
class ResNet9(nn.Module):
    """The 9-layer ResNet of cifar10-fast (as in FastEstimator): prep 64, then 128/256/512 stages of
    conv-maxpool-batchnorm-leaky-ReLU with residual blocks after each, global max pool, dense, softmax. Modules,
    names and batch-norm momenta (0.8 for the stage convolutions, torch's default in the residual blocks) are
    FastEstimator's, so its weights load.

    Args:
        input_size: The input's (channels, height, width); height and width must be at least 16.
        classes: The number of classes.

    Raises:
        ValueError: If `input_size` is not (channels, height, width) or is smaller than 16x16.

    Example:
        >>> ResNet9()(torch.zeros(2, 3, 32, 32)).shape
        torch.Size([2, 10])
    """

    def __init__(self, input_size: Tuple[int, int, int] = (3, 32, 32), classes: int = 10) -> None:
        if len(input_size) != 3:
            raise ValueError(f"ResNet9 input_size must be (channels, height, width), got {input_size}")
        if input_size[1] < 16 or input_size[2] < 16:
            raise ValueError(f"ResNet9 needs height and width of at least 16, got input_size {tuple(input_size)}")
        super().__init__()
        self.conv0 = nn.Conv2d(input_size[0], 64, 3, padding=1)
        self.conv0_bn = nn.BatchNorm2d(64, momentum=0.8)
        self.conv1 = nn.Conv2d(64, 128, 3, padding=1)
        self.conv1_bn = nn.BatchNorm2d(128, momentum=0.8)
        self.residual1 = Residual(128)
        self.conv2 = nn.Conv2d(128, 256, 3, padding=1)
        self.conv2_bn = nn.BatchNorm2d(256, momentum=0.8)
        self.residual2 = Residual(256)
        self.conv3 = nn.Conv2d(256, 512, 3, padding=1)
        self.conv3_bn = nn.BatchNorm2d(512, momentum=0.8)
        self.residual3 = Residual(512)
        self.fc1 = nn.Linear(512, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.leaky_relu(self.conv0_bn(self.conv0(x)), _SLOPE)
        x = F.leaky_relu(self.conv1_bn(F.max_pool2d(self.conv1(x), 2)), _SLOPE)
        x = x + self.residual1(x)
        x = F.leaky_relu(self.conv2_bn(F.max_pool2d(self.conv2(x), 2)), _SLOPE)
        x = x + self.residual2(x)
        x = F.leaky_relu(self.conv3_bn(F.max_pool2d(self.conv3(x), 2)), _SLOPE)
        x = x + self.residual3(x)
        x = torch.flatten(F.adaptive_max_pool2d(x, 1), 1)
        return F.softmax(self.fc1(x), dim=-1)
