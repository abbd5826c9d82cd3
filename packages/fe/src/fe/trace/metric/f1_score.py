"""`F1Score`."""
from fe_core.trace.metric.f1_score import F1Score

__all__ = ["F1Score"]
