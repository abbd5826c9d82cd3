"""Loss TensorOps (FastEstimator's `fastestimator.op.tensorop.loss`)."""
from fe_core.op.tensorop.loss import CrossEntropy, L1_Loss, LossOp, MeanSquaredError
from fe.op.tensorop.loss import cross_entropy, l1_loss, loss, mean_squared_error

__all__ = ["CrossEntropy", "L1_Loss", "LossOp", "MeanSquaredError", "cross_entropy", "l1_loss", "loss",
           "mean_squared_error"]
