"""`Equalize`: equalize the image histogram (OpenCV or Pillow method)."""
from __future__ import annotations

from typing import Iterable, List, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Equalize"]


@fe_export("fe.op.numpyop.univariate.equalize.Equalize", "fe.op.numpyop.univariate.Equalize")
class Equalize(ImageOnlyAlbumentation):
    """Equalize the image histogram.

    A wrapper of albumentations' `Equalize`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        eq_mode: {'cv', 'pil'}. Use OpenCV or Pillow equalization method.
        by_channels: If True, equalize each channel separately, else convert the image to YCbCr and equalize the `Y`
            channel.
        mask: If given, only the pixels selected by the mask are included in the analysis. May be a 1 channel or 3
            channel array, or a function of `image` (and `mask_params`).
        mask_params: Params for the mask function.

    Image types:
        uint8

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 eq_mode: str = 'cv',
                 by_channels: bool = True,
                 mask: Union[None, np.ndarray] = None,
                 mask_params: List[str] = ()) -> None:
        albumentations = import_albumentations("Equalize")
        func = albumentations.Equalize(mode=eq_mode, by_channels=by_channels, mask=mask, mask_params=list(mask_params),
                                       p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
