"""Meta NumpyOps: ops that control other ops (`Sometimes`, `OneOf`), plus `Delete` and `LambdaOp` for convenience."""
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.meta.one_of import OneOf
from fe_core.op.numpyop.meta.sometimes import Sometimes

__all__ = ["Sometimes", "OneOf", "Delete", "LambdaOp"]
