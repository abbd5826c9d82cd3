"""Torch layers of fe (FastEstimator's `fe.layers.pytorch`)."""
from fe_torch.layers.cropping_2d import Cropping2D
from fe_torch.layers.hadamard import HadamardCode

__all__ = ["Cropping2D", "HadamardCode"]
