"""`Batch`: where the Pipeline turns samples into batches, and how (size, last partial batch, padding, collation)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.export import fe_export

__all__ = ["Batch", "collate_samples", "stack_values", "pad_and_stack_values"]


def stack_values(key: str, values: Sequence[Any]) -> Any:
    """Stack one key's per-sample values into a batch.

    Arrays and numbers become one array with a new leading axis, strings an array of strings, and dicts are collated
    key by key.

    Raises:
        ValueError: If the samples have different shapes (the message names the key and suggests `pad_value`).
    """
    first = values[0]
    if isinstance(first, np.ndarray):
        try:
            return np.stack(values)
        except ValueError as error:
            shapes = sorted({np.shape(value) for value in values}, key=str)
            if len(shapes) > 1:
                raise ValueError(f"Batch cannot stack key {key!r}: its samples have different shapes {shapes[:4]}; "
                                 f"give Batch(pad_value=...) to pad them or a collate_fn") from error
            raise
    if isinstance(first, Mapping):
        return {inner: stack_values(f"{key}.{inner}", [value[inner] for value in values]) for inner in first}
    try:
        return np.asarray(values)
    except ValueError as error:
        raise ValueError(f"Batch cannot stack key {key!r}: its samples have different shapes; give "
                         f"Batch(pad_value=...) to pad them or a collate_fn") from error


def pad_and_stack_values(key: str, values: Sequence[Any], pad_value: Union[int, float]) -> Any:
    """Stack one key's values, padding arrays of different shapes (at the end of each axis) to the largest shape.

    Raises:
        ValueError: If the samples differ in their number of dimensions.
    """
    arrays = [np.asarray(value) for value in values]
    shapes = {array.shape for array in arrays}
    if len(shapes) == 1:
        return stack_values(key, values)
    ranks = {len(shape) for shape in shapes}
    if len(ranks) > 1:
        raise ValueError(f"Batch cannot pad key {key!r}: its samples have different numbers of dimensions "
                         f"{sorted(shapes, key=str)[:4]}")
    target = tuple(max(sizes) for sizes in zip(*shapes))
    dtype = np.result_type(*arrays)
    batch = np.full((len(arrays),) + target, pad_value, dtype=dtype)
    for index, array in enumerate(arrays):
        batch[(index,) + tuple(slice(0, size) for size in array.shape)] = array
    return batch


def collate_samples(samples: Sequence[Mapping[str, Any]], keys: Optional[Iterable[str]] = None,
                    pad_value: Optional[Union[int, float]] = None) -> Dict[str, Any]:
    """Collate sample dicts into one batch dict (`np.stack` per key, optionally padding ragged keys).

    Args:
        samples: The samples (at least one).
        keys: The keys to collate (default: the first sample's keys).
        pad_value: Pad arrays of different shapes with this value (None: they must have equal shapes).

    Example:
        >>> collate_samples([{"x": np.ones(2)}, {"x": np.zeros(2)}])["x"].shape
        (2, 2)
    """
    keys = list(samples[0]) if keys is None else keys
    if pad_value is None:
        return {key: stack_values(key, [sample[key] for sample in samples]) for key in keys}
    return {key: pad_and_stack_values(key, [sample[key] for sample in samples], pad_value) for key in keys}


@fe_export("fe.op.numpyop.numpyop.Batch", "fe.op.numpyop.Batch")
class Batch(NumpyOp):
    """Mark where samples become batches in the Pipeline's ops, and configure the batching.

    Ops before `Batch` run on single samples, ops after it run once per batch (through `forward_batch`). At most one
    `Batch` may be active for a given mode, epoch and ds_id. Its `batch_size` takes precedence over the Pipeline's
    `batch_size`, so batch sizes can differ per mode or ds_id. When neither `pad_value` nor `collate_fn` is given,
    the Pipeline may also run the batch-capable ops just before `Batch` on whole batches (same results, faster).

    Args:
        batch_size: Samples per batch; None uses the Pipeline's `batch_size`.
        drop_last: Drop the last batch of an epoch when it is smaller than `batch_size`.
        pad_value: Pad samples whose arrays differ in shape to the largest shape with this value.
        collate_fn: A function turning a list of sample dicts into a batch dict (instead of stacking).
        mode: Mode(s) in which this Batch applies.
        ds_id: Dataset id(s) to which this Batch applies.

    Raises:
        ValueError: If `batch_size` is not a positive integer, or both `pad_value` and `collate_fn` are given.

    Example:
        >>> # Pipeline(train_data=ds, ops=[Minmax("x", "x"), Batch(batch_size=32, drop_last=True)])
    """

    def __init__(self,
                 batch_size: Optional[int] = None,
                 drop_last: bool = False,
                 pad_value: Optional[Union[int, float]] = None,
                 collate_fn: Optional[Callable[[List[Dict[str, Any]]], Dict[str, Any]]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(mode=mode, ds_id=ds_id)
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                       or batch_size < 1):
            raise ValueError(f"Batch batch_size must be None or a positive integer, got {batch_size!r}")
        if pad_value is not None and collate_fn is not None:
            raise ValueError("Batch takes either a pad_value or a collate_fn, not both")
        self.batch_size: Optional[int] = None if batch_size is None else int(batch_size)
        self.drop_last = bool(drop_last)
        self.pad_value = pad_value
        self.collate_fn = collate_fn

    @property
    def stacks_by_default(self) -> bool:
        """Whether collation is plain stacking (no padding, no custom collate_fn)."""
        return self.pad_value is None and self.collate_fn is None

    def collate(self, samples: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Turn a list of sample dicts into a batch dict, as configured."""
        if self.collate_fn is not None:
            return self.collate_fn(samples)
        return collate_samples(samples, pad_value=self.pad_value)

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return None

    def forward_batch(self, data: Any, state: Dict[str, Any]) -> Any:
        return None

    def __repr__(self) -> str:
        return (f"Batch(batch_size={self.batch_size}, drop_last={self.drop_last}, pad_value={self.pad_value}, "
                f"collate_fn={getattr(self.collate_fn, '__name__', self.collate_fn)})")
