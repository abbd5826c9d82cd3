"""`UpdateOp`: update a model's weights from a loss or gradients."""
from fe_core.op.tensorop.model import UpdateOp

__all__ = ["UpdateOp"]
