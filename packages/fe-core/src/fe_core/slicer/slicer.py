"""`Slicer`, the base class of the objects that cut one batch into minibatches and fuse the results back.

A Network with slicers cuts the pipeline's batch into minibatches (`forward_slicers`), runs its TensorOps on each
minibatch in turn (so a batch too big for the device still fits), brings every minibatch's predictions back to the host,
and fuses them into one batch (`reverse_slicers`) before the postprocessing ops and the traces see it.

A subclass that slices implements `_slice_batch` (one array in, a list of pieces out); one that un-slices implements
`_unslice_batch` (a tuple of pieces and their key in, one array out). As in FastEstimator, a user's subclass is handed
the framework's (host) tensors, so it may use torch or TensorFlow ops; the built-in slicers compute on numpy and hand
back the type they were given (numpy arrays, torch tensors or tf tensors).
"""
from __future__ import annotations

from typing import Any, Iterable, List, Sequence, Set, Tuple, Union

import numpy as np

from fe_core.containers import to_list, to_set
from fe_core.modes import check_ds_id, check_io_names, parse_modes
from fe_core.export import fe_export
from fe_core.framework.public import to_host

__all__ = ["Slicer", "host_array", "is_builtin_kernel"]

# Errors that a slicing/un-slicing kernel raises on data it cannot handle; they are re-raised naming the key.
_DATA_ERRORS = (ValueError, IndexError, TypeError)


@fe_export("fe.slicer.slicer.Slicer", "fe.slicer.Slicer")
class Slicer:
    """The base class of every slicer.

    Args:
        slice: The key(s) this slicer cuts. Keys no slicer cuts are shared, unchanged, by every minibatch.
        unslice: The key(s) this slicer fuses back. The default (an empty tuple) un-slices the `slice` keys; pass None
            to un-slice nothing, or name the keys explicitly (for example predictions made by the ops).
        mode: Mode(s) to run in ('train', 'eval', 'test', 'infer', '!train', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.

    Attributes:
        slice_inputs: The keys this slicer cuts.
        unslice_inputs: The keys this slicer fuses back.
        mode: The modes this slicer runs in (empty: every mode).
        ds_id: The dataset ids this slicer runs on (empty: every dataset).
        num_minibatches: How many minibatches the last call to `slice_batches` produced.

    Raises:
        ValueError: If neither `slice` nor `unslice` names a key, or a key name, mode or ds_id is invalid.
        NotImplementedError: If keys are given for a direction the subclass does not implement.

    Example:
        A slicer that cuts the batch in two halves along the batch axis and concatenates them back:

        >>> class Halves(Slicer):
        ...     def _slice_batch(self, batch):
        ...         return np.array_split(batch, 2)
        ...     def _unslice_batch(self, slices, key):
        ...         return np.concatenate(slices)
        >>> Halves(slice="x").slice_batches((np.arange(5),))
        [(array([0, 1, 2]),), (array([3, 4]),)]
    """

    slice_inputs: List[str]
    unslice_inputs: List[str]
    mode: Set[str]
    ds_id: Set[str]
    num_minibatches: int = 0

    def __init__(self,
                 slice: Union[None, str, Sequence[str]] = None,  # pylint: disable=redefined-builtin
                 unslice: Union[None, str, Sequence[str]] = (),
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        if isinstance(unslice, tuple) and not unslice:
            unslice = slice
        self.slice_inputs = check_io_names(list(to_list(slice)))
        self.unslice_inputs = check_io_names(list(to_list(unslice)))
        self.mode = parse_modes(to_set(mode))
        self.ds_id = check_ds_id(to_set(ds_id))
        self.num_minibatches = 0
        name = type(self).__name__
        if not self.slice_inputs and not self.unslice_inputs:
            raise ValueError(f"{name} needs at least one key to slice or un-slice, but both `slice` and `unslice` "
                             "are empty")
        for keys, what in ((self.slice_inputs, "slice"), (self.unslice_inputs, "unslice")):
            duplicates = sorted({key for key in keys if keys.count(key) > 1})
            if duplicates:
                raise ValueError(f"{name} lists key(s) {duplicates} more than once in `{what}`")
        if self.slice_inputs and type(self)._slice_batch is Slicer._slice_batch:
            raise NotImplementedError(f"{name} was given keys to slice {self.slice_inputs}, but does not implement "
                                      "_slice_batch")
        if self.unslice_inputs and type(self)._unslice_batch is Slicer._unslice_batch:
            raise NotImplementedError(f"{name} was given keys to un-slice {self.unslice_inputs}, but does not "
                                      "implement _unslice_batch")

    def slice_batches(self, batches: Tuple[Any, ...]) -> List[Tuple[Any, ...]]:
        """Cut the arrays of this slicer's `slice_inputs` into minibatches.

        Args:
            batches: One array per key of `slice_inputs`, in the same order.

        Returns:
            One tuple per minibatch, holding that minibatch's piece of each input array (in `slice_inputs` order).

        Raises:
            ValueError: If an array cannot be sliced, or the keys are cut into different numbers of pieces.
        """
        if len(batches) != len(self.slice_inputs):
            raise ValueError(f"{self!r} slices keys {self.slice_inputs} but was given {len(batches)} array(s)")
        pieces = [self._slice_one(key, batch) for key, batch in zip(self.slice_inputs, batches)]
        counts = [len(piece) for piece in pieces]
        if len(set(counts)) > 1:
            detail = ", ".join(f"{key!r}: {count}" for key, count in zip(self.slice_inputs, counts))
            raise ValueError(f"{self!r} cut its keys into different numbers of slices ({detail}); every key a slicer "
                             "cuts must give the same number of minibatches")
        self.num_minibatches = counts[0]
        return list(zip(*pieces))

    def unslice_batches(self, slices: Tuple[Any, ...], key: str) -> Any:
        """Fuse the per-minibatch values of `key` into one value (`_unslice_batch`, with errors naming the key).

        Args:
            slices: The value of `key` in each minibatch, in minibatch order.
            key: The key being un-sliced.

        Returns:
            The fused value.

        Raises:
            ValueError: If the values cannot be fused.
        """
        try:
            return self._unslice_batch(slices, key=key)
        except _DATA_ERRORS as error:
            shapes = [np.shape(value) for value in slices]
            raise ValueError(f"{self!r} could not un-slice key {key!r} from {len(slices)} slice(s) of shape(s) "
                             f"{_summarize_shapes(shapes)}: {error}") from error

    def _slice_one(self, key: str, batch: Any) -> List[Any]:
        try:
            pieces = self._slice_batch(batch)
        except _DATA_ERRORS as error:
            raise ValueError(f"{self!r} could not slice key {key!r} of shape {np.shape(batch)}: {error}") from error
        if not pieces:
            raise ValueError(f"{self!r} cut key {key!r} of shape {np.shape(batch)} into no slices at all")
        return pieces

    def _slice_batch(self, batch: Any) -> List[Any]:
        """Cut one array into a list of smaller pieces (subclasses that slice implement this).

        Args:
            batch: The array of one sliced key.

        Returns:
            The pieces, one per minibatch.
        """
        raise NotImplementedError

    def _unslice_batch(self, slices: Tuple[Any, ...], key: str) -> Any:
        """Fuse pieces back into one array (subclasses that un-slice implement this).

        Args:
            slices: The value of `key` in each minibatch.
            key: The key being un-sliced. Not every declared unslice key is present at every step: a key nobody reads
                later is not un-sliced.

        Returns:
            The fused array.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(slice={self.slice_inputs}, unslice={self.unslice_inputs})"


def host_array(value: Any) -> np.ndarray:
    """`value` (a numpy array, number, or a torch / tf tensor) as a numpy array on the host."""
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(to_host(value))


def is_builtin_kernel(slicer: Slicer, method: str) -> bool:
    """Whether `slicer`'s `method` ('_slice_batch' / '_unslice_batch') is one of fe's own (which take numpy arrays),
    rather than a user's override (which is handed framework tensors, as in FastEstimator)."""
    function = getattr(type(slicer), method, None)
    return getattr(function, "__module__", "").startswith("fe_core.")


def _summarize_shapes(shapes: List[Tuple[int, ...]]) -> str:
    distinct = list(dict.fromkeys(shapes))
    return str(distinct[0]) if len(distinct) == 1 else str(distinct)
