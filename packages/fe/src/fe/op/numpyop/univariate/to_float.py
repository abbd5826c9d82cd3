"""`ToFloat`."""
from fe_core.op.numpyop.univariate.to_float import ToFloat

__all__ = ["ToFloat"]
