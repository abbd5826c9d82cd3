"""Ready-made Keras 3 architectures (FastEstimator's `fe.architecture.tensorflow`)."""
from fe_tf.architecture.lenet import LeNet
from fe_tf.architecture.resnet9 import ResNet9

__all__ = ["LeNet", "ResNet9"]
