"""`ToArray`: convert data (lists, scalars, PIL images, ...) to numpy arrays."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["ToArray"]


@fe_export("fe.op.numpyop.univariate.to_array.ToArray", "fe.op.numpyop.univariate.ToArray")
class ToArray(UnivariateOp):
    """Convert data to a numpy array, of `dtype` when given.

    Batch-capable: converting a batch equals stacking the converted samples.

    Args:
        inputs: Key(s) of the data to be converted.
        outputs: Key(s) into which to write the converted data.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        dtype: The dtype to apply to the output array ('float32', 'int64', ...), or None to infer the type.

    Example:
        >>> ToArray("x", "x", dtype="float32").forward([[1, 2]], {})[0]
        array([1., 2.], dtype=float32)
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 dtype: Optional[str] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.dtype = dtype
        self._dtype = None if dtype is None else np.dtype(dtype)

    def transform_sample(self, value: Any) -> np.ndarray:
        return np.asarray(value, dtype=self._dtype)

    def transform_batch(self, values: Any) -> np.ndarray:
        return np.asarray(values, dtype=self._dtype)
