"""`ConfusionMetric`: the base of the metric traces."""
from fe_core.trace.metric.metric import ConfusionMetric

__all__ = ["ConfusionMetric"]
