"""`LeNet`: FastEstimator's small convolutional classifier (softmax output)."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from fe_core.export import fe_export

__all__ = ["LeNet"]

_KERNEL = 3
_POOL = 2


def _flat_size(side: int) -> int:
    """The side length after conv-pool-conv-pool-conv (valid 3x3 convolutions, 2x2 pooling)."""
    return ((side - (_KERNEL - 1)) // _POOL - (_KERNEL - 1)) // _POOL - (_KERNEL - 1)


@fe_export("fe.architecture.pytorch.lenet.LeNet", "fe.architecture.pytorch.LeNet")
class LeNet(nn.Module):
    """A LeNet-style classifier: conv32-pool-conv64-pool-conv64-flatten-dense64-dense(classes), softmax output.

    The output holds class probabilities, so pair it with `CrossEntropy(from_logits=False)` (the default).

    Args:
        input_shape: The input's (channels, height, width).
        classes: The number of classes.

    Raises:
        ValueError: If `input_shape` is not (channels, height, width) or is too small for the three convolutions.

    Example:
        >>> LeNet()(torch.zeros(2, 1, 28, 28)).shape
        torch.Size([2, 10])
    """

    def __init__(self, input_shape: Tuple[int, int, int] = (1, 28, 28), classes: int = 10) -> None:
        if len(input_shape) != 3:
            raise ValueError(f"LeNet input_shape must be (channels, height, width), got {input_shape}")
        height, width = _flat_size(input_shape[1]), _flat_size(input_shape[2])
        if height < 1 or width < 1:
            raise ValueError(f"LeNet input_shape {tuple(input_shape)} is too small: height and width must be at least "
                             f"18")
        super().__init__()
        self.pool_kernel = _POOL
        self.conv1 = nn.Conv2d(input_shape[0], 32, _KERNEL)
        self.conv2 = nn.Conv2d(32, 64, _KERNEL)
        self.conv3 = nn.Conv2d(64, 64, _KERNEL)
        self.fc1 = nn.Linear(height * width * 64, 64)
        self.fc2 = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), _POOL)
        x = F.max_pool2d(F.relu(self.conv2(x)), _POOL)
        x = F.relu(self.conv3(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.softmax(self.fc2(x), dim=-1)
