"""Executors: where an epoch's tasks run. One decision from the plan (`choose_executor`), then an object whose
`run(tasks, receiver)` yields `(task, result)` pairs in task order:

- `InProcess`: the trainer's own runner, task after task;
- `Feed`: the same, with a GeneratorDataset's samples drawn ahead in its feed process (`fe_core.pipeline._feed`);
- `Pool`: the Pipeline's worker processes (`fe_core.pipeline._workers.WorkerPool`), results checked to belong to
  this epoch.

The decision never depends on whether a pool exists or has started: starting the pool is the next step
(`WorkerPool.start`), which may still decline (no CPUs to spare, datasets that spawned workers cannot receive), and
then the epoch runs in this process.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Protocol, Tuple

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

__all__ = ["choose_executor", "batch_vectorised", "InProcess", "Feed", "Pool"]

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
    """

    def __init__(self, runner: Callable[[], Any], feed: Any) -> None:
        super().__init__(runner)
        self.feed = feed

    def run(self, tasks: Tasks, receiver: Receiver) -> Pairs:
        self.runner().getitem = self.feed.next
        return super().run(tasks, receiver)


class Pool:
    """Runs the tasks in the Pipeline's worker processes (a started `WorkerPool`).

    Args:
        pool: The started worker pool.
        spec: What the workers need to build the epoch's runner.
        plan: The epoch plan (for messages).
        limit: The stream position up to which tasks are prefetched.
    """

    def __init__(self, pool: Any, spec: EpochSpec, plan: EpochPlan, limit: int) -> None:
        self.pool, self.spec, self.plan, self.limit = pool, spec, plan, limit

    def run(self, tasks: Tasks, receiver: Receiver) -> Pairs:
        results = self.pool.run_epoch(self.spec, tasks, receiver, self.limit, self.plan)
        return check_epoch(results, self.spec.key, self.plan)  # results computed elsewhere carry their epoch
