"""`ColorJitter`: randomly change the brightness, contrast, saturation and hue of an image."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["ColorJitter"]


@fe_export("fe.op.numpyop.univariate.color_jitter.ColorJitter", "fe.op.numpyop.univariate.ColorJitter")
class ColorJitter(ImageOnlyAlbumentation):
    """Randomly changes the brightness, contrast, saturation and hue of an image.

    A wrapper of albumentations' `ColorJitter`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        brightness: How much to jitter brightness: the factor is drawn from [max(0, 1 - brightness), 1 + brightness] or
            the given [min, max]. Should be non negative.
        contrast: How much to jitter contrast, like `brightness`.
        saturation: How much to jitter saturation, like `brightness`.
        hue: How much to jitter hue: the shift is drawn from [-hue, hue] or the given [min, max]. Should have 0 <= hue
            <= 0.5 or -0.5 <= min <= max <= 0.5.

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
                 brightness: Union[float, Tuple[float, float]] = 0.2,
                 contrast: Union[float, Tuple[float, float]] = 0.2,
                 saturation: Union[float, Tuple[float, float]] = 0.2,
                 hue: Union[float, Tuple[float, float]] = 0.2) -> None:
        albumentations = import_albumentations("ColorJitter")
        func = albumentations.ColorJitter(brightness=brightness, contrast=contrast, saturation=saturation, hue=hue,
                                          p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
