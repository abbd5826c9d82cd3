"""`Estimator`: the training loop (`fit`: warmup, then epochs of train and eval; `test`)."""
from __future__ import annotations

import contextlib
import itertools
import os
import sys
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from fe_core.allocator import keep_freed_memory, release_freed_memory
from fe_core.containers import to_list, to_set
from fe_core.data import Data, DSData
from fe_core.data_source import DataSource
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.dataset_check import check_datasets_agree
from fe_core.distributed.reduce import batch_scalar_means
from fe_core.schedule.scheduler import Scheduler, get_current_items
from fe_core.summary.summary import Summary
from fe_core.summary.system import System
from fe_core.trace import EvalEssential, Logger, PerDSTrace, TestEssential, Trace, TrainEssential, sort_traces
from fe_core.trace import implemented_hooks
from fe_core.trace.tensor_data import TensorViews, reads_tensors
from fe_core.framework.public import PUBLIC_DEVICE
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.progress_bar import ProgressBar
from fe_core.trace.abort import abort_run
from fe_core.distributed.failure import peer_failure, record_failure, report_failure
from fe_core.termination import SIGTERM_EXIT_CODE, Terminated, sigterm_as_interrupt
from fe_core.export import fe_export
from fe_core.misuse import check_ds_ids_exist
from fe_core.warmup import Warmup

__all__ = ["Estimator", "EarlyStop", "record_history"]



@fe_export("fe.estimator.EarlyStop")
class EarlyStop(Exception):
    """Raised inside the loop when a trace sets `system.stop_training`; caught by the Estimator."""


@fe_export("fe.estimator.record_history", "fe.record_history")
def record_history(path: Union[bool, str]) -> None:
    """Choose where this process records its runs' history (see `fe_core.summary.history`).

    Every `fit` and `test` is recorded by default, in `~/fastestimator_data/history.db` (or the file named by the
    `FE_HISTORY_DB` environment variable); `fe history` lists the runs.

    Args:
        path: True for the default location, False to stop recording, or a database file path.

    Raises:
        ValueError: If `path` is neither a bool nor a file path.

    Example:
        >>> record_history(False)  # this process records nothing
        >>> record_history(True)   # back to the default location
    """
    from fe_core.summary.history import set_history_location  # pylint: disable=import-outside-toplevel
    set_history_location(path)


def _caller_file() -> str:
    """The file of the code that created the Estimator (outside fe's own packages), for the run history."""
    frame: Any = sys._getframe(1)  # pylint: disable=protected-access
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_FE_CORE_DIR):
            return os.path.realpath(path) if os.path.exists(path) else path
        frame = frame.f_back
    return "<unknown>"


_FE_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@contextlib.contextmanager
def _exit_on_sigterm() -> Any:
    """SIGTERM during the run interrupts it as Ctrl-C does (one line, run history 'Aborted'), then the process exits
    with code 143 as SIGTERM's default would, without a traceback (see `fe_core.termination`)."""
    try:
        with sigterm_as_interrupt():
            yield
    except Terminated:
        raise SystemExit(SIGTERM_EXIT_CODE) from None


def _history(system: System, est_path: str, defer_row: bool = False) -> Any:
    """The run-history recorder of a fit/test (imported on first use: sqlite3 is not needed to import fe); in a
    data-parallel run only rank 0 records. With `defer_row` the run's row is written once `start_row()` is called."""
    if not get_communicator().is_main:
        import contextlib  # pylint: disable=import-outside-toplevel
        return contextlib.nullcontext()
    from fe_core.summary.history import history_context  # pylint: disable=import-outside-toplevel
    return history_context(system, est_path, defer_row=defer_row)


class _CallThenIterate:
    """An iterable that calls `function` when iteration starts, then yields from `iterator`; chained after a loader's
    first batch it runs `function` once that batch's step and hooks are done, at no cost to later steps."""

    def __init__(self, function: Any, iterator: Iterable[Dict[str, Any]]) -> None:
        self.function, self.iterator = function, iterator

    def __iter__(self) -> Any:
        self.function()
        return iter(self.iterator)


def _after_first_batch(loader: Iterable[Dict[str, Any]], function: Any) -> Iterable[Dict[str, Any]]:
    """`loader`'s batches, calling `function` after the first one has been processed (or at once if there is none)."""
    iterator = iter(loader)
    for first in iterator:
        return itertools.chain((first,), _CallThenIterate(function, iterator))
    function()
    return ()


def _local_samples(batch: Mapping[str, Any]) -> int:
    """How many samples this process's part of a batch has (1 when no value is batched)."""
    return next((len(value) for value in batch.values() if getattr(value, "ndim", 0) >= 1), 1)


def _counting_samples(loader: Iterable[Dict[str, Any]], system: System) -> Iterable[Dict[str, Any]]:
    """Distributed evaluation and test: record each batch's sample count on this process (`system.batch_samples`),
    so that logged means are weighted by samples across processes."""
    for batch in loader:
        system.batch_samples = _local_samples(batch)
        yield batch


class _EpochPlan:
    """What one (mode, epoch, ds_id) runs, resolved once: the trace hooks to call and the keys to move.

    `batch_begin` / `batch_end` are the hooks called on every step; `log_batch_begin` / `log_batch_end` are called
    instead on a training log step. They differ only in training, where traces marked `fe_log_steps_only` are left
    out of the every-step lists (so an ordinary step with only the Logger and TrainEssential calls no hook at all).
    """

    __slots__ = ("traces", "batch_begin", "batch_end", "log_batch_begin", "log_batch_end", "desired_keys",
                 "pipeline_keys", "log_means")

    def __init__(self, traces: List[Trace], desired_keys: Optional[Set[str]], pipeline_keys: Optional[Set[str]],
                 train: bool, views: Optional[TensorViews] = None) -> None:
        self.traces = traces
        begin = [t for t in traces if "on_batch_begin" in implemented_hooks(t)]
        end = [t for t in traces if "on_batch_end" in implemented_hooks(t)]

        def hook(trace: Trace, name: str) -> Any:  # a user's trace reads framework tensors, as in FastEstimator
            method = getattr(trace, name)
            return views.hook(method) if views is not None and reads_tensors(trace, name) else method

        self.log_batch_begin = [hook(t, "on_batch_begin") for t in begin]
        self.log_batch_end = [hook(t, "on_batch_end") for t in end]
        self.batch_begin = [hook(t, "on_batch_begin") for t in begin if not (train and t.fe_log_steps_only)]
        self.batch_end = [hook(t, "on_batch_end") for t in end if not (train and t.fe_log_steps_only)]
        self.desired_keys = desired_keys
        self.pipeline_keys = pipeline_keys
        # A data-parallel training log step: the monitored per-batch means to make the whole global batch's
        # (fe_core.distributed.reduce.batch_scalar_means); None when there is one process or nothing to log.
        self.log_means: Optional[List[str]] = None
        if train and get_communicator().world_size > 1:
            self.log_means = next((list(t.inputs) for t in traces if isinstance(t, TrainEssential)), None)


@fe_export("fe.estimator.Estimator", "fe.Estimator")
class Estimator:
    """Trains and tests a Network on a Pipeline's data, calling Traces along the way.

    Args:
        pipeline: The data source: a `Pipeline` (any `fe_core.data_source.DataSource`).
        network: The ops and models (from `fe.Network`).
        epochs: How many epochs `fit` runs.
        train_steps_per_epoch: Cut short (or extend, by repeating the data) every training epoch to this many steps;
            None uses all the data.
        eval_steps_per_epoch: The same for evaluation epochs.
        traces: Traces (or Schedulers of traces) to run.
        log_steps: Log training every this many steps (0: only epoch summaries; None: no logging at all).
        eval_log_steps: The evaluation steps at which to print progress.
        monitor_names: Extra keys to log (loss keys are logged anyway).

    Started by `torchrun` (or with TF_CONFIG naming several workers), the same script trains data-parallel on the
    framework's own engine: each process takes its part of every global batch (`batch_size` is the global batch
    size), metrics and logged evaluation means are reduced over every process's samples, only rank 0 prints and
    writes files, and `system.num_devices` is the number of processes (see `fe_core.distributed`). A trace that
    sets `system.stop_training` during a training epoch stops the run at the end of that epoch, on every process
    together.

    Every `fit` and `test` is recorded in the run-history database (`fe history` lists them; `record_history`
    chooses where, or turns it off).

    While `fit` or `test` runs, glibc's malloc keeps freed memory for the next step instead of returning it to the
    system and faulting it back in (much faster CPU training; see `fe_core.allocator`, `FE_KEEP_FREED_MEMORY=0` turns
    it off); the memory is given back when the run ends.

    Example:
        >>> import numpy as np
        >>> import fe
        >>> from fe.architecture.pytorch import LeNet
        >>> from fe.dataset import NumpyDataset
        >>> from fe.op.numpyop.univariate import ExpandDims, Minmax
        >>> from fe.op.tensorop.loss import CrossEntropy
        >>> from fe.op.tensorop.model import ModelOp, UpdateOp
        >>> from fe.trace.metric import Accuracy
        >>> rng = np.random.RandomState(0)
        >>> data = NumpyDataset({"x": rng.rand(48, 28, 28).astype("float32"), "y": rng.randint(0, 10, 48)})
        >>> pipeline = fe.Pipeline(train_data=data, eval_data=data.split(16, seed=0), batch_size=16,
        ...                        ops=[ExpandDims(inputs="x", outputs="x", axis=0), Minmax(inputs="x", outputs="x")])
        >>> model = fe.build(model_fn=LeNet, optimizer_fn="adam", model_name="lenet")
        >>> network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
        ...                           CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        ...                           UpdateOp(model=model, loss_name="ce")])
        >>> estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=0,
        ...                          traces=Accuracy(true_key="y", pred_key="y_pred"))
        >>> summary = estimator.fit("demo")  # prints one line per epoch, as FastEstimator does
        FastEstimator-Start: step: 1; logging_interval: 0; num_device: ...
        FastEstimator-Train: step: 2; epoch: 1;
        FastEstimator-Eval: step: 2; epoch: 1; accuracy: ...; ce: ...;
        FastEstimator-Train: step: 4; epoch: 2;
        FastEstimator-Eval: step: 4; epoch: 2; accuracy: ...; ce: ...;
        FastEstimator-Finish: step: 4; lenet_lr: 0.001; total_time(sec): ...
        >>> sorted(summary.history["eval"])
        ['accuracy', 'ce', 'epoch']
    """

    def __init__(self,
                 pipeline: DataSource,
                 network: Any,
                 epochs: int,
                 train_steps_per_epoch: Optional[int] = None,
                 eval_steps_per_epoch: Optional[int] = None,
                 traces: Union[None, Trace, Scheduler, Sequence[Union[Trace, Scheduler]]] = None,
                 log_steps: Optional[int] = 100,
                 eval_log_steps: Sequence[int] = (),
                 monitor_names: Union[None, str, Iterable[str]] = None) -> None:
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise ValueError(f"Estimator epochs must be a positive integer, got {epochs!r}")
        if log_steps is not None and (isinstance(log_steps, bool) or not isinstance(log_steps, int) or log_steps < 0):
            raise ValueError(f"log_steps must be None or a non-negative integer, got {log_steps!r}")
        for name, value in (("train_steps_per_epoch", train_steps_per_epoch),
                            ("eval_steps_per_epoch", eval_steps_per_epoch)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be None or a positive integer, got {value!r}")
        self.pipeline: DataSource = pipeline  # the Estimator uses this interface only (fe_core.data_source)
        self.network = network
        self.traces: List[Any] = to_list(traces)
        for trace in get_current_items(self.traces):
            if not isinstance(trace, Trace):
                raise TypeError(f"Estimator traces must be Traces (or Schedulers of Traces), got "
                                f"{type(trace).__name__}")
        self.monitor_names: Set[str] = {name for name in to_list(monitor_names) if name is not None}
        self.filepath = _caller_file()
        # A live progress bar when a person is watching (a terminal) and logging is on; rank 0 only.
        communicator = get_communicator()
        self.show_progress = log_steps is not None and sys.stdout.isatty() and communicator.is_main
        self.traces_in_use: List[Any] = []
        self.system = System(network=network,
                             pipeline=pipeline,
                             traces=self.traces,
                             num_devices=communicator.world_size if communicator.world_size > 1 else
                             network.backend.num_devices(),
                             log_steps=log_steps,
                             total_epochs=epochs,
                             train_steps_per_epoch=train_steps_per_epoch,
                             eval_steps_per_epoch=eval_steps_per_epoch,
                             eval_log_steps=eval_log_steps)
        self._sorted_cache: Dict[Tuple[str, Tuple[int, ...], Tuple[str, ...]], List[Trace]] = {}
        self._after_first_step: Any = None  # called once the first training step is done (see fit)

    # ------------------------------------------------------------------ public API
    def fit(self, summary: Optional[str] = None, warmup: bool = True, eager: bool = False) -> Optional[Summary]:
        """Train: warmup (unless disabled), then `epochs` epochs of training and evaluation.

        Args:
            summary: A name for the experiment; when given, the history is recorded and returned.
            warmup: Run one step of every configuration first to catch mistakes before real training.
            eager: Run TensorFlow ops eagerly instead of in a `tf.function` (ignored by torch).

        Returns:
            The Summary when `summary` is given, else None.
        """
        self.system.reset(summary_name=summary)
        run_modes = {"train", "eval"}
        check_datasets_agree(self.pipeline, run_modes, "fit")  # data-parallel: every process holds the same data
        keep_freed_memory()  # steps reuse their buffers instead of faulting them in again (see fe_core.allocator)
        try:
            # The run history writes its first row once the first training step is done: off the path to that step.
            with _exit_on_sigterm(), _history(self.system, self.filepath, defer_row=True) as recorder:
                self._after_first_step = getattr(recorder, "start_row", None)
                self._prepare_traces(run_modes)
                if warmup:
                    self._warmup(eager=eager)
                with self.pipeline.workers():  # worker processes: started once per run, if used
                    self._start(run_modes, eager=eager)
        finally:
            self._after_first_step = None
            release_freed_memory()
        return self.system.summary if self.system.summary else None

    def test(self, summary: Optional[str] = None, eager: bool = False) -> Optional[Summary]:
        """Run the test data through the network and traces once.

        Args:
            summary: A name for the experiment (defaults to the one given to `fit`).
            eager: Run TensorFlow ops eagerly.

        Returns:
            The Summary when the experiment is named, else None.
        """
        self.system.reset_for_test(summary_name=summary)
        check_datasets_agree(self.pipeline, {"test"}, "test")
        keep_freed_memory()
        try:
            with _exit_on_sigterm(), _history(self.system, self.filepath):
                self._prepare_traces({"test"})
                self._check_ds_ids()
                with self.pipeline.workers():
                    self._start({"test"}, eager=eager)
        finally:
            release_freed_memory()
        return self.system.summary if self.system.summary else None

    def get_scheduled_items(self, mode: str) -> List[Any]:
        """Every item whose schedule shapes `mode`'s configurations (pipeline, network and traces)."""
        return self.pipeline.get_scheduled_items(mode) + self.network.get_scheduled_items(mode) + self.traces_in_use

    # ------------------------------------------------------------------ preparation
    def _prepare_traces(self, run_modes: Set[str]) -> None:
        self.traces_in_use = list(self.traces)
        display: List[Trace] = []
        if self.show_progress and not any(isinstance(t, ProgressBar) for t in get_current_items(self.traces)):
            display.append(ProgressBar())  # before the Logger: it clears itself before a log line
        if self.system.log_steps is not None:
            display.append(Logger())
        # Before any RestoreWizard, so that checkpoints include what the Logger records in the Summary.
        wizards = [i for i, t in enumerate(self.traces_in_use) if isinstance(t, RestoreWizard)]
        position = wizards[0] if wizards else len(self.traces_in_use)
        self.traces_in_use[position:position] = display
        monitor_names = set(self.monitor_names) | self.network.get_loss_keys()
        for trace in get_current_items(self.traces_in_use, run_modes):
            monitor_names |= trace.fe_monitor_names
        pipeline_modes = self.pipeline.get_modes()
        essentials: List[Trace] = []
        if "train" in run_modes and "train" in pipeline_modes:
            essentials.append(TrainEssential(monitor_names=monitor_names))
        if "eval" in run_modes and "eval" in pipeline_modes:
            essentials.append(EvalEssential(monitor_names=monitor_names))
        if "test" in run_modes and "test" in pipeline_modes:
            essentials.append(TestEssential(monitor_names=monitor_names))
        self.traces_in_use = essentials + self.traces_in_use
        for trace in get_current_items(self.traces_in_use, run_modes):
            trace.system = self.system
        self._sorted_cache = {}

    def _sorted_traces(self, mode: Optional[Union[str, Set[str]]], epoch: Optional[int],
                       ds_ids: List[str]) -> List[Trace]:
        traces = get_current_items(self.traces_in_use, run_modes=mode, epoch=epoch)
        key = (str(sorted(to_set(mode))), tuple(id(t) for t in traces), tuple(ds_ids))
        if key not in self._sorted_cache:
            self._sorted_cache[key] = sort_traces(traces, ds_ids=ds_ids)
        return self._sorted_cache[key]

    def _plan(self, traces: List[Trace], mode: str, epoch: int, ds_id: str) -> _EpochPlan:
        ds_traces = get_current_items(traces, run_modes=mode, epoch=epoch, ds_id=ds_id)
        # '*' orders a trace after the others (it reads what they log); it asks for no batch key.
        trace_inputs = {key for trace in ds_traces for key in trace.inputs if key != "*"}
        needed, _, _, produced = self.network.get_keys(mode, epoch, ds_id, trace_inputs)
        return _EpochPlan(ds_traces, trace_inputs, needed | (trace_inputs - produced), train=mode == "train",
                          views=self._tensor_views(ds_traces))

    def _tensor_views(self, traces: List[Trace]) -> Optional[TensorViews]:
        """The converter giving user traces' batch hooks the Network's tensors on the host (None when no user trace
        has a batch hook, or the network has no backend: then every trace reads numpy)."""
        backend = getattr(self.network, "backend", None)
        if backend is None or not any(reads_tensors(t, name) for t in traces for name in ("on_batch_begin",
                                                                                           "on_batch_end")
                                      if name in implemented_hooks(t)):
            return None
        return TensorViews(lambda array: backend.to_tensor(array, PUBLIC_DEVICE))

    # ------------------------------------------------------------------ warmup
    def _warmup(self, eager: bool) -> None:
        """Run one step of every distinct (mode, epoch, ds_id) configuration and check every key is produced."""
        self._check_ds_ids()
        Warmup(self.pipeline, self.network, self.system, self.monitor_names, self._sorted_traces, self._plan,
               self.get_scheduled_items).run(eager)

    def _check_ds_ids(self) -> None:
        """Fail when an op, pop, slicer or trace is restricted to a ds_id that names no dataset (it would never run)."""
        check_ds_ids_exist(self.pipeline, (("Pipeline op", self.pipeline.ops), ("Network op", self.network.ops),
                                           ("Postprocessing op", self.network.postprocessing),
                                           ("Slicer", self.network.slicers), ("Trace", self.traces_in_use)),
                           self.system.total_epochs)

    # ------------------------------------------------------------------ the loop
    def _start(self, run_modes: Set[str], eager: bool) -> None:
        all_ds_ids = sorted({ds_id for mode in run_modes for ds_id in self.pipeline.get_ds_ids(
            epoch=max(self.system.epoch_idx, 1), mode=mode)} if self.pipeline.get_modes() else set())
        all_traces = self._sorted_traces(run_modes, None, all_ds_ids)
        # A RestoreWizard restores the checkpoint before any other trace begins.
        begin_order = sorted(all_traces, key=lambda trace: not isinstance(trace, RestoreWizard))
        try:
            self._run_hook(begin_order, "on_begin", Data())
            if "test" in run_modes:
                self.system.mode = "test"
                self._run_epoch("test", eager)
            else:
                resume = self._resume_position()
                first = resume.epoch if resume is not None else self.system.epoch_idx + 1
                for epoch in range(first, self.system.total_epochs + 1):
                    self.system.epoch_idx = epoch
                    modes = self.pipeline.get_modes(epoch=epoch)
                    if "train" in modes:
                        self.system.mode = "train"
                        self._run_epoch("train", eager, resume if resume is not None and resume.epoch == epoch
                                        else None)
                    if "eval" in modes:
                        self.system.mode = "eval"
                        self._run_epoch("eval", eager)
        except EarlyStop:
            pass
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM (Terminated) during the run
            # data-parallel: a launcher terminates the survivors when one process fails; say which, and why
            record_failure(interrupt)  # stopped on purpose, not dead
            peer = peer_failure(interrupt, terminated=True) if isinstance(interrupt, Terminated) else None
            if peer is not None:
                abort_run(all_traces, self.system, "failed", peer)
                raise peer from None
            abort_run(all_traces, self.system, "interrupted")
            # one short traceback (this frame up to the user's call), not the one through the framework's internals
            kind = Terminated if isinstance(interrupt, Terminated) else KeyboardInterrupt
            raise kind(f"fe: interrupted at step {self.system.global_step}") from None
        except BaseException as error:
            # data-parallel: recorded where the logging process reads it; a broken connection to a process that
            # failed is reported as that process's failure
            def report(reported: BaseException) -> None:
                abort_run(all_traces, self.system, "failed", reported)

            try:
                peer = report_failure(error, report)
            except Terminated:  # the launcher's SIGTERM, on its way before the failure was handled: report that
                peer = report_failure(error, report)
            if peer is not None:
                raise peer from None
            raise
        # Only a run that ended (or stopped early) ends its traces: no Finish line, final save or report for a failure
        self._run_hook(all_traces, "on_end", Data(), check_stop=False)

    def _run_hook(self, traces: List[Trace], hook: str, data: Data, check_stop: bool = True) -> None:
        for trace in traces:
            if hook in implemented_hooks(trace):
                getattr(trace, hook)(data)
        if check_stop and self._stop_agreed():
            raise EarlyStop()

    def _stop_agreed(self) -> bool:
        """Whether to stop: `system.stop_training`, or in a data-parallel run whether any process asked to stop
        (every process stops at the same hook, so none waits forever in a collective)."""
        communicator = get_communicator()
        if communicator.world_size == 1:
            return self.system.stop_training
        stop = bool(communicator.all_reduce(int(self.system.stop_training), "max"))
        self.system.stop_training = stop
        return stop

    def _resume_position(self) -> Any:
        """Where a checkpoint restored in on_begin was taken, when that was inside a training epoch."""
        position = self.pipeline.get_resume_position()
        return position if position is not None and position.mode == "train" else None

    def _run_epoch(self, mode: str, eager: bool, resume: Any = None) -> None:
        """Run one epoch of `mode`; `resume` continues a training epoch a checkpoint was taken in (the traces'
        epoch state was restored with it, so on_epoch_begin is not called again)."""
        system = self.system
        epoch = system.epoch_idx
        ds_ids = self.pipeline.get_ds_ids(epoch=epoch, mode=mode)
        traces = self._sorted_traces(mode, epoch, ds_ids)
        self.network.load_epoch_optimizers(epoch)  # before on_epoch_begin, so LR traces act on this epoch's optimizer
        if resume is None:
            system.batch_idx = None
            self._run_hook(traces, "on_epoch_begin", Data())
        end_data = Data()
        steps = system.train_steps_per_epoch if mode == "train" else system.eval_steps_per_epoch if mode == "eval" \
            else None
        for ds_id in ds_ids:
            if resume is not None and ds_ids.index(ds_id) < ds_ids.index(resume.ds_id):
                continue  # trained on before the checkpoint was taken
            system.ds_id = ds_id
            plan = self._plan(traces, mode, epoch, ds_id)
            per_ds = [trace for trace in plan.traces if isinstance(trace, PerDSTrace)]
            if mode == "eval":
                total = self.pipeline.get_num_steps(mode=mode, epoch=epoch, ds_id=ds_id, steps_per_epoch=steps)
                requested = system.eval_log_steps_request
                system.eval_log_steps = (list(requested) if total is None else
                                         [step for step in requested if step <= total], total)
            if resume is None or ds_id != resume.ds_id:
                for trace in per_ds:
                    trace.on_ds_begin(Data())
            with self.pipeline(mode=mode, epoch=epoch, ds_id=ds_id, steps_per_epoch=steps,
                               output_keys=plan.pipeline_keys).as_numpy() as loader, \
                    self.network(mode=mode, epoch=epoch, ds_id=ds_id, desired_output_keys=plan.desired_keys,
                                 eager=eager):
                if mode != "train" and get_communicator().world_size > 1:
                    loader = _counting_samples(loader, system)
                elif mode == "train" and self._after_first_step is not None:
                    loader, self._after_first_step = _after_first_batch(loader, self._after_first_step), None
                self._run_batches(loader, plan, mode)
            ds_data = DSData(ds_id, end_data) if ds_id else end_data
            for trace in per_ds:
                trace.on_ds_end(ds_data)
        system.ds_id = ""
        self._run_hook(traces, "on_epoch_end", end_data)

    def _run_batches(self, loader: Iterable[Dict[str, Any]], plan: _EpochPlan, mode: str) -> None:
        system = self.system
        run_step = self.network.run_step
        train = mode == "train"
        begin_hooks, end_hooks = plan.batch_begin, plan.batch_end
        log_means, means_now = plan.log_means, None
        # A data-parallel run stops at the end of the epoch, where every process agrees (see _stop_agreed).
        stop_now = get_communicator().world_size == 1
        for batch in loader:
            # system.update_batch_idx() and update_global_step(), inline: this loop runs every step
            system.batch_idx = 1 if system.batch_idx is None else system.batch_idx + 1
            if train:
                step = system.global_step = 1 if system.global_step is None else system.global_step + 1
                log_steps = system.log_steps
                if log_steps and (step % log_steps == 0 or step == 1):
                    begin_hooks, end_hooks = plan.log_batch_begin, plan.log_batch_end
                    # the step is decided by the global step, the same on every rank: all join the collective
                    means_now = log_means
                else:
                    begin_hooks, end_hooks = plan.batch_begin, plan.batch_end
                    means_now = None
            if begin_hooks:
                begin_data = Data(batch)
                for hook in begin_hooks:
                    hook(begin_data)
            if means_now is not None:
                samples = _local_samples(batch)
                result = run_step(batch)
                batch_scalar_means(result, means_now, samples)  # the whole global batch's loss, as one process
            else:
                result = run_step(batch)
            if end_hooks:
                data = Data(result)
                for hook in end_hooks:
                    hook(data)
            if system.stop_training and stop_now:
                raise EarlyStop()
