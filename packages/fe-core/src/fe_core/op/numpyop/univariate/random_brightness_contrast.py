"""`RandomBrightnessContrast`: randomly change brightness and contrast."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RandomBrightnessContrast"]


@fe_export("fe.op.numpyop.univariate.random_brightness_contrast.RandomBrightnessContrast",
           "fe.op.numpyop.univariate.RandomBrightnessContrast")
class RandomBrightnessContrast(ImageOnlyAlbumentation):
    """Randomly change the brightness and contrast of an image.

    A wrapper of albumentations' `RandomBrightnessContrast`. Its random parameters are drawn from numpy's global random
    state (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        brightness_limit: Factor range for changing brightness. If limit is a single float, the range will be (-limit,
            limit).
        contrast_limit: Factor range for changing contrast. If limit is a single float, the range will be (-limit,
            limit).
        brightness_by_max: If True adjust contrast by image dtype maximum, else adjust contrast by image mean.

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
                 brightness_limit: Union[float, Tuple[float, float]] = 0.2,
                 contrast_limit: Union[float, Tuple[float, float]] = 0.2,
                 brightness_by_max: bool = True) -> None:
        albumentations = import_albumentations("RandomBrightnessContrast")
        func = albumentations.RandomBrightnessContrast(brightness_limit=brightness_limit, contrast_limit=contrast_limit,
                                                       brightness_by_max=brightness_by_max, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
