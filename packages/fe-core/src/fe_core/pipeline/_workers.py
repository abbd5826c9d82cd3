"""`WorkerPool`: the Pipeline's worker processes, which compute an epoch's per-sample tasks ahead of the trainer.

Lifecycle. The Estimator opens a pool for each `fit` / `test` (`Pipeline.workers()`); its processes start at the
first epoch that uses them and stay until the run ends, idle between epochs. At each epoch start every worker builds
that epoch's plan from its own copy of the Pipeline (datasets and ops as they were when the pool started; changes the
trainer makes to them later do not reach the workers, as with FastEstimator's and torch's worker processes).

Start method. `fork` on Linux: the datasets and ops reach the workers without pickling (an in-memory dataset is
shared copy-on-write, a `LambdaOp` with a lambda just works) and a worker starts in milliseconds. Forking a process
whose other threads (torch's or TensorFlow's thread pools) hold locks is only unsafe for code that uses those locks
in the child; the workers run numpy, OpenCV and Python only, never a framework, which is also what torch's
DataLoader relies on with its default `fork`. OpenCV's thread pool cannot be reconfigured in a forked child (a
worker calling `cv2.setNumThreads` after the trainer used the pool hangs), so the workers never do; instead the
trainer sets OpenCV to run sequentially while it forks (`cv2.setNumThreads(0)`, its own setting restored right after),
and each worker runs OpenCV on its one thread rather than starting a pool of its own on every core. Elsewhere (macOS, Windows), where fork is unsafe or
missing, `spawn`: the Pipeline's datasets and ops are pickled once per worker; if they cannot be (a lambda), a warning
names the object and the epoch runs in the training process. `FE_PIPELINE_START_METHOD` overrides the choice.

Order and flow. Task `k` of an epoch goes to worker `k % n` and results are read back in task order, so batches come
in order; at most `prefetch` tasks per worker are in flight (a bounded prefetch). Results travel through
`fe_core.pipeline._transport` (arrays in shared memory, mapped by the trainer without a copy).

Faults. An exception in a worker is re-raised in the trainer as the same exception (or a `PipelineWorkerError` when
it cannot be pickled) with the same notes the in-process path adds (op, keys, mode, epoch, ds_id, sample index), plus
which worker raised it and its traceback. A worker that dies (killed by the OS when memory runs out) is reported with
its signal, never waited on forever. Workers ignore Ctrl-C (the trainer stops them), notice within half a second when
the trainer is gone (its pid changes from theirs' parent), and remove their unread shared-memory files on the way out;
the trainer removes any left when it closes the pool.
"""
from __future__ import annotations

import collections
import copy
import itertools
import os
import pickle
import secrets
import signal
import sys
import traceback
import warnings
from multiprocessing import get_context
from multiprocessing.connection import wait
from typing import Any, Deque, Dict, Iterator, List, Optional, Tuple

from fe_core.pipeline._sample_epoch import TaskRunner, TaskStream
from fe_core.pipeline._transport import decode, discard, encode, remove_files, shared_directory
from fe_core.pipeline.op_runner import add_note

__all__ = ["WorkerPool", "PipelineWorkerError", "resolve_num_process", "start_method", "MIN_WORKER_SAMPLES"]

MIN_WORKER_SAMPLES = 1024  # epochs with fewer samples run in the trainer (FE_PIPELINE_MIN_WORKER_SAMPLES overrides)
PREFETCH = 2  # tasks in flight per worker
_RESULT_THRESHOLD = 64 * 1024  # results whose arrays total this many bytes go through shared memory
_TASK_THRESHOLD = 8 * 1024  # task messages stay far below a pipe's buffer, so sending one never blocks
_POLL = 0.5


class PipelineWorkerError(RuntimeError):
    """An error in a Pipeline worker process that could not be sent back as itself, or a worker that died."""


class _RemoteTraceback(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def resolve_num_process(num_process: Optional[int]) -> int:
    """Worker processes for `num_process` as FastEstimator documents it: None -> min(CPUs, max(32, 32 x GPUs)),
    where CPUs is this process's share of the node in a data-parallel run (the node's CPUs / LOCAL_WORLD_SIZE, the
    processes torchrun started on it), so the ranks' pools never oversubscribe the node."""
    if num_process is not None:
        return num_process
    from fe_core.util.devices import cpu_count, get_num_gpus  # pylint: disable=import-outside-toplevel
    try:
        gpus = get_num_gpus()
    except Exception:  # pylint: disable=broad-except  # no driver answer: count the CPUs only
        gpus = 0
    try:
        local_processes = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        local_processes = 1
    gpus = -(-gpus // local_processes)  # the GPUs this process drives
    return min(max(1, cpu_count() // local_processes), max(32, 32 * gpus))


def start_method() -> str:
    """'fork' on Linux, 'spawn' elsewhere; FE_PIPELINE_START_METHOD overrides."""
    chosen = os.environ.get("FE_PIPELINE_START_METHOD")
    if chosen:
        return chosen
    return "fork" if sys.platform.startswith("linux") else "spawn"


def min_worker_samples() -> int:
    """Epochs with fewer samples than this run in the trainer (starting processes would cost more than it saves)."""
    value = os.environ.get("FE_PIPELINE_MIN_WORKER_SAMPLES")
    return int(value) if value else MIN_WORKER_SAMPLES


# ---------------------------------------------------------------------------------------------------------- worker
def worker_copy(pipeline: Any) -> Any:
    """A shallow copy of `pipeline` for the workers: the same datasets and ops, no pool and no open contexts."""
    clone = copy.copy(pipeline)
    clone.__dict__.update({name: None for name in ("_worker_pool", "_active_context") if name in clone.__dict__})
    clone.__dict__["_pool_held"] = False
    if "_bare_contexts" in clone.__dict__:
        clone._bare_contexts = []  # pylint: disable=protected-access
    clone.num_process = 0
    return clone


def _build_runner(pipeline: Any, spec: Dict[str, Any]) -> TaskRunner:
    """The epoch's task runner in a worker: the trainer's plan rebuilt from this worker's copy of the Pipeline, the
    dataset's per-epoch index maps redrawn from the trainer's seed (`spec['reset_seed']`), the same kind of runner."""
    from fe_core.pipeline.loader import EpochLoader  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline._sample_epoch import reset_dataset  # pylint: disable=import-outside-toplevel
    plan = pipeline._plan(spec["mode"], spec["epoch"], spec["ds_id"], spec["output_keys"])  # pylint: disable=W0212
    plan.state["warmup"] = spec["warmup"]
    if spec.get("reset_seed") is not None:
        reset_dataset(plan.dataset, spec["shuffle"], spec["reset_seed"])
    return EpochLoader(plan, shuffle=spec["shuffle"]).make_runner(spec["key"], restore=False)


def _portable(error: BaseException) -> Tuple[Optional[bytes], str, str, List[str], str, int]:
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        blob: Optional[bytes] = pickle.dumps(error)
        pickle.loads(blob)
    except Exception:  # pylint: disable=broad-except
        blob = None
    return (blob, type(error).__name__, str(error), list(getattr(error, "__notes__", ())), text, os.getpid())


def _worker_main(index: int, pipeline: Any, tasks: Any, results: Any, parent: int,
                 inherited: List[Any], directory: str, prefix: str) -> None:
    """A worker's loop: build each epoch's runner, compute tasks, send results; leave when told or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the trainer stops us
    for connection in inherited:  # other workers' pipe ends, so that their EOFs are not held open here
        connection.close()
    runner: Optional[TaskRunner] = None
    build_error: Optional[BaseException] = None
    sequence = itertools.count()
    try:
        while True:
            if not tasks.poll(_POLL):
                if os.getppid() != parent:
                    return
                continue
            message = tasks.recv()
            if message[0] == "stop":
                return
            if message[0] == "epoch":
                try:
                    runner, build_error = _build_runner(pipeline, message[1]), None
                except Exception as error:  # pylint: disable=broad-except  # reported with the first task
                    runner, build_error = None, error
                continue
            _, task_id, payload = message
            start, indices, want_batch = decode(payload, directory)
            try:
                if runner is None:
                    raise build_error or RuntimeError("no epoch was started in this Pipeline worker")
                reply: Tuple[Any, ...] = ("ok", task_id, runner.run(start, indices, want_batch))
                name = f"{prefix}{index}-{next(sequence)}"
                try:
                    encoded = encode(reply, directory, name, _RESULT_THRESHOLD)
                except Exception as error:  # pylint: disable=broad-except
                    raise TypeError(f"A batch of the Pipeline could not be sent from a worker process to the trainer "
                                    f"({type(error).__name__}: {error}); every value the per-sample ops produce must "
                                    f"be picklable (or use Pipeline(num_process=0))") from error
            except Exception as error:  # pylint: disable=broad-except
                encoded = encode(("error", task_id, _portable(error)), directory, f"{prefix}{index}-e", 0)
            results.send(encoded)
    except (EOFError, OSError):  # the trainer is gone
        return
    finally:
        remove_files(directory, f"{prefix}{index}-")


# ---------------------------------------------------------------------------------------------------------- trainer
class _Worker:
    def __init__(self, process: Any, tasks: Any, results: Any) -> None:
        self.process, self.tasks, self.results = process, tasks, results


class WorkerPool:
    """The Pipeline's worker processes for one `fit` / `test` (started lazily, at the first epoch that uses them).

    Args:
        pipeline: The Pipeline (its `data`, `batch_size` and `ops` are what the workers compute with).
        num_process: The requested worker count (None: FastEstimator's default; 0: none).
    """

    def __init__(self, pipeline: Any, num_process: Optional[int]) -> None:
        self.pipeline = pipeline
        self.requested = num_process
        self.workers: List[_Worker] = []
        self.disabled = num_process == 0
        self.directory = shared_directory()
        self.prefix = f"fe-pipeline-{os.getpid()}-{secrets.token_hex(3)}-"
        self.method = start_method()
        self.epoch_ids = itertools.count()

    # ------------------------------------------------------------------ which epochs
    def wanted(self, loader: Any, estimated_samples: int) -> bool:
        """Whether this epoch's per-sample path runs in the workers (starting them if needed)."""
        if self.disabled or loader.timer is not None or estimated_samples < min_worker_samples():
            return False
        if not self.workers:
            self._start()
        return bool(self.workers)

    # ------------------------------------------------------------------ start / stop
    def _start(self) -> None:
        count = resolve_num_process(self.requested)
        if count < 1:
            self.disabled = True
            return
        pipeline = worker_copy(self.pipeline)
        if self.method != "fork":
            problem = _unpicklable(pipeline)
            if problem is not None:
                warnings.warn(f"Pipeline(num_process={self.requested}) runs its per-sample path in the training "
                              f"process: the worker processes (start method {self.method!r}) need to pickle the "
                              f"datasets and ops, and {problem}", RuntimeWarning, stacklevel=4)
                self.disabled = True
                return
        context = get_context(self.method)
        trainer_ends: List[Any] = []
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
                                          args=(index, pipeline, task_read, result_write, os.getpid(), inherited,
                                                self.directory, self.prefix))
                with warnings.catch_warnings():  # Python 3.12+ warns about forking a threaded process; see above
                    warnings.simplefilter("ignore", DeprecationWarning)
                    process.start()
                task_read.close()
                result_write.close()
                trainer_ends += [task_write, result_read]
                self.workers.append(_Worker(process, task_write, result_read))
        except BaseException:
            self.close()
            raise
        finally:
            if cv2 is not None:
                cv2.setNumThreads(cv2_threads)

    def close(self) -> None:
        """Stop the workers (asking first, then terminating) and remove any shared-memory files left."""
        workers, self.workers = self.workers, []
        for worker in workers:
            try:
                worker.tasks.send(("stop",))
            except (OSError, ValueError):
                pass
        for worker in workers:
            worker.process.join(timeout=2.0)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(timeout=1.0)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(timeout=1.0)
            for connection in (worker.tasks, worker.results):
                connection.close()
        remove_files(self.directory, self.prefix)

    def pids(self) -> List[int]:
        """The worker processes' ids (for tests and diagnostics)."""
        return [worker.process.pid for worker in self.workers]

    # ------------------------------------------------------------------ one epoch
    def run_epoch(self, loader: Any, key: int, stream: TaskStream, aligned: List[bool], limit: int
                  ) -> Iterator[Tuple[int, Any, Tuple[Any, ...]]]:
        """Compute `stream`'s tasks in the workers; yield `(start, indices, result)` in task order.

        Tasks are prefetched up to stream position `limit` (the epoch's end when nothing is filtered out); beyond it
        only on demand, so an epoch ends without computing tasks nobody uses.
        """
        plan = loader.plan
        spec = loader.worker_spec(key)
        workers = self.workers
        for worker in workers:
            worker.tasks.send(("epoch", spec))
        tasks = iter(stream)
        upcoming = [next(tasks)]
        in_flight: Deque[Tuple[int, _Worker, int, Any]] = collections.deque()
        counter = itertools.count()
        epoch_id = next(self.epoch_ids)
        capacity = PREFETCH * len(workers)

        def dispatch() -> None:
            start, indices = upcoming.pop()
            upcoming.append(next(tasks))
            task_id = next(counter)
            worker = workers[task_id % len(workers)]
            payload = encode((start, indices, aligned[0]), self.directory, f"{self.prefix}t{epoch_id}-{task_id}",
                             _TASK_THRESHOLD)
            worker.tasks.send(("task", task_id, payload))
            in_flight.append((task_id, worker, start, indices))

        def fill() -> None:
            while len(in_flight) < capacity and (upcoming[0][0] < limit or not aligned[0]):
                dispatch()

        try:
            fill()
            while True:
                if not in_flight:
                    dispatch()  # past the expected end: filtered samples need more
                task_id, worker, start, indices = in_flight.popleft()
                result = self._receive(worker, task_id, plan)
                fill()
                yield start, indices, result
        finally:
            if in_flight:
                self._drain(in_flight)

    def _receive(self, worker: _Worker, task_id: int, plan: Any) -> Tuple[Any, ...]:
        message = self._message(worker, plan)
        reply = decode(message, self.directory)
        if reply[1] != task_id:
            raise PipelineWorkerError(f"Pipeline worker {self.workers.index(worker)} answered task {reply[1]} where "
                                      f"task {task_id} was expected")
        if reply[0] == "error":
            raise _rebuild(reply[2], self.workers.index(worker))
        return reply[2]

    def _message(self, worker: _Worker, plan: Any, timeout: Optional[float] = None) -> Any:
        connection, process = worker.results, worker.process
        waited = 0.0
        while True:
            if connection.poll():
                try:
                    return connection.recv()
                except EOFError:
                    break
            ready = wait([connection, process.sentinel], timeout=_POLL)
            if not ready:
                waited += _POLL
                if timeout is not None and waited >= timeout:
                    raise TimeoutError("a Pipeline worker did not answer")
                continue
            if connection not in ready and not connection.poll():
                break  # the process ended and left nothing to read
        process.join(timeout=1.0)
        index = self.workers.index(worker) if worker in self.workers else -1
        raise PipelineWorkerError(_death_message(index, process, plan))

    def _drain(self, in_flight: Deque[Tuple[int, _Worker, int, Any]]) -> None:
        """Read and drop the results of tasks dispatched ahead that nobody will use (so the next epoch starts clean)."""
        while in_flight:
            _, worker, _, _ = in_flight.popleft()
            try:
                discard(self._message(worker, None, timeout=10.0), self.directory)
            except BaseException:  # pylint: disable=broad-except  # a dead or stuck worker: start afresh later
                self.close()
                return


def _death_message(index: int, process: Any, plan: Any) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with code {code}"
    where = f" while preparing batches in {plan.where()}" if plan is not None else ""
    return (f"Pipeline worker {index} (pid {process.pid}) {how}{where}. The operating system kills processes this way "
            f"when memory runs out: try a smaller Pipeline num_process or batch size (num_process=0 runs the pipeline "
            f"in the training process)")


def _rebuild(info: Tuple[Optional[bytes], str, str, List[str], str, int], index: int) -> BaseException:
    blob, name, message, notes, text, pid = info
    error: Optional[BaseException] = None
    if blob is not None:
        try:
            error = pickle.loads(blob)
        except Exception:  # pylint: disable=broad-except
            error = None
    if error is None:
        error = PipelineWorkerError(f"{name}: {message}")
    for note in notes:
        add_note(error, note)
    add_note(error, f"raised in Pipeline worker {index} (pid {pid}); set Pipeline(num_process=0) to run the "
                    f"pipeline in the training process")
    error.__cause__ = _RemoteTraceback(f"\n\"\"\"\n{text}\"\"\"")
    return error


def _unpicklable(pipeline: Any) -> Optional[str]:
    """What in the Pipeline cannot be pickled (for spawned workers), or None."""
    try:
        pickle.dumps(pipeline)
        return None
    except Exception:  # pylint: disable=broad-except
        pass
    data, batch_size, ops = pipeline.data, pipeline.batch_size, pipeline.ops
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
