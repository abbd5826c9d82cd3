"""fe-tf: the TensorFlow (Keras 3) backend of fe.

Importing `fe_tf` imports TensorFlow. fe finds this backend through the registry ('tf' -> `fe_tf.framework:TFBackend`),
so user code rarely imports it directly, except for the architectures.

Example:
    >>> # from fe_tf import LeNet, TFNetwork  # doctest: +SKIP
"""
from fe_tf.__about__ import __version__
from fe_tf.architecture import LeNet, ResNet9
from fe_tf.framework import TFBackend
from fe_tf.distribute import MIRRORED_STRATEGY_REDUCER
from fe_tf.network import TFNetwork

__all__ = ["__version__", "TFBackend", "TFNetwork", "LeNet", "ResNet9", "MIRRORED_STRATEGY_REDUCER"]
