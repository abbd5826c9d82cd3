"""TensorOps (FastEstimator's `fastestimator.op.tensorop`): `TensorOp`, `LambdaOp`, `Argmax`, `Average`, `Delete`,
and the `loss` and `model` libraries. Each op is written once and runs on every backend."""
from fe_core.op.tensorop.tensor_ops import Argmax, Average, Delete, LambdaOp
from fe_core.op.tensorop.tensorop import TensorOp
from fe.op.tensorop import argmax, average, loss, model, tensorop

__all__ = ["Argmax", "Average", "Delete", "LambdaOp", "TensorOp", "argmax", "average", "loss", "model", "tensorop"]
