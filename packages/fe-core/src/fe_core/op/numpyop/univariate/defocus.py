"""`Defocus`: simulate camera defocus."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Defocus"]


@fe_export("fe.op.numpyop.univariate.defocus.Defocus", "fe.op.numpyop.univariate.Defocus")
class Defocus(ImageOnlyAlbumentation):
    """Apply camera Defocus transform.

    A wrapper of albumentations' `Defocus`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        radius: Range for radius of defocusing. If limit is a single int, the range will be [1, limit].
        alias_blur: Range for alias_blur of defocusing (sigma of gaussian blur). If limit is a single float, the range
            will be (0, limit).

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
                 radius: Union[int, Tuple[int, int]] = (3, 10),
                 alias_blur: Union[float, Tuple[float, float]] = (0.1, 0.5)) -> None:
        albumentations = import_albumentations("Defocus")
        if isinstance(radius, (int, float)):
            radius = (1, int(radius))
        func = albumentations.Defocus(radius=radius, alias_blur=alias_blur, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
