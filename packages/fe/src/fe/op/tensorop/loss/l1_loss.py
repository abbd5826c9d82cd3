"""`L1_Loss`: L1, smooth L1 or Huber loss."""
from fe_core.op.tensorop.loss import L1_Loss

__all__ = ["L1_Loss"]
