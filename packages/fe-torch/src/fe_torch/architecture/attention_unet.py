"""`AttentionUNet`: a UNet whose skip connections pass through attention gates (torch, sigmoid output)."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn.functional as F
from torch import nn

from fe_core.export import fe_export
from fe_torch.architecture.unet import UNetDecoderBlock, UNetEncoderBlock, _double_conv, _he_init, \
    check_unet_input_size

__all__ = ["AttentionUNet", "AttentionBlock"]


@fe_export("fe.architecture.pytorch.attention_unet.AttentionBlock")
class AttentionBlock(nn.Module):
    """An attention gate: weighs the encoder's features by a sigmoid map computed from them and the decoder's.

    Args:
        in_channels: How many channels enter the block (from both the decoder and the encoder).
        out_channels: How many channels the gate's intermediate projection has.
    """

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.dec_layers = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1), nn.BatchNorm2d(out_channels))
        self.enc_layers = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1), nn.BatchNorm2d(out_channels))
        self.attn_layers = nn.Sequential(nn.Conv2d(out_channels, 1, 1), nn.BatchNorm2d(1))

    def forward(self, decoder_input: torch.Tensor, encoder_input: torch.Tensor) -> torch.Tensor:
        gate = F.relu(self.dec_layers(decoder_input) + self.enc_layers(encoder_input))
        return encoder_input * torch.sigmoid(self.attn_layers(gate))


@fe_export("fe.architecture.pytorch.attention_unet.AttentionUNet", "fe.architecture.pytorch.AttentionUNet")
class AttentionUNet(nn.Module):
    """UNet with attention-gated skip connections (https://arxiv.org/abs/1804.03999); one sigmoid output channel.

    Args:
        input_size: The input's (channels, height, width); height and width must be multiples of 16.

    Raises:
        ValueError: If `input_size` does not have length 3, or height / width are not multiples of 16.

    Example:
        >>> AttentionUNet(input_size=(1, 16, 16))(torch.zeros(1, 1, 16, 16)).shape
        torch.Size([1, 1, 16, 16])
    """

    def __init__(self, input_size: Tuple[int, int, int] = (1, 128, 128)) -> None:
        check_unet_input_size(input_size, "AttentionUNet")
        super().__init__()
        self.input_size = tuple(input_size)
        self.enc1 = UNetEncoderBlock(input_size[0], 64)
        self.enc2 = UNetEncoderBlock(64, 128)
        self.enc3 = UNetEncoderBlock(128, 256)
        self.enc4 = UNetEncoderBlock(256, 512)
        self.bottle_neck = UNetDecoderBlock(512, 1024, 512)
        self.attn4 = AttentionBlock(512, 512)
        self.attn3 = AttentionBlock(256, 256)
        self.attn2 = AttentionBlock(128, 128)
        self.attn1 = AttentionBlock(64, 64)
        self.dec4 = UNetDecoderBlock(1024, 512, 256)
        self.dec3 = UNetDecoderBlock(512, 256, 128)
        self.dec2 = UNetDecoderBlock(256, 128, 64)
        self.dec1 = nn.Sequential(*_double_conv(128, 64), nn.Conv2d(64, 1, 1), nn.Sigmoid())
        _he_init(self.dec1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x = self.enc1(x)
        x2, x = self.enc2(x)
        x3, x = self.enc3(x)
        x4, x = self.enc4(x)
        x = self.bottle_neck(x)
        x = self.dec4(torch.cat((x, self.attn4(x, x4)), 1))
        x = self.dec3(torch.cat((x, self.attn3(x, x3)), 1))
        x = self.dec2(torch.cat((x, self.attn2(x, x2)), 1))
        return self.dec1(torch.cat((x, self.attn1(x, x1)), 1))
