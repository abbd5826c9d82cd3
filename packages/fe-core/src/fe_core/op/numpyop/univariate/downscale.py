"""`Downscale`: decrease image quality by downscaling and upscaling."""
from __future__ import annotations

from typing import Iterable, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Downscale"]


@fe_export("fe.op.numpyop.univariate.downscale.Downscale", "fe.op.numpyop.univariate.Downscale")
class Downscale(ImageOnlyAlbumentation):
    """Decrease image quality by downscaling and then upscaling.

    A wrapper of albumentations' `Downscale`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        scale_min: Lower bound on the image scale. Should be < 1.
        scale_max: Upper bound on the image scale. Should be >= scale_min.
        interpolation: The cv2 interpolation method used both ways (default 0, `cv2.INTER_NEAREST`).

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
                 scale_min: float = 0.25,
                 scale_max: float = 0.25,
                 interpolation: int = 0) -> None:
        albumentations = import_albumentations("Downscale")
        func = albumentations.Downscale(scale_range=(scale_min, scale_max),
                                        interpolation_pair={"downscale": interpolation, "upscale": interpolation},
                                        p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
