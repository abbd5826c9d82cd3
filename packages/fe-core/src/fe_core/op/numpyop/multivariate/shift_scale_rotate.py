"""`ShiftScaleRotate`: shift, scale and rotate the input by random amounts."""
from __future__ import annotations

import warnings
from typing import Any, Iterable, List, Optional, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation, fill_value

__all__ = ["ShiftScaleRotate"]


@fe_export("fe.op.numpyop.multivariate.shift_scale_rotate.ShiftScaleRotate",
           "fe.op.numpyop.multivariate.ShiftScaleRotate")
class ShiftScaleRotate(MultiVariateAlbumentation):
    """Shift, scale and rotate the input by random amounts.

    Args:
        shift_limit: Range of the shift as a fraction of the size; a single value s means (-s, s).
        scale_limit: Range of the change of scale; a single value s means (-s, s), i.e. factors in [1 - s, 1 + s].
        rotate_limit: Range of the angle in degrees; a single value n means (-n, n).
        interpolation: OpenCV interpolation flag for the image (cv2.INTER_*; default bilinear).
        border_mode: OpenCV border flag for pixels brought in from outside the image (cv2.BORDER_*; default
            reflect-101).
        value: Fill value for the image when `border_mode` is cv2.BORDER_CONSTANT (None: 0).
        mask_value: Fill value for masks when `border_mode` is cv2.BORDER_CONSTANT (None: 0).
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
                 shift_limit: Union[float, Tuple[float, float]] = 0.0625,
                 scale_limit: Union[float, Tuple[float, float]] = 0.1,
                 rotate_limit: Union[int, Tuple[int, int]] = 45,
                 interpolation: int = 1,
                 border_mode: int = 4,
                 value: Union[int, float, List[int], List[float]] = 0,
                 mask_value: Union[int, float, List[int], List[float]] = 0,
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
        with warnings.catch_warnings():  # albumentations 2 marks ShiftScaleRotate deprecated; it still works
            warnings.simplefilter("ignore")
            func = albumentations.ShiftScaleRotate(shift_limit=shift_limit, scale_limit=scale_limit,
                                                   rotate_limit=rotate_limit, interpolation=interpolation,
                                                   border_mode=border_mode, fill=fill_value(value),
                                                   fill_mask=fill_value(mask_value), p=1.0)
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         bbox_in=bbox_in, keypoints_in=keypoints_in, image_out=image_out, mask_out=mask_out,
                         masks_out=masks_out, bbox_out=bbox_out, keypoints_out=keypoints_out,
                         bbox_params=bbox_params, keypoint_params=keypoint_params)
