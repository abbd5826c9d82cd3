"""The Estimator's warmup: one step of every distinct (mode, epoch, ds_id) configuration before training, checking
that every key an op, a trace or a monitor name reads is produced, and that the traces' order has no cycle."""
from __future__ import annotations

from typing import Any, Callable, List, Set

from fe_core.distributed.communicator import get_communicator
from fe_core.misuse import find_unavailable_input, suggest_keys, unavailable_key_message
from fe_core.schedule.scheduler import get_current_items, get_signature_epochs
from fe_core.trace import EvalEssential, TestEssential, Trace, TrainEssential, sort_traces
from fe_core.untrained_models import warn_models_never_updated

__all__ = ["Warmup", "WARMUP_ROWS"]

_ESSENTIALS = (TrainEssential, EvalEssential, TestEssential)
WARMUP_ROWS = 2  # samples a warmup step's models may run on (2: BatchNorm needs more than one in training mode)


class Warmup:
    """One warmup of an Estimator's run.

    Args:
        pipeline: The data source (`fe_core.data_source.DataSource`).
        network: The Network.
        system: The run's System (its mode is set while each mode warms up).
        monitor_names: Keys the run must log.
        sorted_traces: (mode, epoch, ds_ids) -> the traces in order.
        plan: (traces, mode, epoch, ds_id) -> the Estimator's epoch plan (its `traces`, `desired_keys` and
            `pipeline_keys`).
        scheduled_items: mode -> everything whose schedule shapes that mode's configurations.
    """

    def __init__(self, pipeline: Any, network: Any, system: Any, monitor_names: Set[str],
                 sorted_traces: Callable[..., List[Trace]], plan: Callable[..., Any],
                 scheduled_items: Callable[[str], List[Any]]) -> None:
        self.pipeline, self.network, self.system = pipeline, network, system
        self.monitor_names = monitor_names
        self.sorted_traces, self.plan, self.scheduled_items = sorted_traces, plan, scheduled_items

    def run(self, eager: bool) -> None:
        """Run one step of every distinct (mode, epoch, ds_id) configuration and check every key is produced.

        Raises:
            KeyError: If an op or trace reads a key nothing produces.
            ValueError: If a monitor name is produced nowhere.
        """
        total_epochs = self.system.total_epochs
        monitors_seen: Set[str] = set()
        pipeline_modes = self.pipeline.get_modes()
        for mode in ("train", "eval"):
            if mode not in pipeline_modes:
                continue
            self.system.mode = mode
            epochs_with_data = set(self.pipeline.get_epochs_with_data(total_epochs=total_epochs, mode=mode))
            for epoch in get_signature_epochs(self.scheduled_items(mode), total_epochs, mode=mode):
                if epoch not in epochs_with_data:
                    continue
                ds_ids = self.pipeline.get_ds_ids(epoch=epoch, mode=mode)
                traces = self.sorted_traces(mode, epoch, ds_ids)
                for ds_id in ds_ids:
                    monitors_seen |= self._step(traces, mode, epoch, ds_id, ds_ids, eager)
        if "train" in pipeline_modes and get_communicator().is_main:
            warn_models_never_updated(self.network.ops)
        unseen = self.monitor_names - monitors_seen
        if unseen:
            raise ValueError(f"monitor_names {sorted(unseen)} are not produced by the pipeline, the network or any "
                             f"trace in any mode, epoch or ds_id")
        self.system.mode = "train"

    def _step(self, traces: List[Trace], mode: str, epoch: int, ds_id: str, ds_ids: List[str],
                     eager: bool) -> Set[str]:
        where = f"mode {mode!r}, epoch {epoch}, ds_id {ds_id!r}"
        plan = self.plan(traces, mode, epoch, ds_id)
        needed, _, _, _ = self.network.get_keys(mode, epoch, ds_id, plan.desired_keys)
        with self.pipeline(mode=mode, epoch=epoch, ds_id=ds_id, shuffle=False, steps_per_epoch=1,
                           output_keys=plan.pipeline_keys, warmup=True).as_numpy() as loader:
            batch = next(iter(loader), None)
        if batch is None:
            return set()
        missing = sorted(needed - set(batch))
        if missing:
            raise KeyError(self._missing_key_message(missing, mode, epoch, ds_id))
        # A few samples decide the warmup's checks as well as the whole batch; the backend falls back to the whole
        # batch whenever they do not run (and in data-parallel runs, where every process must do the same).
        rows = WARMUP_ROWS if get_communicator().world_size == 1 else None
        with self.network(mode=mode, epoch=epoch, ds_id=ds_id, desired_output_keys=plan.desired_keys, warmup=True,
                          eager=eager, warmup_rows=rows):
            result = self.network.run_step(batch)
        available = set(result)
        trace_outputs = {key for trace in plan.traces for key in trace.get_outputs(ds_ids=ds_ids)}
        for trace in plan.traces:
            if isinstance(trace, _ESSENTIALS):
                continue
            for key in trace.inputs:
                if key != "*" and key not in available and key not in trace_outputs:
                    close = suggest_keys(key, available | trace_outputs)
                    raise KeyError(f"Trace {type(trace).__name__} reads key {key!r}, which is not produced by the "
                                   f"pipeline, the network or any trace in {where}; available keys: "
                                   f"{sorted(available | trace_outputs)}" +
                                   (f". Did you mean {' or '.join(repr(name) for name in close)}?" if close else ""))
        sort_traces(plan.traces, ds_ids=ds_ids, available_outputs=available)  # strict: catches cycles
        return available | trace_outputs

    def _missing_key_message(self, missing: List[str], mode: str, epoch: int, ds_id: str) -> str:
        """Which op reads a key nothing provides, with every key available at that point (all the pipeline's keys,
        not only those the run asked for, and earlier ops' outputs) and the closest one."""
        where = f"mode {mode!r}, epoch {epoch}, ds_id {ds_id!r}"
        with self.pipeline(mode=mode, epoch=epoch, ds_id=ds_id, shuffle=False, steps_per_epoch=1).as_numpy() as loader:
            pipeline_keys = sorted(next(iter(loader), None) or {})
        ops = get_current_items(self.network.ops, mode, epoch, ds_id=ds_id)
        steps = ops + get_current_items(self.network.postprocessing, mode, epoch, ds_id=ds_id)  # pops run last
        found = find_unavailable_input(steps, pipeline_keys)
        if found is not None and found[1] in missing:
            index, key, produced = found
            return unavailable_key_message(steps, index, key, produced, pipeline_keys, where,
                                           "Op" if index < len(ops) else "Postprocessing op")
        key = missing[0]
        close = suggest_keys(key, pipeline_keys)
        return (f"{self._consumers_of(key, mode, epoch, ds_id)} read(s) key {key!r}, which is not produced by the "
                f"pipeline or an earlier op in {where} (pipeline provides {pipeline_keys}); missing keys: {missing}"
                + (f". Did you mean {' or '.join(repr(name) for name in close)}?" if close else ""))

    def _consumers_of(self, key: str, mode: str, epoch: int, ds_id: str) -> str:
        consumers = []
        for group, items in (("op", self.network.ops), ("pop", self.network.postprocessing),
                             ("slicer", self.network.slicers)):
            for item in get_current_items(items, mode, epoch, ds_id=ds_id):
                reads = getattr(item, "inputs", None) or getattr(item, "slice_inputs", [])
                if key in reads or key in getattr(item, "unslice_inputs", []):
                    consumers.append(f"{group} {type(item).__name__}")
        return ", ".join(consumers) or "The network"
