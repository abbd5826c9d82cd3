"""Keras layers of fe (FastEstimator's `fe.layers.tensorflow`)."""
from fe_tf.layers.hadamard import HadamardCode
from fe_tf.layers.instance_norm import InstanceNormalization
from fe_tf.layers.reflection_padding_2d import ReflectionPadding2D

__all__ = ["HadamardCode", "InstanceNormalization", "ReflectionPadding2D"]
