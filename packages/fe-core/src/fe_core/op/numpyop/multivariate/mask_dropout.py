"""`MaskDropout`: erase randomly chosen objects of a mask from the image and the mask."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations, run_transform
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation

__all__ = ["MaskDropout"]


@fe_export("fe.op.numpyop.multivariate.mask_dropout.MaskDropout", "fe.op.numpyop.multivariate.MaskDropout")
class MaskDropout(MultiVariateAlbumentation):
    """Erase randomly chosen objects of a mask from the image and the mask.

    0 is background in the mask; each other value is one object. A multi-channel mask (H, W, C) is accepted, as in
    FastEstimator: its objects are the connected regions of the pixels set in any channel, and an erased object is
    erased from every channel.

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
        self.mask_fill_value = mask_fill_value

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Erase objects from one sample (a multi-channel mask is handled through the union of its channels)."""
        plan = dict((target, index) for index, (target, _, _) in enumerate(self._in_plan))
        mask = data[plan["mask"]] if "mask" in plan and self._in_plan[plan["mask"]][1] == 1 else None
        if mask is None or np.ndim(mask) != 3 or np.shape(mask)[-1] == 1 or set(plan) - {"image", "mask"}:
            return super().forward(data, state)
        mask = np.asarray(mask)
        union = np.any(mask != 0, axis=-1).astype(np.uint8)
        marker_value = (int(np.asarray(self.mask_fill_value).reshape(-1)[0]) + 1) % 256 if np.size(
            self.mask_fill_value) else 1
        marker = np.full(union.shape, marker_value, dtype=np.uint8)
        targets: Dict[str, Any] = {"mask": union, "masks": [marker]}
        image = data[plan["image"]] if "image" in plan else None
        targets["image"] = image if image is not None else np.zeros(union.shape, dtype=np.uint8)
        result = run_transform(self.func, **targets)
        erased = np.asarray(result["masks"][0]) != marker_value
        new_mask = mask.copy()
        new_mask[erased] = self.mask_fill_value
        outputs: List[Any] = []
        for target, _, _ in self._out_plan:
            outputs.append(new_mask if target == "mask" else result["image"] if target == "image" else None)
        return outputs
