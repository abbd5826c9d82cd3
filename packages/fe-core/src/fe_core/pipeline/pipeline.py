"""`Pipeline`: the data source of training: datasets per mode, NumpyOps and batching."""
from __future__ import annotations

import contextlib
import copy
from typing import Any, Dict, Iterable, Iterator, List, Literal, Optional, Set, Union, overload

import numpy as np

from fe_core.containers import to_list
from fe_core.op.numpyop.batch import collate_samples
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.pipeline.config_checks import (DATA_MODES, check_batch_ops, check_batch_size, check_framework_sources,
                                            check_ops, is_positive_int, register_data)
from fe_core.pipeline.loader import EpochLoader
from fe_core.pipeline.op_runner import compile_steps, run_steps
from fe_core.pipeline.planner import (Planner, PlannerField, PipelineConfigError, is_native_dataset,
                                      native_dataset_backend)
from fe_core.pipeline.position import EpochPosition, PositionTracker
from fe_core.pipeline.public_loader import public_loader
from fe_core.schedule.scheduler import Scheduler
from fe_core.export import fe_export

__all__ = ["Pipeline", "PipelineConfigError", "is_native_dataset"]

class _PipelineContext:
    """What `Pipeline.__call__` returns: a context manager whose `__enter__` gives the epoch's loader.

    A Pipeline hands out one loader at a time (as in FastEstimator): entering a second context while one is active
    raises ValueError.
    """

    def __init__(self, pipeline: "Pipeline", loader: EpochLoader, tracker: PositionTracker,
                 native: Any = None) -> None:
        self.pipeline = pipeline
        self.loader = loader
        self.tracker = tracker
        self.native = native  # the user's own framework loader given as data: handed out unchanged
        self.numpy = False

    def as_numpy(self) -> "_PipelineContext":
        """This context, handing out the loader of numpy batches (fe's own fast path: the Estimator, get_results)."""
        self.numpy = True
        return self

    def __enter__(self) -> Any:
        if self.pipeline._active_context is not None:
            raise ValueError("You cannot generate a new loader from this Pipeline before closing its other loader "
                             "(Pipeline contexts cannot be nested)")
        self.pipeline._active_context = self
        if self.numpy:
            return self.loader
        return public_loader(self.loader, self.native)  # framework tensors for user code, as FastEstimator yields

    def __exit__(self, *exc_info: Any) -> None:
        if self.pipeline._active_context is self:
            self.pipeline._active_context = None
        self.tracker.active = None
        if not self.pipeline._pool_held:  # a bare loader: its workers stop with its context
            self.pipeline.close()


@fe_export("fe.pipeline.Pipeline", "fe.Pipeline")
class Pipeline:
    """Datasets per mode, the NumpyOps that preprocess them, and how samples are batched.

    Data for a mode may be a dataset, a `{ds_id: dataset}` dict, or a Scheduler of datasets (also as dict values). A
    dataset is any object with `__len__` and `__getitem__(i)` returning a dict of the sample's values; a
    `NumpyDataset` (or any dataset with `get_batch(indices)`) is also fetched whole batches at a time when no op has to
    run per sample. A dataset whose items are lists of sample dicts (BatchDataset, or a user's) gives one batch per
    item. A framework loader (a torch DataLoader, a tf.data.Dataset, recognised by a loaded backend) is iterated as
    is: it is already batched, so `batch_size`, `ops` and `num_process` are refused when every source is one (and
    warned about, applying to the fe datasets only, when some are), as in FastEstimator; `get_loader` returns it
    unchanged.

    `with pipeline(mode=..., epoch=...) as loader:` gives one epoch's batches; `with pipeline as loader:` the last
    call's settings (mode 'train', epoch 1 at first). One loader at a time: nesting contexts raises ValueError.

    Ops before a `Batch` op run on single samples, ops after it on whole batches. The batch-capable ops right before
    `Batch` (ExpandDims, Minmax, Normalize, ...) run once per batch instead of once per sample, with identical results,
    unless the Batch pads or uses a custom collate_fn.

    Args:
        train_data: Training data.
        eval_data: Evaluation data.
        test_data: Test data.
        batch_size: Samples per batch: an int, a Scheduler of ints, or a dict of those per mode. None (and no Batch op)
            yields single samples. A `Batch` op's own batch_size takes precedence.
        ops: NumpyOps and Schedulers of NumpyOps.
        num_process: How many worker processes compute the per-sample path (dataset access, per-sample ops,
            collation and the batch ops after them) ahead of the training step, as FastEstimator documents it: None
            uses min(CPUs, max(32, 32 x GPUs)), where in a data-parallel run CPUs is this process's share of the node
            (CPUs / LOCAL_WORLD_SIZE); 0 runs everything in this process (for debugging). The Pipeline owns its
            workers: they start at the first epoch of at least 1024 samples (smaller epochs, warmup steps and
            `get_results` run in this process) and stay for the whole `Estimator.fit` / `test` (or
            `with pipeline.workers():` block); a bare `with pipeline(mode=..., epoch=...) as loader:` starts its own
            and stops them when its context ends (`close()` stops them too). Batches come in order and are identical
            for every num_process, 0 included, since an epoch draws its order, its datasets' index maps
            (`fe_reset_ds`: BatchDataset, ExtendDataset, CombinedDataset, ...) and its key once, in this process, and
            each batch's random draws are seeded from (that key, the batch's position in the epoch); the workers
            redraw the index maps from the same seed (numpy's and Python's global random states are seeded while
            `fe_reset_ds` runs), so a user dataset's `fe_reset_ds` must draw from them, not from a generator of its
            own. In a
            data-parallel run each process runs its own workers over its part of every global batch. What stays in
            this process: the whole-batch path (no per-sample op, a dataset with `get_batch`, batch ops that work on
            whole batches). An InterleaveDataset's members share the workers; a GeneratorDataset's generator runs
            ahead in one worker process (in its own order). Workers get a copy of the datasets and ops when they
            start (fork on Linux; elsewhere they are pickled, and an unpicklable op makes the Pipeline warn and run
            in this process); changes the training process makes to them later do not reach the workers.

    Raises:
        ValueError: On invalid batch sizes, ds_ids, or num_process.
        PipelineConfigError: (a ValueError and an AssertionError, as FastEstimator raises) If two Batch ops apply to
            one mode, epoch and ds_id, or batch_size / ops / num_process come with only framework loaders.
        TypeError: If an op is not a NumpyOp, or data is not a dataset.

    Example:
        >>> import numpy as np
        >>> from fe_core.dataset import NumpyDataset
        >>> from fe_core.op.numpyop.univariate import ExpandDims, Minmax
        >>> ds = NumpyDataset({"x": np.zeros((10, 28, 28), dtype=np.uint8), "y": np.arange(10)})
        >>> pipeline = Pipeline(train_data=ds, batch_size=4, ops=[ExpandDims("x", "x"), Minmax("x", "x")])
        >>> with pipeline(mode="train", epoch=1) as loader:
        ...     shapes = [batch["x"].shape for batch in loader]
        >>> shapes
        [(4, 28, 28, 1), (4, 28, 28, 1), (2, 28, 28, 1)]
    """

    # what the epochs are planned from (and what worker processes receive), kept on the planner
    data: Dict[str, Dict[str, Any]] = PlannerField()  # type: ignore[assignment]
    ops: List[Union[NumpyOp, Scheduler]] = PlannerField()  # type: ignore[assignment]
    batch_size: Union[None, int, Scheduler, Dict[str, Union[int, Scheduler]]] = PlannerField()  # type: ignore

    def __init__(self,
                 train_data: Any = None,
                 eval_data: Any = None,
                 test_data: Any = None,
                 batch_size: Union[None, int, Scheduler, Dict[str, Union[int, Scheduler]]] = None,
                 ops: Union[None, NumpyOp, Scheduler, Iterable[Union[NumpyOp, Scheduler]]] = None,
                 num_process: Optional[int] = None) -> None:
        registered = {mode: register_data(mode, data)
                      for mode, data in zip(DATA_MODES, (train_data, eval_data, test_data)) if data is not None}
        check_batch_size(batch_size)
        self.planner = Planner(registered, batch_size, list(to_list(ops)))
        check_ops(self.ops)
        if num_process is not None and (not isinstance(num_process, int) or isinstance(num_process, bool)
                                        or num_process < 0):
            raise ValueError(f"Pipeline num_process must be None or a non-negative integer, got {num_process!r}")
        self.num_process = num_process
        check_framework_sources(self.data, batch_size, ops, num_process)
        check_batch_ops(self.data, self.ops)
        self._position = PositionTracker()
        self._worker_pool: Any = None  # the worker processes' pool, made by the first loader that may use it
        self._pool_held = False  # inside `workers()`: the pool lives until the block ends, not each loader
        self._active_context: Optional[_PipelineContext] = None  # the loader context now entered, if any
        self._bare_contexts: List[_PipelineContext] = []  # contexts entered by `with pipeline as loader`
        # What `with pipeline as loader` uses: the last `pipeline(...)` call's settings (FastEstimator's defaults first)
        self._context_args: Dict[str, Any] = {"mode": "train", "epoch": 1, "ds_id": "", "shuffle": None,
                                              "steps_per_epoch": None, "output_keys": None}

    # ------------------------------------------------------------------ iteration
    def __call__(self,
                 mode: str,
                 epoch: int = 1,
                 ds_id: str = "",
                 shuffle: Optional[bool] = None,
                 steps_per_epoch: Optional[int] = None,
                 output_keys: Optional[Set[str]] = None,
                 warmup: bool = False) -> _PipelineContext:
        """Prepare one epoch of data; use as `with pipeline(mode="train", epoch=1) as loader: for batch in loader:`.

        Everything (dataset, ops, batch size, which ops can be skipped) is resolved here, once.

        Args:
            mode: 'train', 'eval' or 'test'.
            epoch: The epoch (from 1), for Schedulers.
            ds_id: The dataset id ('' for a plain dataset).
            shuffle: Whether to shuffle; None shuffles in 'train' mode only.
            steps_per_epoch: Yield exactly this many batches, cutting the epoch short or repeating the (re-shuffled)
                data; None yields one pass.
            output_keys: Only return these keys and skip ops whose outputs none of them needs (filters and ops
                without outputs still run). None or empty returns every key.
            warmup: The Estimator's warmup: ops see `state['warmup']` True, and an op that declares outputs but
                returns None fails with a message naming it.

        Returns:
            A context manager whose value is an iterable of batches: dicts of framework tensors, as in FastEstimator
            (torch tensors on the CPU when torch is installed, else the installed framework's; numpy arrays where no
            framework is installed), made zero-copy from the Pipeline's numpy batches where possible. A framework
            loader given as data (a torch DataLoader, a tf.data.Dataset) is the value itself, unchanged.

        Raises:
            KeyError: If there is no data for `mode` / `ds_id`.
            ValueError: If several Batch ops apply or steps_per_epoch is not positive.
        """
        if self._active_context is not None:
            raise ValueError("You cannot invoke a Pipeline's __call__ method while it already has an active loader "
                             "(Pipeline contexts cannot be nested)")
        if steps_per_epoch is not None and not is_positive_int(steps_per_epoch):
            raise ValueError(f"steps_per_epoch must be None or a positive integer, got {steps_per_epoch!r}")
        self._context_args = {"mode": mode, "epoch": epoch, "ds_id": ds_id, "shuffle": shuffle,
                              "steps_per_epoch": steps_per_epoch, "output_keys": output_keys}
        return self._context(mode, epoch, ds_id, shuffle, steps_per_epoch, output_keys, warmup, in_process=False)

    def _context(self, mode: str, epoch: int, ds_id: str, shuffle: Optional[bool], steps_per_epoch: Optional[int],
                 output_keys: Optional[Set[str]], warmup: bool, in_process: bool) -> _PipelineContext:
        """The loader context of one epoch; `in_process` keeps every task in this process (no worker pool)."""
        plan = self.planner.plan(mode, epoch, ds_id, output_keys)
        if warmup:
            for each in [plan] + list(plan.sub_plans or ()):
                each.state["warmup"] = True
        loader = EpochLoader(plan, shuffle=mode == "train" if shuffle is None else bool(shuffle),
                             steps_per_epoch=steps_per_epoch, tracker=self._position,
                             pool=None if in_process else self._pool())
        return _PipelineContext(self, loader, self._position, native=plan.dataset if plan.native else None)

    def __enter__(self) -> EpochLoader:
        """`with pipeline as loader:` - the loader of the last `pipeline(...)` call's settings (mode 'train', epoch 1,
        ds_id '' when it was never called), as in FastEstimator.

        Raises:
            ValueError: If the Pipeline already has an active loader.
            KeyError: If there is no data for the mode / ds_id.
        """
        context = self(**self._context_args)
        loader = context.__enter__()
        self._bare_contexts.append(context)
        return loader

    def __exit__(self, *exc_info: Any) -> None:
        if self._bare_contexts:
            self._bare_contexts.pop().__exit__(*exc_info)

    def get_loader(self, mode: str = "train", epoch: int = 1, shuffle: Optional[bool] = None, ds_id: str = "") -> Any:
        """The data loader of `mode` at `epoch`: a framework loader given as data (a torch DataLoader, a
        tf.data.Dataset) is returned unchanged, as in FastEstimator; an fe dataset gives an iterable of batches.

        Args:
            mode: 'train', 'eval' or 'test'.
            epoch: The epoch (from 1), for Schedulers.
            shuffle: Whether to shuffle an fe dataset; None shuffles in 'train' mode only.
            ds_id: The dataset id ('' for a plain dataset).

        Returns:
            The user's own loader, or an iterable of batches (dicts of framework tensors, as `with pipeline(...)`
            gives: a `torch.utils.data.DataLoader` where torch tensors are the public ones, see
            `fe_core.pipeline.public_loader`); None when a Scheduler switched the data off at `epoch`.

        Raises:
            KeyError: If there is no data for `mode` / `ds_id`.
        """
        dataset = self.planner.dataset(mode, epoch, ds_id)
        if dataset is None:
            return None
        if is_native_dataset(dataset):
            return dataset
        shuffle = mode == "train" if shuffle is None else bool(shuffle)
        return public_loader(EpochLoader(self.planner.plan(mode, epoch, ds_id, None), shuffle=shuffle))

    def _pool(self) -> Any:
        """The Pipeline's worker pool (made here, its processes started by the first epoch that uses them), or None
        with num_process=0."""
        if self.num_process == 0:
            return None
        if self._worker_pool is None:
            from fe_core.pipeline._workers import WorkerPool  # pylint: disable=import-outside-toplevel
            self._worker_pool = WorkerPool(self.planner, self.num_process)
        return self._worker_pool

    def close(self) -> None:
        """Stop the worker processes (if any run) and remove their shared-memory files. The next epoch that needs
        workers starts new ones. The end of `workers()`, the end of a bare `with pipeline(...)` context and a
        finalizer (the Pipeline garbage-collected, or the interpreter exiting) call it too."""
        pool, self._worker_pool = self._worker_pool, None
        if pool is not None:
            pool.close()  # its open epoch, member pools and feed processes too

    @contextlib.contextmanager
    def workers(self) -> Iterator[None]:
        """Keep worker processes (`num_process`) for the epochs iterated inside this block; stop them at its end.

        `Estimator.fit` and `test` open this block around the whole run, so workers start once per run, at the first
        epoch that uses them. Outside such a block each loader context (`with pipeline(...) as loader`) starts its
        own workers when its epoch is large enough, and stops them when it ends.

        Example:
            >>> # with pipeline.workers():
            >>> #     for epoch in (1, 2):
            >>> #         with pipeline(mode="train", epoch=epoch) as loader:
            >>> #             for batch in loader: ...
        """
        if self._pool_held or self.num_process == 0:
            yield
            return
        self._pool_held = True
        try:
            yield
        finally:
            self._pool_held = False
            self.close()

    # ------------------------------------------------------------------ checkpoints
    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: the position inside the epoch being iterated ({} between epochs)."""
        return self._position.get_state()

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output: the next iteration of that epoch continues after its last batch."""
        self._position.set_state(state)

    def get_resume_position(self) -> Optional[EpochPosition]:
        """The mid-epoch position a restored checkpoint continues from (None when it was taken between epochs)."""
        return self._position.pending_resume()

    @overload
    def get_results(self, mode: str = "train", epoch: int = 1, ds_id: str = "", num_steps: Literal[1] = 1,
                    shuffle: bool = False) -> Dict[str, Any]:
        ...

    @overload
    def get_results(self, mode: str = "train", epoch: int = 1, ds_id: str = "", num_steps: int = 1,
                    shuffle: bool = False) -> List[Dict[str, Any]]:
        ...

    def get_results(self, mode: str = "train", epoch: int = 1, ds_id: str = "", num_steps: int = 1,
                    shuffle: bool = False) -> Union[Dict[str, Any], List[Dict[str, Any]]]:
        """Get sample Pipeline outputs: the first `num_steps` batches of an epoch, as user code sees them.

        The batches hold framework tensors, as in FastEstimator: torch tensors (on the CPU) when torch is installed;
        in an install without torch, the installed framework's tensors (TensorFlow); numpy arrays only where no
        framework is installed. A framework loader given as data (a `tf.data.Dataset`, a torch `DataLoader`) yields
        its own batches unchanged (tf tensors for `tf.data`). Non-numeric values (strings) are left as they are.
        The Pipeline computes on numpy; the conversion happens here, once per batch.

        Args:
            mode: The execution mode in which to run: 'train', 'eval' or 'test'.
            epoch: The epoch index to run (from 1), for Schedulers.
            ds_id: The current dataset id.
            num_steps: Number of steps (batches) to get.
            shuffle: Whether to use shuffling (ignored for framework loaders, which shuffle as they were built to).

        Returns:
            As FastEstimator: the batch dict when exactly one batch was produced, else a list of the (at most
            `num_steps`) batches; an empty list when the data has no batch (e.g. a Scheduler gives no dataset for
            `epoch`).

        Raises:
            ValueError: If `num_steps` is not a positive integer.
            KeyError: If there is no data for `mode` / `ds_id`.

        Example:
            >>> # batch = pipeline.get_results(mode="eval"); batch["x"].numpy()  # torch tensors, as FastEstimator
        """
        from fe_core.framework.public import public_backend, to_public  # pylint: disable=import-outside-toplevel
        if not is_positive_int(num_steps):
            raise ValueError(f"get_results num_steps must be a positive integer, got {num_steps!r}")
        results: List[Dict[str, Any]] = []
        dataset = self.planner.dataset(mode, epoch, ds_id)
        if dataset is None:
            return results
        if native_dataset_backend(dataset) is not None:
            for batch in dataset:  # the user's own loader, yielding its framework's tensors
                results.append(batch)
                if len(results) >= num_steps:
                    break
        else:
            backend = public_backend()
            if self._active_context is not None:
                raise ValueError("You cannot invoke a Pipeline's __call__ method while it already has an active "
                                 "loader (Pipeline contexts cannot be nested)")
            self._context_args = {"mode": mode, "epoch": epoch, "ds_id": ds_id, "shuffle": shuffle,
                                  "steps_per_epoch": None, "output_keys": None}
            # a few batches: computed here, never worth starting processes
            context = self._context(mode, epoch, ds_id, shuffle, None, None, False, in_process=True).as_numpy()
            with context as loader:
                for batch in loader:
                    results.append(to_public(batch, backend, string_lists=True))
                    if len(results) >= num_steps:
                        break
        return results[0] if len(results) == 1 else results

    def transform(self, data: Dict[str, Any], mode: str, epoch: int = 1, ds_id: str = "", target_type: str = "np"
                  ) -> Union[Dict[str, Any], FilteredData]:
        """Run the Pipeline's ops on one sample dict, as FastEstimator does for inference.

        The per-sample ops run on (a copy of) `data`, it is collated into a batch of one, and the ops after Batch run on
        that batch.

        Args:
            data: One sample: a dict of values.
            mode: The mode whose ops run ('train', 'eval', 'test' or 'infer').
            epoch: The epoch (from 1), for Schedulers.
            ds_id: The dataset id.
            target_type: What the batch values become: 'np' (numpy arrays), 'torch' or 'tf' (that framework's tensors,
                through its backend).

        Returns:
            The batch dict (every value has a leading batch axis of 1), or FilteredData if an op filtered the sample.

        Raises:
            ValueError: If `target_type` is not 'np', 'torch' or 'tf'.

        Example:
            >>> # pipeline.transform({"x": image}, mode="infer")["x"].shape  -> (1, 28, 28, 1)
        """
        if target_type not in ("np", "torch", "tf"):
            raise ValueError(f"Pipeline.transform target_type must be 'np', 'torch' or 'tf', got {target_type!r}")
        sample = copy.deepcopy(dict(data))
        sample_ops, batch_op, post_ops = self.planner.split_ops(mode, epoch, ds_id)
        state = {"mode": mode, "epoch": epoch, "ds_id": ds_id, "warmup": False}
        filtered = run_steps(sample, compile_steps(sample_ops, batched=False), state)
        if filtered is not None:
            return filtered
        batch = batch_op.collate([sample]) if batch_op is not None else collate_samples([sample])
        filtered = run_steps(batch, compile_steps(post_ops, batched=True), state)
        if filtered is not None:
            return filtered
        if target_type != "np":
            from fe_core.framework import get_backend  # pylint: disable=import-outside-toplevel
            backend = get_backend(target_type)
            batch = {key: backend.to_tensor(value) if isinstance(value, np.ndarray) else value
                     for key, value in batch.items()}
        return batch

    def benchmark(self, mode: str = "train", epoch: int = 1, ds_id: Optional[str] = None, num_steps: int = 1000,
                  log_interval: int = 100, detailed: bool = True) -> Dict[str, Dict[str, float]]:
        """Print the Pipeline's speed (steps/s and samples/s) and, if `detailed`, the time spent in each op.

        Args:
            mode: The mode to benchmark.
            epoch: The epoch to benchmark.
            ds_id: The dataset to benchmark; None benchmarks every ds_id of the mode.
            num_steps: Batches to time (the data repeats if needed).
            log_interval: Print the speed every this many batches; the per-op table covers this many batches.
            detailed: Whether to print the per-op table.

        Returns:
            {ds_id: {"steps_per_sec": ..., "samples_per_sec": ...}} over the whole run.
        """
        from fe_core.pipeline.benchmark import benchmark_pipeline
        return benchmark_pipeline(self, mode=mode, epoch=epoch, ds_id=ds_id, num_steps=num_steps,
                                  log_interval=log_interval, detailed=detailed)

    # ------------------------------------------------------------------ what the Estimator asks
    def get_modes(self, epoch: Optional[int] = None) -> Set[str]:
        """The modes with data (at `epoch`, when given: Schedulers may switch a mode's data off)."""
        if epoch is None:
            return set(self.data)
        return {mode for mode in self.data if self.get_ds_ids(epoch, mode)}

    def get_ds_ids(self, epoch: int, mode: str) -> List[str]:
        """The sorted ds_ids with data in `mode` at `epoch` ([''] for a plain dataset; [] without data)."""
        datasets = self.data.get(mode, {})
        return sorted(ds_id for ds_id, dataset in datasets.items()
                      if (dataset.get_current_value(epoch) if isinstance(dataset, Scheduler) else dataset) is not None)

    def get_epochs_with_data(self, total_epochs: int, mode: str) -> Set[int]:
        """The epochs in 1..total_epochs at which `mode` has data.

        Raises:
            KeyError: If the Pipeline has no data for `mode`, as in FastEstimator.
        """
        if mode not in self.data:
            raise KeyError(f"Pipeline has no data for mode {mode!r} (modes with data: {sorted(self.data)})")
        return {epoch for epoch in range(1, total_epochs + 1) if self.get_ds_ids(epoch, mode)}

    def get_scheduled_items(self, mode: str) -> List[Any]:
        """Everything whose schedule shapes `mode`'s data: ops, the batch size and the datasets."""
        batch_size = self.batch_size.get(mode) if isinstance(self.batch_size, dict) else self.batch_size
        return list(self.ops) + [batch_size] + list(self.data.get(mode, {}).values())

    def get_num_steps(self, mode: str, epoch: int, ds_id: str = "", steps_per_epoch: Optional[int] = None
                      ) -> Optional[int]:
        """How many batches `pipeline(mode, epoch, ds_id, steps_per_epoch=...)` yields.

        Returns:
            The count (an upper bound if samples are filtered without replacement), or None for a native loader
            without a length.
        """
        if steps_per_epoch is not None:
            return steps_per_epoch
        loader = EpochLoader(self.planner.plan(mode, epoch, ds_id, None), shuffle=False)
        try:
            return len(loader)
        except TypeError:
            return None

    def __repr__(self) -> str:
        data = {mode: sorted(datasets) if list(datasets) != [""] else "dataset" for mode, datasets in self.data.items()}
        return f"Pipeline(data={data}, batch_size={self.batch_size!r}, ops={self.ops!r})"

