"""The Essential traces: what every run records (monitored keys, speed, time, learning rates).

The Estimator adds `TrainEssential`, `EvalEssential` and `TestEssential` itself (one per mode it runs), with the
Estimator's `monitor_names` plus every trace's `fe_monitor_names`. Users never add them.
"""
from __future__ import annotations

from collections import defaultdict
from time import perf_counter
from typing import Any, DefaultDict, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

from fe_core.containers import to_set
from fe_core.data import Data, DSData
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.reduce import all_gather_arrays
from fe_core.trace.trace import Trace, attached_system, current_ds_id
from fe_core.export import fe_export

__all__ = ["TrainEssential", "EvalEssential", "TestEssential"]


def _sorted_names(monitor_names: Union[None, str, Iterable[str]]) -> List[str]:
    return sorted(to_set(monitor_names))


@fe_export("fe.trace.trace.TrainEssential", "fe.trace.TrainEssential")
class TrainEssential(Trace):
    """Collects the essential training information.

    - on_begin: logs `num_device` and `logging_interval` (the System's `log_steps`).
    - on every log step (`global_step % log_steps == 0` or `global_step == 1`, only when `log_steps` is truthy): logs
      each monitored key present in the batch, and from step 2 on `steps/sec` (training steps per second since the
      previous log step, time between epochs excluded). With a named dataset the keys are logged as `key|ds_id`.
      In a data-parallel run the Estimator has already made each monitored per-batch number (a loss) the whole
      global batch's at a log step (the ranks' means weighted by their samples), so it is the value one process logs.
    - on_epoch_end (when `log_steps` is truthy): logs `epoch_time(sec)`.
    - on_end: logs `total_time(sec)` and, for each model with an optimizer, `<model_name>_lr`; sets the System's mode
      back to 'train' so the final log line reads as a training line.

    Please don't add this trace to an Estimator yourself: the Estimator adds it.

    Args:
        monitor_names: Keys from the batch to log at each log step.
    """

    fe_log_steps_only = True  # on_batch_end acts only on log steps

    def __init__(self, monitor_names: Union[None, str, Iterable[str]]) -> None:
        super().__init__(inputs=_sorted_names(monitor_names),
                         mode="train",
                         outputs=["num_device", "logging_interval", "steps/sec", "epoch_time(sec)", "total_time(sec)"])
        now = perf_counter()
        self._train_start = now
        self._epoch_start = now
        self._step_start = now
        self._elapsed = 0.0  # training time since the last log step, carried over epoch boundaries
        self._last_log_step = 0

    # FastEstimator's attribute names (perf_counter times; elapse_times: training time since the last log step)
    @property
    def train_start(self) -> float:
        """When training began (`time.perf_counter()`)."""
        return self._train_start

    @train_start.setter
    def train_start(self, value: float) -> None:
        self._train_start = value

    @property
    def epoch_start(self) -> float:
        """When the current epoch began (`time.perf_counter()`)."""
        return self._epoch_start

    @epoch_start.setter
    def epoch_start(self, value: float) -> None:
        self._epoch_start = value

    @property
    def step_start(self) -> float:
        """When the current logging interval began (`time.perf_counter()`)."""
        return self._step_start

    @step_start.setter
    def step_start(self, value: float) -> None:
        self._step_start = value

    @property
    def elapse_times(self) -> List[float]:
        """The training time (seconds) since the last log step that lies in earlier epochs (empty after a log step),
        as FastEstimator's list."""
        return [self._elapsed] if self._elapsed else []

    @elapse_times.setter
    def elapse_times(self, value: Iterable[float]) -> None:
        self._elapsed = float(sum(value))

    def on_begin(self, data: Data) -> None:
        now = perf_counter()
        self._train_start = now
        self._epoch_start = now
        self._step_start = now
        self._elapsed = 0.0
        self._last_log_step = self.system.global_step or 0
        data.write_with_log("num_device", self.system.num_devices)
        data.write_with_log("logging_interval", self.system.log_steps)

    def on_epoch_begin(self, data: Data) -> None:
        if self.system.log_steps:
            now = perf_counter()
            self._epoch_start = now
            self._step_start = now

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        log_steps = system.log_steps
        if not log_steps:
            return
        step = system.global_step
        if step % log_steps != 0 and step != 1:
            return
        if system.ds_id != "":
            data = DSData(system.ds_id, data)
        for key in self.inputs:
            if key in data:
                data.write_with_log(key, data[key])
        now = perf_counter()
        if step > 1:
            elapsed = self._elapsed + (now - self._step_start)
            if elapsed > 0:
                data.write_with_log("steps/sec", round((step - self._last_log_step) / elapsed, 2))
        self._elapsed = 0.0
        self._last_log_step = step
        self._step_start = now

    def on_epoch_end(self, data: Data) -> None:
        if self.system.log_steps:
            now = perf_counter()
            self._elapsed += now - self._step_start
            data.write_with_log("epoch_time(sec)", round(now - self._epoch_start, 2))

    def on_end(self, data: Data) -> None:
        system = self.system
        system.mode = "train"  # so the final log line and summary entries read as training
        data.write_with_log("total_time(sec)", round(perf_counter() - self._train_start, 2))
        network = system.network
        if network is None:
            return
        for model in network.models:
            if getattr(model, "current_optimizer", None) is not None:
                data.write_with_log(f"{model.model_name}_lr", network.backend.get_lr(model))


class _EpochMeanEssential(Trace):
    """Collects monitored keys per dataset over an epoch and logs their means at the epoch's end.

    In a data-parallel run each process holds its part of every global batch: the parts' sums and sample counts are
    reduced per global batch, so a logged loss is the mean of the global batches' means, the value one process logs
    for the same data and weights (not a mean of the processes' means, nor a mean over samples).
    """

    def __init__(self, monitor_names: Union[None, str, Iterable[str]], mode: str, outputs: List[str]) -> None:
        super().__init__(inputs=_sorted_names(monitor_names), mode=mode, outputs=outputs)
        self._results: DefaultDict[str, DefaultDict[str, List[Any]]] = defaultdict(lambda: defaultdict(list))
        self._samples: DefaultDict[str, DefaultDict[str, List[int]]] = defaultdict(lambda: defaultdict(list))

    def on_epoch_begin(self, data: Data) -> None:
        self._results = defaultdict(lambda: defaultdict(list))
        self._samples = defaultdict(lambda: defaultdict(list))

    def _results_view(self) -> DefaultDict[str, DefaultDict[str, List[Any]]]:
        """FastEstimator's `eval_results` / `test_results`: {key: {ds_id: [value of each batch]}} this epoch ('' is
        the unnamed dataset), the live collection (a defaultdict of defaultdicts of lists, as FastEstimator's)."""
        return self._results

    def _set_results(self, results: Optional[Mapping[str, Any]]) -> None:
        """Replace this epoch's collected values: {key: {ds_id: [values]}} as FastEstimator holds them, or
        {key: [values]} (counted as the unnamed dataset's); None empties them."""
        self._results = defaultdict(lambda: defaultdict(list))
        self._samples = defaultdict(lambda: defaultdict(list))
        for key, values in (results or {}).items():
            if isinstance(values, Mapping):
                for ds_id, ds_values in values.items():
                    self._results[key][ds_id] = list(ds_values)
            else:
                self._results[key][""] = list(values)

    def _collect(self, data: Data, ds_id: str) -> None:
        results = self._results
        system = attached_system(self)
        samples = None if system is None else system.batch_samples
        for key in self.inputs:
            if key in data:
                results[key][ds_id].append(data[key])
                if samples is not None:
                    self._samples[key][ds_id].append(samples)

    def on_batch_end(self, data: Data) -> None:
        self._collect(data, current_ds_id(self))

    def on_epoch_end(self, data: Data) -> None:
        if get_communicator().world_size > 1:
            self._write_global_means(data)
            return
        for key, per_ds in self._results.items():
            every: List[Any] = []
            for ds_id, values in per_ds.items():
                if ds_id != "":
                    DSData(ds_id, data).write_with_log(key, self._mean(key, ds_id, values))
                every.extend(values)
            data.write_with_log(key, self._mean(key, None, every))

    def _write_global_means(self, data: Data) -> None:
        """The value one process logs for the same samples, over every process (each rank lists the same keys and
        ds_ids, in sorted order).

        One process logs the mean of the batches' values (each batch's value is the mean over its samples). Each
        rank holds its part of every global batch, so each batch's value over all ranks is the sample-weighted mean
        of the ranks' parts (per-rank sums and counts, reduced per global batch), and the logged value is the mean of
        those. When the ranks ran different numbers of batches (a framework loader iterated as it is), the batches
        cannot be matched and the mean over all samples is logged instead.
        """
        entries: List[Tuple[str, str]] = []
        arrays: Dict[str, np.ndarray] = {}
        dtypes: Dict[str, Any] = {}
        for key in sorted(self._results):
            per_ds = self._results[key]
            kinds = [np.asarray(value).dtype for values in per_ds.values() for value in values]
            # the mean in the values' own float type, as one process's np.mean gives it (the same printed digits)
            dtypes[key] = np.result_type(*kinds) if kinds and all(kind.kind == "f" for kind in kinds) else np.float64
            for ds_id in sorted(per_ds):
                values = np.asarray(per_ds[ds_id], dtype=np.float64)
                weights = np.asarray(self._samples[key][ds_id] or [1] * len(values), dtype=np.float64)
                if len(weights) != len(values):
                    weights = np.ones(len(values))
                name = f"{len(entries)}"
                arrays[name + "t"] = values * weights.reshape((-1,) + (1,) * (values.ndim - 1))
                arrays[name + "n"] = weights
                entries.append((key, ds_id))
        ranks = all_gather_arrays(arrays)
        batch_means: Dict[str, List[np.ndarray]] = defaultdict(list)
        for index, (key, ds_id) in enumerate(entries):
            totals = [rank[f"{index}t"] for rank in ranks]
            counts = [rank[f"{index}n"] for rank in ranks]
            if len({len(count) for count in counts}) == 1:  # the ranks' parts of the same global batches
                means = np.sum(totals, axis=0) / np.sum(counts, axis=0).reshape((-1,) + (1,) * (totals[0].ndim - 1))
            else:
                count = sum(float(np.sum(part)) for part in counts)
                means = (sum(np.sum(part, axis=0) for part in totals) / count)[None]
            batch_means[key].append(means)
            if ds_id != "":
                DSData(ds_id, data).write_with_log(key, self._global_value(key, dtypes, [means]))
        for key, parts in batch_means.items():
            data.write_with_log(key, self._global_value(key, dtypes, parts))

    @staticmethod
    def _global_value(key: str, dtypes: Dict[str, Any], parts: List[np.ndarray]) -> Any:
        """The mean of the global batches' values, as a numpy scalar of the values' own type for a scalar key (as one
        process's np.mean gives it; never a 0-d array: traces keep it as their best value, and a checkpoint stores it
        as the number it is)."""
        mean = np.mean(np.concatenate(parts, axis=0), axis=0)
        return np.asarray(mean).astype(dtypes[key])[()]

    def _mean(self, key: str, ds_id: Union[None, str], values: List[Any]) -> Any:
        try:
            return np.mean(np.asarray(values), axis=0)
        except (ValueError, TypeError) as err:
            where = "all datasets" if ds_id is None else f"ds_id {ds_id!r}"
            shapes = sorted({str(np.shape(value)) for value in values})
            system = attached_system(self)
            raise ValueError(f"{type(self).__name__} cannot average monitored key {key!r} over {where} in mode "
                             f"{getattr(system, 'mode', None)!r}, epoch {getattr(system, 'epoch_idx', None)}: its "
                             f"values have shapes {shapes} (each batch must give the same shape)") from err


@fe_export("fe.trace.trace.EvalEssential", "fe.trace.EvalEssential")
class EvalEssential(_EpochMeanEssential):
    """Collects the essential evaluation information.

    Each monitored key is gathered over every eval batch of the epoch, per dataset, and its mean is logged at
    on_epoch_end: as `key|ds_id` for each named dataset, and as `key` over all datasets together. At the eval log
    steps (`system.eval_log_steps[0]`, counted per dataset) it logs `steps/sec` from the second step on.

    Please don't add this trace to an Estimator yourself: the Estimator adds it.

    Args:
        monitor_names: Keys to average over each eval epoch.

    Example:
        Batches giving loss 10 and 20 make the eval line show `loss: 15.0`.
    """

    def __init__(self, monitor_names: Union[None, str, Iterable[str]]) -> None:
        super().__init__(monitor_names, mode="eval", outputs=["steps/sec"])
        self._steps: DefaultDict[str, int] = defaultdict(int)
        self._last_log: Dict[str, Tuple[int, float]] = {}  # ds_id -> (step, time) of its last timing point

    def on_epoch_begin(self, data: Data) -> None:
        super().on_epoch_begin(data)
        self._steps = defaultdict(int)
        self._last_log = {}

    @property
    def eval_results(self) -> DefaultDict[str, DefaultDict[str, List[Any]]]:
        """What was collected this epoch, as FastEstimator holds it: {key: {ds_id: [value of each batch]}} (empty
        after `on_epoch_begin`). Assigning it replaces the collected values."""
        return self._results_view()

    @eval_results.setter
    def eval_results(self, results: Optional[Mapping[str, Any]]) -> None:
        self._set_results(results)

    def on_batch_end(self, data: Data) -> None:
        system = attached_system(self)
        ds_id = current_ds_id(self)
        self._collect(data, ds_id)
        step = self._steps[ds_id] + 1
        self._steps[ds_id] = step
        if step == 1:
            self._last_log[ds_id] = (1, perf_counter())
        elif system is not None and step in system.eval_log_steps[0]:
            now = perf_counter()
            last_step, last_time = self._last_log[ds_id]
            if now > last_time:
                data.write_with_log("steps/sec", round((step - last_step) / (now - last_time), 2))
            self._last_log[ds_id] = (step, now)


@fe_export("fe.trace.trace.TestEssential", "fe.trace.TestEssential")
class TestEssential(_EpochMeanEssential):
    """Collects the essential test information.

    Each monitored key is gathered over every test batch, per dataset, and its mean is logged at on_epoch_end: as
    `key|ds_id` for each named dataset, and as `key` over all datasets together.

    Please don't add this trace to an Estimator yourself: the Estimator adds it.

    Args:
        monitor_names: Keys to average over the test epoch.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, monitor_names: Union[None, str, Iterable[str]]) -> None:
        super().__init__(monitor_names, mode="test", outputs=[])

    @property
    def test_results(self) -> DefaultDict[str, DefaultDict[str, List[Any]]]:
        """What was collected this epoch, as FastEstimator holds it: {key: {ds_id: [value of each batch]}} (empty
        after `on_epoch_begin`). Assigning it replaces the collected values."""
        return self._results_view()

    @test_results.setter
    def test_results(self, results: Optional[Mapping[str, Any]]) -> None:
        self._set_results(results)
