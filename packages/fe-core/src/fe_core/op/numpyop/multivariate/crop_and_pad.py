"""`CropAndPad`: crop or pad each side of the input by pixel amounts or fractions of its size."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation, border_flag, interpolation_flag

__all__ = ["CropAndPad"]

FillSpec = Union[None, int, float, Tuple[float, float], List[int]]


def _fill_sampler(spec: FillSpec) -> Any:
    """A fixed fill value, or a function drawing one from numpy's global random state (a (a, b) range or a list)."""
    if isinstance(spec, tuple) and len(spec) == 2:
        low, high = spec
        if isinstance(low, (int, np.integer)) and isinstance(high, (int, np.integer)):
            return lambda: int(np.random.randint(low, high + 1))
        return lambda: float(np.random.uniform(low, high))
    if isinstance(spec, list):
        choices = list(spec)
        return lambda: choices[np.random.randint(len(choices))]
    return 0 if spec is None else spec


@fe_export("fe.op.numpyop.multivariate.crop_and_pad.CropAndPad", "fe.op.numpyop.multivariate.CropAndPad")
class CropAndPad(MultiVariateAlbumentation):
    """Crop (negative amounts) or pad (positive amounts) each side of the input.

    Args:
        px: Pixels to crop or pad on each side: one int for every side, an (a, b) range to draw from per side, or
            four values (top, right, bottom, left). Give `px` or `percent`, not both.
        percent: The same as fractions of the image height / width.
        pad_mode: How padded pixels are filled: 'constant', 'edge', 'symmetric', 'reflect', 'wrap' or a
            cv2.BORDER_* flag.
        pad_cval: Image value of padded pixels in 'constant' mode: a number, an (a, b) range to draw from per sample
            (integers if both bounds are ints, else floats), or a list to choose from per sample.
        pad_cval_mask: The same for masks (None: 0).
        keep_size: Whether to resize the result back to the input's size.
        interpolation: Interpolation used by `keep_size`: 'nearest_neighbor', 'bilinear', 'bicubic', ... or a
            cv2.INTER_* flag.
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
                 px: Union[None, int, Tuple[int, int]] = None,
                 percent: Union[None, float, Tuple[float, float]] = None,
                 pad_mode: Union[int, str] = 'constant',
                 pad_cval: Union[int, Tuple[float], List[int]] = 0,
                 pad_cval_mask: Union[None, int, Tuple[float], List[int]] = None,
                 keep_size: bool = True,
                 interpolation: Union[int, str] = 'bilinear',
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
        self._fill = _fill_sampler(pad_cval)
        self._fill_mask = _fill_sampler(pad_cval_mask)
        func = albumentations.CropAndPad(px=list(px) if isinstance(px, list) else px,
                                         percent=list(percent) if isinstance(percent, list) else percent,
                                         border_mode=border_flag(pad_mode, name),
                                         fill=0 if callable(self._fill) else self._fill,
                                         fill_mask=0 if callable(self._fill_mask) else self._fill_mask,
                                         keep_size=keep_size,
                                         interpolation=interpolation_flag(interpolation, name),
                                         p=1.0)
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         image_out=image_out, mask_out=mask_out, masks_out=masks_out)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Draw this sample's fill values (when given as ranges or lists), then crop / pad."""
        if callable(self._fill):
            self.func.fill = self._fill()
        if callable(self._fill_mask):
            self.func.fill_mask = self._fill_mask()
        return super().forward(data, state)
