"""Univariate NumpyOps: each input key is transformed on its own into the matching output key."""
from fe_core.op.numpyop.univariate.expand_dims import ExpandDims
from fe_core.op.numpyop.univariate.minmax import Minmax
from fe_core.op.numpyop.univariate.normalize import Normalize
from fe_core.op.numpyop.univariate.onehot import Onehot
from fe_core.op.numpyop.univariate.reshape import Reshape
from fe_core.op.numpyop.univariate.to_float import ToFloat
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["ExpandDims", "Minmax", "Normalize", "Onehot", "Reshape", "ToFloat", "UnivariateOp"]
