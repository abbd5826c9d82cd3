"""`RandomShapes`: blend randomly placed rectangles, circles, triangles and ellipses into an image (OpenCV)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.optional import import_optional

__all__ = ["RandomShapes"]


@fe_export("fe.op.numpyop.univariate.random_shapes.RandomShapes", "fe.op.numpyop.univariate.RandomShapes")
class RandomShapes(UnivariateOp):
    """Add 1 to `max_shapes` random shapes to an image, blended in with a random transparency.

    Each shape is a rectangle, circle, triangle or ellipse (drawn with OpenCV) of a random color whose channels lie in
    `intensity_range` (uint8 units; float images get it divided by 255). One opacity `alpha ~ U(transparency_range)`
    blends all shapes of a call: `shape * alpha + image * (1 - alpha)`; pixels outside the shapes are unchanged. All
    draws come from numpy's global random generator. Images are `(H, W)` or channels-last `(H, W, C)`, C <= 4.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        max_shapes: The maximum number of shapes to add to the image.
        max_size: The maximum size (pixels) of the shapes; None means the smaller image side.
        intensity_range: The allowable pixel values for the shapes, within [0, 254]; or one such pair per channel.
        transparency_range: The range of opacity values to draw from: 0 means that shapes are completely
            transparent, and 1 means that shapes are completely opaque.

    Raises:
        AssertionError: If the `intensity_range` or `transparency_range` arguments are invalid.
        MissingExtraError: If OpenCV (the `image` extra) is not installed.

    Example:
        >>> op = RandomShapes("x", "x", transparency_range=(1.0, 1.0))
        >>> bool(op.forward([np.full((16, 16, 3), 255, dtype=np.uint8)], {})[0].min() < 255)
        True
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 max_shapes: int = 3,
                 max_size: Optional[int] = None,
                 intensity_range: Union[Tuple[int, int], Sequence[Tuple[int, int]]] = (0, 254),
                 transparency_range: Tuple[float, float] = (0.1, 0.9)) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        pairs = intensity_range if isinstance(intensity_range[0], (tuple, list)) else [intensity_range]
        for low, high in pairs:  # type: ignore[misc]
            assert 0 <= low <= high <= 254, f"RandomShapes intensity_range should be in [0, 254], got {intensity_range}"
        assert 0 <= transparency_range[0] <= transparency_range[1] <= 1, \
            f"RandomShapes transparency_range should be in [0, 1], got {transparency_range}"
        assert int(max_shapes) >= 1, f"RandomShapes max_shapes must be >= 1, got {max_shapes}"
        self.max_shapes = int(max_shapes)
        self.max_size = max_size
        self.intensity_range = intensity_range
        self.transparency_range = tuple(transparency_range)
        self._cv2 = import_optional("cv2", extra="image", feature="RandomShapes")

    def set_rua_level(self, magnitude_coef: Union[int, float]) -> None:
        """Scale the number and size of shapes and the maximum opacity by `magnitude_coef` (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        self.max_shapes = max(1, math.ceil(magnitude_coef * self.max_shapes))
        self.max_size = None if self.max_size is None else math.ceil(magnitude_coef * self.max_size)
        low, high = self.transparency_range
        self.transparency_range = (low, low + (high - low) * magnitude_coef)

    def _colors(self, channels: int) -> List[Tuple[int, int]]:
        ranges = self.intensity_range
        if isinstance(ranges[0], (tuple, list)):
            if len(ranges) not in (1, channels):
                raise ValueError(f"RandomShapes intensity_range has {len(ranges)} channel ranges for an image with "
                                 f"{channels} channels")
            return [tuple(ranges[index % len(ranges)]) for index in range(channels)]  # type: ignore[misc]
        return [tuple(ranges)] * channels  # type: ignore[list-item]

    def _draw_shapes(self, height: int, width: int, channels: int) -> np.ndarray:
        cv2 = self._cv2
        canvas = np.full((height, width, channels), 255, dtype=np.uint8)
        limit = max(2, min(height, width) if self.max_size is None else int(self.max_size))
        colors = self._colors(channels)
        for _ in range(np.random.randint(1, self.max_shapes + 1)):
            kind = np.random.randint(4)
            size = np.random.randint(2, limit + 1)
            color = tuple(int(np.random.randint(low, high + 1)) for low, high in colors)
            row, col = np.random.randint(height), np.random.randint(width)
            if kind == 0:
                cv2.rectangle(canvas, (col, row), (col + size - 1, row + size - 1), color, thickness=-1)
            elif kind == 1:
                cv2.circle(canvas, (col, row), max(1, size // 2), color, thickness=-1)
            elif kind == 2:
                points = np.array([[col, row], [col + size, row], [col + size // 2, row - size]], dtype=np.int32)
                cv2.fillPoly(canvas, [points], color)
            else:
                axes = (max(1, size // 2), max(1, np.random.randint(1, size + 1) // 2))
                angle = float(np.random.uniform(0, 180))
                cv2.ellipse(canvas, (col, row), axes, angle, 0, 360, color, thickness=-1)
        return canvas

    def _apply(self, image: np.ndarray, shapes: np.ndarray, alpha: float) -> np.ndarray:
        if image.ndim == 2:
            shapes = shapes[..., 0]
        values = shapes / 255.0 if np.issubdtype(image.dtype, np.floating) else shapes
        blend = values * alpha + image * (1.0 - alpha)
        return np.where(shapes < 255, blend, image).astype(image.dtype)

    def _shape_of(self, image: np.ndarray) -> Tuple[int, int, int]:
        if image.ndim == 2:
            return image.shape[0], image.shape[1], 1
        if image.ndim == 3 and image.shape[-1] <= 4:
            return image.shape[0], image.shape[1], image.shape[2]
        raise ValueError(f"RandomShapes {self.inputs} expects (H, W) or (H, W, C<=4) images, got shape {image.shape}")

    def transform_sample(self, value: Any) -> np.ndarray:
        image = np.asarray(value)
        shapes = self._draw_shapes(*self._shape_of(image))
        alpha = float(np.random.uniform(*self.transparency_range))
        return self._apply(image, shapes, alpha)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[np.ndarray]:
        return [self.transform_sample(value) for value in data]
