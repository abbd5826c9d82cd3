"""`Reshape`."""
from fe_core.op.numpyop.univariate.reshape import Reshape

__all__ = ["Reshape"]
