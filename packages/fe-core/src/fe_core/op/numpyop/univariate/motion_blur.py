"""`MotionBlur`: apply motion blur with a random-size kernel."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["MotionBlur"]


@fe_export("fe.op.numpyop.univariate.motion_blur.MotionBlur", "fe.op.numpyop.univariate.MotionBlur")
class MotionBlur(ImageOnlyAlbumentation):
    """Motion Blur the image with a randomly-sized kernel.

    A wrapper of albumentations' `MotionBlur`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        blur_limit: Maximum kernel size for blurring the input image. Should be in the range [3, inf).

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
                 blur_limit: Union[int, Tuple[int, int]] = 7) -> None:
        albumentations = import_albumentations("MotionBlur")
        func = albumentations.MotionBlur(blur_limit=blur_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
