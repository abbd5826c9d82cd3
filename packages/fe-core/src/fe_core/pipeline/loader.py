"""`EpochLoader`: iterate one epoch of batches from an `EpochPlan`.

Three ways through the data, chosen once per epoch:

- whole batches: no op runs per sample, collation is plain stacking and the dataset has `get_batch` — one
  fancy-indexing call per batch, then the batch ops (this is what makes batch-capable ops fast);
- per sample: `dataset[i]`, the per-sample ops, then collation (keys untouched by per-sample ops are still gathered
  with `get_batch` when the dataset has it), then the batch ops;
- native: a framework loader (torch DataLoader, tf.data.Dataset) is iterated as is.

Shuffling draws permutations from numpy's global random state, so `np.random.seed` (or restoring its state) makes
the order reproducible.

The per-sample path is computed in tasks (`fe_core.pipeline._sample_epoch`) whose randomness is seeded from the
epoch's key and the task's position, so it gives the same batches whether the tasks run here or in the Pipeline's
worker processes (`fe_core.pipeline._workers`), which it uses when a pool is open and the epoch is large enough.

In a data-parallel run (several processes, see `fe_core.distributed`) each process takes its part of every global
batch of one shared sample order (`_sharded_batches`; the rules are in `fe_core.distributed.sharding`).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from fe_core.dataset.interleave_dataset import interleaved_steps
from fe_core.distributed.communicator import Communicator, get_communicator
from fe_core.distributed.sharding import (SharedRandom, check_batch_size, epoch_order_rng, global_batches,
                                          rank_batches, rank_part)
from fe_core.dataset.generator_dataset import GeneratorDataset
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.op.numpyop.batch import collate_samples, stack_values
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.position import PositionTracker
from fe_core.pipeline.op_runner import OpTimer, compile_steps, run_steps
from fe_core.pipeline._sample_epoch import UNBATCHED_TASK, TaskRunner, TaskStream, assemble

__all__ = ["EpochLoader", "dataset_keys"]


def dataset_keys(dataset: Any, where: str) -> List[str]:
    """The keys of `dataset`'s samples (from `keys()` when it has one, else from its first sample).

    Raises:
        TypeError: If a sample is not a dict.
    """
    keys = getattr(dataset, "keys", None)
    if callable(keys):
        return list(keys())
    sample = dataset[0]
    if not isinstance(sample, Mapping):
        raise TypeError(f"Pipeline datasets must return a dict per sample, but the dataset in {where} returned "
                        f"{type(sample).__name__}")
    return list(sample)


_ACCEPTS_KEYS: Dict[Any, bool] = {}  # per function: inspect.signature costs ~50 us, and every epoch asks


def _accepts_keys(get_batch: Callable[..., Any]) -> bool:
    function = getattr(get_batch, "__func__", None)  # a bound method: its class's function decides
    if function is not None and function in _ACCEPTS_KEYS:
        return _ACCEPTS_KEYS[function]
    try:
        accepts = "keys" in inspect.signature(get_batch).parameters
    except (TypeError, ValueError):
        accepts = False
    if function is not None:
        _ACCEPTS_KEYS[function] = accepts
    return accepts


class _IndexStream:
    """Endless sample indices: one permutation (or arange) after another, each drawn only when it is reached."""

    def __init__(self, size: int, shuffle: bool, rng: Any = np.random) -> None:
        self.size = size
        self.shuffle = shuffle
        self.rng = rng
        self.order = self._next_order()
        self.position = 0

    def _next_order(self) -> np.ndarray:
        return self.rng.permutation(self.size) if self.shuffle else np.arange(self.size)

    def take(self, count: int) -> np.ndarray:
        end = self.position + count
        if end <= self.size:
            chunk = self.order[self.position:end]
            self.position = end
            return chunk
        parts = [self.order[self.position:]]
        remaining = count - len(parts[0])
        while remaining > 0:
            self.order = self._next_order()
            part = self.order[:remaining]
            parts.append(part)
            remaining -= len(part)
            self.position = len(part)
        return np.concatenate(parts)

    def batches(self, count: int) -> Iterator[np.ndarray]:
        """Yield index arrays of `count` indices, endlessly."""
        while True:
            yield self.take(count)

    def indices(self) -> Iterator[int]:
        """Yield indices one at a time, endlessly."""
        while True:
            order = self.order[self.position:].tolist()
            for index in order:
                self.position += 1
                yield index
            self.order = self._next_order()
            self.position = 0


class EpochLoader:
    """An iterable over one epoch of batches (dicts of numpy arrays).

    Args:
        plan: The resolved epoch configuration.
        shuffle: Whether to shuffle the sample order.
        steps_per_epoch: Yield exactly this many batches (cutting the epoch short or repeating the data, re-shuffled);
            None yields one pass over the data.
        timer: Time every stage (benchmarks only).
        tracker: Follows the position inside the epoch (for mid-epoch checkpoints).
        pool: The Pipeline's worker pool (`fe_core.pipeline._workers.WorkerPool`), when one is open.
    """

    def __init__(self, plan: EpochPlan, shuffle: bool, steps_per_epoch: Optional[int] = None,
                 timer: Optional[OpTimer] = None, tracker: Optional[PositionTracker] = None,
                 pool: Any = None) -> None:
        self.plan = plan
        self.shuffle = shuffle
        self.steps_per_epoch = steps_per_epoch
        self.timer = timer
        self.tracker = tracker
        self.pool = pool

    def __len__(self) -> int:
        """The number of batches this epoch yields (an upper bound when samples are filtered without replacement).

        Raises:
            TypeError: For a native loader without a length.
        """
        plan = self.plan
        if plan.dataset is None:
            return 0
        if self.steps_per_epoch is not None:
            return self.steps_per_epoch
        if plan.sub_plans is not None:
            return interleaved_steps(plan.dataset.pattern, [  # a member of whole batches gives one per step
                len(sub.dataset) // (1 if getattr(sub.dataset, "fe_batched", False) else (sub.batch_size or 1))
                for sub in plan.sub_plans])
        size = len(plan.dataset)
        world = get_communicator().world_size
        if world > 1 and not plan.native and not getattr(plan.dataset, "fe_batched", False):
            return len(global_batches(np.arange(size), plan.batch_size or world, plan.drop_last, world, plan.where()))
        if plan.native or plan.batch_size is None or getattr(plan.dataset, "fe_batched", False):
            return size
        return size // plan.batch_size if plan.drop_last else math.ceil(size / plan.batch_size)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        batches = self._batches()
        if self.tracker is None:
            return batches
        return self.tracker.track(self.plan.mode, self.plan.epoch, self.plan.ds_id, batches)

    def _batches(self) -> Iterator[Dict[str, Any]]:
        plan = self.plan
        if plan.dataset is None:
            return iter(())
        if plan.native:
            return self._native_batches()
        if plan.sub_plans is not None:
            return self._interleaved_batches()
        if len(plan.dataset) == 0:
            return iter(())
        plan.check_keys(dataset_keys(plan.dataset, plan.where()))
        communicator = get_communicator()
        if communicator.world_size > 1:
            return self._sharded_batches(communicator)  # it resets the dataset itself, from the shared random stream
        if getattr(plan.dataset, "fe_batched", False):
            batches = self._prebatched_batches()
        elif (plan.batch_size is not None and not plan.sample_ops and plan.default_collation
                and callable(getattr(plan.dataset, "get_batch", None)) and not self._batch_ops_to_workers()):
            batches = self._whole_batches()
        else:
            batches = self._sample_batches()
        reset = getattr(plan.dataset, "fe_reset_ds", None)
        return self._after_reset(reset, batches) if callable(reset) else batches

    def _after_reset(self, reset: Callable[..., None], batches: Iterator[Dict[str, Any]]
                     ) -> Iterator[Dict[str, Any]]:
        """Let the dataset re-draw its per-epoch index maps (BatchDataset, ExtendDataset) when the epoch starts,
        after the position tracker recorded the random state, so a resumed epoch redraws the same maps."""
        reset(self.shuffle)
        yield from batches

    # ------------------------------------------------------------------ helpers
    def _wrap(self, label: str, stage: str, function: Callable[..., Any], keys: Sequence[str] = ()) -> Callable:
        return self.timer.wrap(label, keys, (), stage, function) if self.timer is not None else function

    def _batch_fetcher(self, keys: Optional[Sequence[str]]) -> Callable[[np.ndarray], Dict[str, Any]]:
        get_batch = self.plan.dataset.get_batch
        if keys is not None and _accepts_keys(get_batch):
            fetch = functools.partial(get_batch, keys=keys)
        else:
            fetch = get_batch
        return self._wrap("<Fetch batch>", "batch", fetch, keys or ())

    def _compile(self, ops: Sequence[Any], batched: bool) -> List[Any]:
        """`compile_steps` for this epoch: timed for benchmarks, checked in the Estimator's warmup."""
        return compile_steps(ops, batched=batched, timer=self.timer, checked=bool(self.plan.state.get("warmup")))

    def _select(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        keys = self.plan.output_keys
        if keys is None:
            return batch
        return {key: value for key, value in batch.items() if key in keys}

    def _too_many_filtered(self, what: str, count: int) -> ValueError:
        return ValueError(f"The Pipeline filtered out {count} {what} in a row in {self.plan.where()} (RemoveIf or an "
                          f"op returning FilteredData); refusing to loop forever")

    # ------------------------------------------------------------------ whole batches
    def _whole_batches(self) -> Iterator[Dict[str, Any]]:
        plan = self.plan
        size, batch_size, steps_per_epoch = len(plan.dataset), plan.batch_size, self.steps_per_epoch
        load_keys = None if plan.load_keys is None else sorted(plan.load_keys)
        fetch = self._batch_fetcher(load_keys)
        steps = self._compile(plan.batch_ops, batched=True)
        state, output_keys = plan.state, plan.output_keys
        if (not steps and load_keys is not None and output_keys is not None and output_keys.issuperset(load_keys)
                and getattr(type(plan.dataset), "get_batch", None) is NumpyDataset.get_batch):
            output_keys = None  # NumpyDataset fetches only the keys asked for, all wanted here: nothing to filter
        # As FastEstimator counts an epoch: `target` samples (one pass, or steps_per_epoch x batch_size), counting
        # those of batches a batch op removed without replacement; a batch removed with replacement is drawn again
        # from the rest of the data (into the next pass), so the epoch keeps its length.
        if steps_per_epoch is None:
            target = size - size % batch_size if plan.drop_last else size
        else:
            target = steps_per_epoch * batch_size
        stream = _IndexStream(size, self.shuffle)
        counted = filtered = 0
        while counted < target:
            take = min(batch_size, target - counted)
            batch = fetch(stream.take(take))
            result = run_steps(batch, steps, state) if steps else None
            if result is not None:
                if not result.replacement:
                    counted += take
                    continue
                filtered += 1
                if filtered * batch_size > size + batch_size:
                    raise self._too_many_filtered("batches", filtered)
                continue
            filtered = 0
            yield batch if output_keys is None else {key: value for key, value in batch.items() if key in output_keys}
            counted += take

    # ------------------------------------------------------------------ per sample
    def _sample_batches(self) -> Iterator[Dict[str, Any]]:
        """Dataset access, per-sample ops, collation and batch ops, in tasks computed here or in the worker pool."""
        plan = self.plan
        size = len(plan.dataset)
        first_order = np.random.permutation(size) if self.shuffle else None
        key = int(np.random.randint(0, 2 ** 31 - 1))  # the epoch's random key: every task's seed derives from it
        task_size = plan.batch_size or UNBATCHED_TASK
        stream = TaskStream(size, first_order, self.shuffle, key, task_size, one_pass=self.steps_per_epoch is None)
        local: List[TaskRunner] = []

        def runner() -> TaskRunner:
            if not local:
                local.append(TaskRunner(self, key, restore=True))
            return local[0]

        def redo(start: int, indices: np.ndarray) -> Tuple[Any, ...]:
            return runner().run(start, indices, False)

        aligned = [True]  # whether tasks may still come back as whole batches
        estimated = size if self.steps_per_epoch is None else self.steps_per_epoch * task_size
        if self.pool is not None and self._workers_can_run() and self.pool.wanted(self, estimated):
            results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]] = self.pool.run_epoch(
                self, key, stream, aligned, limit=estimated)
        else:
            results = ((start, indices, runner().run(start, indices, aligned[0])) for start, indices in stream)
        try:
            yield from assemble(plan, results, runner, redo, self.steps_per_epoch, aligned)
        finally:
            results.close()  # type: ignore[attr-defined]

    def _batch_ops_to_workers(self) -> bool:
        """Whether an epoch that could take whole batches in this process should rather run in the worker processes:
        when a batch op works item by item (`batch_vectorised = False`, as ReadImage decoding file after file) and the
        workers will take the epoch."""
        plan = self.plan
        if self.pool is None or all(getattr(op, "batch_vectorised", True) for op in plan.batch_ops):
            return False
        size = len(plan.dataset)
        estimated = size if self.steps_per_epoch is None else self.steps_per_epoch * (plan.batch_size or 1)
        return self._workers_can_run() and self.pool.wanted(self, estimated)

    def _workers_can_run(self) -> bool:
        """Whether worker processes can compute this epoch: samples addressed by index, no per-epoch index maps."""
        dataset = self.plan.dataset
        return not isinstance(dataset, GeneratorDataset) and not callable(getattr(dataset, "fe_reset_ds", None))

    # ------------------------------------------------------------------ data-parallel runs
    def _sharded_batches(self, communicator: Communicator) -> Iterator[Dict[str, Any]]:
        """This process's part of each global batch of the epoch's shared sample order.

        Every process yields the same number of batches. Samples an op filters out make that process's batch smaller;
        a batch op filtering a whole batch, or a process left with no sample for a step, is an error (the other
        processes would wait for it forever).
        """
        plan = self.plan
        dataset = plan.dataset
        world, rank = communicator.world_size, communicator.rank
        unbatched = plan.batch_size is None
        batch_size = world if unbatched else plan.batch_size
        rng = epoch_order_rng(communicator)  # the same order on every process
        shared = SharedRandom(int(rng.randint(0, 2 ** 31 - 1)))
        reset = getattr(dataset, "fe_reset_ds", None)
        if callable(reset):
            with shared:  # per-epoch index maps (ExtendDataset, BatchDataset): the same on every process
                reset(self.shuffle)
        if getattr(dataset, "fe_batched", False):
            yield from self._prebatched_batches(shard=(communicator, shared))
            return
        size = len(dataset)
        if self.steps_per_epoch is None:
            order = rng.permutation(size) if self.shuffle else np.arange(size)
            index_batches: Iterator[np.ndarray] = iter(global_batches(order, batch_size, plan.drop_last, world,
                                                                      plan.where()))
        else:
            check_batch_size(batch_size, world, plan.where())
            stream = _IndexStream(size, self.shuffle, rng).batches(batch_size)
            index_batches = (next(stream) for _ in range(self.steps_per_epoch))
        state = plan.state
        batch_steps = self._compile(plan.batch_ops, batched=True)
        whole = (not unbatched and not plan.sample_ops and plan.default_collation
                 and callable(getattr(dataset, "get_batch", None)))
        if whole:
            fetch = self._batch_fetcher(None if plan.load_keys is None else sorted(plan.load_keys))
        else:
            getitem = self._wrap("<Fetch sample>", "sample", dataset.__getitem__)
            sample_steps = self._compile(plan.sample_ops, batched=False)
            collate = self._collator()
        for indices in rank_batches(index_batches, world, rank):
            if whole:
                batch = fetch(indices)
            else:
                kept, kept_indices = [], []
                for index in indices.tolist():
                    sample = dict(getitem(index))
                    if not sample_steps or run_steps(sample, sample_steps, state) is None:
                        kept.append(sample)
                        kept_indices.append(index)
                if not kept:
                    raise ValueError(f"Every sample of process {rank}'s batch in {plan.where()} was filtered out; in "
                                     f"a run of {world} processes each process needs a sample every step")
                batch = kept[0] if unbatched else collate(kept, kept_indices)
            if batch_steps and run_steps(batch, batch_steps, state) is not None:
                raise ValueError(f"A batch op filtered out a whole batch in {plan.where()}; in a run of {world} "
                                 f"processes every process must run every step")
            yield self._select(batch)

    # ------------------------------------------------------------------ datasets of whole batches
    def _prebatched_batches(self, shard: Optional[Tuple[Communicator, SharedRandom]] = None
                            ) -> Iterator[Dict[str, Any]]:
        """A dataset whose items are lists of samples (BatchDataset): per-sample ops on each, collate, batch ops.

        As in FastEstimator, a sample an op filters out removes its whole batch (batches keep their sizes): with
        replacement the next batch takes its place (the epoch goes on into the next pass), without it the epoch is one
        batch shorter. An epoch is `len(dataset)` batches, or `steps_per_epoch`, counting the removed ones.

        With `shard` (a data-parallel run), each item is a global batch drawn from the shared random stream, and this
        process takes its part of it (there a filtered sample only leaves its process's part smaller).
        """
        plan = self.plan
        dataset, steps_per_epoch = plan.dataset, self.steps_per_epoch
        size = len(dataset)
        sample_steps = self._compile(plan.sample_ops, batched=False)
        batch_steps = self._compile(plan.batch_ops, batched=True)
        boundary = plan.boundary_keys
        batch_op = plan.batch_op

        def collate(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
            if boundary is not None:
                samples = [{key: value for key, value in sample.items() if key in boundary} for sample in samples]
            return batch_op.collate(samples) if batch_op is not None else collate_samples(samples)

        collate = self._wrap("<Collate>", "batch", collate)
        getitem = self._wrap("<Fetch batch>", "batch", dataset.__getitem__)
        state = plan.state
        target = size if steps_per_epoch is None else steps_per_epoch
        counted = position = skipped = 0  # counted: batches yielded, and batches removed without replacement
        while counted < target:
            if position == size:
                if steps_per_epoch is None and shard is not None:
                    return
                reset = getattr(dataset, "fe_reset_ds", None)
                if callable(reset):
                    with shard[1] if shard is not None else contextlib.nullcontext():
                        reset(self.shuffle)
                position = 0
            if shard is None:
                samples = getitem(position)
            else:
                with shard[1]:
                    samples = getitem(position)
                world, rank = shard[0].world_size, shard[0].rank
                if len(samples) < world:
                    raise ValueError(f"A batch of {len(samples)} samples from the dataset of whole batches in "
                                     f"{plan.where()} cannot be split across {world} processes")
                samples = [samples[index] for index in rank_part(np.arange(len(samples)), world, rank).tolist()]
            position += 1
            kept = []
            filtered = None
            for sample in samples:
                sample = dict(sample)
                result = run_steps(sample, sample_steps, state) if sample_steps else None
                if result is None:
                    kept.append(sample)
                elif shard is None:  # the whole batch goes
                    filtered = result
                    break
            batch = collate(kept) if kept and filtered is None else None
            if batch is not None and batch_steps:
                filtered = run_steps(batch, batch_steps, state)
            if batch is None or filtered is not None:
                if shard is not None:
                    raise ValueError(f"A whole batch was filtered out in {plan.where()}; in a run of "
                                     f"{shard[0].world_size} processes every process must run every step")
                if filtered is not None and not filtered.replacement:
                    counted += 1
                    continue
                skipped += 1
                if skipped > size:
                    raise self._too_many_filtered("batches", skipped)
                continue
            skipped = 0
            yield self._select(batch)
            counted += 1

    # ------------------------------------------------------------------ interleaved datasets
    def _interleaved_batches(self) -> Iterator[Dict[str, Any]]:
        """Follow an InterleaveDataset's pattern, taking each step's batch from that member's own epoch loader
        (its own ds_id ops and batch size; incomplete batches dropped).

        Filtering happens inside each member at its own granularity (a sample, or a whole batch of a BatchDataset):
        with replacement every step keeps its full batch; without it a member yields fewer batches, and one pass skips
        that member's steps it can no longer fill while the other members go on with theirs.
        """
        plan = self.plan
        endless = self.steps_per_epoch is not None
        for sub in plan.sub_plans:
            sub.drop_last = True
        loaders = [EpochLoader(sub, shuffle=self.shuffle, timer=self.timer) for sub in plan.sub_plans]
        iterators: List[Optional[Iterator[Dict[str, Any]]]] = [None] * len(loaders)
        emitted = 0
        total = self.steps_per_epoch if endless else len(self)
        if not endless:  # one pass: each member fills at most its share of the pattern's repetitions
            pattern = plan.dataset.pattern
            shares = [total // len(pattern) * pattern.count(which) for which in range(len(loaders))]
            taken = [0] * len(loaders)
            while any(count < share for count, share in zip(taken, shares)):
                for which in pattern:
                    if taken[which] >= shares[which]:
                        continue
                    if iterators[which] is None:
                        iterators[which] = iter(loaders[which])
                    batch = next(iterators[which], None)
                    if batch is None:  # filtered without replacement: this member cannot fill its other steps
                        shares[which] = taken[which]
                        continue
                    taken[which] += 1
                    yield batch
            return
        while emitted < total:
            for which in plan.dataset.pattern:
                if iterators[which] is None:
                    iterators[which] = iter(loaders[which])
                batch = next(iterators[which], None)
                if batch is None:
                    if not endless:
                        return
                    iterators[which] = iter(loaders[which])
                    batch = next(iterators[which], None)
                    if batch is None:
                        return
                yield batch
                emitted += 1
                if emitted >= total:
                    return

    def _collator(self) -> Callable[[List[Dict[str, Any]], List[int]], Dict[str, Any]]:
        """How pending samples become a batch: stack (plus `get_batch` for untouched keys) or the Batch's collation."""
        plan = self.plan
        if not plan.default_collation:
            boundary = plan.boundary_keys

            def custom(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
                if boundary is not None:
                    samples = [{key: value for key, value in sample.items() if key in boundary} for sample in samples]
                return plan.batch_op.collate(samples)

            return self._wrap("<Collate>", "batch", custom)
        layout: Dict[str, Any] = {}
        written = plan.sample_written_keys()
        has_get_batch = callable(getattr(plan.dataset, "get_batch", None))

        def stack_keys(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
            return {key: stack_values(key, [sample[key] for sample in samples]) for key in layout["stack"]}

        stack_keys_timed = self._wrap("<Collate>", "batch", stack_keys)

        def stack(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
            if not layout:  # decided on the first batch: which keys to stack and which to gather from the dataset
                boundary = plan.boundary_keys
                present = [key for key in samples[0] if boundary is None or key in boundary]
                layout["stack"] = [key for key in present if not has_get_batch or key in written]
                gathered = [key for key in present if has_get_batch and key not in written]
                layout["gather"] = self._batch_fetcher(gathered) if gathered else None
                layout["gathered"] = set(gathered)
            batch = stack_keys_timed(samples)
            if layout["gather"] is not None:
                gathered = layout["gather"](np.asarray(indices))
                batch.update((key, value) for key, value in gathered.items() if key in layout["gathered"])
            return batch

        return stack

    # ------------------------------------------------------------------ native loaders
    def _native_batches(self) -> Iterator[Dict[str, Any]]:
        """Iterate a framework loader; its batches (dicts of tensors) become dicts of numpy arrays, pruned to the
        keys the network and traces need, like every other batch."""
        loader, steps_per_epoch = self.plan.dataset, self.steps_per_epoch
        to_numpy, keys = self.plan.native_to_numpy, self.plan.output_keys

        def convert(batch: Any) -> Dict[str, Any]:
            if not isinstance(batch, Mapping):
                raise TypeError(f"A native loader in {self.plan.where()} must yield dicts of tensors, got "
                                f"{type(batch).__name__}")
            return {key: to_numpy(value) if to_numpy is not None else value for key, value in batch.items()
                    if keys is None or key in keys}

        emitted = 0
        while True:
            produced = False
            for batch in loader:
                produced = True
                yield convert(batch)
                emitted += 1
                if steps_per_epoch is not None and emitted >= steps_per_epoch:
                    return
            if not produced or steps_per_epoch is None:
                return
