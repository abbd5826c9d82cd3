"""`AxisSlicer`."""
from fe_core.slicer.axis_slicer import AxisSlicer

__all__ = ["AxisSlicer"]
