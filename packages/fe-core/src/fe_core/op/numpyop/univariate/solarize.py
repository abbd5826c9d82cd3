"""`Solarize`: invert all pixel values above a threshold."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Solarize"]


@fe_export("fe.op.numpyop.univariate.solarize.Solarize", "fe.op.numpyop.univariate.Solarize")
class Solarize(ImageOnlyAlbumentation):
    """Invert all pixel values above a threshold.

    The threshold is in the image's own units: 0-255 for uint8 images, 0-1 for float images (albumentations 2.x
    takes it as a fraction of the dtype's maximum; this op converts).

    A wrapper of albumentations' `Solarize`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be solarized.
        outputs: Key(s) into which to write the solarized images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        threshold: Range for the solarizing threshold. If threshold is a single value 't', the range will be [t, t].

    Image types:
        uint8, float32

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If `threshold` is negative or its range is reversed.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 threshold: Union[int, Tuple[int, int], float, Tuple[float, float]] = 128) -> None:
        low, high = (threshold, threshold) if isinstance(threshold, (int, float)) else tuple(threshold)
        if not 0 <= low <= high:
            raise ValueError(f"Solarize threshold must be >= 0 with low <= high, got {threshold!r}")
        self.threshold = threshold
        albumentations = import_albumentations("Solarize")
        self._uint8_func = albumentations.Solarize(threshold_range=(min(low / 255, 1.0), min(high / 255, 1.0)), p=1.0)
        self._float_func = albumentations.Solarize(threshold_range=(min(low, 1.0), min(high, 1.0)), p=1.0)
        super().__init__(self._uint8_func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)

    def forward(self, data: List[np.ndarray], state: Dict[str, Any]) -> List[np.ndarray]:
        floating = np.issubdtype(np.asarray(data[0]).dtype, np.floating)
        self.func = self._float_func if floating else self._uint8_func
        return super().forward(data, state)
