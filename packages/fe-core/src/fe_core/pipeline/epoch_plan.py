"""`EpochPlan`: everything one `Pipeline(mode, epoch, ds_id)` call needs, resolved once before the first batch.

The plan decides which ops run per sample and which run once per batch, which ops can be skipped because nobody
needs their outputs (`output_keys`), which keys must be collated, and checks once that every op finds its inputs.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set

from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import RemoveIf

__all__ = ["EpochPlan"]


def _always_runs(op: NumpyOp) -> bool:
    """Ops that run even when nobody reads their outputs: filters, and ops without outputs (Delete, side effects)."""
    return isinstance(op, (RemoveIf, Delete)) or not op.outputs


def _prune(ops: Sequence[NumpyOp], output_keys: Set[str]) -> List[Optional[Set[str]]]:
    """Walk the ops backwards from `output_keys`.

    Returns:
        For each op, the keys needed just before it, or None when the op can be skipped.
    """
    needed = set(output_keys)
    needed_before: List[Optional[Set[str]]] = [None] * len(ops)
    for index in range(len(ops) - 1, -1, -1):
        op = ops[index]
        if isinstance(op, Delete):
            needed -= set(op.inputs)  # a deleted key cannot serve anyone downstream
            needed_before[index] = set(needed)
        elif _always_runs(op) or any(key in needed for key in op.outputs):
            needed = (needed - set(op.outputs)) | set(op.inputs)
            needed_before[index] = set(needed)
    return needed_before


class EpochPlan:
    """The resolved configuration of one (mode, epoch, ds_id) pass over a dataset.

    Args:
        mode: The mode.
        epoch: The epoch (from 1).
        ds_id: The dataset id ('' for a plain dataset).
        dataset: The dataset in force (None when a Scheduler switched it off).
        native: Whether `dataset` is a framework loader iterated as is.
        sample_ops: Ops before Batch (all ops when nothing is batched).
        batch_op: The Batch op in force, if any.
        post_ops: Ops after Batch.
        batch_size: Samples per batch; None yields single samples.
        output_keys: Keys the caller wants (None or empty: all).

    Attributes:
        sample_ops: Ops that run per sample (after pruning and after moving batch-capable ops to the batch stage).
        batch_ops: Ops that run once per batch (the moved batch-capable ops, then the ops after Batch).
        checked_ops: Every op in force, in order, for the one-time input-key check.
        load_keys: Keys to fetch from the dataset (None: all).
        boundary_keys: Keys needed after the per-sample stage (None: all).
        output_keys: Keys to return (None: all).
        sub_plans: For an InterleaveDataset, the plan of each member dataset (its own ops and batch size).
        moved_ops: How many batch-capable ops were moved from per-sample to per-batch.
        state: The `state` dict ops receive.
    """

    def __init__(self,
                 mode: str,
                 epoch: int,
                 ds_id: str,
                 dataset: Any,
                 native: bool,
                 sample_ops: List[NumpyOp],
                 batch_op: Optional[Batch],
                 post_ops: List[NumpyOp],
                 batch_size: Optional[int],
                 output_keys: Optional[Iterable[str]],
                 native_to_numpy: Optional[Callable[[Any], Any]] = None) -> None:
        self.mode = mode
        self.epoch = epoch
        self.ds_id = ds_id
        self.dataset = dataset
        self.native = native
        self.native_to_numpy = native_to_numpy
        self.batch_op = batch_op
        self.batch_size = batch_size
        self.drop_last = bool(batch_op.drop_last) if batch_op is not None else False
        self.default_collation = batch_op is None or batch_op.stacks_by_default
        self.state: Dict[str, Any] = {"mode": mode, "epoch": epoch, "ds_id": ds_id, "warmup": False}
        self.checked_ops: List[NumpyOp] = list(sample_ops) + list(post_ops)
        self.output_keys: Optional[Set[str]] = set(output_keys) if output_keys else None
        if batch_size is None:  # nothing is batched: every op runs on single samples
            sample_ops, post_ops = list(sample_ops) + list(post_ops), []
        self.sample_ops, self.batch_ops, self.load_keys, self.boundary_keys = self._arrange(sample_ops, post_ops)
        self.moved_ops = 0
        self.sub_plans: Optional[List["EpochPlan"]] = None  # one plan per member of an InterleaveDataset
        if batch_size is not None and self.default_collation:
            self._move_batch_capable_ops()

    def _arrange(self, sample_ops: List[NumpyOp], post_ops: List[NumpyOp]):
        if self.output_keys is None:
            return list(sample_ops), list(post_ops), None, None
        ops = list(sample_ops) + list(post_ops)
        needed_before = _prune(ops, self.output_keys)
        kept_sample = [op for op, needed in zip(sample_ops, needed_before) if needed is not None]
        kept_post = [op for op, needed in zip(post_ops, needed_before[len(sample_ops):]) if needed is not None]
        boundary = next((needed for needed in needed_before[len(sample_ops):] if needed is not None),
                        set(self.output_keys))
        load = next((needed for needed in needed_before if needed is not None), set(self.output_keys))
        return kept_sample, kept_post, load, boundary

    def _move_batch_capable_ops(self) -> None:
        """Run the trailing batch-capable per-sample ops once per batch instead (identical results, much faster)."""
        split = len(self.sample_ops)
        while split > 0 and getattr(self.sample_ops[split - 1], "batch_capable", False):
            split -= 1
        moved = self.sample_ops[split:]
        if not moved:
            return
        self.moved_ops = len(moved)
        self.sample_ops = self.sample_ops[:split]
        self.batch_ops = moved + self.batch_ops
        if self.boundary_keys is not None:
            needed_before = _prune(self.batch_ops, self.output_keys or set())
            self.boundary_keys = needed_before[0] if needed_before and needed_before[0] is not None \
                else self.boundary_keys
        if not self.sample_ops:
            self.load_keys = self.boundary_keys

    def where(self) -> str:
        """'mode 'train' epoch 1 ds_id ''', for messages."""
        return f"mode {self.mode!r} epoch {self.epoch} ds_id {self.ds_id!r}"

    def check_keys(self, dataset_keys: Iterable[str]) -> None:
        """Check that every op in force finds its inputs (the dataset's keys or an earlier op's outputs).

        Raises:
            KeyError: Naming the op, mode, epoch, ds_id, the missing key and the keys available at that point.
        """
        available = set(dataset_keys)
        for op in self.checked_ops:
            for key in op.inputs:
                if key not in available:
                    raise KeyError(f"{type(op).__name__} in {self.where()} reads key {key!r} which is not available "
                                   f"(available: {sorted(available)})")
            if isinstance(op, Delete):
                available -= set(op.inputs)
            available.update(op.outputs)

    def sample_written_keys(self) -> Set[str]:
        """Keys the per-sample ops write (all others pass through the per-sample stage unchanged)."""
        return {key for op in self.sample_ops for key in op.outputs}
