"""`Binarize`: 1 where a value reaches a threshold, 0 elsewhere."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["Binarize"]


@fe_export("fe.op.numpyop.univariate.binarize.Binarize", "fe.op.numpyop.univariate.Binarize")
class Binarize(UnivariateOp):
    """Binarize the input so that every element `>= threshold` becomes 1 and every other element 0.

    The result keeps the input's dtype (floats give 0.0/1.0, integers 0/1, as in FastEstimator). Batch-capable: the
    comparison is elementwise, so a batch gives exactly the per-sample results.

    Args:
        threshold: Binarization threshold.
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Example:
        >>> Binarize(0.5, "x", "x").forward([np.array([0.2, 0.5, 0.9])], {})[0].tolist()
        [0.0, 1.0, 1.0]
    """

    batch_capable = True

    def __init__(self,
                 threshold: float,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.threshold = threshold

    def _apply(self, value: Any) -> np.ndarray:
        value = np.asarray(value)
        out = value >= self.threshold
        if value.dtype == np.bool_:
            return out
        return out.astype(value.dtype)

    def transform_sample(self, value: Any) -> np.ndarray:
        return self._apply(value)

    def transform_batch(self, values: Any) -> np.ndarray:
        return self._apply(values)
