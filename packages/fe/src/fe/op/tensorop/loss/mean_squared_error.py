"""`MeanSquaredError`."""
from fe_core.op.tensorop.loss import MeanSquaredError

__all__ = ["MeanSquaredError"]
