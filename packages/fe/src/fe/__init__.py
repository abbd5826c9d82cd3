"""fe: FastEstimator-style deep learning on TensorFlow and PyTorch."""
from fe.__about__ import __version__

__all__ = ["__version__"]
