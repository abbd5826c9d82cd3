"""`RandomSunFlare`: add a sun flare to an image."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RandomSunFlare"]


@fe_export("fe.op.numpyop.univariate.random_sun_flare.RandomSunFlare", "fe.op.numpyop.univariate.RandomSunFlare")
class RandomSunFlare(ImageOnlyAlbumentation):
    """Add a sun flare to the image.

    A wrapper of albumentations' `RandomSunFlare`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        flare_roi: Region of the image where flare will appear (x_min, y_min, x_max, y_max). All values should be in
            range [0, 1].
        angle_lower: Should be in range [0, `angle_upper`].
        angle_upper: Should be in range [`angle_lower`, 1].
        num_flare_circles_lower: Lower limit for the number of flare circles. Should be in range [0,
            `num_flare_circles_upper`].
        num_flare_circles_upper: Upper limit for the number of flare circles. Should be in range
            [`num_flare_circles_lower`, inf].
        src_radius: Radius of the flare.
        src_color: Color of the flare (R,G,B).

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
                 flare_roi: Tuple[float, float, float, float] = (0, 0, 1, 0.5),
                 angle_lower: float = 0.0,
                 angle_upper: float = 1.0,
                 num_flare_circles_lower: int = 6,
                 num_flare_circles_upper: int = 10,
                 src_radius: int = 400,
                 src_color: Tuple[int, int, int] = (255, 255, 255)) -> None:
        albumentations = import_albumentations("RandomSunFlare")
        func = albumentations.RandomSunFlare(flare_roi=tuple(flare_roi), angle_range=(angle_lower, angle_upper),
                                             num_flare_circles_range=(num_flare_circles_lower, num_flare_circles_upper),
                                             src_radius=src_radius, src_color=tuple(src_color), p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
