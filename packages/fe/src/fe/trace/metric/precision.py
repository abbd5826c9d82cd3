"""`Precision`."""
from fe_core.trace.metric.precision import Precision

__all__ = ["Precision"]
