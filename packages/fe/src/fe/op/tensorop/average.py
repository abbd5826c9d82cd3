"""`Average`: the element-wise mean of several keys."""
from fe_core.op.tensorop.tensor_ops import Average

__all__ = ["Average"]
