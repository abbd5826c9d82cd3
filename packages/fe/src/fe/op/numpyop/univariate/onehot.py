"""`Onehot`."""
from fe_core.op.numpyop.univariate.onehot import Onehot

__all__ = ["Onehot"]
