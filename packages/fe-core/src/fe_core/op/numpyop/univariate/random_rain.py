"""`RandomRain`: add rain streaks to an image."""
from __future__ import annotations

from typing import Iterable, Optional, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RandomRain"]


@fe_export("fe.op.numpyop.univariate.random_rain.RandomRain", "fe.op.numpyop.univariate.RandomRain")
class RandomRain(ImageOnlyAlbumentation):
    """Add rain to an image.

    A wrapper of albumentations' `RandomRain`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        slant_lower: Should be in range [-20, 20].
        slant_upper: Should be in range [-20, 20].
        drop_length: Should be in range [0, 100]; must be smaller than the image height.
        drop_width: Should be in range [1, 5].
        drop_color: Rain lines color (r, g, b).
        blur_value: How blurry to make the rain.
        brightness_coefficient: Rainy days are usually shady. Should be in range [0, 1].
        rain_type: One of [None, "drizzle", "heavy", "torrential"].

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
                 slant_lower: int = -10,
                 slant_upper: int = 10,
                 drop_length: int = 20,
                 drop_width: int = 1,
                 drop_color: Tuple[int, int, int] = (200, 200, 200),
                 blur_value: int = 7,
                 brightness_coefficient: float = 0.7,
                 rain_type: Optional[str] = None) -> None:
        albumentations = import_albumentations("RandomRain")
        func = albumentations.RandomRain(slant_range=(slant_lower, slant_upper), drop_length=drop_length,
                                         drop_width=drop_width, drop_color=tuple(drop_color), blur_value=blur_value,
                                         brightness_coefficient=brightness_coefficient,
                                         rain_type="default" if rain_type is None else rain_type, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
