"""`Normalize`: scale pixels by a maximum value, then standardize per channel."""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["Normalize"]


@fe_export("fe.op.numpyop.univariate.normalize.Normalize", "fe.op.numpyop.univariate.Normalize")
class Normalize(UnivariateOp):
    """Compute `(x - mean * max_pixel_value) / (std * max_pixel_value)` per channel (last axis), giving float32.

    Same arithmetic as FastEstimator's (albumentations') Normalize. Batch-capable: the channel statistics broadcast
    over the last axis, so a batch gives exactly the per-sample results.

    Args:
        inputs: Key(s) of images (channels last).
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        mean: Per-channel mean (or one value), in units of `max_pixel_value`.
        std: Per-channel standard deviation (or one value), in units of `max_pixel_value`.
        max_pixel_value: The largest possible pixel value.

    Example:
        >>> Normalize("x", "x", mean=0.5, std=0.5).forward([np.array([0, 255], dtype=np.uint8)], {})[0].tolist()
        [-1.0, 1.0]
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 mean: Union[float, Tuple[float, ...]] = (0.485, 0.456, 0.406),
                 std: Union[float, Tuple[float, ...]] = (0.229, 0.224, 0.225),
                 max_pixel_value: float = 255.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.mean = mean
        self.std = std
        self.max_pixel_value = max_pixel_value
        self._offset = np.array(mean, dtype=np.float32) * np.float32(max_pixel_value)
        self._factor = np.reciprocal(np.array(std, dtype=np.float32) * np.float32(max_pixel_value), dtype=np.float32)

    def _apply(self, value: Any) -> np.ndarray:
        out = np.asarray(value).astype(np.float32)
        out -= self._offset
        out *= self._factor
        return out

    def transform_sample(self, value: Any) -> np.ndarray:
        return self._apply(value)

    def transform_batch(self, values: Any) -> np.ndarray:
        return self._apply(values)
