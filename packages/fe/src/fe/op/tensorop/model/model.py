"""`ModelOp`: run a model on input keys."""
from fe_core.op.tensorop.model import ModelOp

__all__ = ["ModelOp"]
