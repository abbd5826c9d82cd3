"""Model TensorOps (FastEstimator's `fastestimator.op.tensorop.model`): `ModelOp` and `UpdateOp`."""
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe.op.tensorop.model import model, update

__all__ = ["ModelOp", "UpdateOp", "model", "update"]
