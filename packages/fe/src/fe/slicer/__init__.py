"""Slicers (FastEstimator's `fastestimator.slicer`): cut a batch into minibatches and fuse the results."""
from fe_core.slicer.axis_slicer import AxisSlicer
from fe_core.slicer.mean_unslicer import MeanUnslicer
from fe_core.slicer.slicer import Slicer
from fe_core.slicer.sliding_slicer import SlidingSlicer
from fe.slicer import axis_slicer, mean_unslicer, slicer, sliding_slicer

__all__ = ["AxisSlicer", "MeanUnslicer", "Slicer", "SlidingSlicer", "axis_slicer", "mean_unslicer", "slicer",
           "sliding_slicer"]
