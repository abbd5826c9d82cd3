"""`BBoxSafeRandomCrop`: crop a random part of the input that keeps every bounding box."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate._fe1_crops import fe1_crop_transforms
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation

__all__ = ["BBoxSafeRandomCrop"]


@fe_export("fe.op.numpyop.multivariate.bbox_safe_random_crop.BBoxSafeRandomCrop",
           "fe.op.numpyop.multivariate.BBoxSafeRandomCrop")
class BBoxSafeRandomCrop(MultiVariateAlbumentation):
    """Crop a random part of the input that keeps every bounding box.

    The crop window is drawn as FastEstimator draws it (albumentations 1.x's rules, from python's `random`, so
    `random.seed` or `fe.enable_deterministic` repeat it, and a seed gives FastEstimator's crop sizes).

    Args:
        erosion_rate: How much of each box (a fraction of its width and height, from every side) may be cut away:
            the crop keeps the union of the eroded boxes.
        mode: Mode(s) to run in ('train', '!infer', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.
        image_in: The key of the image to transform.
        mask_in: The key of a mask to transform the same way as the image.
        masks_in: Keys of masks (one mask per key) to transform the same way, or one key holding a list of masks.
        bbox_in: The key of the bounding boxes to transform the same way (rows of `[*coords, *labels]`).
        keypoints_in: The key of the keypoints to transform the same way (rows of `[*coords, *extra]`).
        image_out: Where to write the image (default: `image_in`).
        mask_out: Where to write the mask (default: `mask_in`).
        masks_out: Where to write the masks (default: `masks_in`).
        bbox_out: Where to write the boxes (default: `bbox_in`).
        keypoints_out: Where to write the keypoints (default: `keypoints_in`).
        bbox_params: The box format ('coco', 'pascal_voc', 'albumentations' or 'yolo') or an albumentations
            `BboxParams`; needed with `bbox_in`.
        keypoint_params: The keypoint format ('xy', 'yx', 'xya', 'xys', 'xyas' or 'xysa') or an albumentations
            `KeypointParams`; needed with `keypoints_in`.

    Raises:
        AssertionError: If no input key is given.
        ValueError: If an argument is invalid (albumentations' validation error names it).
    """

    def __init__(self,
                 erosion_rate: float = 0.0,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 image_in: Optional[str] = None,
                 mask_in: Optional[str] = None,
                 masks_in: Optional[Iterable[str]] = None,
                 bbox_in: Optional[str] = None,
                 keypoints_in: Optional[str] = None,
                 image_out: Optional[str] = None,
                 mask_out: Optional[str] = None,
                 masks_out: Optional[Iterable[str]] = None,
                 bbox_out: Optional[str] = None,
                 keypoints_out: Optional[str] = None,
                 bbox_params: Any = None,
                 keypoint_params: Any = None) -> None:
        name = type(self).__name__
        albumentations = import_albumentations(name)
        func = fe1_crop_transforms(albumentations)[1](erosion_rate=erosion_rate, p=1.0)
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         bbox_in=bbox_in, keypoints_in=keypoints_in, image_out=image_out, mask_out=mask_out,
                         masks_out=masks_out, bbox_out=bbox_out, keypoints_out=keypoints_out,
                         bbox_params=bbox_params, keypoint_params=keypoint_params)
