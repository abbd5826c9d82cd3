"""`Accuracy`."""
from fe_core.trace.metric.accuracy import Accuracy

__all__ = ["Accuracy"]
