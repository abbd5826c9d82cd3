"""The crop windows of `RandomCropFromBorders` and `BBoxSafeRandomCrop` as FastEstimator 1.x draws them.

FastEstimator wraps albumentations 1.x directly, so its crops follow that version's rules and its random stream:
python's global `random` (seeded by `random.seed` and, per sample, by the Pipeline), with one draw by
FastEstimator's `Compose` and one by the transform to decide whether they apply, then the crop's own draws. For the
same seed these functions give FastEstimator's crop windows; albumentations 2.x (which fe runs on) changed both the
draws and the rules (2.x's `BBoxSafeRandomCrop` erodes the union of the boxes, not each box; 1.x's border crop stops
one pixel short of the right and bottom edges). The transforms below are albumentations 2.x transforms whose crop
window comes from these functions, so images, masks, boxes and keypoints are cropped alike by albumentations.
"""
from __future__ import annotations

import functools
import random
from typing import Any, Sequence, Tuple

import numpy as np

__all__ = ["border_crop_window", "bbox_safe_crop_window", "fe1_crop_transforms"]

Window = Tuple[int, int, int, int]  # (x_min, y_min, x_max, y_max), pixels, max exclusive


def _apply_decisions() -> None:
    """The two draws FastEstimator's Compose and the transform make before the crop (they always apply)."""
    random.random()
    random.random()


def border_crop_window(height: int, width: int, crop_left: float, crop_right: float, crop_top: float,
                       crop_bottom: float) -> Window:
    """FastEstimator's `RandomCropFromBorders` window: up to `crop_left * width` pixels off the left, ... .

    Example:
        >>> random.seed(10); border_crop_window(28, 28, 0.5, 0.1, 0.1, 0.1)
        (9, 0, 25, 27)
    """
    _apply_decisions()
    x_min = random.randint(0, int(crop_left * width))
    x_max = random.randint(max(x_min + 1, int((1 - crop_right) * width)), width)
    y_min = random.randint(0, int(crop_top * height))
    y_max = random.randint(max(y_min + 1, int((1 - crop_bottom) * height)), height)
    # albumentations 1.x clamps an end at the edge to the last pixel (so the crop stops one short of it)
    return x_min, y_min, min(x_max, width - 1), min(y_max, height - 1)


def _union_eroded_per_box(bboxes: np.ndarray, erosion_rate: float) -> Tuple[float, float, float, float]:
    """The union of normalized boxes, each shrunk by `erosion_rate` of its size from every side (albumentations 1.x)."""
    widths, heights = bboxes[:, 2] - bboxes[:, 0], bboxes[:, 3] - bboxes[:, 1]
    return (float(np.min(bboxes[:, 0] + erosion_rate * widths)), float(np.min(bboxes[:, 1] + erosion_rate * heights)),
            float(np.max(bboxes[:, 2] - erosion_rate * widths)), float(np.max(bboxes[:, 3] - erosion_rate * heights)))


def bbox_safe_crop_window(height: int, width: int, bboxes: Sequence[Sequence[float]], erosion_rate: float) -> Window:
    """FastEstimator's `BBoxSafeRandomCrop` window for `bboxes` (normalized [x_min, y_min, x_max, y_max, ...]).

    Example:
        >>> random.seed(10); bbox_safe_crop_window(28, 28, [[12 / 28, 12 / 28, 17 / 28, 17 / 28]], 0.1)
        (8, 3, 26, 26)
    """
    _apply_decisions()
    boxes = np.asarray(bboxes, dtype=np.float64).reshape(-1, np.shape(bboxes)[-1] if len(bboxes) else 4)
    if len(boxes) == 0:
        erosive_h = int(height * (1.0 - erosion_rate))
        crop_height = height if erosive_h >= height else random.randint(erosive_h, height)
        h_start, w_start = random.random(), random.random()
        crop_width = int(crop_height * width / height)
    else:
        x_min, y_min, x_max, y_max = _union_eroded_per_box(boxes[:, :4], erosion_rate)
        left, top = x_min * random.random(), y_min * random.random()
        right, bottom = x_max + (1 - x_max) * random.random(), y_max + (1 - y_max) * random.random()
        box_width, box_height = right - left, bottom - top
        crop_height = height if box_height >= 1.0 else int(height * box_height)
        crop_width = width if box_width >= 1.0 else int(width * box_width)
        h_start = float(np.clip(0.0 if box_height >= 1.0 else top / (1.0 - box_height), 0.0, 1.0))
        w_start = float(np.clip(0.0 if box_width >= 1.0 else left / (1.0 - box_width), 0.0, 1.0))
    y_start = int((height - crop_height + 1) * h_start)
    x_start = int((width - crop_width + 1) * w_start)
    return x_start, y_start, x_start + crop_width, y_start + crop_height


@functools.lru_cache(maxsize=None)
def fe1_crop_transforms(albumentations: Any) -> Tuple[type, type]:
    """(RandomCropFromBorders, BBoxSafeRandomCrop): albumentations 2.x transforms cropping FastEstimator's windows."""

    class FE1RandomCropFromBorders(albumentations.RandomCropFromBorders):  # type: ignore[name-defined,misc]
        """albumentations' RandomCropFromBorders with FastEstimator 1.x's crop window."""

        def get_params_dependent_on_data(self, params: Any, data: Any) -> Any:
            height, width = params["shape"][:2]
            return {"crop_coords": border_crop_window(height, width, self.crop_left, self.crop_right, self.crop_top,
                                                      self.crop_bottom)}

    class FE1BBoxSafeRandomCrop(albumentations.BBoxSafeRandomCrop):  # type: ignore[name-defined,misc]
        """albumentations' BBoxSafeRandomCrop with FastEstimator 1.x's crop window."""

        def get_params_dependent_on_data(self, params: Any, data: Any) -> Any:
            height, width = params["shape"][:2]
            bboxes = data.get("bboxes")
            bboxes = [] if bboxes is None else bboxes
            return {"crop_coords": bbox_safe_crop_window(height, width, bboxes, self.erosion_rate)}

    return FE1RandomCropFromBorders, FE1BBoxSafeRandomCrop
