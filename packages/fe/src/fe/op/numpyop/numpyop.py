"""`NumpyOp` and the basic NumpyOps, where FastEstimator 1.x defines them (`fastestimator.op.numpyop.numpyop`)."""
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import RemoveIf

__all__ = ["Batch", "Delete", "LambdaOp", "NumpyOp", "RemoveIf"]
