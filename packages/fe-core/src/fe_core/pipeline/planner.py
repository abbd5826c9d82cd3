"""`Planner`: what a Pipeline resolves for one (mode, epoch, ds_id): the dataset in force, the ops split around Batch,
the batch size, and the `EpochPlan` built from them.

The planner holds only the Pipeline's configuration (datasets per mode, ops, batch size) and a cache of which
datasets' items are whole batches: no pool, no loader context. It is what worker processes receive (forked, or
pickled for spawned workers) to rebuild the trainer's plan of each epoch; they never get the Pipeline itself.
"""
from __future__ import annotations

import random
import warnings
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple, Union

import numpy as np

from fe_core.config_error import ConfigurationError
from fe_core.dataset.dataset import InMemoryDataset
from fe_core.distributed.communicator import get_communicator
from fe_core.framework import Backend, framework_backends
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.schedule.scheduler import Scheduler, get_current_items

__all__ = ["Planner", "PlannerField", "PipelineConfigError", "native_dataset_backend", "is_native_dataset"]


_WARNED_UNSHARDED: Set[int] = set()  # native loaders already warned about (once per loader and process)


def native_dataset_backend(dataset: Any) -> Optional[Backend]:
    """The backend that claims `dataset` as its framework's own loader (torch DataLoader, tf.data.Dataset), if any.

    Only backends whose framework is already imported are asked, so no framework is imported here.
    """
    for backend in framework_backends():
        if backend.is_native_dataset(dataset):
            return backend
    return None


def is_native_dataset(dataset: Any) -> bool:
    """Whether a backend claims `dataset` as its framework's own loader (torch DataLoader, tf.data.Dataset)."""
    return native_dataset_backend(dataset) is not None


class PipelineConfigError(ConfigurationError):
    """An invalid Pipeline configuration. A ValueError, and an AssertionError as FastEstimator raises for the same
    cases, so `except AssertionError` clauses written for FastEstimator keep working."""


class _BatchedItems:
    """A user's dataset whose items are lists of sample dicts (pre-batched, as BatchDataset's are), marked so that the
    Pipeline runs its per-sample ops on each sample of an item and collates the item into one batch."""

    fe_batched = True
    fe_wrapper = True  # `dataset` is the user's: what a loader's `dataset` answers

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        reset = getattr(dataset, "fe_reset_ds", None)
        if callable(reset):
            self.fe_reset_ds = reset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]

    def keys(self) -> List[str]:
        """Every key of the first item's samples (samples may have disjoint keys)."""
        keys: Dict[str, None] = {}
        for sample in _peek(self.dataset):
            keys.update(dict.fromkeys(sample))
        return list(keys)


def _peek(dataset: Any) -> Any:
    """`dataset[0]`, leaving numpy's, python's and the loaded frameworks' random states as they were (a peek never
    shifts the run's random stream)."""
    numpy_state, python_state = np.random.get_state(), random.getstate()
    framework_states = [(backend, backend.get_rng_state()) for backend in framework_backends()]
    try:
        return dataset[0]
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)
        for backend, state in framework_states:
            if state is not None:
                backend.set_rng_state(state)


def _items_are_batches(dataset: Any) -> bool:
    """Whether `dataset[i]` returns a list of sample dicts (a pre-batched dataset) rather than one sample dict.

    fe's own dict-returning datasets are known without looking (looking at some would consume a generator sample);
    wrappers (ExtendDataset, CombinedDataset) are judged by what they wrap; any other dataset's first item is
    peeked at.
    """
    if getattr(dataset, "fe_batched", False):
        return True
    if isinstance(dataset, InMemoryDataset):  # its samples are dicts by contract (subclasses too)
        return False
    getitem = getattr(type(dataset), "__getitem__", None)
    if getattr(getitem, "__module__", "").startswith("fe_core."):
        inner = getattr(dataset, "dataset", None)
        if inner is not None and inner is not dataset:
            return _items_are_batches(inner)
        members = getattr(dataset, "datasets", None)
        if isinstance(members, list) and members and not callable(getattr(dataset, "sub_ds_ids", None)):
            return _items_are_batches(members[0])
        return False
    try:
        if len(dataset) == 0:
            return False
        item = _peek(dataset)
    except Exception:  # pylint: disable=broad-except  # the loader reports a dataset that cannot be read
        return False
    return isinstance(item, list) and bool(item) and all(isinstance(sample, dict) for sample in item)


class PlannerField:
    """An attribute of the Pipeline (`data`, `ops`, `batch_size`) kept on its planner, so both see every change."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, pipeline: Any, owner: Optional[type] = None) -> Any:
        return self if pipeline is None else getattr(pipeline.planner, self.name)

    def __set__(self, pipeline: Any, value: Any) -> None:
        setattr(pipeline.planner, self.name, value)


class Planner:
    """The Pipeline's configuration and how it resolves into epoch plans (picklable; no process or context state).

    Args:
        data: {mode: {ds_id: dataset or Scheduler of datasets}}.
        batch_size: The Pipeline's batch_size (an int, a Scheduler, a dict per mode of those, or None).
        ops: The Pipeline's NumpyOps and Schedulers of NumpyOps.
    """

    def __init__(self, data: Dict[str, Dict[str, Any]], batch_size: Any, ops: List[Union[NumpyOp, Scheduler]]
                 ) -> None:
        self.data = data
        self.batch_size = batch_size
        self.ops = ops
        self.batched_items: Dict[int, Tuple[Any, bool]] = {}  # id(dataset) -> (dataset, items are batches)

    def dataset(self, mode: str, epoch: int, ds_id: str) -> Any:
        """The dataset in force for (mode, epoch, ds_id) (None when a Scheduler switched it off).

        Raises:
            KeyError: If there is no data for `mode` / `ds_id`.
        """
        if mode not in self.data:
            raise KeyError(f"Pipeline has no data for mode {mode!r} (modes with data: {sorted(self.data)})")
        datasets = self.data[mode]
        if ds_id not in datasets:
            raise KeyError(f"Pipeline has no dataset with ds_id {ds_id!r} in mode {mode!r} "
                           f"(ds_ids: {sorted(datasets)})")
        dataset = datasets[ds_id]
        return dataset.get_current_value(epoch) if isinstance(dataset, Scheduler) else dataset

    def pipeline_batch_size(self, mode: str, epoch: int) -> Optional[int]:
        """The Pipeline's batch_size in force for `mode` at `epoch`."""
        batch_size = self.batch_size
        if isinstance(batch_size, dict):
            batch_size = batch_size.get(mode)
        if isinstance(batch_size, Scheduler):
            batch_size = batch_size.get_current_value(epoch)
        return batch_size

    def split_ops(self, mode: str, epoch: int, ds_id: Union[str, List[str]]
                  ) -> Tuple[List[NumpyOp], Optional[Batch], List[NumpyOp]]:
        """The ops in force for `ds_id` (or any of several ds_ids): (those before Batch, the Batch op or None, those
        after it)."""
        ops = get_current_items(self.ops, run_modes=mode, epoch=epoch, ds_id=ds_id)
        batch_positions = [index for index, op in enumerate(ops) if isinstance(op, Batch)]
        if len(batch_positions) > 1:
            raise PipelineConfigError(f"Pipeline has {len(batch_positions)} Batch ops in mode {mode!r} epoch {epoch} "
                                      f"ds_id {ds_id!r}; at most one Batch may apply to a given mode, epoch and ds_id")
        if not batch_positions:
            return ops, None, []
        position = batch_positions[0]
        return ops[:position], ops[position], ops[position + 1:]

    def batch_size_for(self, mode: str, epoch: int, batch_op: Optional[Batch]) -> Optional[int]:
        """The batch size in force: the Batch op's own, else the Pipeline's."""
        if batch_op is not None and batch_op.batch_size is not None:
            return batch_op.batch_size
        return self.pipeline_batch_size(mode, epoch)

    def plan(self, mode: str, epoch: int, ds_id: str, output_keys: Optional[Iterable[str]]) -> EpochPlan:
        """The epoch plan of (mode, epoch, ds_id); an InterleaveDataset gets one sub-plan per member."""
        dataset = self.dataset(mode, epoch, ds_id)
        plan = self.plan_for(mode, epoch, ds_id, dataset, output_keys)
        if callable(getattr(dataset, "sub_ds_ids", None)):  # an InterleaveDataset: one plan per member dataset
            plan.sub_plans = [self.plan_for(mode, epoch, sub_ds_id, member, output_keys, op_ids)
                              for sub_ds_id, member, op_ids in zip(dataset.sub_ds_ids(ds_id), dataset.datasets,
                                                                   dataset.op_ds_ids(ds_id))]
            dataset.set_batch_sizes([sub.batch_size or 1 for sub in plan.sub_plans])
        return plan

    def plan_for(self, mode: str, epoch: int, ds_id: str, dataset: Any,
                 output_keys: Optional[Iterable[str]], op_ds_ids: Optional[List[str]] = None) -> EpochPlan:
        """The epoch plan of `dataset` (in force for mode, epoch, ds_id; its ops those of `op_ds_ids` when given: an
        InterleaveDataset's member)."""
        native_backend = native_dataset_backend(dataset) if dataset is not None else None
        native = native_backend is not None
        if native and get_communicator().world_size > 1 and id(dataset) not in _WARNED_UNSHARDED:
            problem = native_backend.unsharded_native_dataset(dataset)
            if problem:
                _WARNED_UNSHARDED.add(id(dataset))
                warnings.warn(f"Pipeline data in mode {mode!r} ds_id {ds_id!r} is a {type(dataset).__name__} in a "
                              f"data-parallel run, and {problem}", RuntimeWarning, stacklevel=2)
        sample_ops, batch_op, post_ops = self.split_ops(mode, epoch, op_ds_ids or ds_id)
        if dataset is not None and not native and not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(f"Pipeline data in mode {mode!r} ds_id {ds_id!r} ({type(dataset).__name__}) has no "
                            f"__len__/__getitem__ and no loaded backend recognises it as a native loader (build the "
                            f"Network first so that its backend is loaded)")
        if dataset is not None and not native and self.returns_batches(dataset):
            dataset = dataset if getattr(dataset, "fe_batched", False) else _BatchedItems(dataset)
        return EpochPlan(mode=mode, epoch=epoch, ds_id=ds_id, dataset=dataset, native=native, sample_ops=sample_ops,
                         batch_op=batch_op, post_ops=post_ops, batch_size=self.batch_size_for(mode, epoch, batch_op),
                         output_keys=output_keys,
                         native_to_numpy=native_backend.to_numpy if native_backend is not None else None)

    def returns_batches(self, dataset: Any) -> bool:
        """Whether `dataset`'s items are whole batches (lists of sample dicts); decided once per dataset."""
        known = self.batched_items.get(id(dataset))
        if known is None or known[0] is not dataset:
            known = (dataset, _items_are_batches(dataset))
            self.batched_items[id(dataset)] = known
        return known[1]
