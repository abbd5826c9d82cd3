"""`Reshape`: give every sample a new shape."""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["Reshape"]


@fe_export("fe.op.numpyop.univariate.reshape.Reshape", "fe.op.numpyop.univariate.Reshape")
class Reshape(UnivariateOp):
    """Reshape every input sample to `shape` (at most one -1 takes the remaining elements).

    Batch-capable: a batch is reshaped to `(batch_size, *shape)`.

    Args:
        shape: The new shape of one sample.
        inputs: Key(s) to reshape.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Example:
        >>> Reshape((2, -1), "x", "x").forward([np.arange(6)], {})[0].shape
        (2, 3)
    """

    batch_capable = True

    def __init__(self,
                 shape: Union[int, Tuple[int, ...]],
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.shape = shape
        self._sample_shape: Tuple[int, ...] = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)

    def transform_sample(self, value: Any) -> np.ndarray:
        return np.reshape(value, self._sample_shape)

    def transform_batch(self, values: Any) -> np.ndarray:
        return np.reshape(values, (len(values),) + self._sample_shape)
