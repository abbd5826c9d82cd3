"""`SlidingSlicer`."""
from fe_core.slicer.sliding_slicer import SlidingSlicer

__all__ = ["SlidingSlicer"]
