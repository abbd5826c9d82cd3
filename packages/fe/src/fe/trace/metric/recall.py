"""`Recall`."""
from fe_core.trace.metric.recall import Recall

__all__ = ["Recall"]
