"""`ExpandDims`."""
from fe_core.op.numpyop.univariate.expand_dims import ExpandDims

__all__ = ["ExpandDims"]
