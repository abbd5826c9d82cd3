"""Ready-made Keras 3 architectures (FastEstimator's `fe.architecture.tensorflow`)."""
from fe_tf.architecture.attention_unet import AttentionUNet
from fe_tf.architecture.lenet import LeNet
from fe_tf.architecture.resnet9 import ResNet9
from fe_tf.architecture.unet import UNet
from fe_tf.architecture.wideresnet import WideResidualNetwork

__all__ = ["AttentionUNet", "LeNet", "ResNet9", "UNet", "WideResidualNetwork"]
