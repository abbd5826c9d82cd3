"""TensorFlow architectures (FastEstimator's `fastestimator.architecture.tensorflow`), from fe-tf: `LeNet`, `ResNet9`.

Importing this imports TensorFlow (and never torch). It needs the tf backend: `pip install 'fe[tf]'`.
"""
from fe.architecture.tensorflow import lenet, resnet9
from fe.architecture.tensorflow.lenet import LeNet
from fe.architecture.tensorflow.resnet9 import ResNet9

__all__ = ["LeNet", "ResNet9", "lenet", "resnet9"]
