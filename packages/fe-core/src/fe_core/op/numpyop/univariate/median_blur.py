"""`MedianBlur`: blur an image with a median filter of random aperture size."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["MedianBlur"]


@fe_export("fe.op.numpyop.univariate.median_blur.MedianBlur", "fe.op.numpyop.univariate.MedianBlur")
class MedianBlur(ImageOnlyAlbumentation):
    """Blur the image with median filter of random aperture size.

    A wrapper of albumentations' `MedianBlur`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        blur_limit: Maximum aperture linear size for blurring the input image. Should be odd and in range [3, inf). If
            image is a float type then only 3 and 5 are valid sizes.

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
                 blur_limit: Union[int, Tuple[int, int]] = 5) -> None:
        albumentations = import_albumentations("MedianBlur")
        func = albumentations.MedianBlur(blur_limit=blur_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
