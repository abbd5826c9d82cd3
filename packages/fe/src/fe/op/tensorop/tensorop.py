"""`TensorOp` and `LambdaOp`, where FastEstimator 1.x defines them (`fastestimator.op.tensorop.tensorop`)."""
from fe_core.op.tensorop.tensor_ops import LambdaOp
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["LambdaOp", "TensorOp"]
