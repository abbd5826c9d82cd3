"""`Minmax`."""
from fe_core.op.numpyop.univariate.minmax import Minmax

__all__ = ["Minmax"]
