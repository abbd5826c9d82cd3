"""`Slicer`: the base of the slicers."""
from fe_core.slicer.slicer import Slicer

__all__ = ["Slicer"]
