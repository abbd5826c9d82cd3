"""`UNet`: the standard U-shaped encoder-decoder segmentation network (torch, channels first, sigmoid output)."""
from __future__ import annotations

from typing import Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from fe_core.export import fe_export

__all__ = ["UNet", "UNetEncoderBlock", "UNetDecoderBlock", "check_unet_input_size"]


def check_unet_input_size(input_size: Sequence[int], owner: str) -> None:
    """Raise ValueError unless `input_size` is (channels, height, width) with height and width multiples of 16."""
    if len(input_size) != 3:
        raise ValueError(f"{owner} input_size must have length 3 (channels, height, width), got {tuple(input_size)}")
    _, height, width = input_size
    if height < 16 or width < 16 or height % 16 or width % 16:
        raise ValueError(f"{owner} needs height and width that are multiples of 16 (16, 32, 48, ...), got input_size "
                         f"{tuple(input_size)}")


def _he_init(module: nn.Module) -> None:
    for layer in module.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.kaiming_normal_(layer.weight)
            nn.init.zeros_(layer.bias)


def _double_conv(in_channels: int, out_channels: int) -> list:
    return [nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1), nn.ReLU(inplace=True)]


@fe_export("fe.architecture.pytorch.unet.UNetEncoderBlock", "fe.architecture.pytorch.attention_unet.UNetEncoderBlock")
class UNetEncoderBlock(nn.Module):
    """Two 3x3 conv-ReLU layers; returns their output (the skip connection) and its 2x2 max-pooled version.

    Args:
        in_channels: How many channels enter the encoder.
        out_channels: How many channels leave the encoder.
    """

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(*_double_conv(in_channels, out_channels))
        _he_init(self)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        out = self.layers(x)
        return out, F.max_pool2d(out, 2)


@fe_export("fe.architecture.pytorch.unet.UNetDecoderBlock", "fe.architecture.pytorch.attention_unet.UNetDecoderBlock")
class UNetDecoderBlock(nn.Module):
    """Two 3x3 conv-ReLU layers (in -> mid -> mid), a 2x bilinear upsampling, and a 3x3 conv-ReLU (mid -> out).

    Args:
        in_channels: How many channels enter the decoder.
        mid_channels: How many channels the decoder's intermediate layers use.
        out_channels: How many channels leave the decoder.
    """

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(*_double_conv(in_channels, mid_channels),
                                    nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                                    nn.Conv2d(mid_channels, out_channels, 3, padding=1), nn.ReLU(inplace=True))
        _he_init(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


@fe_export("fe.architecture.pytorch.unet.UNet", "fe.architecture.pytorch.UNet")
class UNet(nn.Module):
    """A standard UNet: four encoder blocks (64-512 channels), a 1024-channel bottleneck, four decoder stages joined
    to the encoder by skip connections, and a 1x1 convolution with a sigmoid.

    Args:
        input_size: The input's (channels, height, width); height and width must be multiples of 16.
        output_channel: The number of output channels.

    Raises:
        ValueError: If `input_size` does not have length 3, or height / width are not multiples of 16.

    Example:
        >>> UNet(input_size=(1, 16, 16))(torch.zeros(1, 1, 16, 16)).shape
        torch.Size([1, 1, 16, 16])
    """

    def __init__(self, input_size: Tuple[int, int, int] = (1, 128, 128), output_channel: int = 1) -> None:
        check_unet_input_size(input_size, "UNet")
        super().__init__()
        self.input_size = tuple(input_size)
        self.enc1 = UNetEncoderBlock(input_size[0], 64)
        self.enc2 = UNetEncoderBlock(64, 128)
        self.enc3 = UNetEncoderBlock(128, 256)
        self.enc4 = UNetEncoderBlock(256, 512)
        self.bottle_neck = UNetDecoderBlock(512, 1024, 512)
        self.dec4 = UNetDecoderBlock(1024, 512, 256)
        self.dec3 = UNetDecoderBlock(512, 256, 128)
        self.dec2 = UNetDecoderBlock(256, 128, 64)
        self.dec1 = nn.Sequential(*_double_conv(128, 64), nn.Conv2d(64, output_channel, 1), nn.Sigmoid())
        _he_init(self.dec1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x = self.enc1(x)
        x2, x = self.enc2(x)
        x3, x = self.enc3(x)
        x4, x = self.enc4(x)
        x = self.bottle_neck(x)
        x = self.dec4(torch.cat((x, x4), 1))
        x = self.dec3(torch.cat((x, x3), 1))
        x = self.dec2(torch.cat((x, x2), 1))
        return self.dec1(torch.cat((x, x1), 1))
