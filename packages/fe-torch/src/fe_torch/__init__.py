"""fe-torch: the PyTorch backend of fe."""
from fe_torch.__about__ import __version__

__all__ = ["__version__"]
