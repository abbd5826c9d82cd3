"""`ISONoise`: add camera sensor noise."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["ISONoise"]


@fe_export("fe.op.numpyop.univariate.iso_noise.ISONoise", "fe.op.numpyop.univariate.ISONoise")
class ISONoise(ImageOnlyAlbumentation):
    """Apply camera sensor noise.

    A wrapper of albumentations' `ISONoise`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        color_shift: Variance range for color hue change. Measured as a fraction of 360 degree Hue angle in the HLS
            colorspace.
        intensity: Multiplicative factor that controls the strength of color and luminance noise.

    Image types:
        uint8

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 color_shift: Tuple[float, float] = (0.01, 0.05),
                 intensity: Tuple[float, float] = (0.1, 0.5)) -> None:
        albumentations = import_albumentations("ISONoise")
        func = albumentations.ISONoise(color_shift=tuple(color_shift), intensity=tuple(intensity), p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
