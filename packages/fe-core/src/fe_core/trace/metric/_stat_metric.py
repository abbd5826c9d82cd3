"""`StatMetric`: the base of metric traces that keep per-dataset sufficient statistics as numpy arrays.

A metric of this kind turns each batch into a small dict of numpy arrays (its sufficient statistics) and folds it into
the running statistics of the batch's dataset. Each statistic says how two partial results combine:

- ``"sum"``: element-wise sum (counts, sums, sums of squares);
- ``"concat"``: concatenation along axis 0 (metrics that need every sample, such as AUC or calibration error).

So the statistics of several datasets, or of several processes, reduce with the same rule (`merge_stats`): that is
the only place a distributed run needs to hook in (all-reduce the sums, all-gather the concatenations). Concatenated
statistics are kept as lists of batch arrays during an epoch (one append per batch, no quadratic copying) and joined
when read.

The statistics live in `self.stats` ({ds_id: {name: array or list of arrays}}), which a checkpoint stores as they are
(plain numpy), so a run resumed mid-epoch continues with the same totals.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from fe_core.containers import to_list
from fe_core.data import Data, DSData
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.reduce import gather_stats
from fe_core.modes import ds_id_matches
from fe_core.trace.trace import PerDSTrace, current_ds_id

__all__ = ["StatMetric", "merge_stats", "joined"]

Stats = Dict[str, Any]


def joined(value: Any) -> np.ndarray:
    """A statistic as one array: a list of batch arrays is concatenated along axis 0."""
    if isinstance(value, list):
        if not value:
            return np.zeros((0,))
        return value[0] if len(value) == 1 else np.concatenate(value, axis=0)
    return value


def merge_stats(parts: Sequence[Stats], reductions: Mapping[str, str]) -> Stats:
    """Combine partial statistics (of several datasets or processes) into one set.

    Args:
        parts: Statistics dicts with the same names.
        reductions: For each statistic name, "sum" or "concat".

    Returns:
        One statistics dict, with concatenated statistics as single arrays.

    Example:
        >>> merged = merge_stats([{"n": np.array(2), "x": [np.ones(2)]}, {"n": np.array(3), "x": [np.zeros(1)]}],
        ...                      {"n": "sum", "x": "concat"})
        >>> int(merged["n"]), merged["x"].tolist()
        (5, [1.0, 1.0, 0.0])
    """
    merged: Stats = {}
    for name, how in reductions.items():
        values = [part[name] for part in parts if name in part]
        if not values:
            continue
        if how == "sum":
            total = np.array(values[0], copy=True)
            for value in values[1:]:
                total = total + value
            merged[name] = total
        elif how == "concat":
            arrays = [joined(value) for value in values]
            arrays = [array for array in arrays if array.size or array.ndim > 1]
            merged[name] = np.concatenate(arrays, axis=0) if arrays else joined(values[0])
        else:
            raise ValueError(f"Unknown reduction {how!r} for statistic {name!r}; expected 'sum' or 'concat'")
    return merged


class StatMetric(PerDSTrace):
    """A metric computed at the end of each dataset and epoch from accumulated sufficient statistics.

    Subclasses set `reductions` ({statistic name: "sum" | "concat"}) and implement `batch_stats(data)` (the
    statistics of one batch, a dict of numpy arrays) and `compute(stats)` (the value(s) to log: one value for a single
    output name, or a dict {output name: value} for several).

    Args:
        inputs: The keys read from each batch.
        outputs: The names logged (the first is the main one).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        per_ds: Also log `<output>|<ds_id>` for each named dataset. Automatically False when an output name contains
            '|'.

    In a data-parallel run each process accumulates the statistics of its own samples; at the end of each dataset
    (and of the epoch) every process's statistics are gathered and merged with `merge_stats`, so the logged value is
    the one a single process computes from all the samples, each counted once.

    Attributes:
        stats: The statistics of the current epoch per ds_id ('' for an unnamed dataset).
    """

    reductions: Dict[str, str] = {}

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 per_ds: bool = True) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        for name in self.outputs:
            if not isinstance(name, str):
                raise TypeError(f"{type(self).__name__} output names must be strings, got {name!r}")
        self.per_ds = bool(per_ds) and not any("|" in name for name in self.outputs)
        self.stats: Dict[str, Stats] = {}
        self.reduced: List[str] = []  # ds_ids whose statistics already hold every process's samples

    @property
    def output_name(self) -> str:
        """The main key the metric is logged under."""
        return self.outputs[0]

    def get_outputs(self, ds_ids: Union[None, str, List[str]]) -> List[str]:
        """The logged names, plus `<name>|<ds_id>` for each named dataset this trace runs on (when `per_ds`)."""
        outputs = list(self.outputs)
        if self.per_ds:
            outputs += [f"{name}|{ds_id}" for ds_id in to_list(ds_ids) if ds_id and ds_id_matches(self.ds_id, ds_id)
                        for name in self.outputs]
        return outputs

    # ------------------------------------------------------------------ to implement
    def batch_stats(self, data: Data) -> Optional[Stats]:
        """The sufficient statistics of one batch (None to skip the batch)."""
        raise NotImplementedError(f"{type(self).__name__} must implement batch_stats(data)")

    def compute(self, stats: Stats) -> Any:
        """The logged value(s) from merged statistics (`stats` is empty when no batch was seen)."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute(stats)")

    # ------------------------------------------------------------------ hooks
    def on_epoch_begin(self, data: Data) -> None:
        self.stats = {}
        self.reduced = []

    def on_batch_end(self, data: Data) -> None:
        ds_id = current_ds_id(self)
        try:
            batch = self.batch_stats(data)
        except (ValueError, TypeError, IndexError) as err:
            raise ValueError(f"{self._where(ds_id)}: {err}") from err
        if batch is None:
            return
        self.accumulate(ds_id, batch)

    def accumulate(self, ds_id: str, batch: Stats) -> None:
        """Fold one batch's statistics into the running statistics of `ds_id`."""
        current = self.stats.get(ds_id)
        if current is None:
            current = self.stats[ds_id] = {}
        for name, value in batch.items():
            how = self.reductions[name]
            if how == "concat":
                current.setdefault(name, []).append(np.asarray(value))
            elif name in current:
                current[name] = current[name] + value
            else:
                current[name] = np.array(value, copy=True)

    def merged(self, ds_ids: Sequence[str]) -> Stats:
        """The statistics of `ds_ids` combined (empty if none of them was seen)."""
        parts = [self.stats[ds_id] for ds_id in ds_ids if ds_id in self.stats]
        return merge_stats(parts, self.reductions) if parts else {}

    def on_ds_end(self, data: Data) -> None:
        ds_id = current_ds_id(self)
        if get_communicator().world_size > 1:
            self.reduce_across_ranks([ds_id])
        if self.per_ds and ds_id:
            self._write(data, self.compute(self.merged([ds_id])), ds_id)

    def on_epoch_end(self, data: Data) -> None:
        if get_communicator().world_size > 1:
            self.reduce_across_ranks(None)
        self._write(data, self.compute(self.merged(list(self.stats))), "")

    def reduce_across_ranks(self, ds_ids: Optional[Sequence[str]]) -> None:
        """Replace the statistics of `ds_ids` (None: every ds_id not reduced yet) by those of every process.

        A collective: every process calls it at the same point.
        """
        wanted = list(self.stats) if ds_ids is None else list(ds_ids)
        local = {ds_id: {name: joined(value) for name, value in self.stats[ds_id].items()}
                 for ds_id in wanted if ds_id in self.stats and ds_id not in self.reduced}
        for ds_id, parts in gather_stats(local).items():
            if ds_id not in self.reduced:
                self.stats[ds_id] = merge_stats(parts, self.reductions)
                self.reduced.append(ds_id)

    # ------------------------------------------------------------------ helpers
    def _write(self, data: Data, value: Any, ds_id: str) -> None:
        values = value if isinstance(value, dict) else {self.output_name: value}
        for name, val in values.items():
            if ds_id and not isinstance(data, DSData):
                data.write_with_log(f"{name}|{ds_id}", val)
            else:  # the Estimator's per-dataset view adds the '|ds_id' itself
                data.write_with_log(name, val)

    def _where(self, ds_id: str) -> str:
        system = getattr(self, "system", None)
        return (f"{type(self).__name__} (inputs {self.inputs}) in mode {getattr(system, 'mode', None)!r}, epoch "
                f"{getattr(system, 'epoch_idx', None)}, ds_id {ds_id!r}")
