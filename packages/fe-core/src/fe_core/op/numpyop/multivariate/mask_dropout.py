"""`MaskDropout`: erase randomly chosen objects of a mask from the image and the mask."""
from __future__ import annotations

from typing import Iterable, Optional, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation

__all__ = ["MaskDropout"]


@fe_export("fe.op.numpyop.multivariate.mask_dropout.MaskDropout", "fe.op.numpyop.multivariate.MaskDropout")
class MaskDropout(MultiVariateAlbumentation):
    """Erase randomly chosen objects of a mask from the image and the mask.

    The mask must be single-channel, with 0 as background; each other value is one object.

    Args:
        max_objects: Largest number of objects to erase, or a (min, max) range.
        image_fill_value: Fill value for the image, or 'inpaint' to inpaint the erased area (3-channel uint8
            images only).
        mask_fill_value: Fill value for the mask.
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
                 max_objects: Union[int, Tuple[int, int]] = 1,
                 image_fill_value: Union[int, float, str] = 0,
                 mask_fill_value: Union[int, float] = 0,
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
        fill = "inpaint_telea" if image_fill_value == "inpaint" else image_fill_value
        func = albumentations.MaskDropout(max_objects=max_objects, fill=fill, fill_mask=mask_fill_value, p=1.0)
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         image_out=image_out, mask_out=mask_out, masks_out=masks_out)
