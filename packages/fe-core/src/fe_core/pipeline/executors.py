"""Executors: where an epoch's tasks run. One decision from the plan (`choose_executor`), then an object whose
`run(tasks, receiver)` yields `(task, result)` pairs in task order:

- `InProcess`: the trainer's own runner, task after task;
- `Feed`: the same, with a GeneratorDataset's samples drawn ahead in its feed process (`fe_core.pipeline._feed`);
- `Pool`: the Pipeline's worker processes (`fe_core.pipeline._workers.WorkerPool`), results checked to belong to
  this epoch; an epoch the pool stops serving (another iteration took the workers, or they closed) goes on here.

The decision never depends on whether a pool exists or has started: starting the pool is the next step
(`WorkerPool.start`), which may still decline (no CPUs to spare, datasets that spawned workers cannot receive), and
then the epoch runs in this process.
"""
from __future__ import annotations

import collections
import itertools
from typing import Any, Callable, Deque, Iterator, Protocol, Tuple

import numpy as np

from fe_core.dataset.generator_dataset import GeneratorDataset
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.messages import EpochSpec, Task, TaskResult
from fe_core.pipeline.runners import runner_kind
from fe_core.pipeline._sample_epoch import check_epoch
from fe_core.pipeline.sizing import min_worker_samples, start_method

__all__ = ["choose_executor", "batch_vectorised", "holds_generator", "InProcess", "Feed", "Pool"]

Pairs = Iterator[Tuple[Task, TaskResult]]
Tasks = Iterator[Tuple[int, np.ndarray]]


class Receiver(Protocol):
    """Who consumes an executor's results (the epoch's assembler): executors read `wants_batches` as they send each
    task (False once the assembler is out of step with the tasks and needs their samples)."""

    wants_batches: bool


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


def holds_generator(dataset: Any) -> bool:
    """Whether `dataset` holds a GeneratorDataset among its members (ExtendDataset, BatchDataset, CombinedDataset...,
    also nested, or behind the Pipeline's own wrapper); a generator has one order, which forked workers would each
    repeat from their own copy."""
    pending, seen = [dataset], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current is not dataset and isinstance(current, GeneratorDataset):
            return True
        members = getattr(current, "fe_member_datasets", None)
        if callable(members):
            pending.extend(members())
        if getattr(current, "fe_wrapper", False):
            pending.append(current.dataset)
    return False


def choose_executor(plan: EpochPlan, estimated_samples: int, in_process: bool) -> Tuple[str, str]:
    """Where an epoch's tasks run ('here', 'pool' or 'feed') and why, from the plan alone: per-sample work (or a
    batch op that works item by item, as ReadImage decoding file after file) of an epoch large enough goes to the
    worker processes; vectorised whole batches stay here; a GeneratorDataset's generator runs ahead in a feed process.

    Args:
        plan: The epoch plan.
        estimated_samples: The samples this process computes in the epoch.
        in_process: Everything must run in this process (num_process=0, a timed benchmark, a few batches).
    """
    if in_process:
        return "here", "this loader runs in this process (num_process=0, get_loader, get_results or a benchmark)"
    if estimated_samples < min_worker_samples():
        return "here", "the epoch is too small for worker processes"
    if isinstance(plan.dataset, GeneratorDataset):
        if start_method() != "fork":
            return "here", "a GeneratorDataset whose generator cannot be forked"
        return "feed", "a GeneratorDataset: its generator runs ahead in one worker process"
    if holds_generator(plan.dataset):
        return "here", "a dataset holding a GeneratorDataset: each worker would draw its own copy of the generator"
    if runner_kind(plan) == "whole" and all(batch_vectorised(op) for op in plan.batch_ops):
        return "here", "whole batches with vectorised batch ops"
    return "pool", "per-sample work"


class InProcess:
    """Runs every task in this process with the trainer's runner (built on first use).

    Args:
        runner: The trainer's task runner.
    """

    def __init__(self, runner: Callable[[], Any]) -> None:
        self.runner = runner

    def run(self, tasks: Tasks, receiver: Receiver) -> Pairs:
        """`(task, result)` for each task, computed when asked for."""
        run = None
        for start, indices in tasks:
            task = Task(start, indices, receiver.wants_batches)
            if run is None:
                run = self.runner().run  # built on the first task (the feed's sample source already set)
            yield task, run(task)


class Feed(InProcess):
    """Runs every task in this process, its samples drawn from a GeneratorDataset's feed process.

    Args:
        runner: The trainer's task runner.
        feed: The dataset's `GeneratorFeed`.
        limit: The stream position where the epoch ends when nothing is filtered out (samples are asked for ahead up
            to it).
    """

    def __init__(self, runner: Callable[[], Any], feed: Any, limit: int) -> None:
        super().__init__(runner)
        self.feed = feed
        self.limit = limit

    def run(self, tasks: Tasks, receiver: Receiver) -> Pairs:
        """`(task, result)` for each task, the samples of up to the feed's window of positions asked for ahead (one
        seed per position, as the trainer seeds each draw it makes itself)."""
        runner = self.runner()
        feed = self.feed
        token = feed.open()
        runner.getitem = lambda index: feed.next(token)
        runner.seed_draws = False  # the feed seeds each draw
        pending: Deque[Tuple[int, Any]] = collections.deque()
        ahead = end = 0
        tasks = iter(tasks)
        try:
            while True:
                # ahead only up to the epoch's end when nothing is filtered out: a task past it may never be needed,
                # and the generator would go on past the samples the trainer's own draws would have taken
                while not pending or (ahead < feed.window and end < self.limit):
                    item = next(tasks, None)
                    if item is None:
                        break
                    start, indices = item
                    feed.request(token, [runner.generator_seed(start + offset) for offset in range(len(indices))])
                    pending.append(item)
                    ahead += len(indices)
                    end = start + len(indices)
                if not pending:
                    return
                start, indices = pending.popleft()
                ahead -= len(indices)
                task = Task(start, indices, receiver.wants_batches)
                yield task, runner.run(task)
        finally:
            feed.release(token)


class Pool:
    """Runs the tasks in the Pipeline's worker processes (a started `WorkerPool`).

    The pool serves one epoch at a time: a second iteration started while this one is still read (zip(loader,
    loader), an iterator held across a new `for`) takes the workers, and the pool's epoch here ends early. The task
    stream never ends by itself, so an end means exactly that (or the pool closed): the tasks taken but not yet
    answered, then the rest of the stream, run in this process instead (the same results, bitwise, by design).

    Args:
        pool: The started worker pool.
        spec: What the workers need to build the epoch's runner.
        plan: The epoch plan (for messages).
        limit: The stream position up to which tasks are prefetched.
        runner: The trainer's task runner, for tasks left when the pool stops serving this epoch.
    """

    def __init__(self, pool: Any, spec: EpochSpec, plan: EpochPlan, limit: int, runner: Callable[[], Any]) -> None:
        self.pool, self.spec, self.plan, self.limit, self.runner = pool, spec, plan, limit, runner

    def run(self, tasks: Tasks, receiver: Receiver) -> Pairs:
        taken: Deque[Tuple[int, np.ndarray]] = collections.deque()  # tasks handed to the pool, not yet answered

        def recorded() -> Tasks:
            for task in tasks:
                taken.append(task)
                yield task

        results = check_epoch(self.pool.run_epoch(self.spec, recorded(), receiver, self.limit, self.plan),
                              self.spec.key, self.plan)  # results computed elsewhere carry their epoch
        try:
            for pair in results:
                taken.popleft()  # answers come in task order
                yield pair
        finally:
            results.close()
        yield from InProcess(self.runner).run(itertools.chain(list(taken), tasks), receiver)
