"""`InvertImg`: invert an image."""
from __future__ import annotations

from typing import Iterable, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["InvertImg"]


@fe_export("fe.op.numpyop.univariate.invert_img.InvertImg", "fe.op.numpyop.univariate.InvertImg")
class InvertImg(ImageOnlyAlbumentation):
    """Invert an image by subtracting its pixel values from the maximum value of its dtype (255 for uint8, 1.0 for float
    images).

    A wrapper of albumentations' `InvertImg`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

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
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        albumentations = import_albumentations("InvertImg")
        func = albumentations.InvertImg(p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
