"""Univariate NumpyOps (FastEstimator's `fastestimator.op.numpyop.univariate`)."""
from fe_core.op.numpyop.univariate.expand_dims import ExpandDims
from fe_core.op.numpyop.univariate.minmax import Minmax
from fe_core.op.numpyop.univariate.normalize import Normalize
from fe_core.op.numpyop.univariate.onehot import Onehot
from fe_core.op.numpyop.univariate.reshape import Reshape
from fe_core.op.numpyop.univariate.to_float import ToFloat
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe.op.numpyop.univariate import expand_dims, minmax, normalize, onehot, reshape, to_float, univariate

__all__ = ["ExpandDims", "Minmax", "Normalize", "Onehot", "Reshape", "ToFloat", "UnivariateOp", "expand_dims",
           "minmax", "normalize", "onehot", "reshape", "to_float", "univariate"]
