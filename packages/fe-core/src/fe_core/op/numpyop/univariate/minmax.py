"""`Minmax`: rescale each sample to [0, 1] by its own minimum and maximum."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["Minmax"]


def _work_dtype(dtype: np.dtype) -> type:
    """float64 data is computed in float64 (then stored as float32, as FastEstimator does); all else in float32."""
    return np.float64 if dtype == np.float64 else np.float32


@fe_export("fe.op.numpyop.univariate.minmax.Minmax", "fe.op.numpyop.univariate.Minmax")
class Minmax(UnivariateOp):
    """Normalize each sample as `(x - min(x)) / max(max(x) - min(x), epsilon)`, then map [0, 1] to [new_min, new_max].

    The result is float32.

    Batch-capable: on a batch the minimum and maximum are taken per sample, so results equal the per-sample ones
    exactly.

    Args:
        inputs: Key(s) to rescale.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        epsilon: Lower bound of the divisor (a constant sample becomes all `new_min`).
        new_min: The desired minimum value after the minmax operation.
        new_max: The desired maximum value after the minmax operation.

    Example:
        >>> Minmax("x", "x").forward([np.array([2, 4, 6], dtype=np.uint8)], {})[0].tolist()
        [0.0, 0.5, 1.0]
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 epsilon: float = 1e-7,
                 new_min: float = 0.0,
                 new_max: float = 1.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.epsilon = epsilon
        self.new_min = new_min
        self.new_max = new_max
        self._rescale = (new_min, new_max) != (0.0, 1.0)

    def _to_range(self, out: np.ndarray) -> np.ndarray:
        if self._rescale:
            out *= out.dtype.type(self.new_max - self.new_min)
            out += out.dtype.type(self.new_min)
        return out.astype(np.float32, copy=False)

    def transform_sample(self, value: Any) -> np.ndarray:
        value = np.asarray(value)
        work = _work_dtype(value.dtype)
        if value.size == 0:
            return value.astype(np.float32)
        low = np.asarray(value.min(), dtype=work)
        scale = np.maximum(np.asarray(value.max(), dtype=work) - low, work(self.epsilon))
        out = value.astype(work)
        out -= low
        out /= scale
        return self._to_range(out)

    def transform_batch(self, values: Any) -> np.ndarray:
        values = np.asarray(values)
        work = _work_dtype(values.dtype)
        if values.size == 0 or values.ndim == 0:
            return values.astype(np.float32)
        count = values.shape[0]
        flat = values.reshape(count, -1)
        shape = (count,) + (1,) * (values.ndim - 1)
        low = flat.min(axis=1).astype(work).reshape(shape)
        scale = np.maximum(flat.max(axis=1).astype(work).reshape(shape) - low, work(self.epsilon))
        out = values.astype(work)
        out -= low
        out /= scale
        return self._to_range(out)
