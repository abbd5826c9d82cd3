"""`MeanUnslicer`: fuses per-minibatch values (typically losses) by averaging them."""
from __future__ import annotations

from typing import Any, Iterable, Sequence, Tuple, Union

import numpy as np

from fe_core.framework.public import restore_like
from fe_core.slicer.slicer import Slicer, host_array
from fe_core.export import fe_export

__all__ = ["MeanUnslicer"]


@fe_export("fe.slicer.mean_unslicer.MeanUnslicer", "fe.slicer.MeanUnslicer")
class MeanUnslicer(Slicer):
    """A slicer that only un-slices, by taking the element-wise mean of the minibatches' values.

    Use it for values that are already reduced per minibatch, such as a loss: each minibatch's loss counts equally,
    whatever the minibatch's size (as in FastEstimator).

    Args:
        unslice: The key(s) to average back together.
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer', '!train', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.

    Example:
        >>> float(MeanUnslicer("ce").unslice_batches((np.float32(1.0), np.float32(2.0)), key="ce"))
        1.5
    """

    def __init__(self,
                 unslice: Union[str, Sequence[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(slice=None, unslice=unslice, mode=mode, ds_id=ds_id)

    def _unslice_batch(self, slices: Tuple[Any, ...], key: str) -> Any:
        values = [host_array(value) for value in slices]
        shapes = {value.shape for value in values}
        if len(shapes) > 1:
            raise ValueError(f"MeanUnslicer averages values of one shape, got {sorted(shapes)}")
        total = values[0].astype(np.result_type(values[0].dtype, np.float32), copy=True)
        for value in values[1:]:
            total += value
        total /= len(values)
        return total if isinstance(slices[0], np.ndarray) else restore_like(total, slices[0])

    def __repr__(self) -> str:
        return f"MeanUnslicer(unslice={self.unslice_inputs})"
