"""`Argmax`: the index of the largest value along an axis."""
from fe_core.op.tensorop.tensor_ops import Argmax

__all__ = ["Argmax"]
