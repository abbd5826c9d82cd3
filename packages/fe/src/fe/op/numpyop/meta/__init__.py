"""Meta NumpyOps (FastEstimator's `fastestimator.op.numpyop.meta`): `Sometimes`, `OneOf`, plus `Delete` and
`LambdaOp`."""
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.meta.one_of import OneOf
from fe_core.op.numpyop.meta.sometimes import Sometimes
from fe.op.numpyop.meta import one_of, sometimes

__all__ = ["Delete", "LambdaOp", "OneOf", "Sometimes", "one_of", "sometimes"]
