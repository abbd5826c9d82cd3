"""The per-sample path of one epoch, split into tasks that any process can compute with the same result.

An epoch's sample order is an endless stream of dataset indices (one permutation, or arange, after another). The
stream is cut into *tasks* of consecutive positions: one batch's worth (`batch_size` positions; 16 when nothing is
batched), with the task that reaches the end of the data cut there when the epoch is one pass. A task fetches its
samples, runs the per-sample ops on them and, when every sample survived, collates them and runs the batch ops.

Randomness. Every random draw a task makes (numpy's global random state, which fe's albumentations ops draw from too,
and Python's `random`) comes from generators seeded with `task_seed(key, first position)`: `key` is one draw from
numpy's global random state when the epoch starts (after the shuffle permutation, drawn as before), so under
`enable_deterministic(seed)` a task's augmentations are a function of (run seed, epoch, the task's position in the
epoch) and never of the process that happened to compute it. Batch ops are seeded the same way from the batch's first
position. In the trainer the seeded generators are swapped in for the task and the trainer's own random state is put
back afterwards, so nothing else the trainer draws depends on the number of workers.

The trainer assembles batches from task results in stream order (`assemble`), applying exactly the rules of the
in-process loop: samples an op filters out are skipped (with replacement the epoch goes on into the next pass),
batches are `batch_size` kept samples in order, a batch op may filter a whole batch. When a task's samples were all
kept and the task starts a batch, the task's own collated batch is used; otherwise its kept samples are collated in
the trainer.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, Generator, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.op.numpyop.batch import collate_samples
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.pipeline.op_runner import add_note, run_steps
from fe_core.warning_lines import fe_warn

__all__ = ["KEPT", "REPLACED", "REMOVED", "task_seed", "SeededRandom", "TaskStream", "TaskRunner", "WholeBatchRunner",
           "ItemRunner", "assemble", "assemble_items", "assemble_fixed", "check_epoch", "reset_dataset",
           "UNBATCHED_TASK"]

KEPT, REPLACED, REMOVED = 0, 1, 2  # what happened to each position of a task
UNBATCHED_TASK = 16  # positions per task when nothing is batched
_BATCH_SALT = 1
_RESET_SALT = 2
_RANK_SALT = 3


_MASK64 = (1 << 64) - 1


def _mix(value: int) -> int:
    """splitmix64's finalizer: a 64-bit integer hash whose outputs are well spread for consecutive inputs."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def task_seed(key: int, position: int, salt: int = 0) -> int:
    """The 32-bit seed of the task (salt 0), batch (salt 1) or index-map pass (salt 2) that starts at stream
    `position` of epoch `key` (a few integer operations: it is computed for every batch)."""
    return _mix(_mix(_mix(key) ^ position) ^ salt) & 0xFFFFFFFF


# Ops known to draw no random number (exactly these classes; a subclass may draw): a batch whose batch ops are all
# among them needs no seeded random state, seeded or not its result is the same.
_PURE_OPS = {(f"fe_core.op.numpyop.univariate.{module}", name) for module, name in (
    ("minmax", "Minmax"), ("normalize", "Normalize"), ("expand_dims", "ExpandDims"),
    ("channel_transpose", "ChannelTranspose"), ("reshape", "Reshape"), ("to_float", "ToFloat"),
    ("to_array", "ToArray"), ("onehot", "Onehot"), ("binarize", "Binarize"), ("hadamard", "Hadamard"),
    ("read_image", "ReadImage"))} | {("fe_core.op.numpyop.delete", "Delete")}


def draws_random(ops: Sequence[Any]) -> bool:
    """Whether any of `ops` may draw random numbers (anything but the known pure built-in ops)."""
    return any((type(op).__module__, type(op).__name__) not in _PURE_OPS for op in ops)


class SeededRandom:
    """Run a function with numpy's global random state and Python's `random` seeded, optionally restoring both.

    numpy's global state is switched to a private MT19937 bit generator (seeded as `np.random.seed` would) and back,
    which costs microseconds where saving and restoring numpy's state costs hundreds.

    Args:
        restore: Put the caller's random state back afterwards (the trainer); workers need not.
    """

    def __init__(self, restore: bool) -> None:
        self.restore = restore
        self.bit_generator = np.random.MT19937()
        self.seeder = np.random.RandomState(self.bit_generator)

    def call(self, seed: int, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` with the random state seeded by `seed`."""
        self.seeder.seed(seed)
        if not self.restore:
            np.random.set_bit_generator(self.bit_generator)
            random.seed(seed)
            return function(*args)
        trainer_bits = np.random.get_bit_generator()
        python_state = random.getstate()
        np.random.set_bit_generator(self.bit_generator)
        random.seed(seed)
        try:
            return function(*args)
        finally:
            np.random.set_bit_generator(trainer_bits)
            random.setstate(python_state)


def forget_cached_normal() -> None:
    """Drop numpy's cached second normal value, as swapping the bit generator does (keeps 0 and N workers equal)."""
    np.random.set_bit_generator(np.random.get_bit_generator())


def reset_dataset(dataset: Any, shuffle: bool, seed: int) -> None:
    """Let `dataset` redraw its per-epoch index maps (`fe_reset_ds`) as a function of `seed` alone: numpy's global
    random state and Python's `random` are seeded while it runs and the caller's are put back, so the trainer and
    every worker process draw the same maps from the same seed (user datasets need no `seed` argument).

    The dataset remembers the last (shuffle, seed) it redrew from, and the same draw is not applied twice: a worker's
    copy of the dataset made after the trainer drew the epoch's maps already holds them, and a user's `fe_reset_ds`
    that builds on its previous maps (an in-place reshuffle) would otherwise move on to other ones."""
    reset = getattr(dataset, "fe_reset_ds", None)
    if not callable(reset):
        return
    drawn = (bool(shuffle), int(seed))
    if getattr(dataset, "_fe_reset_drawn", None) == drawn:
        return
    SeededRandom(restore=True).call(seed, reset, shuffle)
    try:
        dataset._fe_reset_drawn = drawn  # pylint: disable=protected-access
    except (AttributeError, TypeError):  # a dataset that takes no attributes: redrawn every time
        pass


def check_epoch(results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]], key: int, plan: Any
                ) -> Generator[Tuple[int, np.ndarray, Tuple[Any, ...]], None, None]:
    """Pass on task results, checking that each belongs to the epoch of `key` (every result carries its epoch's key):
    a result left over from an abandoned epoch is never assembled into another epoch's batches."""
    try:
        for start, indices, result in results:
            if result[-1] != key:
                raise RuntimeError(f"A Pipeline task result of another epoch reached {plan.where()}; refusing to use "
                                   f"it (a loader abandoned mid-epoch should have been closed first)")
            yield start, indices, result
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


class TaskStream:
    """The epoch's sample order, cut into tasks `(first position, dataset indices)`.

    Args:
        size: Samples in the dataset.
        first_order: The first pass's order (the shuffle permutation), or None for arange.
        shuffle: Whether later passes are shuffled (from generators seeded by `key` and the pass).
        key: The epoch's random key.
        task_size: Positions per task.
        one_pass: Cut the task that reaches the end of the first pass there.
        continuous: Positions past the first pass are the dataset's own indices past its length (a dataset whose
            items go on, `fe_continuous_stream`: ExtendDataset), not another pass.
    """

    def __init__(self, size: int, first_order: Optional[np.ndarray], shuffle: bool, key: int, task_size: int,
                 one_pass: bool, continuous: bool = False) -> None:
        self.size, self.shuffle, self.key, self.task_size, self.one_pass = size, shuffle, key, task_size, one_pass
        self.continuous = continuous
        self.orders = {0: first_order if first_order is not None else np.arange(size)}

    def _order(self, lap: int) -> np.ndarray:
        order = self.orders.get(lap)
        if order is None and self.continuous:
            order = np.arange(lap * self.size, (lap + 1) * self.size)
            self.orders = {lap: order}
        elif order is None:
            order = (np.random.default_rng([self.key, lap]).permutation(self.size) if self.shuffle
                     else np.arange(self.size))
            self.orders = {lap: order}  # passes are visited in order: keep one
        return order

    def __iter__(self) -> Iterator[Tuple[int, np.ndarray]]:
        start, size, task_size = 0, self.size, self.task_size
        if self.one_pass:  # the usual epoch: slices of the first pass's order, the last one cut at its end
            order = self.orders[0]
            while start < size:
                yield start, order[start:start + task_size]
                start += task_size
            start = size  # then into the next passes (tasks past a one-pass epoch's end)
        while True:
            stop = start + task_size
            if self.one_pass and start < size < stop:
                stop = size
            parts = []
            position = start
            while position < stop:
                lap, offset = divmod(position, size)
                take = min(stop - position, size - offset)
                parts.append(self._order(lap)[offset:offset + take])
                position += take
            yield start, parts[0] if len(parts) == 1 else np.concatenate(parts)
            start = stop


class TaskRunner:
    """Computes tasks for one epoch plan: fetch, per-sample ops, and (when all survive) collation and batch ops.

    Args:
        loader: The `EpochLoader` whose plan, compiled ops and collation to use (in a worker, one built there).
        key: The epoch's random key.
        restore: Restore the caller's random state after each task (True in the trainer).
    """

    def __init__(self, loader: Any, key: int, restore: bool) -> None:
        plan = loader.plan
        self.plan = plan
        self.key = key
        self.random = SeededRandom(restore)
        dataset = plan.dataset
        self.getitem = loader._wrap("<Fetch sample>", "sample", dataset.__getitem__)
        self.copy_sample = not isinstance(dataset, NumpyDataset)  # NumpyDataset returns a new dict per call already
        self.sample_steps = loader._compile(plan.sample_ops, batched=False)
        self.batch_steps = loader._compile(plan.batch_ops, batched=True)
        self.collate = loader._collator()
        self.select = loader._select
        self.state = plan.state
        self.unbatched = plan.batch_size is None
        self.boundary = plan.boundary_keys
        self.batch_random = draws_random(plan.batch_ops)

    def _samples(self, indices: np.ndarray) -> Tuple[List[int], List[Dict[str, Any]], List[int]]:
        outcomes: List[int] = []
        kept: List[Dict[str, Any]] = []
        kept_indices: List[int] = []
        getitem, steps, state, copy_sample = self.getitem, self.sample_steps, self.state, self.copy_sample
        for index in indices.tolist():
            try:
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

    def run(self, start: int, indices: np.ndarray, want_batch: bool) -> Tuple[Any, ...]:
        """Compute the task at stream position `start`.

        Returns:
            ("batch", count, batch or the FilteredData of a batch op that filtered it, epoch key) when `want_batch`
            and every sample was kept,
            else ("raw", outcomes, kept samples, their dataset indices, epoch key).
        """
        outcomes, kept, kept_indices = self.random.call(task_seed(self.key, start), self._samples, indices)
        if want_batch and not self.unbatched and len(kept) == len(outcomes):
            return ("batch", len(outcomes), self.finish(kept, kept_indices, start), self.key)
        if self.boundary is not None:
            kept = [{key: value for key, value in sample.items() if key in self.boundary} for sample in kept]
        return ("raw", outcomes, kept, kept_indices, self.key)

    def finish(self, samples: List[Dict[str, Any]], indices: List[int], first: int) -> Any:
        """Collate kept samples (the first at stream position `first`) and run the batch ops on them.

        Returns:
            The batch (only the keys asked for), or the FilteredData of a batch op that filtered it out.
        """
        if self.unbatched and not self.batch_steps:
            return self.select(samples[0])
        if not self.batch_random:  # no batch op draws: seeding would change nothing
            return self._finish(samples, indices)
        return self.random.call(task_seed(self.key, first, _BATCH_SALT), self._finish, samples, indices)


class WholeBatchRunner(TaskRunner):
    """Tasks of an epoch with no per-sample op, plain stacking and a dataset with `get_batch`: one `get_batch` call
    per task, then the batch ops seeded as a per-sample task's are (so the batch is the one the per-sample path
    would make from the same positions)."""

    def __init__(self, loader: Any, key: int, restore: bool) -> None:
        super().__init__(loader, key, restore)
        load_keys = None if self.plan.load_keys is None else sorted(self.plan.load_keys)
        self.fetch = loader._batch_fetcher(load_keys)  # pylint: disable=protected-access

    def _whole(self, batch: Dict[str, Any]) -> Any:
        filtered = run_steps(batch, self.batch_steps, self.state)
        return filtered if filtered is not None else self.select(batch)

    def run(self, start: int, indices: np.ndarray, want_batch: bool) -> Tuple[Any, ...]:
        if not want_batch:  # out of step with the batches (a batch op filtered one): samples one by one
            return super().run(start, indices, False)
        batch = self.fetch(indices)
        if self.batch_steps and self.batch_random:
            result = self.random.call(task_seed(self.key, start, _BATCH_SALT), self._whole, batch)
        elif self.batch_steps:
            result = self._whole(batch)
        else:
            result = self.select(batch)
        return ("batch", len(indices), result, self.key)


class ItemRunner(TaskRunner):
    """Tasks of a dataset whose items are lists of samples (BatchDataset): task `p` is item `p % len(dataset)` of
    pass `p // len(dataset)`; each pass after the first redraws the dataset's index maps from a seed derived from the
    epoch's key. The item's per-sample ops run seeded by the task's position; a sample filtered out removes the whole
    batch (batches keep their sizes).

    With `shard` (world size, rank: a data-parallel run) an item is a global batch and this process takes its part of
    it: a sample filtered out only leaves the part smaller, a part left empty is an error; the ops' seeds also
    derive from the rank (the ranks' parts are different samples)."""

    def __init__(self, loader: Any, key: int, restore: bool, shard: Optional[Tuple[int, int]] = None) -> None:
        super().__init__(loader, key, restore)
        self.shard = shard
        self.sample_key = key if shard is None else task_seed(key, shard[1], _RANK_SALT)
        self.unbatched = False  # every item is a batch
        self.dataset = self.plan.dataset
        self.shuffle = loader.shuffle
        self.lap = 0
        batch_op = self.plan.batch_op
        boundary = self.boundary

        def collate(samples: List[Dict[str, Any]], indices: List[int]) -> Dict[str, Any]:
            if boundary is not None:
                samples = [{key: value for key, value in sample.items() if key in boundary} for sample in samples]
            return batch_op.collate(samples) if batch_op is not None else collate_samples(samples)

        self.collate = loader._wrap("<Collate>", "batch", collate)  # pylint: disable=protected-access
        self.getitem = loader._wrap("<Fetch batch>", "batch", self.dataset.__getitem__)  # pylint: disable=W0212

    def _item(self, position: int) -> Any:
        samples = self.getitem(position)
        if self.shard is not None:
            world, rank = self.shard
            if len(samples) < world:
                raise ValueError(f"A batch of {len(samples)} samples from the dataset of whole batches in "
                                 f"{self.plan.where()} cannot be split across {world} processes")
            base, extra = divmod(len(samples), world)
            first = rank * base + min(rank, extra)
            samples = samples[first:first + base + (1 if rank < extra else 0)]
        kept = []
        for sample in samples:
            sample = dict(sample)
            result = run_steps(sample, self.sample_steps, self.state) if self.sample_steps else None
            if result is not None:
                if self.shard is not None:  # only this process's part shrinks
                    continue
                return result
            kept.append(sample)
        if self.shard is not None and not kept:
            raise ValueError(f"A whole batch was filtered out in {self.plan.where()}; in a run of {self.shard[0]} "
                             f"processes every process must run every step")
        return kept

    def run(self, start: int, indices: np.ndarray, want_batch: bool) -> Tuple[Any, ...]:
        size = len(self.dataset)
        lap, position = divmod(start, size)
        inner = getattr(self.dataset, "dataset", None)
        if getattr(self.dataset, "fe_continuous_stream", False) and inner is not None:  # items go on past its length
            position = start  # a new pass over the wrapped dataset of whole batches redraws its pairings
            lap = start // len(inner)
            if lap != self.lap:
                reset_dataset(inner, self.shuffle, task_seed(self.key, lap, _RESET_SALT))
                self.lap = lap
        elif lap != self.lap:
            reset_dataset(self.dataset, self.shuffle, task_seed(self.key, lap, _RESET_SALT))
            self.lap = lap
        kept = self.random.call(task_seed(self.sample_key, start), self._item, position)
        if isinstance(kept, FilteredData):
            return ("batch", 1, kept, self.key)
        if not kept:
            return ("batch", 1, FilteredData(replacement=True), self.key)
        return ("batch", 1, self.random.call(task_seed(self.sample_key, start, _BATCH_SALT), self._finish, kept, []),
                self.key)


def assemble_items(plan: Any, results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]],
                   steps_per_epoch: Optional[int]) -> Iterator[Dict[str, Any]]:
    """The batches of a dataset of whole batches, from its tasks in order: an epoch is `len(dataset)` batches, or
    `steps_per_epoch`, counting those removed without replacement; a batch removed with replacement is replaced by
    the next item (into the next pass)."""
    size = len(plan.dataset)
    target = size if steps_per_epoch is None else steps_per_epoch
    counted = skipped = 0
    if target <= 0:
        return
    for _, _, result in results:
        batch = result[2]
        if isinstance(batch, FilteredData):
            if batch.replacement:
                skipped += 1
                if skipped == filter_patience(size) + 1:
                    still_drawing(plan, skipped)
                continue
            counted += 1
        else:
            skipped = 0
            forget_cached_normal()
            yield batch
            counted += 1
        if counted >= target:
            return


def assemble_fixed(plan: Any, results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]],
                   runner: Callable[[], TaskRunner], items: bool) -> Iterator[Any]:
    """One pass of fixed batches, a batch per task (an InterleaveDataset's member: FastEstimator's interleaved steps
    take fixed positions of each member): a task with a sample filtered out yields the filter's `FilteredData` in its
    batch's place instead of being refilled (the interleaving drops steps for it); an incomplete last batch is dropped.

    Args:
        plan: The member's epoch plan.
        results: Its task results in order.
        runner: The trainer's TaskRunner (for collating raw results).
        items: Whether each task is an item of a dataset of whole batches.
    """
    size, batch_size = len(plan.dataset), plan.batch_size or 1
    for start, _, result in results:
        if start >= size:
            return
        if result[0] == "batch":
            if not items and result[1] < batch_size:
                return
            batch = result[2]
        elif len(result[2]) == len(result[1]):
            if len(result[1]) < batch_size:
                return
            batch = runner().finish(result[2], result[3], start)
        else:
            batch = FilteredData(replacement=REMOVED not in result[1])
        if not isinstance(batch, FilteredData):
            forget_cached_normal()
        yield batch


def filter_patience(size: int) -> int:
    """How many draws in a row may be filtered out (with replacement) before the epoch is refused: FastEstimator keeps
    drawing replacements, so a filter that rejects most draws (a random one, or one a new pairing of a
    BatchDataset passes) must get them; only a filter that rejects 20 passes over the data, and at least 1000 draws,
    in a row is taken to reject everything (an error rather than an endless loop)."""
    return max(20 * size, 1000)


def still_drawing(plan: Any, count: int) -> None:
    """Warn (once per run of rejections) that whole batches keep being filtered out with replacement: FastEstimator
    keeps drawing replacements for them (a filter on whole batches may pass rarely: a new pairing of a BatchDataset, a
    random filter), so the epoch goes on rather than failing."""
    fe_warn(f"The Pipeline filtered out {count} batches in a row in {plan.where()} (RemoveIf or an op returning "
            f"FilteredData with replacement); still drawing replacements, as FastEstimator does")


def _too_many(plan: Any, what: str, count: int) -> ValueError:
    return ValueError(f"The Pipeline filtered out {count} {what} in a row in {plan.where()} (RemoveIf or an op "
                      f"returning FilteredData); refusing to loop forever")


def assemble(plan: Any, results: Iterator[Tuple[int, np.ndarray, Tuple[Any, ...]]],
             runner: Callable[[], TaskRunner], redo: Callable[[int, np.ndarray], Tuple[Any, ...]],
             steps_per_epoch: Optional[int], aligned: List[bool]) -> Iterator[Dict[str, Any]]:
    """Turn task results, in stream order, into the epoch's batches, exactly as the in-process loop would.

    Args:
        plan: The epoch plan.
        results: `(first position, dataset indices, result)` of each task, in order (see `TaskRunner.run`).
        runner: The trainer's TaskRunner (built on first use), for collating samples and redoing tasks.
        redo: Recompute the task at a position as raw samples (a task computed as a batch arrived out of step).
        steps_per_epoch: The number of batches to yield, or None for one pass.
        aligned: A one-item list the caller's dispatcher reads: whether task results may still be whole batches.
    """
    size = len(plan.dataset)
    batch_size = plan.batch_size or 1
    drop_last = plan.drop_last
    pending: List[Dict[str, Any]] = []
    pending_indices: List[int] = []
    first = 0
    consumed = kept = removed_for_good = missed = filtered_batches = 0
    # With steps_per_epoch, as in FastEstimator, the epoch is steps_per_epoch * batch_size draws: samples removed
    # without replacement count among them (the epoch gets shorter, its last batch maybe smaller); `drawn` counts the
    # samples yielded and those removed.
    # A batch a batch op filters out with replacement is drawn again (its samples do not count: one pass goes on into
    # the next); without replacement its samples count.
    budget = None if steps_per_epoch is None else steps_per_epoch * batch_size
    drawn = 0

    def settle(batch: Any, count: int) -> Generator[Dict[str, Any], None, bool]:
        """Yield a batch of `count` samples, or account for its removal; returns whether the draws are used up."""
        nonlocal kept, drawn, filtered_batches
        if isinstance(batch, FilteredData):
            if not batch.replacement:  # its samples count among the draws
                drawn += count
                return budget is not None and drawn >= budget
            kept -= count  # drawn again
            filtered_batches += 1
            if filtered_batches * batch_size > filter_patience(size) >= (filtered_batches - 1) * batch_size:
                still_drawing(plan, filtered_batches)
            return False
        filtered_batches = 0
        forget_cached_normal()
        yield batch
        drawn += count
        return budget is not None and drawn >= budget

    def defers_pending(count: int) -> bool:
        """FastEstimator's order: a full batch drawn while kept samples of a partial one wait goes first (the partial
        batch waits behind it) unless the epoch's end is near, where they are combined."""
        if not pending or count != batch_size:
            return False
        if budget is not None:
            return drawn + batch_size + len(pending) < budget
        target = size - size % batch_size if drop_last else size
        return drawn + removed_for_good + batch_size + len(pending) < target

    for start, indices, result in results:
        if result[0] == "batch" and defers_pending(result[1]):
            consumed += result[1]
            kept += result[1]
            missed = 0
            if (yield from settle(result[2], result[1])):
                return
            continue
        if result[0] == "raw" and len(result[2]) == len(result[1]) and defers_pending(len(result[1])):
            consumed += len(result[1])
            kept += len(result[1])
            missed = 0
            if (yield from settle(runner().finish(result[2], result[3], start), len(result[1]))):
                return
            continue
        if result[0] == "batch":
            count = result[1]
            ends_epoch = (steps_per_epoch is None and consumed + count >= size
                          and kept + count >= size - removed_for_good)
            if pending or (count < batch_size and not ends_epoch) or (budget is not None and budget - drawn < count):
                aligned[0] = False  # out of step with the batches: use its samples
                result = redo(start, indices)
        if result[0] == "batch":
            count, batch = result[1], result[2]
            consumed += count
            kept += count
            missed = 0
            if count == batch_size or (steps_per_epoch is None and consumed >= size
                                       and kept >= size - removed_for_good):  # a whole batch, or the last one
                if count < batch_size and drop_last:
                    return
                if (yield from settle(batch, count)):
                    return
            if steps_per_epoch is None and consumed >= size and kept >= size - removed_for_good:
                return
            continue
        aligned[0] = False
        _, outcomes, samples, kept_indices = result[:4]
        sample_iter = iter(zip(samples, kept_indices))
        for offset, outcome in enumerate(outcomes):
            consumed += 1
            if outcome != KEPT:
                if consumed <= size and outcome == REMOVED:
                    removed_for_good += 1
                if budget is not None and outcome == REMOVED:
                    drawn += 1
                missed += 1
            else:
                missed = 0
                kept += 1
                sample, index = next(sample_iter)
                if not pending:
                    first = start + offset
                pending.append(sample)
                pending_indices.append(index)
            if budget is not None and pending and len(pending) < batch_size and drawn + len(pending) >= budget:
                if drop_last:  # the draws are used up and leave an incomplete last batch
                    return
                batch = runner().finish(pending, pending_indices, first)
                count, pending, pending_indices = len(pending), [], []
                if (yield from settle(batch, count)):
                    return
            elif pending and len(pending) == batch_size:
                batch = runner().finish(pending, pending_indices, first)
                pending, pending_indices = [], []
                if (yield from settle(batch, batch_size)):
                    return
            if budget is not None and not pending and drawn >= budget:
                return
            if steps_per_epoch is None and consumed >= size and kept >= size - removed_for_good:
                if pending and not drop_last:
                    batch = runner().finish(pending, pending_indices, first)
                    count, pending, pending_indices = len(pending), [], []
                    yield from settle(batch, count)
                    if isinstance(batch, FilteredData) and batch.replacement:  # its samples are drawn again
                        continue
                return
            if missed >= filter_patience(size):
                raise _too_many(plan, "samples", missed)

