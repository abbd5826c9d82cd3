"""PyTorch architectures (FastEstimator's `fastestimator.architecture.pytorch`), from fe-torch: `LeNet`, `ResNet9`.

Importing this imports torch (and never TensorFlow). It needs the torch backend: `pip install 'fe[torch]'`.
"""
from fe.architecture.pytorch import lenet, resnet9
from fe.architecture.pytorch.lenet import LeNet
from fe.architecture.pytorch.resnet9 import ResNet9

__all__ = ["LeNet", "ResNet9", "lenet", "resnet9"]
