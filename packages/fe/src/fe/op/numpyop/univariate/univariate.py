"""`UnivariateOp`."""
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["UnivariateOp"]
