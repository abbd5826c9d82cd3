"""`WideResidualNetwork` (https://arxiv.org/abs/1605.07146) for 3-channel images (torch; returns logits)."""
from __future__ import annotations

from typing import Type

import torch
import torch.nn.functional as F
from torch import nn

from fe_core.export import fe_export

__all__ = ["WideResidualNetwork", "BasicBlock", "NetworkBlock"]


@fe_export("fe.architecture.pytorch.wideresnet.BasicBlock")
class BasicBlock(nn.Module):
    """A pre-activation residual block: BN-ReLU-conv3x3(stride)-BN-ReLU-(dropout)-conv3x3, plus a shortcut (a 1x1
    strided convolution, `convShortcut`, when the channel count changes). Modules and names as FastEstimator's
    (`bn1`, `relu1`, `conv1`, `bn2`, `relu2`, `conv2`, `convShortcut`), so its weights load.

    Args:
        in_planes: How many channels enter the block.
        out_planes: How many channels leave the block.
        stride: Stride of the first convolution (and of the shortcut).
        dropout: Dropout rate between the convolutions (none when 0).
    """

    def __init__(self, in_planes: int, out_planes: int, stride: int, dropout: float = 0.0) -> None:
        super().__init__()
        # FastEstimator's module names and order (the state_dict keys of its checkpoints)
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_planes)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_planes, out_planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.dropout = float(dropout)
        self.droprate = self.dropout
        self.equalInOut = in_planes == out_planes  # pylint: disable=invalid-name  # FastEstimator's name
        self.convShortcut = None if self.equalInOut else nn.Conv2d(  # pylint: disable=invalid-name
            in_planes, out_planes, kernel_size=1, stride=stride, padding=0, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        activated = self.relu1(self.bn1(x))
        out = self.relu2(self.bn2(self.conv1(activated)))
        if self.dropout > 0:
            out = F.dropout(out, p=self.dropout, training=self.training)
        out = self.conv2(out)
        return torch.add(x if self.convShortcut is None else self.convShortcut(activated), out)


@fe_export("fe.architecture.pytorch.wideresnet.NetworkBlock")
class NetworkBlock(nn.Module):
    """`nb_layers` blocks in a row; the first changes the channel count and applies the stride.

    Args:
        nb_layers: How many blocks.
        in_planes: How many channels enter.
        out_planes: How many channels leave.
        block: The block class (BasicBlock).
        stride: The stride of the first block.
        dropout: The blocks' dropout rate.
    """

    def __init__(self, nb_layers: int, in_planes: int, out_planes: int, block: Type[BasicBlock], stride: int,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.layer = nn.Sequential(*[
            block(in_planes if index == 0 else out_planes, out_planes, stride if index == 0 else 1, dropout)
            for index in range(int(nb_layers))])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


@fe_export("fe.architecture.pytorch.wideresnet.WideResidualNetwork", "fe.architecture.pytorch.WideResidualNetwork")
class WideResidualNetwork(nn.Module):
    """A Wide Residual Network WRN-depth-widen_factor for 3-channel images; outputs logits (use
    `CrossEntropy(from_logits=True)`).

    Args:
        depth: Depth; (depth - 4) must be divisible by 6, giving (depth - 4) / 6 blocks per stage (16 -> 2, 28 -> 4).
        classes: The number of outputs.
        widen_factor: Channel multiplier of the three stages (16, 32, 64 times it).
        dropout: Dropout rate inside the blocks (none when 0).

    Raises:
        AssertionError: If (depth - 4) is not divisible by 6.

    Example:
        >>> WideResidualNetwork(depth=10, widen_factor=1)(torch.zeros(2, 3, 8, 8)).shape
        torch.Size([2, 10])
    """

    def __init__(self, depth: int = 28, classes: int = 10, widen_factor: int = 10, dropout: float = 0.0) -> None:
        super().__init__()
        assert (depth - 4) % 6 == 0, f"WideResidualNetwork depth - 4 must be divisible by 6, got depth={depth}"
        blocks = (depth - 4) // 6
        channels = [16, 16 * widen_factor, 32 * widen_factor, 64 * widen_factor]
        self.conv1 = nn.Conv2d(3, channels[0], 3, stride=1, padding=1, bias=False)
        self.block1 = NetworkBlock(blocks, channels[0], channels[1], BasicBlock, 1, dropout)
        self.block2 = NetworkBlock(blocks, channels[1], channels[2], BasicBlock, 2, dropout)
        self.block3 = NetworkBlock(blocks, channels[2], channels[3], BasicBlock, 2, dropout)
        self.bn1 = nn.BatchNorm2d(channels[3])
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(channels[3], classes)
        self.nChannels = channels[3]  # pylint: disable=invalid-name  # FastEstimator's name
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.block3(self.block2(self.block1(self.conv1(x))))
        out = self.avgpool(self.relu(self.bn1(out)))
        return self.fc(torch.flatten(out, 1))
