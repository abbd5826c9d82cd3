"""NumpyOps: the Pipeline's per-sample and per-batch ops (and the Network's postprocessing ops).

Layout follows FastEstimator: `NumpyOp`, `Batch`, `Delete`, `LambdaOp`, `RemoveIf` and `forward_numpyop` here; `meta`
(Fuse, OneOf, Repeat, Sometimes), `multivariate` (albumentations spatial transforms of images with their masks, boxes
and keypoints) and `univariate` as subpackages. Importing them does not import albumentations.
"""
from fe_core.op.numpyop import meta, multivariate, univariate
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.forward_numpyop import forward_numpyop
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData, RemoveIf

__all__ = ["NumpyOp", "Batch", "Delete", "LambdaOp", "RemoveIf", "FilteredData", "forward_numpyop", "meta",
           "multivariate", "univariate"]
