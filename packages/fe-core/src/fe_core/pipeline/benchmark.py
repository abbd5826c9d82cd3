"""`benchmark_pipeline`: how fast a Pipeline produces batches, and where the time goes."""
from __future__ import annotations

import contextlib
import time
from typing import Any, Dict, List, Optional

from fe_core.pipeline.loader import EpochLoader
from fe_core.pipeline.op_runner import OpTimer

__all__ = ["benchmark_pipeline"]


def _count_samples(batch: Any, batched: bool) -> int:
    """Samples in one batch: the leading dimension of its first array-like value (1 when unbatched)."""
    if not batched:
        return 1
    values = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else [batch]
    for value in values:
        shape = getattr(value, "shape", None)
        if shape is not None and len(shape) > 0:
            return int(shape[0])
        if isinstance(value, (list, tuple)):
            return len(value)
    return 1


def _print_table(rows: List[List[Any]], elapsed: float) -> None:
    timed = sum(row[5] for row in rows)
    visits = max((row[4] for row in rows), default=0)
    rows = rows + [["<Loop overhead>", [], [], "-", visits, max(elapsed - timed, 0.0)]]
    total = sum(row[5] for row in rows) or 1.0
    header = ["Op", "Stage", "Inputs", "Outputs", "ms / Visit", "Visits", "Time (Total)"]
    lines = [[row[0], row[3], ", ".join(row[1]), ", ".join(row[2]), f"{1000 * row[5] / max(row[4], 1):.4f}",
              str(row[4]), f"{100 * row[5] / total:.2f}%"] for row in rows]
    widths = [max(len(header[column]), *(len(line[column]) for line in lines)) for column in range(len(header))]
    print(" : ".join(title.ljust(width) for title, width in zip(header, widths)))
    print("-" * (sum(widths) + 3 * (len(widths) - 1)))
    for line in lines:
        print(" : ".join(cell.rjust(width) if column >= 4 else cell.ljust(width)
                         for column, (cell, width) in enumerate(zip(line, widths))))


def benchmark_pipeline(pipeline: Any, mode: str = "train", epoch: int = 1, ds_id: Optional[str] = None,
                       num_steps: int = 1000, log_interval: int = 100, detailed: bool = True
                       ) -> Dict[str, Dict[str, float]]:
    """Time `num_steps` batches of `pipeline` per ds_id and print steps/s and samples/s (see `Pipeline.benchmark`).

    The batches come from the Pipeline's worker processes (`num_process`) as they would in a fit. With `detailed`, a
    second run of `log_interval` batches, in this process, times every stage (fetching, each op, collation) and a
    table of milliseconds per visit and share of the time is printed.

    Args:
        pipeline: The `Pipeline` (its `get_ds_ids`, `__call__` and `planner` are used).

    Returns:
        {ds_id: {"steps_per_sec": ..., "samples_per_sec": ...}}.
    """
    if num_steps < 1 or log_interval < 1:
        raise ValueError(f"benchmark needs positive num_steps and log_interval, got {num_steps} and {log_interval}")
    ds_ids = pipeline.get_ds_ids(epoch, mode) if ds_id is None else [ds_id]
    workers = getattr(pipeline, "workers", None)  # the speed with the Pipeline's worker processes, as in a fit
    with workers() if callable(workers) else contextlib.nullcontext():
        return _benchmark(pipeline, mode, epoch, ds_ids, num_steps, log_interval, detailed)


def _benchmark(pipeline: Any, mode: str, epoch: int, ds_ids: List[str], num_steps: int, log_interval: int,
               detailed: bool) -> Dict[str, Dict[str, float]]:
    results: Dict[str, Dict[str, float]] = {}
    clock = time.perf_counter
    for current in ds_ids:
        where = f"Dataset: {current}, " if current else ""
        title = mode.capitalize()
        steps = samples = interval_samples = 0
        # fe's own loader (numpy batches, its plan), also where the data is a framework loader (a torch DataLoader, a
        # tf.data.Dataset) that user code would get back unchanged
        context = pipeline(mode=mode, epoch=epoch, ds_id=current, steps_per_epoch=num_steps)
        with context.as_numpy() if hasattr(context, "as_numpy") else context as loader:
            batched = (loader.plan.native or loader.plan.batch_size is not None
                       or getattr(loader.plan.dataset, "fe_batched", False))  # a BatchDataset's items are batches
            start = interval_start = clock()
            for batch in loader:
                steps += 1
                count = _count_samples(batch, batched)
                samples += count
                interval_samples += count
                if steps % log_interval == 0:
                    now = clock()
                    duration = max(now - interval_start, 1e-12)
                    print(f"FastEstimator-Benchmark ({title}): {where}Step: {steps}, Epoch: {epoch}, "
                          f"Steps/sec: {log_interval / duration:.2f}, Samples/sec: {interval_samples / duration:.1f}")
                    interval_start, interval_samples = now, 0
            elapsed = max(clock() - start, 1e-12)
        results[current] = {"steps_per_sec": steps / elapsed, "samples_per_sec": samples / elapsed}
        print(f"FastEstimator-Benchmark ({title}): {where}Epoch: {epoch}, {steps} steps, {samples} samples in "
              f"{elapsed:.3f}s: Steps/sec: {steps / elapsed:.2f}, Samples/sec: {samples / elapsed:.1f}")
        if detailed and not loader.plan.native and loader.plan.dataset is not None:
            timer = OpTimer()
            timed_loader = EpochLoader(pipeline.planner.plan(mode, epoch, current, None), shuffle=mode == "train",
                                       steps_per_epoch=min(log_interval, num_steps), timer=timer)
            start = clock()
            for _ in timed_loader:
                pass
            elapsed = clock() - start
            plan = timed_loader.plan
            moved = f"; {plan.moved_ops} batch-capable op(s) run per batch" if plan.moved_ops else ""
            print(f"\nBreakdown of time taken by Pipeline Operations (Mode: {title}, Epoch: {epoch}"
                  f"{', Dataset: ' + current if current else ''}{moved})\n")
            _print_table(timer.rows, elapsed)
            print()
    return results
