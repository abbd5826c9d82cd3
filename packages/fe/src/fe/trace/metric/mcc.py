"""`MCC`."""
from fe_core.trace.metric.mcc import MCC

__all__ = ["MCC"]
