"""TensorOps: ops run by the Network on framework tensors, written once for every backend."""
from fe_core.op.tensorop.loss import CrossEntropy, L1_Loss, LossOp, MeanSquaredError
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.op.tensorop.tensor_ops import Argmax, Average, Delete, LambdaOp
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["TensorOp", "ModelOp", "UpdateOp", "LossOp", "CrossEntropy", "MeanSquaredError", "L1_Loss", "Argmax",
           "Average", "LambdaOp", "Delete"]
