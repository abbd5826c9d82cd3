"""`CoarseDropout`: drop random rectangular regions of an image."""
from __future__ import annotations

from typing import Iterable, List, Optional, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["CoarseDropout"]


@fe_export("fe.op.numpyop.univariate.coarse_dropout.CoarseDropout", "fe.op.numpyop.univariate.CoarseDropout")
class CoarseDropout(ImageOnlyAlbumentation):
    """Drop rectangular regions from an image.

    A wrapper of albumentations' `CoarseDropout`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        max_holes: Maximum number of regions to zero out.
        max_height: Maximum height of the hole (pixels).
        max_width: Maximum width of the hole (pixels).
        min_holes: Minimum number of regions to zero out. If `None`, `min_holes` is set to `max_holes`.
        min_height: Minimum height of the hole. If `None`, `min_height` is set to `max_height`.
        min_width: Minimum width of the hole. If `None`, `min_width` is set to `max_width`.
        fill_value: Value for dropped pixels (one per channel when a list).

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
                 max_holes: int = 8,
                 max_height: int = 8,
                 max_width: int = 8,
                 min_holes: Optional[int] = None,
                 min_height: Optional[int] = None,
                 min_width: Optional[int] = None,
                 fill_value: Union[int, float, List[int], List[float]] = 0) -> None:
        albumentations = import_albumentations("CoarseDropout")
        holes = (max_holes if min_holes is None else min_holes, max_holes)
        heights = (max_height if min_height is None else min_height, max_height)
        widths = (max_width if min_width is None else min_width, max_width)
        fill = tuple(fill_value) if isinstance(fill_value, (list, tuple)) else fill_value
        func = albumentations.CoarseDropout(num_holes_range=holes, hole_height_range=heights, hole_width_range=widths,
                                            fill=fill, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
