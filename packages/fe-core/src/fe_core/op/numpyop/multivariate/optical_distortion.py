"""`OpticalDistortion`: apply a random lens (barrel / pincushion) distortion to the input."""
from __future__ import annotations

from typing import Iterable, List, Optional, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation, fill_value

__all__ = ["OpticalDistortion"]


@fe_export("fe.op.numpyop.multivariate.optical_distortion.OpticalDistortion",
           "fe.op.numpyop.multivariate.OpticalDistortion")
class OpticalDistortion(MultiVariateAlbumentation):
    """Apply a random lens (barrel / pincushion) distortion to the input.

    Args:
        distort_limit: Range of the distortion; a single value d means (-d, d).
        shift_limit: Accepted for compatibility and ignored: albumentations 2 no longer shifts the optical
            center.
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
        image_out: Where to write the image (default: `image_in`).
        mask_out: Where to write the mask (default: `mask_in`).
        masks_out: Where to write the masks (default: `masks_in`).

    Raises:
        AssertionError: If no input key is given.
        ValueError: If an argument is invalid (albumentations' validation error names it).
    """

    def __init__(self,
                 distort_limit: Union[float, Tuple[float, float]] = 0.05,
                 shift_limit: Union[float, Tuple[float, float]] = 0.05,
                 interpolation: int = 1,
                 border_mode: int = 4,
                 value: Union[None, int, float, List[int], List[float]] = None,
                 mask_value: Union[None, int, float, List[int], List[float]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 image_in: Optional[str] = None,
                 mask_in: Optional[str] = None,
                 masks_in: Optional[Iterable[str]] = None,
                 image_out: Optional[str] = None,
                 mask_out: Optional[str] = None,
                 masks_out: Optional[Iterable[str]] = None) -> None:
        name = type(self).__name__
        albumentations = import_albumentations(name)
        func = albumentations.OpticalDistortion(distort_limit=distort_limit, interpolation=interpolation,
                                                border_mode=border_mode, fill=fill_value(value),
                                                fill_mask=fill_value(mask_value), p=1.0)
        self.shift_limit = shift_limit
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         image_out=image_out, mask_out=mask_out, masks_out=masks_out)
