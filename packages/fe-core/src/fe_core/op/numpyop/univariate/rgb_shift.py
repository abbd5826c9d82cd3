"""`RGBShift`: randomly shift each RGB channel's values."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RGBShift"]


@fe_export("fe.op.numpyop.univariate.rgb_shift.RGBShift", "fe.op.numpyop.univariate.RGBShift")
class RGBShift(ImageOnlyAlbumentation):
    """Randomly shift the channel values for an input RGB image.

    A wrapper of albumentations' `RGBShift`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        r_shift_limit: Range for changing values for the red channel. If r_shift_limit is a single int, the range will
            be (-r_shift_limit, r_shift_limit).
        g_shift_limit: Range for changing values for the green channel, like `r_shift_limit`.
        b_shift_limit: Range for changing values for the blue channel, like `r_shift_limit`.

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
                 r_shift_limit: Union[int, Tuple[int, int]] = 20,
                 g_shift_limit: Union[int, Tuple[int, int]] = 20,
                 b_shift_limit: Union[int, Tuple[int, int]] = 20) -> None:
        albumentations = import_albumentations("RGBShift")
        func = albumentations.RGBShift(r_shift_limit=r_shift_limit, g_shift_limit=g_shift_limit,
                                       b_shift_limit=b_shift_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
