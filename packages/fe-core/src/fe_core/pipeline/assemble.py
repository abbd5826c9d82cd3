"""Assemblers: turn an epoch's task results, in stream order, into its batches under the run's filtering rules.

One assembler per epoch, chosen from the plan (`make_assembler`):

- `SampleAssembler` (one process, per-sample or whole-batch tasks): exactly the rules of the in-process loop. Samples
  an op filters out are skipped (with replacement the epoch goes on into the next pass), batches are `batch_size` kept
  samples in order, a batch op may filter a whole batch. When a task's samples were all kept and the task starts a
  batch, the task's own batch is used; otherwise its kept samples are collated here. Once out of step with the task
  boundaries it asks for samples instead of batches (`wants_batches`, read by the executor as it sends each task).
- `ItemAssembler` (a dataset of whole batches): one batch per item; a batch removed with replacement is replaced by
  the next item.
- `FixedAssembler` (an InterleaveDataset's member in one process): one pass of fixed batches, a batch per task, a
  filtered one handed on as its `FilteredData` (the interleaving drops steps for it).
- `RankAssembler` (a data-parallel run): one batch per task (this process's part of a global batch); a part may
  shrink, an empty part or a batch op filtering a part is an error (the other processes would wait forever).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Generator, Iterator, List, Optional, Tuple

from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.warning_lines import fe_warn
from fe_core.pipeline.messages import BatchResult, SampleResult, Shard, Task, TaskResult
from fe_core.pipeline._sample_epoch import KEPT, REMOVED, forget_cached_normal

__all__ = ["SampleAssembler", "ItemAssembler", "RankAssembler", "FixedAssembler", "make_assembler", "filter_patience",
           "still_drawing"]

Results = Iterator[Tuple[Task, TaskResult]]


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


class RankAssembler:
    """This process's batches of a data-parallel epoch, one per task (its part of a global batch).

    Args:
        plan: The epoch plan.
        runner: The trainer's task runner (built on first use), to collate a part's kept samples.
        shard: This process's part.
        count: The batches of the epoch (the empty tasks past the end are never asked for).
    """

    wants_batches = True

    def __init__(self, plan: Any, runner: Callable[[], Any], shard: Shard, count: int) -> None:
        self.plan, self.runner, self.shard, self.count = plan, runner, shard, count

    def batches(self, results: Results) -> Iterator[Dict[str, Any]]:
        """The epoch's batches from its `(task, result)` pairs in order."""
        world, rank = self.shard.world, self.shard.rank
        for _ in range(self.count):
            task, result = next(results)
            if isinstance(result, BatchResult):
                batch = result.batch
            else:
                if not result.samples:
                    raise ValueError(f"Every sample of process {rank}'s batch in {self.plan.where()} was filtered "
                                     f"out; in a run of {world} processes each process needs a sample every step")
                batch = self.runner().finish(result.samples, result.indices, task.start)
            if isinstance(batch, FilteredData):
                raise ValueError(f"A batch op filtered out a whole batch in {self.plan.where()}; in a run of {world} "
                                 f"processes every process must run every step")
            yield batch


class ItemAssembler:
    """The batches of a dataset of whole batches: an epoch is `len(dataset)` batches, or `steps_per_epoch`, counting
    those removed without replacement; a batch removed with replacement is replaced by the next item (into the next
    pass).

    Args:
        plan: The epoch plan.
        steps_per_epoch: The batches to yield, or None for one pass.
    """

    wants_batches = True

    def __init__(self, plan: Any, steps_per_epoch: Optional[int]) -> None:
        self.plan = plan
        self.size = len(plan.dataset)
        self.target = self.size if steps_per_epoch is None else steps_per_epoch
        self.counted = self.skipped = 0

    def batches(self, results: Results) -> Iterator[Dict[str, Any]]:
        """The epoch's batches from its `(task, result)` pairs in order."""
        if self.target <= 0:
            return
        for _, result in results:
            batch = result.batch
            if isinstance(batch, FilteredData):
                if batch.replacement:
                    self.skipped += 1
                    if self.skipped == filter_patience(self.size) + 1:
                        still_drawing(self.plan, self.skipped)
                    continue
                self.counted += 1
            else:
                self.skipped = 0
                forget_cached_normal()
                yield batch
                self.counted += 1
            if self.counted >= self.target:
                return


class SampleAssembler:
    """One process's batches from its tasks' results in stream order, exactly as the in-process loop would make them.

    With steps_per_epoch, as in FastEstimator, the epoch is steps_per_epoch * batch_size draws: samples removed without
    replacement count among them (the epoch gets shorter, its last batch maybe smaller); `drawn` counts the samples
    yielded and those removed. A batch a batch op filters out with replacement is drawn again (its samples do not
    count: one pass goes on into the next); without replacement its samples count.

    Args:
        plan: The epoch plan.
        runner: The trainer's task runner (built on first use), for collating samples and redoing tasks.
        steps_per_epoch: The batches to yield, or None for one pass.

    Attributes:
        wants_batches: Whether task results may still be whole batches (False once out of step with the tasks);
            executors read it as they send each task.
    """

    def __init__(self, plan: Any, runner: Callable[[], Any], steps_per_epoch: Optional[int]) -> None:
        self.plan = plan
        self.runner = runner
        self.steps_per_epoch = steps_per_epoch
        self.size = len(plan.dataset)
        self.batch_size = plan.batch_size or 1
        self.drop_last = plan.drop_last
        self.budget = None if steps_per_epoch is None else steps_per_epoch * self.batch_size
        self.wants_batches = True
        self.pending: List[Dict[str, Any]] = []
        self.pending_indices: List[int] = []
        self.first = 0  # the stream position of the first pending sample
        self.consumed = 0  # stream positions seen
        self.kept = 0  # samples kept (less those of batches drawn again)
        self.removed_for_good = 0  # samples of the first pass removed without replacement
        self.missed = 0  # samples filtered out in a row
        self.filtered_batches = 0  # batches filtered out with replacement in a row
        self.drawn = 0  # samples yielded or removed without replacement (against the budget)

    def _one_pass_done(self) -> bool:
        return self.steps_per_epoch is None and self.consumed >= self.size and \
            self.kept >= self.size - self.removed_for_good

    def _settle(self, batch: Any, count: int) -> Generator[Dict[str, Any], None, bool]:
        """Yield a batch of `count` samples, or account for its removal; returns whether the draws are used up."""
        if isinstance(batch, FilteredData):
            if not batch.replacement:  # its samples count among the draws
                self.drawn += count
                return self.budget is not None and self.drawn >= self.budget
            self.kept -= count  # drawn again
            self.filtered_batches += 1
            if self.filtered_batches * self.batch_size > filter_patience(self.size) >= \
                    (self.filtered_batches - 1) * self.batch_size:
                still_drawing(self.plan, self.filtered_batches)
            return False
        self.filtered_batches = 0
        forget_cached_normal()
        yield batch
        self.drawn += count
        return self.budget is not None and self.drawn >= self.budget

    def _take_pending(self) -> Tuple[Any, int]:
        batch = self.runner().finish(self.pending, self.pending_indices, self.first)
        count = len(self.pending)
        self.pending, self.pending_indices = [], []
        return batch, count

    def _defers_pending(self, count: int) -> bool:
        """FastEstimator's order: a full batch drawn while kept samples of a partial one wait goes first (the partial
        batch waits behind it) unless the epoch's end is near, where they are combined."""
        if not self.pending or count != self.batch_size:
            return False
        waiting = len(self.pending)
        if self.budget is not None:
            return self.drawn + self.batch_size + waiting < self.budget
        target = self.size - self.size % self.batch_size if self.drop_last else self.size
        return self.drawn + self.removed_for_good + self.batch_size + waiting < target

    def _full_batch_first(self, task: Task, result: TaskResult) -> Optional[Tuple[Any, int]]:
        """The task's full batch and its size when it goes before the pending samples (`_defers_pending`), else None."""
        if isinstance(result, BatchResult):
            return (result.batch, result.count) if self._defers_pending(result.count) else None
        count = len(result.outcomes)
        if len(result.samples) != count or not self._defers_pending(count):
            return None
        return self.runner().finish(result.samples, result.indices, task.start), count

    def batches(self, results: Results) -> Iterator[Dict[str, Any]]:
        """The epoch's batches from its `(task, result)` pairs in order."""
        size, batch_size, one_pass, budget = self.size, self.batch_size, self.steps_per_epoch is None, self.budget
        for task, result in results:
            if self.pending:
                first = self._full_batch_first(task, result)
                if first is not None:
                    self.consumed += first[1]
                    self.kept += first[1]
                    self.missed = 0
                    if (yield from self._settle(*first)):
                        return
                    continue
            if isinstance(result, BatchResult):
                count = result.count
                if self.pending or (count < batch_size and not (
                        one_pass and self.consumed + count >= size
                        and self.kept + count >= size - self.removed_for_good)) or (
                            budget is not None and budget - self.drawn < count):
                    self.wants_batches = False  # out of step with the batches: use its samples
                    result = self.runner().run(Task(task.start, task.indices, want_batch=False))
                    if (yield from self._samples(task, result)):
                        return
                    continue
            else:
                if (yield from self._samples(task, result)):
                    return
                continue
            # a whole batch, inline (this runs for every batch of the fast path)
            self.consumed += count
            self.kept += count
            self.missed = 0
            if count == batch_size or self._one_pass_done():  # a whole batch, or the last one
                if count < batch_size and self.drop_last:
                    return
                batch = result.batch
                if isinstance(batch, FilteredData):
                    if (yield from self._settle(batch, count)):
                        return
                else:  # `_settle` of a kept batch, inline
                    self.filtered_batches = 0
                    forget_cached_normal()
                    yield batch
                    self.drawn += count
                    if budget is not None and self.drawn >= budget:
                        return
            if one_pass and self.consumed >= size and self.kept >= size - self.removed_for_good:
                return

    def _samples(self, task: Task, result: SampleResult) -> Generator[Dict[str, Any], None, bool]:
        self.wants_batches = False
        budget, batch_size = self.budget, self.batch_size
        sample_iter = iter(zip(result.samples, result.indices))
        for offset, outcome in enumerate(result.outcomes):
            self.consumed += 1
            if outcome != KEPT:
                if self.consumed <= self.size and outcome == REMOVED:
                    self.removed_for_good += 1
                if budget is not None and outcome == REMOVED:
                    self.drawn += 1
                self.missed += 1
            else:
                self.missed = 0
                self.kept += 1
                sample, index = next(sample_iter)
                if not self.pending:
                    self.first = task.start + offset
                self.pending.append(sample)
                self.pending_indices.append(index)
            pending = len(self.pending)
            if budget is not None and pending and pending < batch_size and self.drawn + pending >= budget:
                if self.drop_last:  # the draws are used up and leave an incomplete last batch
                    return True
                if (yield from self._settle(*self._take_pending())):
                    return True
            elif pending and pending == batch_size:
                if (yield from self._settle(*self._take_pending())):
                    return True
            if budget is not None and not self.pending and self.drawn >= budget:
                return True
            if self._one_pass_done():
                if self.pending and not self.drop_last:
                    batch, count = self._take_pending()
                    yield from self._settle(batch, count)
                    if isinstance(batch, FilteredData) and batch.replacement:  # its samples are drawn again
                        continue
                return True
            if self.missed >= filter_patience(self.size):
                raise _too_many(self.plan, "samples", self.missed)
        return False


class FixedAssembler:
    """One pass of fixed batches, a batch per task (an InterleaveDataset's member: FastEstimator's interleaved steps
    take fixed positions of each member): a task with a sample filtered out yields the filter's `FilteredData` in its
    batch's place instead of being refilled (the interleaving drops steps for it); an incomplete last batch is dropped.

    Args:
        plan: The member's epoch plan.
        runner: The trainer's task runner (built on first use), for collating sample results.
    """

    wants_batches = True

    def __init__(self, plan: Any, runner: Callable[[], Any]) -> None:
        self.plan, self.runner = plan, runner
        self.items = bool(getattr(plan.dataset, "fe_batched", False))  # each task an item of whole batches

    def batches(self, results: Results) -> Iterator[Any]:
        """The member's batches (or FilteredData in a filtered batch's place) from its `(task, result)` pairs."""
        size, batch_size = len(self.plan.dataset), self.plan.batch_size or 1
        for task, result in results:
            if task.start >= size:
                return
            if isinstance(result, BatchResult):
                if not self.items and result.count < batch_size:
                    return
                batch = result.batch
            elif len(result.samples) == len(result.outcomes):
                if len(result.outcomes) < batch_size:
                    return
                batch = self.runner().finish(result.samples, result.indices, task.start)
            else:
                batch = FilteredData(replacement=REMOVED not in result.outcomes)
            if not isinstance(batch, FilteredData):
                forget_cached_normal()
            yield batch


def make_assembler(plan: Any, runner: Callable[[], Any], shard: Shard, steps_per_epoch: Optional[int],
                   count: Optional[int], fixed: bool = False) -> Any:
    """The epoch's assembler, from the plan: a data-parallel epoch's (`count` batches), an InterleaveDataset member's
    fixed batches (`fixed`), a dataset of whole batches', or one process's per-sample rules."""
    if not shard.whole:
        assert count is not None
        return RankAssembler(plan, runner, shard, count)
    if fixed:
        return FixedAssembler(plan, runner)
    if getattr(plan.dataset, "fe_batched", False):
        return ItemAssembler(plan, steps_per_epoch)
    return SampleAssembler(plan, runner, steps_per_epoch)
