"""Task runners: compute one task of an epoch plan, the same in the trainer and in every worker process.

A runner is the fetcher + collate of torch's DataLoader with per-position seeding: it fetches a task's samples, runs
the per-sample ops, and (when every sample survived) collates them and runs the batch ops. Three kinds, decided from
the plan alone (`runner_kind`): whole batches (no per-sample op, plain stacking, a dataset with `get_batch`: one
fancy-indexing call per task), per sample, and items of a dataset of whole batches. Every random draw a task makes is
seeded by (the epoch's key, the task's position: `task_seed`), so which process computed it never changes its result.

A worker process builds its runner with `worker_runner(planner, spec)`: the planner (never the Pipeline) rebuilds the
trainer's plan, the dataset's index maps are redrawn from the trainer's seed, and the same kind of runner is made.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.dataset.generator_dataset import GeneratorDataset
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.distributed.sharding import rank_part
from fe_core.op.numpyop.batch import collate_samples, stack_values
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.messages import BatchResult, EpochSpec, SampleResult, Shard, Task, TaskResult
from fe_core.pipeline.op_runner import OpTimer, add_note, compile_steps, run_steps
from fe_core.pipeline._sample_epoch import (BATCH_SALT, GENERATOR_SALT, KEPT, RANK_SALT, REMOVED, REPLACED,
                                            RESET_SALT, SeededRandom, draws_random, reset_dataset, task_seed)

__all__ = ["Stages", "TaskRunner", "WholeBatchRunner", "ItemRunner", "runner_kind", "make_runner", "worker_runner"]

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


class Stages:
    """The building blocks of a plan's runner: compiled ops, fetchers, collation and key selection, each timed into
    `timer` for benchmarks.

    Args:
        plan: The epoch plan.
        timer: Time every stage (benchmarks only).
    """

    def __init__(self, plan: EpochPlan, timer: Optional[OpTimer] = None) -> None:
        self.plan = plan
        self.timer = timer

    def wrap(self, label: str, stage: str, function: Callable[..., Any], keys: Sequence[str] = ()) -> Callable:
        """`function`, timed under `label` when there is a timer."""
        return self.timer.wrap(label, keys, (), stage, function) if self.timer is not None else function

    def batch_fetcher(self, keys: Optional[Sequence[str]]) -> Callable[[np.ndarray], Dict[str, Any]]:
        """The dataset's `get_batch`, asked for `keys` only when it takes them."""
        get_batch = self.plan.dataset.get_batch
        fetch = functools.partial(get_batch, keys=keys) if keys is not None and _accepts_keys(get_batch) else get_batch
        return self.wrap("<Fetch batch>", "batch", fetch, keys or ())

    def compile(self, ops: Sequence[Any], batched: bool) -> List[Any]:
        """`compile_steps` for this epoch: timed for benchmarks, checked in the Estimator's warmup."""
        return compile_steps(ops, batched=batched, timer=self.timer, checked=bool(self.plan.state.get("warmup")))

    def select(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """`batch` with only the keys asked for."""
        keys = self.plan.output_keys
        if keys is None:
            return batch
        return {key: value for key, value in batch.items() if key in keys}

    def collator(self) -> Callable[[List[Dict[str, Any]], List[int]], Dict[str, Any]]:
        """How pending samples become a batch: stack (plus `get_batch` for untouched keys) or the Batch's collation."""
        plan = self.plan
        if not plan.default_collation:
            boundary = plan.boundary_keys

            def custom(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
                if boundary is not None:
                    samples = [{key: value for key, value in sample.items() if key in boundary} for sample in samples]
                return plan.batch_op.collate(samples)

            return self.wrap("<Collate>", "batch", custom)
        layout: Dict[str, Any] = {}
        written = plan.sample_written_keys()
        has_get_batch = callable(getattr(plan.dataset, "get_batch", None))

        def stack_keys(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
            return {key: stack_values(key, [sample[key] for sample in samples]) for key in layout["stack"]}

        stack_keys_timed = self.wrap("<Collate>", "batch", stack_keys)

        def stack(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
            if not layout:  # decided on the first batch: which keys to stack and which to gather from the dataset
                boundary = plan.boundary_keys
                present = [key for key in samples[0] if boundary is None or key in boundary]
                layout["stack"] = [key for key in present if not has_get_batch or key in written]
                gathered = [key for key in present if has_get_batch and key not in written]
                layout["gather"] = self.batch_fetcher(gathered) if gathered else None
                layout["gathered"] = set(gathered)
            batch = stack_keys_timed(samples)
            if layout["gather"] is not None:
                gathered = layout["gather"](np.asarray(indices))
                batch.update((key, value) for key, value in gathered.items() if key in layout["gathered"])
            return batch

        return stack


class TaskRunner:
    """Computes tasks for one epoch plan: fetch, per-sample ops, and (when all survive) collation and batch ops.

    Args:
        stages: The plan's building blocks.
        key: The epoch's random key.
        restore: Restore the caller's random state after each task (True in the trainer).
    """

    def __init__(self, stages: Stages, key: int, restore: bool) -> None:
        plan = stages.plan
        self.plan = plan
        self.key = key
        self.random = SeededRandom(restore)
        dataset = plan.dataset
        self.getitem = stages.wrap("<Fetch sample>", "sample", dataset.__getitem__)
        self.copy_sample = not isinstance(dataset, NumpyDataset)  # NumpyDataset returns a new dict per call already
        self.sample_steps = stages.compile(plan.sample_ops, batched=False)
        self.batch_steps = stages.compile(plan.batch_ops, batched=True)
        self.collate = stages.collator()
        self.select = stages.select
        self.state = plan.state
        self.unbatched = plan.batch_size is None
        self.boundary = plan.boundary_keys
        self.batch_random = draws_random(plan.batch_ops)
        # A GeneratorDataset's generator draws its randomness seeded per stream position (`generator_seed`), apart
        # from the per-sample ops: its feed process (`fe_core.pipeline._feed`) draws each sample seeded the same way.
        # The Feed executor clears this flag when the samples come from the feed.
        self.seed_draws = isinstance(dataset, GeneratorDataset)
        self.draw_random = SeededRandom(restore=True)

    def generator_seed(self, position: int) -> int:
        """The seed of the GeneratorDataset draw at stream `position` of this epoch."""
        return task_seed(self.key, position, GENERATOR_SALT)

    def _samples(self, indices: np.ndarray, start: int = 0) -> Tuple[List[int], List[Dict[str, Any]], List[int]]:
        outcomes: List[int] = []
        kept: List[Dict[str, Any]] = []
        kept_indices: List[int] = []
        getitem, steps, state, copy_sample = self.getitem, self.sample_steps, self.state, self.copy_sample
        seed_draws, draw_random = self.seed_draws, self.draw_random
        for offset, index in enumerate(indices.tolist()):
            try:
                if seed_draws:
                    sample = draw_random.call(self.generator_seed(start + offset), getitem, index)
                else:
                    sample = getitem(index)
                if copy_sample:
                    sample = dict(sample)
                result = run_steps(sample, steps, state) if steps else None
            except Exception as error:
                add_note(error, f"on sample index {index} of the dataset (mode {state.get('mode')!r} epoch "
                                f"{state.get('epoch')} ds_id {state.get('ds_id')!r})")
                raise
            if result is None:
                outcomes.append(KEPT)
                kept.append(sample)
                kept_indices.append(index)
            else:
                outcomes.append(REPLACED if result.replacement else REMOVED)
        return outcomes, kept, kept_indices

    def _finish(self, samples: List[Dict[str, Any]], indices: List[int]) -> Any:
        batch = samples[0] if self.unbatched else self.collate(samples, indices)
        if self.batch_steps:
            filtered = run_steps(batch, self.batch_steps, self.state)
            if filtered is not None:
                return filtered
        return self.select(batch)

    def run(self, task: Task) -> TaskResult:
        """Compute `task`: a BatchResult when the task wants a batch and every sample was kept, else its samples."""
        outcomes, kept, kept_indices = self.random.call(task_seed(self.key, task.start), self._samples, task.indices,
                                                            task.start)
        if task.want_batch and not self.unbatched and len(kept) == len(outcomes):
            return BatchResult(len(outcomes), self.finish(kept, kept_indices, task.start), self.key)
        if self.boundary is not None:
            kept = [{key: value for key, value in sample.items() if key in self.boundary} for sample in kept]
        return SampleResult(outcomes, kept, kept_indices, self.key)

    def finish(self, samples: List[Dict[str, Any]], indices: List[int], first: int) -> Any:
        """Collate kept samples (the first at stream position `first`) and run the batch ops on them.

        Returns:
            The batch (only the keys asked for), or the FilteredData of a batch op that filtered it out.
        """
        if self.unbatched and not self.batch_steps:
            return self.select(samples[0])
        if not self.batch_random:  # no batch op draws: seeding would change nothing
            return self._finish(samples, indices)
        return self.random.call(task_seed(self.key, first, BATCH_SALT), self._finish, samples, indices)


class WholeBatchRunner(TaskRunner):
    """Tasks of an epoch with no per-sample op, plain stacking and a dataset with `get_batch`: one `get_batch` call
    per task, then the batch ops seeded as a per-sample task's are (so the batch is the one the per-sample path
    would make from the same positions)."""

    def __init__(self, stages: Stages, key: int, restore: bool) -> None:
        super().__init__(stages, key, restore)
        load_keys = None if self.plan.load_keys is None else sorted(self.plan.load_keys)
        self.fetch = stages.batch_fetcher(load_keys)

    def _whole(self, batch: Dict[str, Any]) -> Any:
        filtered = run_steps(batch, self.batch_steps, self.state)
        return filtered if filtered is not None else self.select(batch)

    def run(self, task: Task) -> TaskResult:
        if not task.want_batch:  # out of step with the batches (a batch op filtered one): samples one by one
            return super().run(task)
        batch = self.fetch(task.indices)
        if self.batch_steps and self.batch_random:
            result = self.random.call(task_seed(self.key, task.start, BATCH_SALT), self._whole, batch)
        elif self.batch_steps:
            result = self._whole(batch)
        else:
            result = self.select(batch)
        return BatchResult(len(task.indices), result, self.key)


class ItemRunner(TaskRunner):
    """Tasks of a dataset whose items are lists of samples (BatchDataset): task `p` is item `p % len(dataset)` of
    pass `p // len(dataset)`; each pass after the first redraws the dataset's index maps from a seed derived from the
    epoch's key. The item's per-sample ops run seeded by the task's position; a sample filtered out removes the whole
    batch (batches keep their sizes).

    With a shard of several processes (a data-parallel run) an item is a global batch and this process takes its part
    of it: a sample filtered out only leaves the part smaller, a part left empty is an error; the ops' seeds also
    derive from the rank (the ranks' parts are different samples)."""

    def __init__(self, stages: Stages, key: int, restore: bool, shuffle: bool, shard: Shard) -> None:
        super().__init__(stages, key, restore)
        self.shard = shard
        self.sample_key = key if shard.whole else task_seed(key, shard.rank, RANK_SALT)
        self.unbatched = False  # every item is a batch
        self.dataset = self.plan.dataset
        self.shuffle = shuffle
        self.lap = 0
        batch_op = self.plan.batch_op
        boundary = self.boundary

        def collate(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
            if boundary is not None:
                samples = [{key: value for key, value in sample.items() if key in boundary} for sample in samples]
            return batch_op.collate(samples) if batch_op is not None else collate_samples(samples)

        self.collate = stages.wrap("<Collate>", "batch", collate)
        self.getitem = stages.wrap("<Fetch batch>", "batch", self.dataset.__getitem__)

    def _item(self, position: int) -> Any:
        samples = self.getitem(position)
        shard = self.shard
        if not shard.whole:
            if len(samples) < shard.world:
                raise ValueError(f"A batch of {len(samples)} samples from the dataset of whole batches in "
                                 f"{self.plan.where()} cannot be split across {shard.world} processes")
            samples = rank_part(samples, shard.world, shard.rank)
        kept = []
        for sample in samples:
            sample = dict(sample)
            result = run_steps(sample, self.sample_steps, self.state) if self.sample_steps else None
            if result is not None:
                if not shard.whole:  # only this process's part shrinks
                    continue
                return result
            kept.append(sample)
        if not shard.whole and not kept:
            raise ValueError(f"A whole batch was filtered out in {self.plan.where()}; in a run of {shard.world} "
                             f"processes every process must run every step")
        return kept

    def run(self, task: Task) -> TaskResult:
        size = len(self.dataset)
        lap, position = divmod(task.start, size)
        inner = getattr(self.dataset, "dataset", None)
        if getattr(self.dataset, "fe_continuous_stream", False) and inner is not None:  # items go on past its length
            position = task.start  # a new pass over the wrapped dataset of whole batches redraws its pairings
            lap = task.start // len(inner)
            if lap != self.lap:
                reset_dataset(inner, self.shuffle, task_seed(self.key, lap, RESET_SALT))
                self.lap = lap
        elif lap != self.lap:
            reset_dataset(self.dataset, self.shuffle, task_seed(self.key, lap, RESET_SALT))
            self.lap = lap
        kept = self.random.call(task_seed(self.sample_key, task.start), self._item, position)
        if isinstance(kept, FilteredData):
            return BatchResult(1, kept, self.key)
        if not kept:
            return BatchResult(1, FilteredData(replacement=True), self.key)
        return BatchResult(1, self.random.call(task_seed(self.sample_key, task.start, BATCH_SALT), self._finish,
                                               kept, []), self.key)


def runner_kind(plan: EpochPlan) -> str:
    """How a task is computed, from the plan alone: 'items' (a dataset of whole batches: one item per task), 'whole'
    (no op runs per sample, plain stacking and `get_batch`: one fancy-indexing call per task) or 'samples' (dataset
    access and per-sample ops sample by sample, then collation)."""
    if getattr(plan.dataset, "fe_batched", False):
        return "items"
    if (plan.batch_size is not None and not plan.sample_ops and plan.default_collation
            and callable(getattr(plan.dataset, "get_batch", None))):
        return "whole"
    return "samples"


def make_runner(plan: EpochPlan, key: int, restore: bool, shuffle: bool, shard: Shard = Shard(),
                timer: Optional[OpTimer] = None) -> TaskRunner:
    """The task runner of an epoch (the same kind in the trainer and in every worker process).

    Args:
        plan: The epoch plan.
        key: The epoch's key.
        restore: Restore the caller's random state after each task (the trainer).
        shuffle: Whether the epoch is shuffled (a dataset of whole batches redraws its maps for later passes).
        shard: This process's part of a dataset of whole batches in a data-parallel run.
        timer: Time every stage (benchmarks only).
    """
    stages = Stages(plan, timer)
    kind = runner_kind(plan)
    if kind == "items":
        return ItemRunner(stages, key, restore, shuffle, shard)
    if kind == "whole":
        return WholeBatchRunner(stages, key, restore)
    return TaskRunner(stages, key, restore)


def worker_runner(planner: Any, spec: EpochSpec) -> TaskRunner:
    """The epoch's task runner in a worker: the trainer's plan rebuilt by this worker's planner, the dataset's
    per-epoch index maps redrawn from the trainer's seed (`spec.reset_seed`), the same kind of runner."""
    plan = planner.plan(spec.mode, spec.epoch, spec.ds_id, spec.output_keys)
    if spec.member is not None:  # a member of an InterleaveDataset (whose incomplete batches are dropped)
        plan = plan.sub_plans[spec.member]
        plan.drop_last = True
    plan.state["warmup"] = spec.warmup
    if spec.reset_seed is not None:
        reset_dataset(plan.dataset, spec.shuffle, spec.reset_seed)
    return make_runner(plan, spec.key, restore=False, shuffle=spec.shuffle, shard=spec.shard)
