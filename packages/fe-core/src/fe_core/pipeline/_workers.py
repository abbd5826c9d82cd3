"""`WorkerPool`: the Pipeline's worker processes, which compute an epoch's per-sample tasks ahead of the trainer.

Lifecycle. The Estimator opens a pool for each `fit` / `test` (`Pipeline.workers()`); its processes start at the first
epoch that uses them (`start`) and stay until the run ends, idle between epochs. At each epoch start every worker
builds that epoch's plan from its own copy of the Pipeline's planner (datasets and ops as they were when the pool
started; changes the trainer makes to them later do not reach the workers, as with FastEstimator's and torch's worker
processes). The pool owns everything an epoch may open besides its workers - the epoch being read, an
InterleaveDataset's member pools, GeneratorDatasets' feed processes - and `close` stops them all.

Messages. The trainer sends typed messages (`_StartEpoch`, `_RunTask`, `_Release`, `_Stop`) and each worker
dispatches on their type, as torch's worker loop does with its control messages; tasks and results are
`fe_core.pipeline.messages` dataclasses.

Start method. `fork` on Linux: the datasets and ops reach the workers without pickling (an in-memory dataset is shared
copy-on-write, a `LambdaOp` with a lambda just works) and a worker starts in milliseconds. Forking a process whose other
threads (torch's or TensorFlow's thread pools) hold locks is only unsafe for code that uses those locks in the child;
the workers run numpy, OpenCV and Python only, never a framework, which is also what torch's DataLoader relies on with
its default `fork`. OpenCV's thread pool cannot be reconfigured in a forked child (a worker calling `cv2.setNumThreads`
after the trainer used the pool hangs), so the workers never do; instead the trainer sets OpenCV to run sequentially
while it forks (`cv2.setNumThreads(0)`, its own setting restored right after), and each worker runs OpenCV on its one
thread rather than starting a pool of its own on every core. Elsewhere (macOS, Windows), where fork is unsafe or
missing, `spawn`: the Pipeline's datasets and ops are pickled once per worker; if they cannot be (a lambda), a warning
names the object and the epoch runs in the training process. `FE_PIPELINE_START_METHOD` overrides the choice.

Order and flow. Each task goes to the worker with the fewest unanswered tasks (at most `PREFETCH`: one computing, one
queued), results are read from whichever worker answers and yielded in task order from a reorder buffer, and up to
`WINDOW` tasks per worker (fewer for large results: `FE_PIPELINE_PREFETCH_BYTES`) run ahead of the one the trainer waits
for, so one slow task does not idle the other workers (a bounded prefetch). Which worker computed a task never changes
its result: its randomness is seeded by (run seed, epoch, position). Results travel through
`fe_core.pipeline._transport` (arrays in shared memory, mapped by the trainer without a copy; each worker reuses
`SEGMENTS` segments, one written again once the trainer freed every array of the batch in it) tagged with their epoch,
so the results of an epoch abandoned early (a `break`) are dropped as they arrive, without waiting for them.
`WorkerPool.stats()` reports each worker's tasks, computing time and idle time.

Faults. An exception in a worker is re-raised in the trainer as the same exception (or a `PipelineWorkerError` when it
cannot be pickled) with the same notes the in-process path adds (op, keys, mode, epoch, ds_id, sample index), plus which
worker raised it and its traceback. A worker that dies (killed by the OS when memory runs out) is reported with its
signal, never waited on forever, whether it died computing a task or idle (a task or message sent to it fails). Ctrl-C
(or SIGTERM during `fit`) while the trainer talks to the workers may cut a message in half: the pool is then stopped,
and the next epoch starts a fresh one. Workers ignore Ctrl-C (the trainer stops them), notice within half a second when
the trainer is gone (its pid changes from theirs' parent), and remove their unread shared-memory files on the way out;
the trainer removes any left when it closes the pool; SIGTERM (a launcher stopping a job, `terminate()`) makes a worker
leave through the same cleanup. Files the trainer writes for a worker's tasks (large index lists) carry that worker's
name, so the worker removes them too when the trainer is killed. A finalizer closes a pool that is garbage-collected or
left open at exit.

How many workers start, and for which epochs, is `fe_core.pipeline.sizing`; how their errors reach the trainer is
`fe_core.pipeline.worker_errors`.
"""
from __future__ import annotations

import collections
import itertools
import os
import pickle
import secrets
import signal
import sys
import time
import warnings
import weakref
from multiprocessing import get_context
from multiprocessing.connection import wait
from dataclasses import dataclass
from typing import Any, Deque, Dict, Generator, Iterator, List, Optional, Tuple

import numpy as np

from fe_core.pipeline._transport import SegmentReader, SegmentRing, decode, encode, remove_files, shared_directory
from fe_core.pipeline.messages import EpochSpec, Task, TaskResult
from fe_core.pipeline.runners import TaskRunner, worker_runner
from fe_core.pipeline.sizing import resolve_num_process, start_method
from fe_core.pipeline.worker_errors import PipelineWorkerError, death_message, portable_error, rebuild_error

__all__ = ["WorkerPool", "PipelineWorkerError", "SEGMENTS"]

PREFETCH = 2  # unanswered tasks per worker, at most: one computing, one waiting in its pipe
WINDOW = 4  # tasks dispatched and not yet yielded, per worker (results wait in a reorder buffer)
PREFETCH_BYTES = 512 * 1024 * 1024  # the most bytes of results waiting (FE_PIPELINE_PREFETCH_BYTES overrides)
SEGMENTS = WINDOW + PREFETCH + 2  # reused shared-memory segments per worker (results the trainer may hold at once)
_RESULT_THRESHOLD = 64 * 1024  # results whose arrays total this many bytes go through shared memory
_TASK_THRESHOLD = 8 * 1024  # task messages stay far below a pipe's buffer, so sending one never blocks
_POLL = 0.5


# -------------------------------------------------------------------------------------------------------- messages
@dataclass(frozen=True)
class _StartEpoch:
    """Build the runner of the epoch `spec` describes."""
    spec: EpochSpec


@dataclass(frozen=True)
class _RunTask:
    """Compute a task (its `Task`, encoded by `_transport`) and answer with a `_TaskDone`."""
    epoch_id: int
    task_id: int
    payload: Any


@dataclass(frozen=True)
class _Release:
    """The trainer dropped every array of the results in these segments."""
    names: List[str]


@dataclass(frozen=True)
class _Stop:
    """Leave the worker loop."""


@dataclass(frozen=True)
class _TaskDone:
    """A worker's answer: the task's epoch and id, seconds spent on it, and its encoded `TaskResult` or
    `_Failure`."""
    epoch_id: int
    task_id: int
    seconds: float
    encoded: Any


@dataclass(frozen=True)
class _Failure:
    """An exception raised in a worker, portable to the trainer (see `worker_errors.portable_error`)."""
    info: Tuple[Optional[bytes], str, str, List[str], str, int]


# ---------------------------------------------------------------------------------------------------------- worker
def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _worker_main(index: int, planner: Any, tasks: Any, results: Any, parent: int,
                 inherited: List[Any], directory: str, prefix: str, segment_limit: int) -> None:
    """A worker's loop: build each epoch's runner (`runners.worker_runner` with this worker's copy of the planner),
    compute tasks, send results; leave when told or orphaned.

    Every result goes back as a `_TaskDone`; the trainer drops the results of an epoch it abandoned by their epoch id.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the trainer stops us
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # a launcher's SIGTERM: leave through the cleanup below
    for connection in inherited:  # other workers' pipe ends, so that their EOFs are not held open here
        connection.close()
    runner: Optional[TaskRunner] = None
    build_error: Optional[BaseException] = None
    sequence = itertools.count()
    clock = time.perf_counter
    ring = SegmentRing(directory, f"{prefix}{index}-", SEGMENTS, segment_limit)
    try:
        while True:
            if not tasks.poll(_POLL):
                if os.getppid() != parent:
                    return
                continue
            message = tasks.recv()
            if isinstance(message, _Stop):
                return
            if isinstance(message, _Release):  # the trainer dropped every array of these results
                ring.release(message.names)
                continue
            if isinstance(message, _StartEpoch):
                try:
                    runner, build_error = worker_runner(planner, message.spec), None
                except Exception as error:  # pylint: disable=broad-except  # reported with the first task
                    runner, build_error = None, error
                continue
            began = clock()
            task: Task = decode(message.payload, directory)
            try:
                if runner is None:
                    raise build_error or RuntimeError("no epoch was started in this Pipeline worker")
                reply: Any = runner.run(task)
                name = f"{prefix}{index}-{next(sequence)}"
                try:
                    encoded = ring.encode(reply, name, _RESULT_THRESHOLD)
                except Exception as error:  # pylint: disable=broad-except
                    raise TypeError(f"A batch of the Pipeline could not be sent from a worker process to the trainer "
                                    f"({type(error).__name__}: {error}); every value the per-sample ops produce must "
                                    f"be picklable (or use Pipeline(num_process=0))") from error
            except Exception as error:  # pylint: disable=broad-except
                encoded = encode(_Failure(portable_error(error)), directory, f"{prefix}{index}-e", 0)
            results.send(_TaskDone(message.epoch_id, message.task_id, clock() - began, encoded))
    except (EOFError, OSError):  # the trainer is gone
        return
    finally:
        # A second SIGTERM (a launcher signalling the whole process group, then the trainer terminating us while
        # closing) must not cut the cleanup short and leave files in shared memory.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        remove_files(directory, f"{prefix}{index}-")  # results nobody read, and task files the trainer wrote for us


# ---------------------------------------------------------------------------------------------------------- trainer
class _Worker:
    def __init__(self, index: int, process: Any, tasks: Any, results: Any) -> None:
        self.index, self.process, self.tasks, self.results = index, process, tasks, results
        self.outstanding = 0  # tasks sent and not answered yet (of any epoch)
        self.busy = 0.0  # seconds spent computing tasks, as the worker measured them
        self.done = 0  # tasks answered


def _stop_workers(workers: List[_Worker], directory: str, prefix: str, owner: int) -> None:
    """Stop the workers (asking first, then terminating) and remove the pool's shared-memory files.

    The pool's `close` and its finalizer (the pool garbage-collected, or the interpreter exiting) both call this; it
    does nothing in another process (a forked worker holds a copy of the pool it must not act on)."""
    if os.getpid() != owner:
        return
    stopping = list(workers)
    workers.clear()
    for worker in stopping:
        try:
            worker.tasks.send(_Stop())
        except (OSError, ValueError):
            pass
    # One grace period for all the workers, not one each: 15 workers stuck in long tasks stop in ~3 s, not ~45 s.
    for grace, escalate in ((2.0, "terminate"), (1.0, "kill"), (1.0, None)):
        deadline = time.monotonic() + grace
        for worker in stopping:
            worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
        if escalate is not None:
            for worker in stopping:
                if worker.process.is_alive():
                    getattr(worker.process, escalate)()
    for worker in stopping:
        for connection in (worker.tasks, worker.results):
            connection.close()
    remove_files(directory, prefix)


class WorkerPool:
    """The Pipeline's worker processes for one `fit` / `test` (started lazily, at the first epoch that uses them).

    A finalizer stops the workers and removes the pool's shared-memory files when the pool is garbage-collected or the
    interpreter exits without `close()`.

    Args:
        planner: The Pipeline's planner (its `data`, `batch_size` and `ops` are what the workers compute with).
        num_process: The requested worker count (None: FastEstimator's default; 0: none).
    """

    def __init__(self, planner: Any, num_process: Optional[int]) -> None:
        self.planner = planner
        self.requested = num_process
        self.workers: List[_Worker] = []
        self.disabled = num_process == 0
        self.directory = shared_directory()
        self.prefix = f"fe-pipeline-{os.getpid()}-{secrets.token_hex(3)}-"
        self.method = start_method()
        self.epoch_ids = itertools.count()
        self.epoch_seconds = 0.0  # wall time inside run_epoch (from its start to its end or abandonment)
        self.result_bytes = 0  # the largest task result seen (sizes the prefetch window)
        self._finalizer: Optional[weakref.finalize] = None
        self.reader: Optional[SegmentReader] = None  # maps the workers' reused segments (see _transport)
        self.releases: Deque[str] = collections.deque()  # segments whose results were dropped, to tell their workers
        self.open_epoch: Optional[Generator[Any, None, None]] = None  # the epoch being read, closed before the next
        self.member_pools: List["WorkerPool"] = []  # an InterleaveDataset's members' pools
        self.feeds: Dict[int, Any] = {}  # id(GeneratorDataset) -> its feed process

    # ------------------------------------------------------------------ start / stop
    def start(self) -> bool:
        """Start the worker processes unless they run already; whether the pool has workers (it declines with no
        process to start, or datasets that spawned workers cannot receive)."""
        if self.disabled:
            return False
        if not self.workers:
            self._start()
        return bool(self.workers)

    def pools_for_members(self, members: int) -> List["WorkerPool"]:
        """A pool per member of an InterleaveDataset (their epochs interleave, a pool runs one epoch at a time),
        sharing this pool's worker count between them (members left without one run in the trainer: never more
        processes than `num_process`); kept until this pool closes."""
        if self.disabled:
            return []
        if len(self.member_pools) != members:
            for pool in self.member_pools:
                pool.close()
            base, extra = divmod(resolve_num_process(self.requested), members)
            self.member_pools = [WorkerPool(self.planner, base + (1 if which < extra else 0))  # 0: none
                                 for which in range(members)]
        return list(self.member_pools)

    def generator_feed(self, dataset: Any, window: int) -> Any:
        """The feed process of a GeneratorDataset (one per dataset, kept until this pool closes), or None when the
        pool has no process to give (num_process resolves to 0)."""
        if self.disabled or resolve_num_process(self.requested) < 1:
            return None
        from fe_core.pipeline._feed import GeneratorFeed  # pylint: disable=import-outside-toplevel
        feed = self.feeds.get(id(dataset))
        if feed is None or not feed.process.is_alive():
            feed = self.feeds[id(dataset)] = GeneratorFeed(dataset, window=window)
        return feed

    def _start(self) -> None:
        count = resolve_num_process(self.requested)
        if count < 1:
            self.disabled = True
            return
        planner = self.planner
        if self.method != "fork":
            problem = _unpicklable(planner)
            if problem is not None:
                warnings.warn(f"Pipeline(num_process={self.requested}) runs its per-sample path in the training "
                              f"process: the worker processes (start method {self.method!r}) need to pickle the "
                              f"datasets and ops, and {problem}", RuntimeWarning, stacklevel=4)
                self.disabled = True
                return
        context = get_context(self.method)
        trainer_ends: List[Any] = []
        workers: List[_Worker] = []
        self.releases.clear()
        self.reader = SegmentReader(self.directory, self.releases.append)
        # the reused segments of all workers together stay within the prefetch budget; larger results use new files
        segment_limit = _prefetch_bytes() // (SEGMENTS * count)
        self.workers = workers
        self._finalizer = weakref.finalize(self, _stop_workers, workers, self.directory, self.prefix, os.getpid())
        cv2 = sys.modules.get("cv2") if self.method == "fork" else None
        cv2_threads = cv2.getNumThreads() if cv2 is not None else None
        if cv2 is not None:
            # The workers inherit this setting (one thread each: no pool per worker on every core). They must not
            # call cv2.setNumThreads themselves: reconfiguring the pool inherited from this process hangs.
            cv2.setNumThreads(0)
        try:
            for index in range(count):
                task_read, task_write = context.Pipe(duplex=False)
                result_read, result_write = context.Pipe(duplex=False)
                inherited = trainer_ends + [task_write, result_read] if self.method == "fork" else []
                process = context.Process(target=_worker_main, name=f"fe-pipeline-worker-{index}", daemon=True,
                                          args=(index, planner, task_read, result_write, os.getpid(), inherited,
                                                self.directory, self.prefix, segment_limit))
                with warnings.catch_warnings():  # Python 3.12+ warns about forking a threaded process; see above
                    warnings.simplefilter("ignore", DeprecationWarning)
                    process.start()
                task_read.close()
                result_write.close()
                trainer_ends += [task_write, result_read]
                workers.append(_Worker(index, process, task_write, result_read))
        except BaseException:
            self.close()
            raise
        finally:
            if cv2 is not None:
                cv2.setNumThreads(cv2_threads)

    def close(self) -> None:
        """Stop the epoch being read, the member pools, the feed processes and the workers (asking first, then
        terminating), and remove any shared-memory files left."""
        epoch, self.open_epoch = self.open_epoch, None
        if epoch is not None and not epoch.gi_running:  # an epoch abandoned mid-way (not the one closing us)
            epoch.close()
        feeds, self.feeds = self.feeds, {}
        for feed in feeds.values():
            feed.close()
        members, self.member_pools = self.member_pools, []
        for pool in members:
            pool.close()
        self.workers = []
        if self.reader is not None:
            self.reader.close()  # batches still held keep their memory; nobody is told when they go
            self.reader = None
        finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer()  # runs _stop_workers once; a finalizer already run does nothing
        remove_files(self.directory, self.prefix)

    def pids(self) -> List[int]:
        """The worker processes' ids (for tests and diagnostics)."""
        return [worker.process.pid for worker in self.workers]

    def stats(self) -> Dict[str, Any]:
        """What the workers did since they started: per worker its pid, tasks answered, seconds computing them and
        seconds idle during epochs (the wall time spent in epochs less its computing time), and the epochs' wall time.
        """
        seconds = self.epoch_seconds
        return {"epoch_seconds": seconds,
                "workers": [{"pid": worker.process.pid, "tasks": worker.done, "busy_seconds": worker.busy,
                             "idle_seconds": max(0.0, seconds - worker.busy)} for worker in self.workers]}

    # ------------------------------------------------------------------ one epoch
    def _window(self, budget: int) -> int:
        """Tasks dispatched and not yet yielded, at most: WINDOW tasks per worker, fewer when the results are large
        (`budget`, FE_PIPELINE_PREFETCH_BYTES, bounds the bytes waiting in shared memory), never fewer than one per
        worker. Sized again whenever a larger result arrives, the first epoch's first results included."""
        count = len(self.workers)
        tasks = WINDOW * count
        if self.result_bytes:
            tasks = min(tasks, max(count, budget // self.result_bytes))
        return tasks

    def _send(self, worker: _Worker, message: Tuple[Any, ...], plan: Any) -> None:
        """Send `message` to `worker`; a worker that died (even while idle: nothing was waited on from it) is reported
        by name and signal, as when it dies mid-task, never as a bare BrokenPipeError."""
        try:
            worker.tasks.send(message)
        except (OSError, ValueError):
            self._died(worker, plan)

    def _died(self, worker: _Worker, plan: Any) -> None:
        worker.process.join(timeout=1.0)
        error = PipelineWorkerError(death_message(worker.index, worker.process, plan))
        self.close()  # the next epoch that wants workers starts a fresh pool
        raise error

    def _send_releases(self, plan: Any) -> None:
        """Tell each worker which of its segments the trainer no longer uses (their batches were freed)."""
        if not self.releases:
            return
        names: Dict[int, List[str]] = {}
        while self.releases:
            name = self.releases.popleft()
            index = int(name[len(self.prefix):].split("-", 1)[0])
            names.setdefault(index, []).append(name)
        for worker in self.workers:
            if worker.index in names:
                self._send(worker, _Release(names[worker.index]), plan)

    def run_epoch(self, spec: EpochSpec, tasks: Iterator[Tuple[int, np.ndarray]], receiver: Any,
                  limit: int, plan: Any) -> Generator[Tuple[Task, TaskResult], None, None]:
        """Compute `tasks` in the workers (started); yield `(task, result)` in task order. An epoch still open (a
        loader abandoned mid-epoch) is closed first: its tasks go before this epoch's are sent.

        Args:
            spec: What the workers need to build the epoch's runner.
            tasks: `(stream position, indices)` of each task, endless.
            receiver: The epoch's assembler: its `wants_batches` is read as each task is sent.
            limit: Tasks are prefetched up to this stream position.
            plan: The epoch plan (for messages).
        """
        previous, self.open_epoch = self.open_epoch, None
        if previous is not None:
            previous.close()
        epoch = self._epoch(spec, tasks, receiver, limit, plan)
        self.open_epoch = epoch
        return epoch

    def _epoch(self, spec: EpochSpec, stream: Iterator[Tuple[int, np.ndarray]], receiver: Any,
               limit: int, plan: Any) -> Generator[Tuple[Task, TaskResult], None, None]:
        """`run_epoch`'s generator.

        Tasks go to whichever worker has the fewest unanswered (at most PREFETCH each), results are read from any
        worker as they come and put back in task order (a reorder buffer), and up to `_window()` tasks are ahead of
        the one the trainer waits for: a worker slow on one task does not leave the others idle. Tasks are prefetched
        up to stream position `limit` (the epoch's end when nothing is filtered out); beyond it only on demand, so an
        epoch ends without computing tasks nobody uses. An epoch abandoned early returns at once: its tasks still in
        the workers are dropped by their epoch id when their results arrive.
        """
        workers = self.workers
        for worker in workers:
            self._send(worker, _StartEpoch(spec), plan)
        tasks = iter(stream)
        upcoming = [next(tasks)]
        epoch_id = next(self.epoch_ids)
        dispatched: Dict[int, Task] = {}  # task id -> task, until yielded
        arrived: Dict[int, Tuple[_Worker, Any]] = {}  # task id -> (worker, encoded reply), until its turn
        sent = head = 0
        budget = _prefetch_bytes()
        sized = self.result_bytes
        window = self._window(budget)
        reader = self.reader
        assert reader is not None
        began = time.perf_counter()

        def dispatch(worker: _Worker) -> None:
            nonlocal sent
            start, indices = upcoming.pop()
            upcoming.append(next(tasks))
            task_id, sent = sent, sent + 1
            self._send_releases(plan)
            task = Task(start, indices, receiver.wants_batches)
            payload = encode(task, self.directory, f"{self.prefix}{worker.index}-t{epoch_id}-{task_id}",
                             _TASK_THRESHOLD)
            self._send(worker, _RunTask(epoch_id, task_id, payload), plan)
            worker.outstanding += 1
            dispatched[task_id] = task

        def fill() -> None:
            nonlocal window, sized
            if self.result_bytes != sized:  # a larger result arrived: the byte budget allows fewer tasks ahead
                sized = self.result_bytes
                window = self._window(budget)
            while sent - head < window and (upcoming[0][0] < limit or not receiver.wants_batches):
                worker = min(workers, key=lambda candidate: candidate.outstanding)
                if worker.outstanding >= PREFETCH:
                    return
                dispatch(worker)

        try:
            fill()
            while True:
                if head == sent:
                    dispatch(min(workers, key=lambda candidate: candidate.outstanding))  # past the expected end
                while head not in arrived:
                    self._collect(epoch_id, arrived, plan)
                    fill()
                worker, encoded = arrived.pop(head)
                task = dispatched.pop(head)
                head += 1
                reply = reader.decode(encoded)
                if isinstance(reply, _Failure):
                    raise rebuild_error(reply.info, worker.index)
                if any(candidate.outstanding for candidate in workers):
                    self._collect(epoch_id, arrived, plan, timeout=0)  # results already there free their workers
                fill()
                yield task, reply
        except (KeyboardInterrupt, SystemExit):
            # Ctrl-C (or SIGTERM during fit) may have cut a message to or from a worker in half: the pipes can no
            # longer be trusted, nor the count of tasks out. Stop the workers; the next epoch starts a fresh pool.
            self.close()
            raise
        finally:
            self.epoch_seconds += time.perf_counter() - began
            for _, encoded in arrived.values():
                reader.discard(encoded)
            self.open_epoch = None

    def _collect(self, epoch_id: int, arrived: Dict[int, Tuple[_Worker, Any]], plan: Any,
                 timeout: float = _POLL) -> None:
        """Wait up to `timeout` for results from any worker with tasks out (0: take those already there); file this
        epoch's, drop an abandoned epoch's. Reading a result is what lets its worker be sent the next task, so the
        trainer also reads what is ready whenever it hands a batch on, not only when it waits for one."""
        waiting = [worker for worker in self.workers if worker.outstanding]
        if not waiting:
            raise PipelineWorkerError("the Pipeline's worker pool waited for a result with no task out")
        ready = set(wait([worker.results for worker in waiting] + [worker.process.sentinel for worker in waiting],
                         timeout=timeout))
        for worker in waiting:
            if worker.results not in ready and worker.process.sentinel not in ready:
                continue
            if worker.results in ready or worker.results.poll():
                try:
                    message = worker.results.recv()
                except (EOFError, OSError):
                    message = None
                if message is not None:
                    worker.outstanding -= 1
                    encoded = message.encoded
                    worker.busy += message.seconds
                    worker.done += 1
                    if message.epoch_id != epoch_id:
                        self.reader.discard(encoded)  # type: ignore[union-attr]
                    else:
                        size = len(encoded[0]) + sum(length for _, length in encoded[2] or ())
                        self.result_bytes = max(self.result_bytes, size)
                        arrived[message.task_id] = (worker, encoded)
                    continue
            self._died(worker, plan)  # the process ended and left nothing to read


def _prefetch_bytes() -> int:
    value = os.environ.get("FE_PIPELINE_PREFETCH_BYTES")
    return int(value) if value else PREFETCH_BYTES


def _unpicklable(planner: Any) -> Optional[str]:
    """What in the Pipeline's planner cannot be pickled (for spawned workers), or None."""
    try:
        pickle.dumps(planner)
        return None
    except Exception:  # pylint: disable=broad-except
        pass
    data, batch_size, ops = planner.data, planner.batch_size, planner.ops
    candidates: List[Tuple[str, Any]] = [(f"op {type(op).__name__} at position {position}", op)
                                         for position, op in enumerate(ops)]
    candidates += [(f"the {mode} dataset{f' {ds_id!r}' if ds_id else ''} ({type(dataset).__name__})", dataset)
                   for mode, datasets in data.items() for ds_id, dataset in datasets.items()]
    candidates.append(("the batch_size", batch_size))
    for what, value in candidates:
        try:
            pickle.dumps(value)
        except Exception as error:  # pylint: disable=broad-except
            return f"{what} cannot be pickled ({type(error).__name__}: {error})"
    return "the Pipeline cannot be pickled"
