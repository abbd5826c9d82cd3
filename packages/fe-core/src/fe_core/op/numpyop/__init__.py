"""NumpyOps: the Pipeline's per-sample and per-batch ops (and the Network's postprocessing ops).

Layout follows FastEstimator: `Batch`, `Delete`, `LambdaOp`, `RemoveIf` here; `meta` (Sometimes, OneOf) and
`univariate` (ExpandDims, Minmax, Normalize, Onehot, Reshape, ToFloat) as subpackages.
"""
from fe_core.op.numpyop import meta, univariate
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData, RemoveIf

__all__ = ["NumpyOp", "Batch", "Delete", "LambdaOp", "RemoveIf", "FilteredData", "meta", "univariate"]
