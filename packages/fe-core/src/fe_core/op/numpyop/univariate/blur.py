"""`Blur`: blur an image with a random-size box kernel, or albumentations' AdvancedBlur."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Blur"]


@fe_export("fe.op.numpyop.univariate.blur.Blur", "fe.op.numpyop.univariate.Blur")
class Blur(ImageOnlyAlbumentation):
    """Blur the image with a randomly-sized kernel.

    With `advanced=True` the kernel is a randomly rotated, generalized Gaussian with noise (albumentations'
    `AdvancedBlur`), shaped by the `sigmaX_limit`, `sigmaY_limit`, `rotate_limit`, `beta_limit` and `noise_limit`
    arguments, which are ignored otherwise.

    A wrapper of albumentations' `Blur` (or `AdvancedBlur`). Its random parameters are drawn from numpy's global random
    state (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        blur_limit: Maximum kernel size for blurring the input image. Should be in range [3, inf).
        advanced: Use AdvancedBlur; only then are the following five arguments used.
        sigmaX_limit: Gaussian kernel standard deviation range along X. Must be in [0, inf).
        sigmaY_limit: Gaussian kernel standard deviation range along Y. Must be in [0, inf).
        rotate_limit: Range of the kernel's rotation angle; a single int `r` means `(-r, r)`.
        beta_limit: Distribution shape parameter range; 1 is the normal distribution, values below 1 make the tails
            heavier and above 1 lighter.
        noise_limit: Range of the multiplicative kernel noise; a single value `n` means `(0, n)`.

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
                 blur_limit: Union[int, Tuple[int, int]] = 7,
                 advanced: bool = False,
                 sigmaX_limit: Union[float, Tuple[float, float]] = (0.2, 1.0),
                 sigmaY_limit: Union[float, Tuple[float, float]] = (0.2, 1.0),
                 rotate_limit: Union[int, Tuple[int, int]] = 90,
                 beta_limit: Union[float, Tuple[float, float]] = (0.5, 8.0),
                 noise_limit: Union[float, Tuple[float, float]] = (0.9, 1.1)) -> None:
        albumentations = import_albumentations("Blur")
        if advanced:
            func = albumentations.AdvancedBlur(blur_limit=blur_limit, sigma_x_limit=sigmaX_limit,
                                               sigma_y_limit=sigmaY_limit, rotate_limit=rotate_limit,
                                               beta_limit=beta_limit, noise_limit=noise_limit, p=1.0)
        else:
            func = albumentations.Blur(blur_limit=blur_limit, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
