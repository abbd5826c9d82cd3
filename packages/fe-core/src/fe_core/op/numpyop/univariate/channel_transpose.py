"""`ChannelTranspose`: permute the axes of each sample (e.g. channels-last to channels-first)."""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["ChannelTranspose"]


@fe_export("fe.op.numpyop.univariate.channel_transpose.ChannelTranspose", "fe.op.numpyop.univariate.ChannelTranspose")
class ChannelTranspose(UnivariateOp):
    """Transpose each sample with the permutation `axes` (the default turns HWC into CHW).

    The result is a contiguous array. Batch-capable: on a batch the permutation is applied behind the batch axis.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        axes: The permutation order of one sample's axes.

    Example:
        >>> ChannelTranspose("x", "x").forward([np.zeros((8, 6, 3))], {})[0].shape
        (3, 8, 6)
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 axes: Iterable[int] = (2, 0, 1)) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.axes: Tuple[int, ...] = tuple(int(axis) for axis in axes)
        self._batch_axes = (0,) + tuple(axis + 1 if axis >= 0 else axis + len(self.axes) + 1 for axis in self.axes)

    def transform_sample(self, value: Any) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(value, self.axes))

    def transform_batch(self, values: Any) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(values, self._batch_axes))
