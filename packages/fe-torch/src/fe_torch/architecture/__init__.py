"""Torch architectures shipped with fe (reachable from `fe` as `fe.architecture.pytorch`)."""
from fe_torch.architecture.attention_unet import AttentionUNet
from fe_torch.architecture.lenet import LeNet
from fe_torch.architecture.resnet9 import ResNet9
from fe_torch.architecture.unet import UNet
from fe_torch.architecture.wideresnet import WideResidualNetwork

__all__ = ["AttentionUNet", "LeNet", "ResNet9", "UNet", "WideResidualNetwork"]
