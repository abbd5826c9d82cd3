"""Torch architectures shipped with fe (reachable from `fe` as `fe.architecture.pytorch`)."""
from fe_torch.architecture.lenet import LeNet
from fe_torch.architecture.resnet9 import ResNet9

__all__ = ["LeNet", "ResNet9"]
