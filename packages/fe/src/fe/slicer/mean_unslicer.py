"""`MeanUnslicer`."""
from fe_core.slicer.mean_unslicer import MeanUnslicer

__all__ = ["MeanUnslicer"]
