"""`CLAHE`: contrast limited adaptive histogram equalization."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["CLAHE"]


@fe_export("fe.op.numpyop.univariate.clahe.CLAHE", "fe.op.numpyop.univariate.CLAHE")
class CLAHE(ImageOnlyAlbumentation):
    """Apply contrast limited adaptive histogram equalization to the image.

    A wrapper of albumentations' `CLAHE`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        clip_limit: Upper threshold value for contrast limiting. If clip_limit is a single float value, the range will
            be (1, clip_limit).
        tile_grid_size: Size of grid for histogram equalization.

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
                 clip_limit: Union[float, Tuple[float, float]] = 4.0,
                 tile_grid_size: Tuple[int, int] = (8, 8)) -> None:
        albumentations = import_albumentations("CLAHE")
        func = albumentations.CLAHE(clip_limit=clip_limit, tile_grid_size=tuple(tile_grid_size), p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
