"""`Affine`: rotate, scale, shear and translate the input by random amounts."""
from __future__ import annotations

from numbers import Number
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation, border_flag, interpolation_flag

__all__ = ["Affine"]


def _symmetric(value: Union[None, Number, Tuple[Number, Number]], default: float) -> Tuple[float, float]:
    """None -> (default, default); n -> (-n, n); (a, b) -> (a, b)."""
    if value is None:
        return (default, default)
    if isinstance(value, (tuple, list)):
        return (value[0], value[1])
    return (-value, value)


def _from(value: Union[None, Number, Tuple[Number, Number]], start: Number, default: Number) -> Tuple[Any, Any]:
    """None -> (default, default); n -> (start, n); (a, b) -> (a, b)."""
    if value is None:
        return (default, default)
    if isinstance(value, (tuple, list)):
        return (value[0], value[1])
    return (start, value)


@fe_export("fe.op.numpyop.multivariate.affine.Affine", "fe.op.numpyop.multivariate.Affine")
class Affine(MultiVariateAlbumentation):
    """Rotate, scale, shear and translate the input by random amounts (one affine map per sample).

    Args:
        rotate: Rotation in degrees: a single value n draws from [-n, n], a pair (a, b) from [a, b]; None: none.
        scale: Scale factor: a single value n draws from [1.0, n], a pair (a, b) from [a, b]; None: unchanged.
        shear: Shear in degrees, drawn separately for x and y: a single value n from [-n, n], a pair (a, b) from
            [a, b]; None: none.
        translate: Translation extent: a single value n draws from [0, n], a pair (a, b) from [a, b]. Integers are
            pixels, floats fractions of the image size; None: none.
        border_handling: How new pixels are filled: 'constant', 'edge', 'symmetric', 'reflect' or 'wrap'; a list
            picks one of them at random on each call.
        fill_value: Image value of new pixels with 'constant' border handling.
        fill_value_mask: Mask value of new pixels with 'constant' border handling (None: 0).
        interpolation: Image interpolation: 'nearest_neighbor', 'bilinear', 'bicubic', 'biquartic' or 'biquintic'
            (OpenCV has no order-4/5 spline; both use Lanczos), or a cv2.INTER_* flag.
        mask_interpolation: The same for masks ('nearest_neighbor' keeps mask values intact).
        fit_output: Whether to resize the output plane so the whole transformed image fits (ignores `translate`).
        keep_ratio: Whether a random scale keeps the aspect ratio.
        rotate_method: How boxes are rotated: 'largest_box' or 'ellipse'.
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
                 rotate: Union[None, Number, Tuple[Number, Number]] = None,
                 scale: Union[None, float, Tuple[float, float]] = None,
                 shear: Union[None, Number, Tuple[Number, Number]] = None,
                 translate: Union[None, Number, Tuple[Number, Number]] = None,
                 border_handling: Union[str, List[str]] = 'constant',
                 fill_value: Number = 0,
                 fill_value_mask: Union[None, Number] = None,
                 interpolation: Union[int, str] = 'bilinear',
                 mask_interpolation: Union[int, str] = 'nearest_neighbor',
                 fit_output: bool = False,
                 keep_ratio: bool = False,
                 rotate_method: str = 'largest_box',
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
        arguments: Dict[str, Any] = {
            "rotate": _symmetric(rotate, 0.0),
            "scale": _from(scale, 1.0, 1.0),
            "shear": _symmetric(shear, 0.0),
            "interpolation": interpolation_flag(interpolation, name),
            "mask_interpolation": interpolation_flag(mask_interpolation, name),
            "fill": fill_value,
            "fill_mask": 0 if fill_value_mask is None else fill_value_mask,
            "fit_output": fit_output,
            "keep_ratio": keep_ratio,
            "rotate_method": rotate_method,
            "p": 1.0
        }
        if translate is not None:
            extent = _from(translate, 0, 0)
            pixels = all(isinstance(bound, (int, np.integer)) for bound in extent)
            arguments["translate_px" if pixels else "translate_percent"] = extent
        borders = [border_handling] if isinstance(border_handling, str) else list(border_handling)
        if not borders:
            raise ValueError(f"{name}: border_handling needs at least one mode")
        transforms = [albumentations.Affine(border_mode=border_flag(border, name), **arguments) for border in borders]
        func = transforms[0] if len(transforms) == 1 else albumentations.OneOf(transforms, p=1.0)
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         bbox_in=bbox_in, keypoints_in=keypoints_in, image_out=image_out, mask_out=mask_out,
                         masks_out=masks_out, bbox_out=bbox_out, keypoints_out=keypoints_out,
                         bbox_params=bbox_params, keypoint_params=keypoint_params)
