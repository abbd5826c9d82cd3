"""`ExpandDims`: insert a new axis into each sample."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["ExpandDims"]

_AXIS_ERROR = getattr(getattr(np, "exceptions", np), "AxisError", IndexError)


@fe_export("fe.op.numpyop.univariate.expand_dims.ExpandDims", "fe.op.numpyop.univariate.ExpandDims")
class ExpandDims(UnivariateOp):
    """Insert a new axis at position `axis` of every input (the axis counts within a sample, not the batch).

    Batch-capable: on a batch the axis is shifted past the batch axis, so the result equals expanding each sample.

    Args:
        inputs: Key(s) to expand.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        axis: Where the new axis goes in the sample (negative values count from the end).

    Example:
        >>> ExpandDims("x", "x").forward([np.zeros((28, 28))], {})[0].shape
        (28, 28, 1)
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 axis: int = -1) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.axis = int(axis)
        self._batch_axis = self.axis + 1 if self.axis >= 0 else self.axis

    def transform_sample(self, value: Any) -> np.ndarray:
        return _insert_axis(np.asarray(value), self.axis)

    def transform_batch(self, values: Any) -> np.ndarray:
        return _insert_axis(np.asarray(values), self._batch_axis)


def _insert_axis(value: np.ndarray, axis: int) -> np.ndarray:
    """`np.expand_dims(value, axis)` for one axis, by basic indexing (a view, without expand_dims' overhead)."""
    if axis == -1:
        return value[..., None]
    position = axis if axis >= 0 else value.ndim + 1 + axis
    if not 0 <= position <= value.ndim:
        raise _AXIS_ERROR(axis, value.ndim + 1)
    return value[(slice(None),) * position + (None,)]
