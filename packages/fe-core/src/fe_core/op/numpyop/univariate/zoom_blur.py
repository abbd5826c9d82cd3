"""`ZoomBlur`: apply a zoom blur."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["ZoomBlur"]


@fe_export("fe.op.numpyop.univariate.zoom_blur.ZoomBlur", "fe.op.numpyop.univariate.ZoomBlur")
class ZoomBlur(ImageOnlyAlbumentation):
    """Apply zoom blur transform.

    A wrapper of albumentations' `ZoomBlur`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        max_factor: Range for max factor for blurring. If max_factor is a single float, the range will be (1, limit).
            All max_factor values should be larger than 1.
        step_factor: Step size for zoom. All step_factor values should be positive. If single float will be used as step
            parameter for np.arange. If tuple of float step_factor will be in range [step_factor[0], step_factor[1]).

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
                 max_factor: Union[float, Tuple[float, float]] = (1, 1.31),
                 step_factor: Union[float, Tuple[float, float]] = (0.01, 0.03)) -> None:
        albumentations = import_albumentations("ZoomBlur")
        func = albumentations.ZoomBlur(max_factor=max_factor, step_factor=step_factor, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
