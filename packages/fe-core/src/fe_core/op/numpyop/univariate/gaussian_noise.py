"""`GaussianNoise`: add Gaussian noise to an image."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["GaussianNoise"]


@fe_export("fe.op.numpyop.univariate.gaussian_noise.GaussianNoise", "fe.op.numpyop.univariate.GaussianNoise")
class GaussianNoise(ImageOnlyAlbumentation):
    """Apply gaussian noise to the image.

    WARNING: This assumes that floating point images are in the range [0,1] and will trim the output to that range. If
    your image is in a range like [-0.5, 0.5] then you do not want to use this Op.

    The variance is in uint8 units (pixel values 0-255): a float image in [0, 1] gets the same noise relative to its
    range, i.e. a standard deviation of sqrt(var) / 255.

    A wrapper of albumentations' `GaussNoise`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        var_limit: Variance range for noise. If var_limit is a single float, the range will be (0, var_limit).
        mean: Mean of the noise (uint8 units).

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
                 var_limit: Union[float, Tuple[float, float]] = (10.0, 50.0),
                 mean: float = 0.0) -> None:
        albumentations = import_albumentations("GaussianNoise")
        variances = (0.0, float(var_limit)) if isinstance(var_limit, (int, float)) else tuple(var_limit)
        if len(variances) != 2 or not 0 <= variances[0] <= variances[1]:
            raise ValueError(f"GaussianNoise var_limit must be a number >= 0 or a (low, high) pair, got {var_limit!r}")
        func = albumentations.GaussNoise(std_range=(variances[0] ** 0.5 / 255.0, variances[1] ** 0.5 / 255.0),
                                         mean_range=(mean / 255.0, mean / 255.0), p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
