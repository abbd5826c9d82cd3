"""Slicers: cut one batch into minibatches before the Network's TensorOps, and fuse the results back afterwards.

Slicers work on numpy arrays on the CPU: the Network slices the pipeline's batch, runs its ops on each minibatch, brings
the predictions back to numpy, and un-slices them before postprocessing ops and traces run.
"""
from fe_core.slicer.axis_slicer import AxisSlicer
from fe_core.slicer.mean_unslicer import MeanUnslicer
from fe_core.slicer.slicer import Slicer
from fe_core.slicer.slicer_runner import forward_slicers, reverse_slicers, sanity_assert_slicers
from fe_core.slicer.sliding_slicer import SlidingSlicer

__all__ = ["Slicer", "AxisSlicer", "MeanUnslicer", "SlidingSlicer", "forward_slicers", "reverse_slicers",
           "sanity_assert_slicers"]
