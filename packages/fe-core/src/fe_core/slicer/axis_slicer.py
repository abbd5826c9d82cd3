"""`AxisSlicer`: minibatches along one axis, either one per index (a 3D volume fed slice by slice to a 2D model) or
chunks of `minibatch_size` (a big batch fed to a small device a few samples at a time)."""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.framework.public import restore_like
from fe_core.slicer.slicer import Slicer, host_array
from fe_core.export import fe_export

__all__ = ["AxisSlicer"]


@fe_export("fe.slicer.axis_slicer.AxisSlicer", "fe.slicer.AxisSlicer")
class AxisSlicer(Slicer):
    """A slicer that cuts along one axis.

    Without `minibatch_size` (FastEstimator's behaviour) every index along `axis` is one minibatch and the axis is
    removed: a batch of shape [B, C, W, H, D] cut with `axis=-1` gives D minibatches of shape [B, C, W, H], so a batched
    channel-first 3D volume can go through a 2D model. Un-slicing stacks the pieces back along `axis`.

    With `minibatch_size=n` the axis is cut into consecutive chunks of n (the last one may be shorter) and kept, so a
    batch of 10 samples with `axis=0, minibatch_size=4` gives minibatches of 4, 4 and 2 samples. Un-slicing
    concatenates the pieces along `axis`, so predictions keep their own trailing shape ([4, classes] pieces give
    [10, classes]). Use a `MeanUnslicer` for values reduced per minibatch, such as a loss.

    Args:
        axis: The axis to cut along (negative values count from the end).
        slice: The key(s) to cut. Keys no slicer cuts are shared by every minibatch.
        unslice: The key(s) to fuse back. The default (an empty tuple) un-slices the `slice` keys; None un-slices
            nothing.
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer', '!train', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.
        minibatch_size: How many indices along `axis` each minibatch holds (keeping the axis); None takes one index
            per minibatch and removes the axis. This argument is an fe extension; FastEstimator's AxisSlicer has no
            such option.

    Raises:
        TypeError: If `axis` is not an integer.
        ValueError: If `minibatch_size` is not a positive integer.

    Example:
        >>> volume = np.zeros((2, 1, 8, 8, 5))
        >>> pieces = AxisSlicer(axis=-1, slice="image").slice_batches((volume,))
        >>> len(pieces), pieces[0][0].shape
        (5, (2, 1, 8, 8))
        >>> [piece[0].shape for piece in AxisSlicer(slice="x", minibatch_size=4).slice_batches((np.zeros((10, 3)),))]
        [(4, 3), (4, 3), (2, 3)]
    """

    def __init__(self,
                 axis: int = 0,
                 slice: Union[None, str, Sequence[str]] = None,  # pylint: disable=redefined-builtin
                 unslice: Union[None, str, Sequence[str]] = (),
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 minibatch_size: Optional[int] = None) -> None:
        super().__init__(slice=slice, unslice=unslice, mode=mode, ds_id=ds_id)
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"AxisSlicer axis must be an integer, got {axis!r} ({type(axis).__name__})")
        if minibatch_size is not None and (isinstance(minibatch_size, bool) or
                                           not isinstance(minibatch_size, (int, np.integer)) or minibatch_size < 1):
            raise ValueError(f"AxisSlicer minibatch_size must be a positive integer or None, got {minibatch_size!r}")
        self.axis = int(axis)
        self.minibatch_size: Optional[int] = None if minibatch_size is None else int(minibatch_size)

    def _slice_batch(self, batch: Any) -> List[Any]:
        pieces = self._slice_host(host_array(batch))
        return pieces if isinstance(batch, np.ndarray) else restore_like(pieces, batch)

    def _slice_host(self, batch: np.ndarray) -> List[np.ndarray]:
        if not -batch.ndim <= self.axis < batch.ndim:
            raise ValueError(f"axis {self.axis} is out of range for an array of rank {batch.ndim}")
        # Views, not copies: the backend copies each minibatch once when it converts it to a tensor.
        if self.minibatch_size is None:
            return list(np.moveaxis(batch, self.axis, 0))
        length = batch.shape[self.axis]
        if length == 0:
            return [batch]
        return np.split(batch, range(self.minibatch_size, length, self.minibatch_size), axis=self.axis)

    def _unslice_batch(self, slices: Tuple[Any, ...], key: str) -> Any:
        fused = self._unslice_host([host_array(piece) for piece in slices])
        return fused if not slices or isinstance(slices[0], np.ndarray) else restore_like(fused, slices[0])

    def _unslice_host(self, pieces: List[np.ndarray]) -> np.ndarray:
        if self.minibatch_size is None:
            return np.stack(pieces, axis=self.axis)
        if pieces[0].ndim == 0:
            raise ValueError("the slices are scalars, which cannot be concatenated (use a MeanUnslicer for values "
                             "reduced per minibatch, such as losses)")
        return np.concatenate(pieces, axis=self.axis)

    def __repr__(self) -> str:
        size = "" if self.minibatch_size is None else f", minibatch_size={self.minibatch_size}"
        return f"AxisSlicer(axis={self.axis}{size}, slice={self.slice_inputs}, unslice={self.unslice_inputs})"
