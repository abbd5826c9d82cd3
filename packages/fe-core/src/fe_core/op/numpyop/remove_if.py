"""`RemoveIf` and `FilteredData`: dropping samples (or batches) from the Pipeline."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.export import fe_export

__all__ = ["FilteredData", "RemoveIf"]


class FilteredData:
    """Returned by a NumpyOp's forward to tell the Pipeline to drop the current sample (or, after Batch, the batch).

    Any NumpyOp may return it, not only `RemoveIf`. A sample of a dataset whose items are whole batches
    (BatchDataset) takes its whole batch with it.

    Args:
        replacement: Whether the epoch keeps its length by drawing other data in place of the dropped data (True)
            or becomes shorter (False: the dropped data counts toward the epoch and toward `steps_per_epoch`).
    """

    __slots__ = ("replacement",)

    def __init__(self, replacement: bool = True) -> None:
        self.replacement = replacement

    def __repr__(self) -> str:
        return f"FilteredData(replacement={self.replacement})"


@fe_export("fe.op.numpyop.numpyop.RemoveIf", "fe.op.numpyop.RemoveIf")
class RemoveIf(NumpyOp):
    """An Operator which will remove a datapoint from the pipeline if the given criterion is satisfied.

    Before `Batch` it judges single samples (the next samples fill the batch, so batches keep their size); after
    `Batch` it judges, and drops, whole batches. On a dataset whose items are whole batches (BatchDataset) a sample it
    removes takes its whole batch with it, so batch sizes stay as the dataset makes them.

    Args:
        fn: Receives one positional argument per input key and returns whether to drop the sample (or batch).
        replacement: True keeps the epoch's length by drawing other data in place of what was dropped (data repeats
            only after the whole epoch's data was seen, except for at most one batch); False makes the epoch shorter
            by the dropped data: with `steps_per_epoch`, the epoch is steps_per_epoch x batch_size draws, the removed
            ones among them, so fewer (or smaller last) batches come.
        inputs: Key(s) `fn` reads.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Example:
        >>> op = RemoveIf(fn=lambda y: y == 3, inputs="y")
        >>> op.forward([3], {}), op.forward([1], {})
        (FilteredData(replacement=True), None)
    """

    def __init__(self,
                 fn: Callable[..., bool],
                 replacement: bool = True,
                 inputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, mode=mode, ds_id=ds_id)
        if not callable(fn):
            raise TypeError(f"RemoveIf fn must be callable, got {type(fn).__name__}")
        self.filter_fn = fn
        self.replacement = bool(replacement)
        self.in_list = True
        self._filtered = FilteredData(self.replacement)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Optional[FilteredData]:
        return self._filtered if self.filter_fn(*data) else None

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Optional[FilteredData]:
        return self._filtered if self.filter_fn(*data) else None

    def __repr__(self) -> str:
        return f"RemoveIf(fn={getattr(self.filter_fn, '__name__', self.filter_fn)}, inputs={self.inputs})"
