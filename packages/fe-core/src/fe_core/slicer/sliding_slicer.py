"""`SlidingSlicer`: cuts arrays into (possibly overlapping) windows and stitches them back, averaging overlaps."""
from __future__ import annotations

import itertools
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.containers import to_list
from fe_core.framework.public import restore_like
from fe_core.slicer.slicer import Slicer, host_array
from fe_core.export import fe_export

__all__ = ["SlidingSlicer"]

_PAD_MODES = ("drop", "partial", "constant", "nopad", "mirror")
_UNSLICE_MODES = ("sum", "avg")


@fe_export("fe.slicer.sliding_slicer.SlidingSlicer", "fe.slicer.SlidingSlicer")
class SlidingSlicer(Slicer):
    """A slicer that cuts its inputs with a sliding window, one minibatch per window position.

    The window has the rank of the input. To feed a batched channel-first image [B, C, W, H] to a model that only takes
    [B, C, W2, H2], use `window_size=[-1, -1, W2, H2]`; to cut a big batch into minibatches of 8 samples, use
    `window_size=[8, -1, -1, -1]`. Windows are enumerated with the first axis outermost. Un-slicing writes each window
    back where it came from: overlapping regions are averaged (`unslice_mode='avg'`) or summed ('sum'), and places no
    window covered are filled with `pad_val`.

    Args:
        window_size: The window's size along every axis; -1 takes the whole axis.
        strides: How far the window moves along every axis (0 for the axes whose window is -1). Strides smaller than
            the window give overlapping windows; larger ones skip data. A single integer applies to every axis with a
            positive window; the default (empty) sets the strides equal to the window, so windows tile without
            overlap.
        pad_mode: What to do where the last window along an axis runs past the end of the input:
            'drop' leaves that window out; 'partial' keeps it, cut short; 'constant' pads the input with `pad_val` so
            the window is full; 'mirror' pads the input with its reflection; 'nopad' moves the last window back so it
            ends at the border (every window is full and nothing is padded; the input must be at least as big as the
            window).
        pad_val: The value used to pad in 'constant' mode, and to fill uncovered places when un-slicing.
        slice: The key(s) to cut. Several keys must have the same size along every windowed axis.
        unslice: The key(s) to stitch back. The default (an empty tuple) un-slices the `slice` keys; None un-slices
            nothing.
        unslice_mode: How overlapping windows combine: 'avg' or 'sum'.
        unslice_shape: The shape of the un-sliced arrays. Only needed when this slicer un-slices without slicing;
            otherwise the shape of the sliced input is used, at every step. Along axes that are not windowed (window
            -1 or stride 0, such as the batch axis) the size is taken from the pieces themselves, so predictions may
            have, for example, a different number of channels than the input. Un-sliced values may also have fewer
            or more trailing unwindowed axes than the input: with `window_size=[8, -1, -1, -1]` on images, class
            scores of shape [8, classes] are stitched back along the batch axis.
        squeeze_window: Whether to remove the axes whose window size is 1 from every minibatch (and restore them when
            un-slicing), for example to feed 3D data to a 2D model.
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer', '!train', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.

    Raises:
        ValueError: On an invalid window, stride, pad mode or unslice mode, or un-slicing without slicing and without
            an `unslice_shape`.

    Example:
        >>> slicer = SlidingSlicer(window_size=[-1, 4], strides=2, slice="x")
        >>> x = np.arange(12.0).reshape(2, 6)
        >>> [piece[0].shape for piece in slicer.slice_batches((x,))]
        [(2, 4), (2, 4)]
        >>> bool(np.array_equal(slicer.unslice_batches(tuple(p[0] for p in slicer.slice_batches((x,))), "x"), x))
        True
    """

    def __init__(self,
                 window_size: Sequence[int],
                 strides: Union[int, Sequence[int]] = (),
                 pad_mode: str = "drop",
                 pad_val: Union[int, float] = 0.0,
                 slice: Union[None, str, Sequence[str]] = None,  # pylint: disable=redefined-builtin
                 unslice: Union[None, str, Sequence[str]] = (),
                 unslice_mode: str = "avg",
                 unslice_shape: Optional[Tuple[int, ...]] = None,
                 squeeze_window: bool = False,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(slice=slice, unslice=unslice, mode=mode, ds_id=ds_id)
        self.window_size: List[int] = list(to_list(window_size))
        if not self.window_size:
            raise ValueError("SlidingSlicer needs a window_size with one entry per axis of the input")
        for size in self.window_size:
            if not _is_int(size) or (size <= 0 and size != -1):
                raise ValueError(f"SlidingSlicer window_size entries must be positive integers or -1, got "
                                 f"{self.window_size}")
        if _is_int(strides):
            self.strides = [int(strides) if size > 0 else 0 for size in self.window_size]  # type: ignore[arg-type]
        else:
            self.strides = list(to_list(strides)) or [size if size > 0 else 0 for size in self.window_size]
        if len(self.strides) != len(self.window_size):
            raise ValueError(f"SlidingSlicer strides and window_size need the same number of axes, got strides "
                             f"{self.strides} and window_size {self.window_size}")
        for stride in self.strides:
            if not _is_int(stride) or stride < 0:
                raise ValueError(f"SlidingSlicer strides must be non-negative integers, got {self.strides}")
        if pad_mode not in _PAD_MODES:
            raise ValueError(f"SlidingSlicer pad_mode must be one of {_PAD_MODES}, got {pad_mode!r}")
        if unslice_mode not in _UNSLICE_MODES:
            raise ValueError(f"SlidingSlicer unslice_mode must be one of {_UNSLICE_MODES}, got {unslice_mode!r}")
        self.pad_mode = pad_mode
        self.pad_val = pad_val
        self.unslice_mode = unslice_mode
        self.static_unslice_shape = unslice_shape is not None
        self.unslice_shape: Optional[List[int]] = [int(dim) for dim in unslice_shape] if unslice_shape else None
        if self.unslice_shape is not None and len(self.unslice_shape) != len(self.window_size):
            raise ValueError(f"SlidingSlicer unslice_shape {self.unslice_shape} must have one entry per window axis "
                             f"({len(self.window_size)})")
        if self.unslice_inputs and not self.slice_inputs and not self.static_unslice_shape:
            raise ValueError(f"SlidingSlicer un-slices {self.unslice_inputs} without slicing anything, so it needs "
                             "the unslice_shape the stitched arrays should have")
        # Axes the window actually moves along; the others are passed through whole.
        self._windowed = [size != -1 and stride != 0 for size, stride in zip(self.window_size, self.strides)]
        self.auto_squeeze: List[int] = [axis for axis, size in enumerate(self.window_size)
                                        if squeeze_window and size == 1 and self._windowed[axis]]

    # ------------------------------------------------------------------ geometry
    def _axis_windows(self, axis: int, length: int, windowed: bool) -> List[slice]:
        """The window positions along one axis of `length` (stops may run past it when padding)."""
        if not windowed:
            return [slice(None)]
        size, stride = self.window_size[axis], self.strides[axis]
        if self.pad_mode == "nopad" and length < size:
            raise ValueError(f"pad_mode 'nopad' needs every windowed axis to be at least as long as the window, but "
                             f"axis {axis} has length {length} < window {size}")
        windows = []
        start = 0
        while start < length:
            stop = start + size
            if stop > length:
                if self.pad_mode == "drop":
                    break
                if self.pad_mode == "partial":
                    stop = length
                elif self.pad_mode == "nopad":
                    start, stop = length - size, length
            windows.append(slice(start, stop))
            if stop >= length:
                break
            start += stride
        if not windows:
            raise ValueError(f"pad_mode 'drop' leaves no window along axis {axis}: its length {length} is smaller "
                             f"than the window {size}")
        return windows

    def _cuts(self, shape: Sequence[int], windowed: Sequence[bool]) -> Tuple[List[Tuple[slice, ...]], List[int]]:
        """Every window (first axis outermost) and the padding each axis needs at its end."""
        per_axis = [self._axis_windows(axis, length, flag)
                    for axis, (length, flag) in enumerate(zip(shape, windowed))]
        pads = [max(0, max(window.stop for window in windows) - length) if flag else 0
                for windows, length, flag in zip(per_axis, shape, windowed)]
        return list(itertools.product(*per_axis)), pads

    def _check_rank(self, shape: Sequence[int]) -> None:
        if len(shape) != len(self.window_size):
            raise ValueError(f"window_size {self.window_size} has rank {len(self.window_size)} but the data has "
                             f"shape {tuple(shape)}; they must have the same rank")

    def _windowed_for_rank(self, shape: Sequence[int]) -> List[bool]:
        """Which axes of a value of `shape` are windowed (its rank may differ from the window's on unwindowed axes)."""
        rank = len(shape)
        if rank >= len(self._windowed):
            return self._windowed + [False] * (rank - len(self._windowed))
        if any(self._windowed[rank:]):
            raise ValueError(f"slices of shape {tuple(shape)} lack windowed axes of window_size {self.window_size}")
        return self._windowed[:rank]

    # ------------------------------------------------------------------ slicing
    def slice_batches(self, batches: Tuple[Any, ...]) -> List[Tuple[Any, ...]]:
        shapes = [_shape(batch) for batch in batches]
        if shapes:
            self._check_rank(shapes[0])
            reference = shapes[0]
            for key, shape in zip(self.slice_inputs[1:], shapes[1:]):
                self._check_rank(shape)
                mismatched = [axis for axis, windowed in enumerate(self._windowed)
                              if windowed and shape[axis] != reference[axis]]
                if mismatched:
                    raise ValueError(f"{self!r} needs every sliced key to have the same size along the windowed axes "
                                     f"{mismatched}, but {self.slice_inputs[0]!r} has shape {reference} and {key!r} "
                                     f"has shape {shape}")
            if self.unslice_inputs and not self.static_unslice_shape:
                self.unslice_shape = list(reference)
        return super().slice_batches(tuple(batches))

    def _slice_batch(self, batch: Any) -> List[Any]:
        pieces = self._slice_host(host_array(batch))
        return pieces if isinstance(batch, np.ndarray) else restore_like(pieces, batch)

    def _slice_host(self, batch: np.ndarray) -> List[np.ndarray]:
        self._check_rank(batch.shape)
        cuts, pads = self._cuts(batch.shape, self._windowed)
        if any(pads):
            widths = [(0, pad) for pad in pads]
            if self.pad_mode == "constant":
                batch = np.pad(batch, widths, mode="constant", constant_values=self.pad_val)
            else:  # mirror
                batch = np.pad(batch, widths, mode="reflect")
        pieces = [batch[cut] for cut in cuts]
        if self.auto_squeeze:
            squeeze = tuple(self.auto_squeeze)
            pieces = [np.squeeze(piece, axis=squeeze) for piece in pieces]
        return pieces

    # ------------------------------------------------------------------ un-slicing
    def _unslice_batch(self, slices: Tuple[Any, ...], key: str) -> Any:
        if self.unslice_shape is None:
            raise ValueError("it has no shape to restore: slice a batch with this slicer first, or give "
                             "unslice_shape")
        merged = self._unslice_host([host_array(piece) for piece in slices])
        return merged if not slices or isinstance(slices[0], np.ndarray) else restore_like(merged, slices[0])

    def _unslice_host(self, pieces: List[np.ndarray]) -> np.ndarray:
        assert self.unslice_shape is not None
        if self.auto_squeeze:
            pieces = [np.expand_dims(piece, axis=tuple(self.auto_squeeze)) for piece in pieces]
            self._check_rank(pieces[0].shape)
        windowed = self._windowed_for_rank(pieces[0].shape)
        # Windowed axes take their size from the sliced input; the others from the pieces (batch, channels, ...).
        target = [self.unslice_shape[axis] if flag else length
                  for axis, (length, flag) in enumerate(zip(pieces[0].shape, windowed))]
        cuts, pads = self._cuts(target, windowed)
        if len(cuts) != len(pieces):
            raise ValueError(f"a target shape of {tuple(target)} with window_size {self.window_size} and strides "
                             f"{self.strides} gives {len(cuts)} window(s), but {len(pieces)} slice(s) arrived")
        padded = [length + pad for length, pad in zip(target, pads)]
        dtype = pieces[0].dtype
        if self.unslice_mode == "avg" and not np.issubdtype(dtype, np.floating):
            dtype = np.dtype(np.float32)
        merged = np.zeros(padded, dtype=dtype)
        # Counts only vary along windowed axes, so keep size-1 axes elsewhere and let them broadcast.
        counts = np.zeros([length if flag else 1 for length, flag in zip(padded, windowed)],
                          dtype=np.int32)
        for cut, piece in zip(cuts, pieces):
            region = merged[cut]
            if region.shape != piece.shape:
                raise ValueError(f"a slice of shape {piece.shape} does not fit its window of shape {region.shape}")
            region += piece
            counts[tuple(window if flag else slice(None) for window, flag in zip(cut, windowed))] += 1
        if self.unslice_mode == "avg":
            merged /= np.maximum(counts, 1)
        uncovered = counts == 0
        if uncovered.any():
            merged[np.broadcast_to(uncovered, merged.shape)] = self.pad_val
        if any(pads):
            merged = merged[tuple(slice(0, length) for length in target)]
        return merged

    def __repr__(self) -> str:
        return (f"SlidingSlicer(window_size={self.window_size}, strides={self.strides}, slice={self.slice_inputs}, "
                f"unslice={self.unslice_inputs})")


def _shape(value: Any) -> Tuple[int, ...]:
    """The shape of a numpy array, number or framework tensor, as a tuple of ints (no copy to the host)."""
    shape = getattr(value, "shape", None)
    if shape is None:
        return tuple(np.shape(value))
    return tuple(int(dim) for dim in shape)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
