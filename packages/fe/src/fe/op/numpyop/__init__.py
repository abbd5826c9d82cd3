"""NumpyOps (FastEstimator's `fastestimator.op.numpyop`): `NumpyOp`, `Batch`, `Delete`, `LambdaOp`, `RemoveIf`, and
the `meta` and `univariate` libraries."""
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import RemoveIf
from fe.op.numpyop import meta, numpyop, univariate

__all__ = ["Batch", "Delete", "LambdaOp", "NumpyOp", "RemoveIf", "meta", "numpyop", "univariate"]
