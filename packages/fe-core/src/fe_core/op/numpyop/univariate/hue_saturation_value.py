"""`HueSaturationValue`: randomly shift the hue, saturation and value of an image."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["HueSaturationValue"]


@fe_export("fe.op.numpyop.univariate.hue_saturation_value.HueSaturationValue",
           "fe.op.numpyop.univariate.HueSaturationValue")
class HueSaturationValue(ImageOnlyAlbumentation):
    """Randomly modify the hue, saturation, and value of an image.

    A wrapper of albumentations' `HueSaturationValue`. Its random parameters are drawn from numpy's global random state
    (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        hue_shift_limit: Range for changing hue. If hue_shift_limit is a single int, the range will be
            (-hue_shift_limit, hue_shift_limit).
        sat_shift_limit: Range for changing saturation, like `hue_shift_limit`.
        val_shift_limit: Range for changing value, like `hue_shift_limit`.

    Image types:
        uint8, float32

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 hue_shift_limit: Union[int, Tuple[int, int]] = 20,
                 sat_shift_limit: Union[int, Tuple[int, int]] = 30,
                 val_shift_limit: Union[int, Tuple[int, int]] = 20) -> None:
        albumentations = import_albumentations("HueSaturationValue")
        func = albumentations.HueSaturationValue(hue_shift_limit=hue_shift_limit, sat_shift_limit=sat_shift_limit,
                                                 val_shift_limit=val_shift_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
