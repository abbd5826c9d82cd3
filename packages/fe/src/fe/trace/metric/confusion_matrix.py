"""`ConfusionMatrix`."""
from fe_core.trace.metric.confusion_matrix import ConfusionMatrix

__all__ = ["ConfusionMatrix"]
