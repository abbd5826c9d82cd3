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

`task_stream` is the one source of an epoch's tasks, for one process (the identity shard) or this process's part of
every global batch in a data-parallel run; `fe_core.pipeline.runners` computes them and `fe_core.pipeline.assemble`
turns their results into batches.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterator, Optional, Sequence, Tuple

import numpy as np

from fe_core.distributed.sharding import check_batch_size, global_batches, rank_span
from fe_core.pipeline.messages import EpochDraws, Shard, TaskResult

__all__ = ["KEPT", "REPLACED", "REMOVED", "task_seed", "SeededRandom", "TaskStream", "EpochTasks", "task_stream",
           "check_epoch", "reset_dataset", "forget_cached_normal", "draws_random", "UNBATCHED_TASK", "BATCH_SALT",
           "RESET_SALT", "RANK_SALT", "GENERATOR_SALT"]

KEPT, REPLACED, REMOVED = 0, 1, 2  # what happened to each position of a task
UNBATCHED_TASK = 16  # positions per task when nothing is batched
BATCH_SALT = 1  # the salts of `task_seed`: a batch's ops, a pass's index maps, a rank's part of a global batch,
RESET_SALT = 2  # one draw of a GeneratorDataset's generator
RANK_SALT = 3
GENERATOR_SALT = 4


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


def check_epoch(results: Iterator[Tuple[Any, TaskResult]], key: int, plan: Any
                ) -> Generator[Tuple[Any, TaskResult], None, None]:
    """Pass on `(task, result)` pairs, checking that each result belongs to the epoch of `key` (every result carries
    its epoch's key): a result left over from an abandoned epoch is never assembled into another epoch's batches."""
    try:
        for task, result in results:
            if result.key != key:
                raise RuntimeError(f"A Pipeline task result of another epoch reached {plan.where()}; refusing to use "
                                   f"it (a loader abandoned mid-epoch should have been closed first)")
            yield task, result
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




@dataclass(frozen=True)
class EpochTasks:
    """An epoch's tasks as `task_stream` gives them.

    Attributes:
        tasks: `(global stream position, dataset indices)` per task, in order, endless (tasks past the epoch's end are
            only computed when asked for).
        limit: The stream position where the epoch ends when nothing is filtered out (executors prefetch up to it).
        count: The batches a data-parallel epoch yields (one per task), or None where the assembler decides.
    """
    tasks: Iterator[Tuple[int, np.ndarray]]
    limit: int
    count: Optional[int]


def task_stream(plan: Any, draws: EpochDraws, shard: Shard, shuffle: bool, steps_per_epoch: Optional[int]
                ) -> EpochTasks:
    """The epoch's tasks, for one process (the identity shard) or for this process's part of every global batch.

    A dataset of whole batches gives one item per task (a data-parallel run splits each item in its runner). Otherwise
    one process gets consecutive positions of the stream, one batch's worth per task (the last task of a one-pass
    epoch cut at its end, then on into later passes for refills); several processes cut the order into global
    batches (`fe_core.distributed.sharding`) and each takes its contiguous part of every one, its tasks' positions
    being those of its part in the global stream, then endless empty tasks past the end.

    Args:
        plan: The epoch plan.
        draws: The epoch's draws (order and key).
        shard: This process's part of each global batch.
        shuffle: Whether later passes are shuffled.
        steps_per_epoch: Batches per epoch, or None for one pass.
    """
    size = len(plan.dataset)
    continuous = getattr(plan.dataset, "fe_continuous_stream", False)
    if getattr(plan.dataset, "fe_batched", False):
        limit = size if steps_per_epoch is None else steps_per_epoch
        return EpochTasks(((position, np.array([position % size])) for position in itertools.count()), limit, limit)
    if shard.whole:
        task_size = plan.batch_size or UNBATCHED_TASK
        stream = TaskStream(size, draws.first_order, shuffle, draws.key, task_size, one_pass=steps_per_epoch is None,
                            continuous=continuous)
        limit = size if steps_per_epoch is None else steps_per_epoch * task_size
        return EpochTasks(iter(stream), limit, None)
    batch_size = plan.batch_size or shard.world
    if steps_per_epoch is None:
        order = draws.first_order if draws.first_order is not None else np.arange(size)
        cut = global_batches(order, batch_size, plan.drop_last, shard.world, plan.where())
        starts = np.concatenate([[0], np.cumsum([len(batch) for batch in cut])]).tolist()
        global_tasks = list(zip(starts, cut))
    else:
        check_batch_size(batch_size, shard.world, plan.where())
        endless = iter(TaskStream(size, draws.first_order, shuffle, draws.key, batch_size, one_pass=False,
                                  continuous=continuous))  # the global stream is one process's
        global_tasks = [next(endless) for _ in range(steps_per_epoch)]
    limit = global_tasks[-1][0] + len(global_tasks[-1][1]) if global_tasks else 0

    def parts() -> Iterator[Tuple[int, np.ndarray]]:
        for start, indices in global_tasks:
            first, stop = rank_span(len(indices), shard.world, shard.rank)
            yield start + first, indices[first:stop]
        for position in itertools.count(limit):
            yield position, np.zeros((0,), dtype=np.int64)

    return EpochTasks(parts(), limit, len(global_tasks))
