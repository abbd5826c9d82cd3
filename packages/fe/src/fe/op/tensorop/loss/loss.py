"""`LossOp`: the base of the loss ops."""
from fe_core.op.tensorop.loss import LossOp

__all__ = ["LossOp"]
