"""`System`: the run's shared state, which traces read and write."""
from fe_core.summary.system import System

__all__ = ["System"]
