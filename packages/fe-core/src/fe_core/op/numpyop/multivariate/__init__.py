"""Multivariate NumpyOps: albumentations spatial transforms applied with the same random parameters to an image
and its masks, bounding boxes and keypoints (plus `ReadMat`).

Importing this package does not import albumentations: each op imports it when it is built.
"""
from fe_core.op.numpyop.multivariate.affine import Affine
from fe_core.op.numpyop.multivariate.bbox_safe_random_crop import BBoxSafeRandomCrop
from fe_core.op.numpyop.multivariate.center_crop import CenterCrop
from fe_core.op.numpyop.multivariate.crop import Crop
from fe_core.op.numpyop.multivariate.crop_and_pad import CropAndPad
from fe_core.op.numpyop.multivariate.crop_non_empty_mask_if_exists import CropNonEmptyMaskIfExists
from fe_core.op.numpyop.multivariate.elastic_transform import ElasticTransform
from fe_core.op.numpyop.multivariate.flip import Flip
from fe_core.op.numpyop.multivariate.grid_distortion import GridDistortion
from fe_core.op.numpyop.multivariate.horizontal_flip import HorizontalFlip
from fe_core.op.numpyop.multivariate.longest_max_size import LongestMaxSize
from fe_core.op.numpyop.multivariate.mask_dropout import MaskDropout
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation
from fe_core.op.numpyop.multivariate.optical_distortion import OpticalDistortion
from fe_core.op.numpyop.multivariate.pad_if_needed import PadIfNeeded
from fe_core.op.numpyop.multivariate.random_crop import RandomCrop
from fe_core.op.numpyop.multivariate.random_crop_from_borders import RandomCropFromBorders
from fe_core.op.numpyop.multivariate.random_crop_near_bbox import RandomCropNearBBox
from fe_core.op.numpyop.multivariate.random_grid_shuffle import RandomGridShuffle
from fe_core.op.numpyop.multivariate.random_resized_crop import RandomResizedCrop
from fe_core.op.numpyop.multivariate.random_rotate_90 import RandomRotate90
from fe_core.op.numpyop.multivariate.random_scale import RandomScale
from fe_core.op.numpyop.multivariate.random_sized_bbox_safe_crop import RandomSizedBBoxSafeCrop
from fe_core.op.numpyop.multivariate.random_sized_crop import RandomSizedCrop
from fe_core.op.numpyop.multivariate.read_mat import ReadMat
from fe_core.op.numpyop.multivariate.resize import Resize
from fe_core.op.numpyop.multivariate.rotate import Rotate
from fe_core.op.numpyop.multivariate.shift_scale_rotate import ShiftScaleRotate
from fe_core.op.numpyop.multivariate.smallest_max_size import SmallestMaxSize
from fe_core.op.numpyop.multivariate.transpose import Transpose
from fe_core.op.numpyop.multivariate.vertical_flip import VerticalFlip

__all__ = ["Affine", "BBoxSafeRandomCrop", "CenterCrop", "Crop", "CropAndPad", "CropNonEmptyMaskIfExists",
           "ElasticTransform", "Flip", "GridDistortion", "HorizontalFlip", "LongestMaxSize", "MaskDropout",
           "MultiVariateAlbumentation", "OpticalDistortion", "PadIfNeeded", "RandomCrop", "RandomCropFromBorders",
           "RandomCropNearBBox", "RandomGridShuffle", "RandomResizedCrop", "RandomRotate90", "RandomScale",
           "RandomSizedBBoxSafeCrop", "RandomSizedCrop", "ReadMat", "Resize", "Rotate", "ShiftScaleRotate",
           "SmallestMaxSize", "Transpose", "VerticalFlip"]
