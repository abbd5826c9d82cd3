"""fe-tf: the TensorFlow (Keras 3) backend of fe."""
from fe_tf.__about__ import __version__

__all__ = ["__version__"]
