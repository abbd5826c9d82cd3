"""`ToFloat`: convert to float32 in [0, 1] by dividing by the largest value of the input's type."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["ToFloat"]


def _dtype_max(dtype: np.dtype) -> float:
    if np.issubdtype(dtype, np.integer):
        return float(np.iinfo(dtype).max)
    if dtype == np.bool_ or np.issubdtype(dtype, np.floating):
        return 1.0
    raise TypeError(f"ToFloat cannot infer the maximum value of dtype {dtype}; pass max_value")


@fe_export("fe.op.numpyop.univariate.to_float.ToFloat", "fe.op.numpyop.univariate.ToFloat")
class ToFloat(UnivariateOp):
    """Divide by `max_value` and return float32 (FastEstimator's / albumentations' ToFloat).

    With `max_value=None` the divisor is the largest value of the input's integer type (255 for uint8, 65535 for
    uint16, ...) and 1 for floating-point input, which is then only cast to float32. Batch-capable.

    Args:
        inputs: Key(s) to convert.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        max_value: The divisor; None infers it from the dtype.

    Example:
        >>> ToFloat("x", "x").forward([np.array([0, 51, 255], dtype=np.uint8)], {})[0].tolist()
        [0.0, 0.20000000298023224, 1.0]
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 max_value: Optional[float] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.max_value = max_value

    def _apply(self, value: Any) -> np.ndarray:
        value = np.asarray(value)
        divisor = _dtype_max(value.dtype) if self.max_value is None else self.max_value
        out = value.astype(np.float32)
        if divisor != 1.0:
            out /= np.float32(divisor)
        return out

    def transform_sample(self, value: Any) -> np.ndarray:
        return self._apply(value)

    def transform_batch(self, values: Any) -> np.ndarray:
        return self._apply(values)
