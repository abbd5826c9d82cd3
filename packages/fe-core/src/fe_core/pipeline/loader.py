"""`EpochLoader`: iterate one epoch of batches from an `EpochPlan`.

An epoch is layers that compose, as a torch DataLoader stacks a sampler, a fetcher and a worker loop:

- draws, in one place (`_draw_epoch`): a seed for the dataset's per-epoch index maps when it has `fe_reset_ds` (the
  maps are drawn from it, here and in every worker), the first pass's order when shuffled, and the epoch's key. They
  come from a generator seeded by one number drawn from numpy's global random state (`np.random.seed` or restoring
  its state makes an epoch reproducible; the position tracker records it for mid-epoch resume), rank 0's number in a
  data-parallel run (`fe_core.distributed.sharding.epoch_order_rng`), so one process and N processes with the same
  seed see the same global batches. Their number never depends on the path, so the trainer's random state after an
  epoch is the same for any num_process;
- a task stream: consecutive positions of the order, one batch's worth per task (`_sample_epoch.TaskStream`; later
  passes' orders and every task's seed derive from the key); in a data-parallel run this process's part of every
  global batch (`_rank_tasks`, the rules of `fe_core.distributed.sharding`); for a dataset of whole batches one item
  per task;
- a runner per plan (`runner_kind`): whole batches (no per-sample op, plain stacking, `get_batch`: one fancy-indexing
  call, then the batch ops), per sample (`dataset[i]`, per-sample ops, collation, batch ops) or items of a dataset of
  whole batches - the same in the trainer and in a worker, each task seeded by (key, position);
- an executor, one decision from the plan (`choose_executor`): here, the Pipeline's worker pool
  (`fe_core.pipeline._workers`), or a GeneratorDataset's feed process (`fe_core.pipeline._feed`);
- an assembler of the run's filtering rules (`_sample_epoch.assemble`, `assemble_items`, `_assemble_rank`).

A framework loader (torch DataLoader, tf.data.Dataset) is iterated as is; an InterleaveDataset follows its pattern
over one loader per member.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from fe_core.dataset.interleave_dataset import interleaved_steps
from fe_core.distributed.communicator import Communicator, get_communicator
from fe_core.distributed.sharding import check_batch_size, epoch_order_rng, global_batches, rank_part
from fe_core.dataset.generator_dataset import GeneratorDataset
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.op.numpyop.batch import stack_values
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.position import PositionTracker
from fe_core.pipeline.op_runner import OpTimer, compile_steps
from fe_core.pipeline._sample_epoch import (UNBATCHED_TASK, ItemRunner, SeededRandom, TaskRunner, TaskStream,
                                            WholeBatchRunner, assemble, assemble_fixed, assemble_items, check_epoch,
                                            filter_patience, reset_dataset, still_drawing)

__all__ = ["EpochLoader", "dataset_keys", "worker_runner"]


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


def _assemble_rank(plan: EpochPlan, results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]],
                   runner: Callable[[], TaskRunner], communicator: Communicator, steps: int
                   ) -> Iterator[Dict[str, Any]]:
    """This process's batches of a data-parallel epoch, one per task (its part of a global batch): samples an op
    filters out make the part smaller; a part left empty, or a batch op filtering a part, is an error (the other
    processes would wait for this one forever)."""
    world, rank = communicator.world_size, communicator.rank
    for _ in range(steps):  # never asks for the empty tasks past the end
        start, _, result = next(results)
        if result[0] == "batch":
            batch = result[2]
        else:
            _, _, samples, kept_indices = result[:4]
            if not samples:
                raise ValueError(f"Every sample of process {rank}'s batch in {plan.where()} was filtered out; in a "
                                 f"run of {world} processes each process needs a sample every step")
            batch = runner().finish(samples, kept_indices, start)
        if isinstance(batch, FilteredData):
            raise ValueError(f"A batch op filtered out a whole batch in {plan.where()}; in a run of {world} "
                             f"processes every process must run every step")
        yield batch


def batch_vectorised(op: Any) -> bool:
    """Whether a batch op computes on the whole batch at once (cheap enough to stay in the trainer): an op that says so
    with `batch_vectorised`, else a batch-capable op or one with its own `forward_batch`; NumpyOp's default
    `forward_batch`, a UnivariateOp's default `transform_batch` and an albumentations multivariate op that is not
    batch-capable run the op sample by sample: work for the workers."""
    declared = getattr(op, "batch_vectorised", None)
    if declared is not None:
        return bool(declared)
    if getattr(op, "batch_capable", False):
        return True
    if isinstance(op, MultiVariateAlbumentation):  # its forward_batch augments sample by sample
        return False
    if isinstance(op, UnivariateOp):
        return type(op).transform_batch is not UnivariateOp.transform_batch
    return type(op).forward_batch is not NumpyOp.forward_batch


class EpochLoader:
    """An iterable over one epoch of batches (dicts of numpy arrays).

    Args:
        plan: The resolved epoch configuration.
        shuffle: Whether to shuffle the sample order.
        steps_per_epoch: Yield exactly this many batches (cutting the epoch short or repeating the data, re-shuffled);
            None yields one pass over the data.
        timer: Time every stage (benchmarks only).
        tracker: Follows the position inside the epoch (for mid-epoch checkpoints).
        pool: The Pipeline's worker pool (`fe_core.pipeline._workers.WorkerPool`; its processes start when an epoch
            needs them), None to compute everything in this process.
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
        self.reset_seed: Optional[int] = None  # this epoch's index-map seed (for the workers)
        self.member: Optional[int] = None  # which member of an InterleaveDataset this loader iterates
        self.shard: Optional[Tuple[int, int]] = None  # (world size, rank) for items that are global batches
        self.rank_task_count = 0  # batches this process yields in a data-parallel epoch
        self.fixed_batches = False  # one pass of fixed batches, a filtered one as its FilteredData (interleaving)

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
        return self._task_batches(communicator)

    # ------------------------------------------------------------------ the layers
    def runner_kind(self) -> str:
        """How a task is computed, from the plan alone: 'items' (a dataset of whole batches: one item per task),
        'whole' (no op runs per sample, plain stacking and `get_batch`: one fancy-indexing call per task) or
        'samples' (dataset access and per-sample ops sample by sample, then collation)."""
        plan = self.plan
        if getattr(plan.dataset, "fe_batched", False):
            return "items"
        if (plan.batch_size is not None and not plan.sample_ops and plan.default_collation
                and callable(getattr(plan.dataset, "get_batch", None))):
            return "whole"
        return "samples"

    def make_runner(self, key: int, restore: bool) -> TaskRunner:
        """The task runner of this epoch (the same kind in the trainer and in every worker process)."""
        kind = self.runner_kind()
        if kind == "items":
            return ItemRunner(self, key, restore, shard=self.shard)
        if kind == "whole":
            return WholeBatchRunner(self, key, restore)
        return TaskRunner(self, key, restore)

    def choose_executor(self, estimated_samples: int) -> Tuple[str, str]:
        """Where this epoch's tasks run ('workers' or 'here') and why, decided from the plan: per-sample work (or a
        batch op that works item by item, as ReadImage decoding file after file) of an epoch large enough goes to the
        worker processes; vectorised whole batches stay here. The pool is only the executor of that decision (it
        may still decline: num_process=0, or datasets that cannot reach spawned workers)."""
        plan = self.plan
        if self.pool is None:
            return "here", "no worker pool for this loader (num_process=0, get_loader or get_num_steps)"
        if self.timer is not None:
            return "here", "a timed benchmark"
        if isinstance(plan.dataset, GeneratorDataset):
            from fe_core.pipeline._workers import (min_worker_samples,  # pylint: disable=import-outside-toplevel
                                                   resolve_num_process, start_method)
            if (start_method() != "fork" or estimated_samples < min_worker_samples()
                    or getattr(self.pool, "disabled", False) or resolve_num_process(self.pool.requested) < 1):
                return "here", "a GeneratorDataset whose epoch is too small (or whose generator cannot be forked)"
            return "feed", "a GeneratorDataset: its generator runs ahead in one worker process"
        if self.runner_kind() == "whole" and all(batch_vectorised(op) for op in plan.batch_ops):
            return "here", "whole batches with vectorised batch ops"
        if not self.pool.wanted(self, estimated_samples):
            return "here", "the epoch is too small for workers, or the pool declined"
        return "workers", "per-sample work"

    def _draw_epoch(self, rng: Any = np.random) -> Tuple[Optional[int], Optional[np.ndarray], int]:
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
        return reset_seed, first_order, key

    def _task_batches(self, communicator: Communicator) -> Iterator[Dict[str, Any]]:
        """One epoch as tasks: draws, a task stream (this process's part of every global batch in a data-parallel
        run), an executor (here or the worker pool) and the assembler of the run's filtering rules."""
        plan = self.plan
        world = communicator.world_size
        # the epoch's draws come from one generator seeded by one number from numpy's global state, the same on every
        # process of a data-parallel run and in one process: with the same seed, one process and N see the same epoch
        reset_seed, first_order, key = self._draw_epoch(epoch_order_rng(communicator))
        self.reset_seed = reset_seed
        dataset = plan.dataset
        size = len(dataset)
        kind = self.runner_kind()
        steps_per_epoch = self.steps_per_epoch
        if kind == "items":  # a global batch per item in a data-parallel run: this process takes its part
            self.shard = (world, communicator.rank) if world > 1 else None
            tasks = ((position, np.array([position % size])) for position in itertools.count())
            limit = size if steps_per_epoch is None else steps_per_epoch
            self.rank_task_count = limit
        elif world > 1:
            tasks, limit = self._rank_tasks(communicator, first_order, key)
        else:
            task_size = plan.batch_size or UNBATCHED_TASK
            tasks = iter(TaskStream(size, first_order, self.shuffle, key, task_size, one_pass=steps_per_epoch is None,
                                    continuous=getattr(dataset, "fe_continuous_stream", False)))
            limit = size if steps_per_epoch is None else steps_per_epoch * task_size
        local: List[TaskRunner] = []
        aligned = [True]  # whether tasks may still come back as whole batches
        estimated = limit * self._item_size() if kind == "items" else limit
        if world > 1:
            estimated = estimated // world
        executor, _ = self.choose_executor(estimated)
        feed = self._generator_feed(plan) if executor == "feed" else None

        def runner() -> TaskRunner:
            if not local:
                local.append(self.make_runner(key, restore=True))
                if feed is not None:
                    local[0].getitem = feed.next
            return local[0]

        def redo(start: int, indices: np.ndarray) -> Tuple[Any, ...]:
            return runner().run(start, indices, False)

        if executor == "workers":
            previous = getattr(self.pool, "open_epoch", None)
            if previous is not None:  # a loader abandoned mid-epoch: its tasks go before this epoch's are sent
                previous.close()
            results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]] = self.pool.run_epoch(
                self, key, tasks, aligned, limit=limit)
            self.pool.open_epoch = results
            results = check_epoch(results, key, plan)  # results computed elsewhere carry their epoch: check it
        else:
            results = ((start, indices, runner().run(start, indices, aligned[0])) for start, indices in tasks)
        try:
            if world > 1:
                yield from _assemble_rank(plan, results, runner, communicator, self.rank_task_count)
            elif self.fixed_batches:
                yield from assemble_fixed(plan, results, runner, kind == "items")
            elif kind == "items":
                yield from assemble_items(plan, results, steps_per_epoch)
            else:
                yield from assemble(plan, results, runner, redo, steps_per_epoch, aligned)
        finally:
            results.close()  # type: ignore[attr-defined]
            if executor == "workers" and getattr(self.pool, "open_epoch", None) is not None:
                self.pool.open_epoch = None

    def _member_pools(self, members: int) -> List[Any]:
        """A worker pool per member of an InterleaveDataset (their epochs interleave, a pool runs one epoch at a
        time), sharing the Pipeline's workers between them (members left without one run here: never more processes
        than `num_process`); kept by the Pipeline's pool until the Pipeline closes it."""
        if self.pool is None or self.timer is not None or getattr(self.pool, "disabled", False):
            return [None] * members
        pools = getattr(self.pool, "member_pools", None)
        if pools is None or len(pools) != members:
            from fe_core.pipeline._workers import (WorkerPool,  # pylint: disable=import-outside-toplevel
                                                   resolve_num_process)
            for pool in pools or ():
                pool.close()
            base, extra = divmod(resolve_num_process(self.pool.requested), members)
            counts = [base + (1 if which < extra else 0) for which in range(members)]
            pools = self.pool.member_pools = [WorkerPool(self.pool.pipeline, count) for count in counts]  # 0: none
        return list(pools)

    def _generator_feed(self, plan: EpochPlan) -> Any:
        """The feed process of this GeneratorDataset (one per dataset, kept by the pool until the Pipeline closes
        it)."""
        from fe_core.pipeline._feed import GeneratorFeed  # pylint: disable=import-outside-toplevel
        feeds = getattr(self.pool, "generator_feeds", None)
        if feeds is None:
            feeds = self.pool.generator_feeds = {}
        feed = feeds.get(id(plan.dataset))
        if feed is None or not feed.process.is_alive():
            feed = feeds[id(plan.dataset)] = GeneratorFeed(plan.dataset, window=2 * (plan.batch_size or 1))
        return feed

    def _item_size(self) -> int:
        """Samples per item of a dataset of whole batches (its first item's, read leaving the random state as it was),
        to size the epoch for the choice of executor."""
        if self.pool is None:
            return 1
        try:
            return max(1, len(SeededRandom(restore=True).call(0, self.plan.dataset.__getitem__, 0)))
        except Exception:  # pylint: disable=broad-except  # the epoch itself reports a dataset that cannot be read
            return 1

    def worker_spec(self, key: int) -> Dict[str, Any]:
        """What a worker process needs to compute this epoch's tasks (it builds the same plan from its own copy of
        the Pipeline, and draws the dataset's index maps from the same seed)."""
        plan = self.plan
        return {"mode": plan.mode, "epoch": plan.epoch, "ds_id": plan.ds_id, "output_keys": plan.output_keys,
                "warmup": bool(plan.state.get("warmup")), "shuffle": self.shuffle, "key": key,
                "reset_seed": self.reset_seed, "member": self.member, "shard": self.shard}

    def _rank_tasks(self, communicator: Communicator, first_order: Optional[np.ndarray], key: int
                    ) -> Tuple[Iterator[Tuple[int, np.ndarray]], int]:
        """This process's part of every global batch, as tasks `(global position of its first sample, indices)`,
        then endless empty tasks past the epoch's end (never computed); and the stream position where it ends."""
        plan = self.plan
        world, rank = communicator.world_size, communicator.rank
        batch_size = plan.batch_size or world
        size = len(plan.dataset)
        if self.steps_per_epoch is None:
            order = first_order if first_order is not None else np.arange(size)
            cut = global_batches(order, batch_size, plan.drop_last, world, plan.where())
            starts = np.concatenate([[0], np.cumsum([len(batch) for batch in cut])]).tolist()
            global_tasks: List[Tuple[int, np.ndarray]] = list(zip(starts, cut))
        else:
            check_batch_size(batch_size, world, plan.where())
            stream = iter(TaskStream(size, first_order, self.shuffle, key, batch_size, one_pass=False))
            global_tasks = [next(stream) for _ in range(self.steps_per_epoch)]
        limit = global_tasks[-1][0] + len(global_tasks[-1][1]) if global_tasks else 0

        def tasks() -> Iterator[Tuple[int, np.ndarray]]:
            for start, indices in global_tasks:
                base, extra = divmod(len(indices), world)
                offset = rank * base + min(rank, extra)
                yield start + offset, rank_part(indices, world, rank)
            for position in itertools.count(limit):
                yield position, np.zeros((0,), dtype=np.int64)

        self.rank_task_count = len(global_tasks)
        return tasks(), limit

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
        world = get_communicator().world_size
        for sub in plan.sub_plans:
            sub.drop_last = True
        pools = self._member_pools(len(plan.sub_plans))
        loaders = [EpochLoader(sub, shuffle=self.shuffle, timer=self.timer, pool=pool)
                   for sub, pool in zip(plan.sub_plans, pools)]
        for which, loader in enumerate(loaders):
            loader.member = which
            loader.fixed_batches = world == 1
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
            return
        while emitted < total:
            for which in plan.dataset.pattern:
                if iterators[which] is None:
                    iterators[which] = iter(loaders[which])
                batch = next(iterators[which], None)
                if batch is None:  # this member's epoch ended: its next one goes on
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


def worker_runner(pipeline: Any, spec: Dict[str, Any]) -> TaskRunner:
    """The epoch's task runner in a worker: the trainer's plan rebuilt from this worker's copy of the Pipeline, the
    dataset's per-epoch index maps redrawn from the trainer's seed (`spec['reset_seed']`), the same kind of runner."""
    plan = pipeline._plan(spec["mode"], spec["epoch"], spec["ds_id"], spec["output_keys"])  # pylint: disable=W0212
    if spec.get("member") is not None:  # a member of an InterleaveDataset (whose incomplete batches are dropped)
        plan = plan.sub_plans[spec["member"]]
        plan.drop_last = True
    plan.state["warmup"] = spec["warmup"]
    if spec.get("reset_seed") is not None:
        reset_dataset(plan.dataset, spec["shuffle"], spec["reset_seed"])
    loader = EpochLoader(plan, shuffle=spec["shuffle"])
    loader.shard = spec.get("shard")  # (world size, rank) for a dataset of whole batches in a data-parallel run
    return loader.make_runner(spec["key"], restore=False)
