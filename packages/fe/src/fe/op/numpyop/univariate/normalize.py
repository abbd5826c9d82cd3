"""`Normalize`."""
from fe_core.op.numpyop.univariate.normalize import Normalize

__all__ = ["Normalize"]
