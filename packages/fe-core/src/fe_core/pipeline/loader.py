"""`EpochLoader`: iterate one epoch of batches from an `EpochPlan`.

An epoch is layers that compose, as a torch DataLoader stacks a sampler, a fetcher and a worker loop:

- draws, in one place (`_draw_epoch`): a seed for the dataset's per-epoch index maps when it has `fe_reset_ds` (the
  maps are drawn from it, here and in every worker), the first pass's order when shuffled, and the epoch's key. They
  come from a generator seeded by one number drawn from numpy's global random state (`np.random.seed` or restoring
  its state makes an epoch reproducible; the position tracker records it for mid-epoch resume), rank 0's number in a
  data-parallel run (`fe_core.distributed.sharding.epoch_order_rng`), so one process and N processes with the same
  seed see the same global batches. Their number never depends on the path, so the trainer's random state after an
  epoch is the same for any num_process;
- one task stream (`_sample_epoch.task_stream`): (global position, indices) per task, for one process (the identity
  shard) or this process's part of every global batch;
- a runner per plan (`runners.make_runner`): whole batches, per sample, or items of a dataset of whole batches - the
  same in the trainer and in a worker, each task seeded by (key, position);
- an executor, one decision from the plan (`executors.choose_executor`): here, the Pipeline's worker pool
  (`fe_core.pipeline._workers`), or a GeneratorDataset's feed process (`fe_core.pipeline._feed`);
- one assembler chosen from the plan (`assemble.make_assembler`), which applies the run's filtering rules.

A framework loader (torch DataLoader, tf.data.Dataset) is iterated as is; an InterleaveDataset follows its pattern
over one loader per member.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Mapping, Optional

import numpy as np

from fe_core.dataset.interleave_dataset import interleaved_steps
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.sharding import epoch_order_rng, global_batches
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.pipeline.assemble import filter_patience, make_assembler, still_drawing
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.executors import Feed, InProcess, Pool, choose_executor, holds_generator
from fe_core.pipeline.messages import EpochDraws, EpochSpec, Shard
from fe_core.pipeline.op_runner import OpTimer
from fe_core.pipeline.position import PositionTracker
from fe_core.pipeline.runners import TaskRunner, make_runner
from fe_core.pipeline._sample_epoch import EpochTasks, SeededRandom, reset_dataset, task_stream

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


class _TrainerRunner:
    """The trainer's task runner of an epoch, built on first use (a callable: the executor and assembler share it)."""

    def __init__(self, plan: EpochPlan, key: int, shuffle: bool, shard: Shard, timer: Optional[OpTimer]) -> None:
        self.args = (plan, key, shuffle, shard, timer)
        self.runner: Optional[TaskRunner] = None

    def __call__(self) -> TaskRunner:
        if self.runner is None:
            plan, key, shuffle, shard, timer = self.args
            self.runner = make_runner(plan, key, restore=True, shuffle=shuffle, shard=shard, timer=timer)
        return self.runner


class EpochLoader:
    """An iterable over one epoch of batches (dicts of numpy arrays).

    Args:
        plan: The resolved epoch configuration.
        shuffle: Whether to shuffle the sample order.
        steps_per_epoch: Yield exactly this many batches (cutting the epoch short or repeating the data, re-shuffled);
            None yields one pass over the data.
        timer: Time every stage (benchmarks only; everything then runs in this process).
        tracker: Follows the position inside the epoch (for mid-epoch checkpoints).
        pool: The Pipeline's worker pool (`fe_core.pipeline._workers.WorkerPool`; its processes start when an epoch
            needs them), None to compute everything in this process.
        member: Which member of an InterleaveDataset this loader iterates (None: the dataset itself).
        fixed_batches: One pass of fixed batches, a filtered one as its FilteredData (an InterleaveDataset's member
            in one process: the interleaving drops steps for it).
    """

    def __init__(self, plan: EpochPlan, shuffle: bool, steps_per_epoch: Optional[int] = None,
                 timer: Optional[OpTimer] = None, tracker: Optional[PositionTracker] = None,
                 pool: Any = None, member: Optional[int] = None, fixed_batches: bool = False) -> None:
        self.plan = plan
        self.shuffle = shuffle
        self.steps_per_epoch = steps_per_epoch
        self.timer = timer
        self.tracker = tracker
        self.pool = pool
        self.member = member
        self.fixed_batches = fixed_batches

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
        return self._task_batches()

    # ------------------------------------------------------------------ the layers
    def _draw_epoch(self, rng: Any = np.random) -> EpochDraws:
        """The epoch's random draws, the same whatever path or executor the epoch takes: a seed for the dataset's
        per-epoch index maps (only when it has `fe_reset_ds`; the maps are then drawn here as a function of it), the
        first pass's order (when shuffled and not a dataset of whole batches) and the epoch's key (every task's
        seed, and later passes' orders, derive from it)."""
        dataset = self.plan.dataset
        reset_seed = None
        if callable(getattr(dataset, "fe_reset_ds", None)):
            reset_seed = int(rng.randint(0, 2 ** 31 - 1))
            reset_dataset(dataset, self.shuffle, reset_seed)
        first_order = None
        if self.shuffle and not getattr(dataset, "fe_batched", False):
            first_order = rng.permutation(len(dataset))
        key = int(rng.randint(0, 2 ** 31 - 1))
        return EpochDraws(reset_seed, first_order, key)

    def _task_batches(self) -> Iterator[Dict[str, Any]]:
        """One epoch as layers: draws (one generator from numpy's global state, rank 0's in a data-parallel run), a
        task stream, an executor and the assembler of the run's filtering rules."""
        communicator = get_communicator()
        shard = Shard(communicator.world_size, communicator.rank)
        draws = self._draw_epoch(epoch_order_rng(communicator))
        stream = task_stream(self.plan, draws, shard, self.shuffle, self.steps_per_epoch)
        runner = _TrainerRunner(self.plan, draws.key, self.shuffle, shard, self.timer)
        assembler = make_assembler(self.plan, runner, shard, self.steps_per_epoch, stream.count, self.fixed_batches)
        results = self._executor(draws, shard, stream, runner).run(stream.tasks, assembler)
        try:
            yield from assembler.batches(results)
        finally:
            results.close()  # type: ignore[attr-defined]

    def _executor(self, draws: EpochDraws, shard: Shard, stream: EpochTasks, runner: _TrainerRunner) -> Any:
        """The executor of this epoch's tasks: `choose_executor`'s decision, then the pool started (it may decline:
        the epoch then runs here)."""
        plan = self.plan
        estimated = stream.limit * self._item_size() if getattr(plan.dataset, "fe_batched", False) else stream.limit
        in_process = self.pool is None or self.timer is not None
        kind, _ = choose_executor(plan, estimated // shard.world, in_process)
        if kind == "feed":
            feed = self.pool.generator_feed(plan.dataset, window=2 * (plan.batch_size or 1))
            if feed is not None:
                return Feed(runner, feed, stream.limit)
        elif kind == "pool" and self.pool.start():
            keys = frozenset(plan.output_keys) if plan.output_keys else None
            spec = EpochSpec(plan.mode, plan.epoch, plan.ds_id, keys, bool(plan.state.get("warmup")), self.shuffle,
                             draws.key, draws.reset_seed, self.member, shard)
            return Pool(self.pool, spec, plan, stream.limit, runner)
        return InProcess(runner)

    def _item_size(self) -> int:
        """Samples per item of a dataset of whole batches (its first item's, read leaving the random state as it was),
        to size the epoch for the choice of executor."""
        if self.pool is None or holds_generator(self.plan.dataset):  # reading would take a generator's sample
            return 1
        try:
            return max(1, len(SeededRandom(restore=True).call(0, self.plan.dataset.__getitem__, 0)))
        except Exception:  # pylint: disable=broad-except  # the epoch itself reports a dataset that cannot be read
            return 1

    # ------------------------------------------------------------------ interleaved datasets
    def _interleaved_batches(self) -> Iterator[Dict[str, Any]]:
        """Follow an InterleaveDataset's pattern as FastEstimator does: step `i` of a pass takes the next fixed batch
        of member `pattern[i % len(pattern)]` (its own ds_id ops and batch size; incomplete batches dropped), and a
        pass has `len(self)` steps.

        Filtering, as FastEstimator documents it: every time a member's batch holds a sample filtered out, an entire
        pattern-worth of steps (that one and the next `len(pattern) - 1`) is dropped. Without replacement the dropped
        steps count (the epoch has fewer batches); with replacement the steps go on into the next pass (its members'
        batches from the start, re-shuffled) until the epoch has all its batches.
        """
        plan = self.plan
        fixed = get_communicator().world_size == 1
        for sub in plan.sub_plans:
            sub.drop_last = True
        members = len(plan.sub_plans)
        pools = self.pool.pools_for_members(members) if self.pool is not None and self.timer is None else []
        pools = pools or [None] * members
        loaders = [EpochLoader(sub, shuffle=self.shuffle, timer=self.timer, pool=pool, member=which,
                               fixed_batches=fixed) for which, (sub, pool) in enumerate(zip(plan.sub_plans, pools))]
        pattern = plan.dataset.pattern
        steps_per_pass = interleaved_steps(pattern, [
            len(sub.dataset) // (1 if getattr(sub.dataset, "fe_batched", False) else (sub.batch_size or 1))
            for sub in plan.sub_plans])
        total = self.steps_per_epoch if self.steps_per_epoch is not None else steps_per_pass
        iterators: List[Optional[Iterator[Any]]] = [None] * len(loaders)
        counted = step = dropping = missed = 0
        replaced = True
        try:
            while counted < total:
                if step and step % steps_per_pass == 0:  # a new pass: every member starts over
                    for iterator in iterators:
                        getattr(iterator, "close", lambda: None)()
                    iterators = [None] * len(loaders)
                which = pattern[step % steps_per_pass % len(pattern)]
                step += 1
                if iterators[which] is None:
                    iterators[which] = iter(loaders[which])
                batch = next(iterators[which], None)
                if batch is None:
                    return
                if dropping or isinstance(batch, FilteredData):
                    if not dropping:  # this step and the rest of a pattern-worth go
                        dropping, replaced = len(pattern), batch.replacement
                    dropping -= 1
                    counted += 0 if replaced else 1
                    missed += 1
                    if missed == filter_patience(steps_per_pass) + 1 and replaced:
                        still_drawing(plan, missed)
                    continue
                missed = 0
                counted += 1
                yield batch
        finally:
            for iterator in iterators:
                getattr(iterator, "close", lambda: None)()

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
