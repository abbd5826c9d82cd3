"""The TensorFlow half of `fe.util` (mirrors fe_core.util: tensors, devices, models)."""
from fe_tf.util import devices, models, tensors

__all__ = ["devices", "models", "tensors"]
