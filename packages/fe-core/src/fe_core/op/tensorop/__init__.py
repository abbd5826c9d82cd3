"""TensorOps: ops run by the Network on framework tensors, written once for every backend."""
from fe_core.op.tensorop.augmentation import CutMixBatch, MixUpBatch
from fe_core.op.tensorop.gradient_ops import FGSM, GradientOp, Watch
from fe_core.op.tensorop.loss import CrossEntropy, L1_Loss, LossOp, MeanSquaredError
from fe_core.op.tensorop.meta import Fuse, OneOf, Repeat, Sometimes
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.op.tensorop.regularized_losses import L2Regularizaton, SuperLoss
from fe_core.op.tensorop.segmentation_losses import DiceLoss, FocalLoss, Hinge
from fe_core.op.tensorop.shape_ops import Permute, Reshape, Resize3D
from fe_core.op.tensorop.tensor_ops import Argmax, Average, Delete, LambdaOp
from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.op.tensorop.value_ops import Gather, Normalize, UnHadamard

__all__ = ["TensorOp", "ModelOp", "UpdateOp", "LossOp", "CrossEntropy", "MeanSquaredError", "L1_Loss", "DiceLoss",
           "FocalLoss", "Hinge", "L2Regularizaton", "SuperLoss", "Argmax", "Average", "LambdaOp", "Delete", "Gather",
           "Normalize", "UnHadamard", "Permute", "Reshape", "Resize3D", "Watch", "GradientOp", "FGSM", "MixUpBatch",
           "CutMixBatch", "Sometimes", "OneOf", "Repeat", "Fuse"]
