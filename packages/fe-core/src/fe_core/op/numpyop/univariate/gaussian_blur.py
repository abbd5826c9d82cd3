"""`GaussianBlur`: blur an image with a Gaussian filter of random kernel size."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["GaussianBlur"]


@fe_export("fe.op.numpyop.univariate.gaussian_blur.GaussianBlur", "fe.op.numpyop.univariate.GaussianBlur")
class GaussianBlur(ImageOnlyAlbumentation):
    """Blur the image with a Gaussian filter of random kernel size.

    A wrapper of albumentations' `GaussianBlur`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        blur_limit: Maximum Gaussian kernel size for blurring the input image. Should be odd and in range [3, inf).
        sigma_limit: Gaussian kernel standard deviation. Must be in range [0, inf). If set single value sigma_limit will
            be in range (0, sigma_limit). If set to 0, sigma is computed from the kernel size as OpenCV does: sigma =
            0.3*((ksize-1)*0.5 - 1) + 0.8.

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
                 blur_limit: Union[int, Tuple[int, int]] = 3,
                 sigma_limit: Union[float, Tuple[float, float]] = 0.0) -> None:
        albumentations = import_albumentations("GaussianBlur")
        kernels = (3, int(blur_limit)) if isinstance(blur_limit, (int, float)) else tuple(blur_limit)
        if sigma_limit == 0 or (not isinstance(sigma_limit, (int, float)) and max(sigma_limit) == 0):
            sigma_limit = tuple(0.3 * ((max(size, 3) - 1) * 0.5 - 1) + 0.8 for size in kernels)
        func = albumentations.GaussianBlur(blur_limit=kernels, sigma_limit=sigma_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
