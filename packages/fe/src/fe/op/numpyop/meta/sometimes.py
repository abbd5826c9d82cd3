"""`Sometimes`: run an op with a given probability."""
from fe_core.op.numpyop.meta.sometimes import Sometimes

__all__ = ["Sometimes"]
